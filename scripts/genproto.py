#!/usr/bin/env python3
"""Generate the protobuf/gRPC code of every language from proto/ (one script for all).

    python scripts/genproto.py          # write the generated files
    python scripts/genproto.py --check  # exit 1 and name the stale files if any differ

Python: grpc_tools.protoc (from grpcio-tools, pinned in lock-step with grpcio) writes
clients/python/src/luosho/v1/.
Java: protoc and the protoc-gen-grpc-java plugin, both fetched from Maven Central by
`mvn dependency:copy` (cached in clients/java/.tools/), write clients/java/src/main/java-gen/.
grpcio-tools' protoc has no Java generator, so Java uses Maven's protoc of the same release.

The output is committed; tests/test_genproto.py runs --check so a proto change without
regeneration fails the tests. Each language is one generate_X(out) function plus one line
in LANGUAGES.
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

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


# ---- Java ------------------------------------------------------------------------------

JAVA_OUT = ROOT / "clients" / "java" / "src" / "main" / "java-gen"
JAVA_TOOLS = ROOT / "clients" / "java" / ".tools"
# protoc 35.1 is the compiler grpcio-tools embeds; the Java runtime in clients/java/pom.xml
# (protobuf-java 4.35.1, grpc 1.82.0) matches these.
JAVA_PROTOC = ("com.google.protobuf", "protoc", "4.35.1")
JAVA_GRPC_PLUGIN = ("io.grpc", "protoc-gen-grpc-java", "1.82.0")


def _maven_exe(group: str, artifact: str, version: str) -> Path:
    """A linux-x86_64 executable from Maven Central, fetched once with `mvn dependency:copy`."""
    exe = JAVA_TOOLS / f"{artifact}-{version}-linux-x86_64.exe"
    if not exe.exists():
        mvn = shutil.which("mvn")
        if mvn is None:
            raise SystemExit("Java code generation needs Maven (mvn) on PATH")
        JAVA_TOOLS.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                mvn, "-q", "-B",
                "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy",
                f"-Dartifact={group}:{artifact}:{version}:exe:linux-x86_64",
                f"-DoutputDirectory={JAVA_TOOLS}",
            ],
            check=True,
            cwd=JAVA_TOOLS,
        )
    exe.chmod(0o755)
    return exe


def generate_java(out: Path) -> list[Path]:
    """Write the Java classes (messages and gRPC stubs) under out; return their paths."""
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
            f"--java_out={out}",
            f"--grpc-java_out={out}",
            *protos,
        ],
        check=True,
    )
    return sorted(out.rglob("*.java"))


# name, generate(out), where its output is committed, which files under there it owns
LANGUAGES = [
    ("python", generate_python, PY_OUT, f"{PY_PACKAGE}/*_pb2*"),
    ("java", generate_java, JAVA_OUT, "**/*.java"),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if committed code is stale")
    opts = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        fresh: dict[Path, Path] = {}
        committed: dict[Path, Path] = {}
        for name, generate, out_root, pattern in LANGUAGES:
            tmp_out = Path(tmp) / name
            tmp_out.mkdir()
            generate(tmp_out)
            for p in sorted(tmp_out.glob(pattern)):
                fresh[out_root / p.relative_to(tmp_out)] = p
            for p in sorted(out_root.glob(pattern)):
                committed[p] = p
        if opts.check:
            stale = sorted(
                str(dst.relative_to(ROOT))
                for dst in fresh.keys() | committed.keys()
                if dst not in fresh
                or dst not in committed
                or not filecmp.cmp(fresh[dst], committed[dst], shallow=False)
            )
            if stale:
                print("stale generated code (run: python scripts/genproto.py):", *stale, sep="\n  ")
                return 1
            print(f"generated code is up to date ({len(fresh)} files)")
            return 0
        for dst in committed.keys() - fresh.keys():
            dst.unlink()
        for dst, src in fresh.items():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
            print(f"wrote {dst.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
