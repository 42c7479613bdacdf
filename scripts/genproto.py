#!/usr/bin/env python3
"""Generate the protobuf/gRPC code of every language from proto/ (one script for all).

    python scripts/genproto.py          # write the generated files
    python scripts/genproto.py --check  # exit 1 and name the stale files if any differ

Python: grpc_tools.protoc (from grpcio-tools, pinned in lock-step with grpcio) writes
clients/python/src/luosho/v1/. The output is committed; tests/test_genproto.py runs
--check so a proto change without regeneration fails the tests.

TypeScript: the same protoc runs the ts-proto plugin (pinned with package-lock.json in
clients/typescript; `npm ci` there installs it) and writes clients/typescript/src/gen/.

Every language is one generate_<language>(out) function, writing into an empty folder laid
out like its committed root, and one line in GENERATORS.
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Callable, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
PY_OUT = ROOT / "clients" / "python" / "src"
PY_PACKAGE = Path("luosho") / "v1"


def _protos() -> list[Path]:
    return sorted(PROTO_ROOT.rglob("*.proto"))


def generate_python(out: Path) -> list[Path]:
    """Write the Python modules for every proto file under out; return their paths."""
    import grpc_tools
    from grpc_tools import protoc

    include = Path(grpc_tools.__file__).parent / "_proto"
    protos = [str(p.relative_to(PROTO_ROOT)) for p in _protos()]
    args = [
        "protoc",
        f"-I{PROTO_ROOT}",
        f"-I{include}",
        f"--python_out={out}",
        f"--pyi_out={out}",
        f"--grpc_python_out={out}",
        *protos,
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    written = sorted((out / PY_PACKAGE).glob("*.py*"))
    for pkg in (out / "luosho", out / PY_PACKAGE):
        init = pkg / "__init__.py"
        if not init.exists():
            init.write_text("")
    return written


TS_ROOT = ROOT / "clients" / "typescript"
TS_OUT = TS_ROOT / "src" / "gen"


def generate_typescript(out: Path) -> list[Path]:
    """Write the TypeScript modules (ts-proto, @grpc/grpc-js services, ESM) under out."""
    import grpc_tools
    from grpc_tools import protoc

    plugin = TS_ROOT / "node_modules" / ".bin" / "protoc-gen-ts_proto"
    if not plugin.exists():
        raise SystemExit(f"{plugin.relative_to(ROOT)} is missing: run `npm ci` in clients/typescript")
    include = Path(grpc_tools.__file__).parent / "_proto"
    protos = [str(p.relative_to(PROTO_ROOT)) for p in _protos()]
    opts = "outputServices=grpc-js,esModuleInterop=true,importSuffix=.js,env=node"
    args = [
        "protoc",
        f"-I{PROTO_ROOT}",
        f"-I{include}",
        f"--plugin=protoc-gen-ts_proto={plugin}",
        f"--ts_proto_out={out}",
        f"--ts_proto_opt={opts}",
        *protos,
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc (ts-proto) failed")
    return sorted(out.rglob("*.ts"))


class Generator(NamedTuple):
    name: str
    generate: Callable[[Path], object]
    # Where the output is committed, and the generated files' pattern under it.
    committed: Path
    pattern: str


GENERATORS = [
    Generator("python", generate_python, PY_OUT, f"{PY_PACKAGE.as_posix()}/*_pb2*"),
    Generator("typescript", generate_typescript, TS_OUT, "**/*.ts"),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if committed code is stale")
    opts = parser.parse_args()

    stale: list[str] = []
    total = 0
    for gen in GENERATORS:
        with tempfile.TemporaryDirectory() as tmp:
            tmp_out = Path(tmp)
            gen.generate(tmp_out)
            fresh = {p.relative_to(tmp_out): p for p in sorted(tmp_out.glob(gen.pattern))}
            committed = {
                p.relative_to(gen.committed): p for p in sorted(gen.committed.glob(gen.pattern))
            }
            total += len(fresh)
            if opts.check:
                stale += sorted(
                    str((gen.committed / rel).relative_to(ROOT))
                    for rel in fresh.keys() | committed.keys()
                    if rel not in fresh
                    or rel not in committed
                    or not filecmp.cmp(fresh[rel], committed[rel], shallow=False)
                )
                continue
            for rel in committed.keys() - fresh.keys():
                committed[rel].unlink()
            for rel, src in fresh.items():
                dst = gen.committed / rel
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst)
                print(f"wrote {dst.relative_to(ROOT)}")
    if opts.check:
        if stale:
            print("stale generated code (run: python scripts/genproto.py):", *stale, sep="\n  ")
            return 1
        print(f"generated code is up to date ({total} files)")
    return 0

if __name__ == "__main__":
    sys.exit(main())
