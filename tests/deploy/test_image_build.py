"""Issue 17: the image's file system built from the Dockerfile as written, and its
entrypoint run — with no Docker engine (none can run here, and the base image cannot be
pulled): the build stage's COPY and RUN instructions are carried out in order, literally,
in a folder standing for the image (``/opt/luoshod``, ``/src``, ``/tmp`` mapped into it;
``python`` is this Python, the base image's 3.11), each COPY taking only what the build
context keeps (``.dockerignore``). Then the final stage's ENV, ENTRYPOINT + CMD serve, its
HEALTHCHECK answers 0, and SIGTERM stops it with 0. A Dockerfile step that does not work —
a file not copied yet, a requirement the listing misses, a broken install — fails here."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support.container import (
    ROOT,
    dockerfile,
    final_stage,
    image_env,
    in_context,
    tracked,
)


def build_stage() -> list[tuple[str, str]]:
    steps = dockerfile()
    froms = [i for i, (word, _) in enumerate(steps) if word == "FROM"]
    return steps[froms[0] + 1 : froms[-1]]


def copy(sources: list[str], dest: str, context: Path) -> None:
    """``COPY SRC… DEST`` from the build context (what git tracks and .dockerignore keeps)."""
    for source in sources:
        files = [f for f in tracked(source.rstrip("/")) if in_context(f)]
        assert files, f"COPY {source}: nothing in the build context"
        for f in files:
            if source.endswith("/"):
                target = context / dest / Path(f).relative_to(source.rstrip("/"))
            elif dest.endswith("/"):
                target = context / dest / Path(f).name
            else:
                target = context / dest
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / f, target)


# The build stage installs every dependency into a new venv (pip, from the package index):
# minutes on a loaded 2-core machine, beyond the suite's default 120 s.
@pytest.mark.timeout(900)
def test_the_image_file_system_builds_and_its_entrypoint_serves(tmp_path: Path) -> None:
    root = Path(tempfile.mkdtemp(prefix="img", dir="/tmp"))  # short: a unix socket lives in it
    try:
        mapped = {
            "/opt/luoshod": root / "opt/luoshod",
            "/tmp/": f"{root}/tmp/",
            "/var/lib/luoshod": root / "var/lib/luoshod",
            "/run/luoshod": root / "run/luoshod",
        }

        pattern = re.compile("|".join(re.escape(k) for k in mapped))

        def remap(text: str) -> str:  # one pass: the folder standing for the image is in /tmp too
            return pattern.sub(lambda m: str(mapped[m.group(0)]), text)

        (root / "tmp").mkdir()
        context = root / "src"
        context.mkdir()
        for word, rest in build_stage():
            if word == "COPY":
                *sources, dest = rest.split()
                copy(sources, dest, context)
            elif word == "RUN":
                command = remap(rest)
                if command.startswith("python "):
                    command = f"{shlex.quote(sys.executable)} {command.removeprefix('python ')}"
                done = subprocess.run(
                    ["sh", "-c", command], cwd=context, capture_output=True, text=True, timeout=840
                )
                assert done.returncode == 0, (
                    f"RUN {rest[:80]}…\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
                )
            else:
                assert word == "WORKDIR" and rest == "/src", (word, rest)

        # The final stage: its folders, its ENV, its command.
        for d in ("var/lib/luoshod", "run/luoshod"):
            (root / d).mkdir(parents=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("LUOSHOD_")}
        for key, value in image_env().items():
            env[key] = (
                remap(value)
                .replace("$PATH", os.environ["PATH"])
                .replace("127.0.0.1:50051", "127.0.0.1:0")
            )
        workdir = remap(next(rest for word, rest in final_stage() if word == "WORKDIR"))
        command = json.loads(next(r for w, r in final_stage() if w == "ENTRYPOINT")) + json.loads(
            next(r for w, r in final_stage() if w == "CMD")
        )
        binary = root / "opt/luoshod/bin" / command[0]
        assert binary.exists() and env["PATH"].startswith(str(root / "opt/luoshod/bin"))
        proc = subprocess.Popen(
            [str(binary), *command[1:]],
            cwd=workdir,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            line = proc.stdout.readline()
            assert line.startswith("luoshod listening on unix:"), (
                line if line else line + proc.stderr.read()
            )
            health = next(rest for word, rest in final_stage() if word == "HEALTHCHECK")
            probe = json.loads(health[health.index("CMD") + 3 :].strip())
            done = subprocess.run(
                [str(root / "opt/luoshod/bin" / probe[0]), *probe[1:]],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert (done.returncode, done.stderr) == (0, "")
            assert (
                root / "var/lib/luoshod/store/data.mdb"
            ).exists()  # the image's default store, in its volume
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(60) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
            proc.stdout.close()
            proc.stderr.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
