"""``luoshod serve --http-listen``: a real daemon process prints where its console is,
serves it, and stops cleanly on SIGTERM; ``LUOSHOD_HTTP_LISTEN`` does the same."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from tests.support.daemon_process import DaemonProcess, db_url


@pytest.mark.parametrize("how", ["flag", "env"])
def test_serve_prints_and_serves_the_console(tmp_path: Path, how: str) -> None:
    args = ("--store", db_url(tmp_path))
    if how == "flag":
        d = DaemonProcess(*args, "--http-listen", "127.0.0.1:0").start()
    else:
        d = DaemonProcess(*args, env={"LUOSHOD_HTTP_LISTEN": "127.0.0.1:0"}).start()
    try:
        line = d.proc.stdout.readline().strip()  # type: ignore[union-attr]
        assert line.startswith("luoshod console on http://127.0.0.1:") and line.endswith("/"), line
        url = line.removeprefix("luoshod console on ")
        with urllib.request.urlopen(url, timeout=10) as r:
            assert r.status == 200 and b'<script type="module" src="/static/js/app.js">' in r.read()
        with urllib.request.urlopen(url + "api/v1/sessions", timeout=10) as r:
            assert json.loads(r.read()) == {"sessions": [], "next_page_token": ""}
        assert d.terminate() == 0
    finally:
        d.stop()
