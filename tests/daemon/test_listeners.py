"""Listeners: loopback TCP and unix sockets, stale sockets, refused remote addresses."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from luoshod.server.app import Config, ConfigError, Daemon
from tests.support.harness import Harness, agent


async def test_unix_socket_listener_and_stale_socket_cleanup(tmp_path: Path) -> None:
    path = tmp_path / "run" / "luoshod.sock"
    path.parent.mkdir()
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(path))  # a socket file nobody listens on: what kill -9 leaves behind
    stale.close()
    d = Daemon(Config(listen=[f"unix:{path}", "127.0.0.1:0"], store="memory://"))
    await d.start()
    try:
        h = Harness(f"unix:{path}", d)
        log = await h.run("uds", "hi", agent([{"text": "over a unix socket"}]))
        assert log.done.final_text == "over a unix socket"
        await h.close()
        # A second daemon must not steal a socket that is in use.
        with pytest.raises(ConfigError, match="in use"):
            await Daemon(Config(listen=[f"unix:{path}"], store="memory://")).start()
    finally:
        await d.stop()
    assert not path.exists()  # removed on a clean stop


@pytest.mark.parametrize("address", ["0.0.0.0:0", "10.1.2.3:50051", "[::]:0"])
def test_non_loopback_listen_is_refused_without_allow_remote(address: str) -> None:
    with pytest.raises(ConfigError, match="not a loopback address"):
        Daemon(Config(listen=[address], store="memory://"))


def test_bad_listen_and_store_are_configuration_errors() -> None:
    with pytest.raises(ConfigError, match="listen"):
        Daemon(Config(listen=["nonsense"], store="memory://"))
    with pytest.raises(ConfigError, match="store"):
        Daemon(Config(listen=["127.0.0.1:0"], store="ftp://x"))
