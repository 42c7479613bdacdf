"""The committed generated code matches proto/ (a proto change without regeneration fails)."""

from __future__ import annotations

import subprocess
import sys

from tests.support import ROOT


def test_generated_code_is_up_to_date() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "genproto.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
