"""The container image's and the Kubernetes manifest's files as the tests read them: the
Dockerfile's instructions (its final stage, ENV, exec forms), what .dockerignore keeps in
the build context, what git tracks, and the manifest's documents."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Dockerfile, continuation lines joined."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            word, _, rest = line.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def final_stage() -> list[tuple[str, str]]:
    instructions = dockerfile()
    last_from = max(i for i, (word, _) in enumerate(instructions) if word == "FROM")
    return instructions[last_from:]


def exec_form(name: str) -> list[str]:
    return json.loads(next(rest for word, rest in final_stage() if word == name))


def image_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for word, rest in final_stage():
        if word == "ENV":
            for pair in shlex.split(rest):
                key, _, value = pair.partition("=")
                env[key] = value
    return env


def dockerignore() -> list[re.Pattern[str]]:
    """.dockerignore's patterns (``*`` within a folder, ``**`` across folders)."""
    patterns = []
    for line in (ROOT / ".dockerignore").read_text().splitlines():
        line = line.strip().strip("/")
        if line and not line.startswith("#"):
            glob = (
                re.escape(line)
                .replace(r"\*\*/", "(.*/)?")
                .replace(r"\*\*", ".*")
                .replace(r"\*", "[^/]*")
            )
            patterns.append(re.compile(glob))
    return patterns


def in_context(path: str) -> bool:
    """Whether the build context keeps ``path``: neither it nor a folder above it is ignored."""
    parts = path.split("/")
    return not any(
        p.fullmatch("/".join(parts[:n])) for p in dockerignore() for n in range(1, len(parts) + 1)
    )


def tracked(path: str) -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "--", path], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return out.stdout.split()


def build_copies() -> list[str]:
    """The sources of the build stage's COPY instructions (not those between stages)."""
    return [
        source.rstrip("/")
        for word, rest in dockerfile()
        if word == "COPY" and "--from" not in rest
        for source in rest.split()[:-1]
    ]


def manifest() -> list[dict]:
    return list(yaml.safe_load_all((ROOT / "deploy/kubernetes/sidecar.yaml").read_text()))
