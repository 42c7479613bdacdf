"""Every curl line of the "Web console" page (docs/guides/console.md), run against a daemon with the
sessions of the grpcurl section (``demo-1`` finished, ``refund-1`` paused), so the
documented API cannot rot."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path

import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.console import Console, ConsoleFactory

README = Path(__file__).parents[2] / "docs" / "guides" / "console.md"
ERROR = re.compile(r'"code": "[A-Z_]+", "reason": "[A-Z_]+"')


def commands() -> list[str]:
    text = README.read_text()
    section = text[text.index("# Web console\n") :]
    section = section[: section.index("\n## ", 1)]
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", section, re.S):
        lines += block.replace("\\\n", " ").strip().splitlines()
    return lines


def test_the_section_has_every_route() -> None:
    text = " ".join(commands())
    for route in (
        "/sessions?",
        "/sessions/demo-1 ",
        "/history",
        "/fork",
        "/compare",
        "-X DELETE",
        "/approvals?",
        "/resolve",
        "/events",
    ):
        assert route in text + " ", route


@pytest.mark.skipif(shutil.which("curl") is None, reason="no curl")
async def test_readme_curl_lines(make_console: ConsoleFactory) -> None:
    """Twice in a row on one daemon, each time on the grpcurl page's sessions as that page
    leaves them (it deletes and makes them again when run again)."""
    console = await make_console()
    for _ in range(2):
        for sid in ("demo-1", "refund-1"):
            await console.app.stub.DeleteSession(pb.DeleteSessionRequest(session_id=sid))
        await console.finished_trip("demo-1")
        await curl_lines(console, await console.paused_refund("refund-1"))


async def curl_lines(console: Console, approval: str) -> None:
    outputs = []
    for line in commands():
        command = line.replace("http://127.0.0.1:8080", console.base).replace(
            "APPROVAL_ID", approval
        )
        proc = await asyncio.create_subprocess_shell(command, stdout=asyncio.subprocess.PIPE)
        out, _ = await asyncio.wait_for(proc.communicate(), 30)
        text = out.decode()
        assert proc.returncode == 0 and text and not ERROR.search(text), (line, text)
        outputs.append(text)
    assert json.loads(outputs[3])["session_id"] == "demo-1.fork-1"
    assert json.loads(outputs[4])["diverged_at"] == 1
    assert json.loads(outputs[5]) == {"deleted": True}
    resolved = [json.loads(x) for x in outputs[7].splitlines()]
    assert resolved[-1]["event"]["run_done"]["final_text"] == "Done with the refund."
    assert outputs[8].count("\nid: ") == 2 and outputs[8].rstrip().endswith("event: end\ndata: {}")
