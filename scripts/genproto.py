#!/usr/bin/env python3
"""Generate the protobuf/gRPC code of every language from proto/ (one script for all).

    python scripts/genproto.py          # write the generated files
    python scripts/genproto.py --check  # exit 1 and name the stale files if any differ
    python scripts/genproto.py go       # only some languages (see GENERATORS)

Python: grpc_tools.protoc (from grpcio-tools, pinned in lock-step with grpcio) writes
clients/python/src/luosho/v1/. Go: the same protoc with protoc-gen-go and protoc-gen-go-grpc
(pinned, `go install`ed into .tools/bin on first use) writes clients/go/luoshov1/. Each
language is one function registered in GENERATORS. TypeScript: the same protoc with ts-proto
(pinned in clients/typescript/package-lock.json) writes clients/typescript/src/gen/. Java:
Maven Central's protoc and protoc-gen-grpc-java write clients/java/src/main/java-gen/. The output
is committed; tests/codebase/test_genproto.py runs
--check so a proto change without regeneration fails the tests.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

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


class Output(NamedTuple):
    """What one language generated: fresh files (in a temporary directory) and the committed
    ones they replace, both keyed by the path relative to ``root`` (the committed folder)."""

    root: Path
    fresh: dict[Path, Path]
    committed: dict[Path, Path]


def _files(root: Path, pattern: str) -> dict[Path, Path]:
    return {p.relative_to(root): p for p in sorted(root.glob(pattern)) if p.is_file()}


def python_output(tmp: Path) -> Output:
    generate_python(tmp)
    return Output(
        PY_OUT,
        _files(tmp, str(PY_PACKAGE / "*_pb2*")),
        _files(PY_OUT, str(PY_PACKAGE / "*_pb2*")),
    )


# One function per language: it writes into its own temporary folder and says what it owns.
GENERATORS: dict[str, Callable[[Path], Output]] = {}
GENERATORS["python"] = python_output

# ---- Go ---------------------------------------------------------------------------------
# protoc-gen-go and protoc-gen-go-grpc are installed with `go install` at these versions into
# the project-local .tools/bin (gitignored); protoc itself is grpcio-tools'. The proto file
# is mapped to the Go package with M options, so proto/ needs no go_package option.
GO_OUT = ROOT / "clients" / "go"
GO_MODULE = "github.com/luoshod/luoshod/clients/go"
GO_PACKAGE = "luoshov1"
GO_TOOLS = ROOT / ".tools" / "bin"
GO_PLUGINS = {
    "protoc-gen-go": ("google.golang.org/protobuf/cmd/protoc-gen-go", "v1.36.6"),
    "protoc-gen-go-grpc": ("google.golang.org/grpc/cmd/protoc-gen-go-grpc", "v1.5.1"),
}


def _go_plugin(name: str) -> Path:
    """The plugin's path, installed (or reinstalled at the pinned version) if need be."""
    import subprocess

    pkg, version = GO_PLUGINS[name]
    exe = GO_TOOLS / name
    if exe.exists():
        out = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
        if out.split()[-1:] == [version] or out.split()[-1:] == [version.lstrip("v")]:
            return exe
    if not shutil.which("go"):
        raise SystemExit(f"{name} {version} is needed: install Go (https://go.dev/dl/)")
    GO_TOOLS.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GOBIN": str(GO_TOOLS)}
    subprocess.run(["go", "install", f"{pkg}@{version}"], check=True, env=env)
    return exe


def go_output(tmp: Path) -> Output:
    import grpc_tools
    from grpc_tools import protoc

    include = Path(grpc_tools.__file__).parent / "_proto"
    protos = [str(p.relative_to(PROTO_ROOT)) for p in _protos()]
    mapping = ",".join(f"M{p}={GO_MODULE}/{GO_PACKAGE};{GO_PACKAGE}" for p in protos)
    args = [
        "protoc",
        f"-I{PROTO_ROOT}",
        f"-I{include}",
        f"--plugin=protoc-gen-go={_go_plugin('protoc-gen-go')}",
        f"--plugin=protoc-gen-go-grpc={_go_plugin('protoc-gen-go-grpc')}",
        f"--go_out={tmp}",
        f"--go_opt=module={GO_MODULE},{mapping}",
        f"--go-grpc_out={tmp}",
        f"--go-grpc_opt=module={GO_MODULE},{mapping}",
        *protos,
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc (Go) failed")
    return Output(
        GO_OUT, _files(tmp, f"{GO_PACKAGE}/*.pb.go"), _files(GO_OUT, f"{GO_PACKAGE}/*.pb.go")
    )


GENERATORS["go"] = go_output


# ---- TypeScript -------------------------------------------------------------------------
# The same protoc runs the ts-proto plugin, pinned with package-lock.json in
# clients/typescript (`npm ci` there installs it; `make test` does).
TS_ROOT = ROOT / "clients" / "typescript"
TS_OUT = TS_ROOT / "src" / "gen"


def typescript_output(tmp: Path) -> Output:
    """The TypeScript modules (ts-proto, @grpc/grpc-js services, ESM)."""
    import grpc_tools
    from grpc_tools import protoc

    plugin = TS_ROOT / "node_modules" / ".bin" / "protoc-gen-ts_proto"
    if not plugin.exists():
        raise SystemExit(
            f"{plugin.relative_to(ROOT)} is missing: run `npm ci` in clients/typescript"
        )
    include = Path(grpc_tools.__file__).parent / "_proto"
    protos = [str(p.relative_to(PROTO_ROOT)) for p in _protos()]
    opts = "outputServices=grpc-js,esModuleInterop=true,importSuffix=.js,env=node"
    args = [
        "protoc",
        f"-I{PROTO_ROOT}",
        f"-I{include}",
        f"--plugin=protoc-gen-ts_proto={plugin}",
        f"--ts_proto_out={tmp}",
        f"--ts_proto_opt={opts}",
        *protos,
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc (ts-proto) failed")
    return Output(TS_OUT, _files(tmp, "**/*.ts"), _files(TS_OUT, "**/*.ts"))


GENERATORS["typescript"] = typescript_output


# ---- Java -------------------------------------------------------------------------------
# grpcio-tools' protoc has no Java generator, so Java uses Maven Central's protoc of the same
# release (35.1) and protoc-gen-grpc-java, fetched once by `mvn dependency:copy` into
# clients/java/.tools/ (gitignored). The runtime in clients/java/pom.xml matches them.
JAVA_OUT = ROOT / "clients" / "java" / "src" / "main" / "java-gen"
JAVA_TOOLS = ROOT / "clients" / "java" / ".tools"
JAVA_PROTOC = ("com.google.protobuf", "protoc", "4.35.1")
JAVA_GRPC_PLUGIN = ("io.grpc", "protoc-gen-grpc-java", "1.82.0")


def _maven_exe(group: str, artifact: str, version: str) -> Path:
    """A linux-x86_64 executable from Maven Central, fetched once with `mvn dependency:copy`."""
    import subprocess

    exe = JAVA_TOOLS / f"{artifact}-{version}-linux-x86_64.exe"
    if not exe.exists():
        mvn = shutil.which("mvn")
        if mvn is None:
            raise SystemExit("Java code generation needs Maven (mvn) on PATH")
        JAVA_TOOLS.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                mvn,
                "-q",
                "-B",
                "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy",
                f"-Dartifact={group}:{artifact}:{version}:exe:linux-x86_64",
                f"-DoutputDirectory={JAVA_TOOLS}",
            ],
            check=True,
            cwd=JAVA_TOOLS,
        )
    exe.chmod(0o755)
    return exe


def java_output(tmp: Path) -> Output:
    """The Java classes (messages and gRPC stubs)."""
    import subprocess

    import grpc_tools

    protoc = _maven_exe(*JAVA_PROTOC)
    plugin = _maven_exe(*JAVA_GRPC_PLUGIN)
    include = Path(grpc_tools.__file__).parent / "_proto"
    protos = [str(p.relative_to(PROTO_ROOT)) for p in _protos()]
    subprocess.run(
        [
            str(protoc),
            f"-I{PROTO_ROOT}",
            f"-I{include}",
            f"--plugin=protoc-gen-grpc-java={plugin}",
            f"--java_out={tmp}",
            f"--grpc-java_out={tmp}",
            *protos,
        ],
        check=True,
    )
    return Output(JAVA_OUT, _files(tmp, "**/*.java"), _files(JAVA_OUT, "**/*.java"))


GENERATORS["java"] = java_output


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if committed code is stale")
    parser.add_argument(
        "languages", nargs="*", metavar="LANG", help=f"only these ({', '.join(GENERATORS)})"
    )
    opts = parser.parse_args()
    unknown = set(opts.languages) - GENERATORS.keys()
    if unknown:
        parser.error(f"unknown language(s): {', '.join(sorted(unknown))}")

    stale: list[str] = []
    count = 0
    with tempfile.TemporaryDirectory() as tmp:
        for lang, generate in GENERATORS.items():
            if opts.languages and lang not in opts.languages:
                continue
            lang_tmp = Path(tmp) / lang
            lang_tmp.mkdir()
            out = generate(lang_tmp)
            fresh, committed = out.fresh, out.committed
            count += len(fresh)
            if opts.check:
                stale += sorted(
                    str((out.root / rel).relative_to(ROOT))
                    for rel in fresh.keys() | committed.keys()
                    if rel not in fresh
                    or rel not in committed
                    or not filecmp.cmp(fresh[rel], committed[rel], shallow=False)
                )
                continue
            for rel in committed.keys() - fresh.keys():
                committed[rel].unlink()
            for rel, src in fresh.items():
                dst = out.root / rel
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst)
                print(f"wrote {dst.relative_to(ROOT)}")
    if opts.check:
        if stale:
            print("stale generated code (run: python scripts/genproto.py):", *stale, sep="\n  ")
            return 1
        print(f"generated code is up to date ({count} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
