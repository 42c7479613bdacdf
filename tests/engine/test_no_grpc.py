"""The engine tests need no server: importing them loads no gRPC and no protobuf stubs."""

from __future__ import annotations

import subprocess
import sys

from tests.support import ROOT

HERE = ROOT / "tests" / "engine"


def test_the_engine_tests_import_no_grpc() -> None:
    modules = sorted(
        f"tests.engine.{p.stem}"
        for p in HERE.glob("*.py")
        if p.stem not in ("__init__", "conftest")
    )
    modules.append("tests.support.engine_harness")
    assert "tests.engine.test_approvals" in modules
    code = (
        "import importlib, sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "importlib.import_module('tests.engine.conftest')\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('grpc', 'luosho')"
        " or m.startswith('luoshod.server'))\n"
        "print(' '.join(loaded))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"the engine tests loaded {out.stdout.strip()}"
