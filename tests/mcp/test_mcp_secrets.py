"""R73: secrets of daemon tools (an HTTP server's token, a stdio server's environment) appear
in no checkpoint, event, log line, error, ``luoshod config show`` or ``luoshod mcp list``
output. A real ``luoshod serve`` (DEBUG logs) on a SQLite file runs sessions against a real
MCP server over streamable HTTP that demands the token, and against one that refuses the
daemon's (wrong) token; then everything it wrote or said is searched for the secrets."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import grpc

from luosho.v1 import agent_pb2 as pb
from luosho.v1 import agent_pb2_grpc as pb_grpc
from tests.support.daemon_process import DaemonProcess, db_url
from tests.support.harness import agent
from tests.support.mcp_servers import SERVER, HttpServer, attempts

TOKEN = "tok-5ecret-0f-the-tracker"
WRONG = "wrong-5ecret-n0t-the-token"
ENV_SECRET = "env-5ecret-0f-the-stdio-server"


def _toml(tmp: Path, url: str, attempts_file: Path) -> Path:
    (tmp / "wrong.txt").write_text(f"Bearer {WRONG}\n")
    path = tmp / "luoshod.toml"
    path.write_text(
        "[mcp_servers.web]\n"
        f"url = {json.dumps(url)}\n"
        'headers_env = { Authorization = "WEB_AUTH" }\n'
        "[mcp_servers.refused]\n"
        f"url = {json.dumps(url)}\n"
        f"headers_file = {{ Authorization = {json.dumps(str(tmp / 'wrong.txt'))} }}\n"
        "[mcp_servers.files]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f'args = [{json.dumps(str(SERVER))}, "stdio"]\n'
        'env_from = { API_KEY = "FILES_KEY" }\n'
        f"env = {{ MCP_ATTEMPTS = {json.dumps(str(attempts_file))} }}\n"
    )
    return path


def _spec(server: str, tool: str, args: dict, id_: str) -> pb.AgentSpec:
    spec = agent(
        [
            {
                "text": "",
                "tool_calls": [{"name": f"{server}__{tool}", "arguments": args, "id": id_}],
            },
            {"text": "ok"},
        ],
        [],
    )
    spec.mcp_servers.add(name=server)
    return spec


def test_r73_secrets_appear_nowhere(tmp_path: Path) -> None:
    attempts_file = tmp_path / "attempts.jsonl"
    server = HttpServer(attempts_file, token=TOKEN).start()
    env = {"WEB_AUTH": f"Bearer {TOKEN}", "FILES_KEY": ENV_SECRET}
    config = _toml(tmp_path, server.url, attempts_file)
    daemon = DaemonProcess(
        "--store",
        db_url(tmp_path),
        "--config",
        str(config),
        "--log-level",
        "DEBUG",
        "--log-contents",
        env=env,
    ).start()
    seen: list[str] = []
    try:
        with grpc.insecure_channel(daemon.address) as ch:
            stub = pb_grpc.AgentServiceStub(ch)
            for sid, spec in [
                ("s-web", _spec("web", "lookup", {"word": "w"}, "c-web")),
                ("s-refused", _spec("refused", "lookup", {"word": "w"}, "c-ref")),
                ("s-files", _spec("files", "add", {"a": 1, "b": 2}, "c-files")),
            ]:
                events = list(
                    stub.Execute(
                        pb.ExecuteRequest(
                            session_id=sid,
                            input=[pb.Message(role=pb.ROLE_USER, content="go")],
                            agent=spec,
                        )
                    )
                )
                assert events[-1].event.type == "run.done", sid
                seen += [str(e) for e in events]
                seen.append(str(stub.GetSession(pb.GetSessionRequest(session_id=sid))))
                seen.append(str(stub.History(pb.HistoryRequest(session_id=sid))))
                seen += [str(r) for r in stub.Watch(pb.WatchRequest(session_id=sid), timeout=10)]
            # the tools ran (the token got through), and the refused server's call is an error
            # result
            assert [a["key"] for a in attempts(attempts_file)] == ["c-web", "c-files"]
            web = stub.GetSession(pb.GetSessionRequest(session_id="s-web")).checkpoint
            assert "w: found" in [m for m in web.messages if m.role == pb.ROLE_TOOL][0].content
            # an error that quotes the configuration: an unknown server
            try:
                list(
                    stub.Execute(
                        pb.ExecuteRequest(
                            session_id="s-x",
                            input=[pb.Message(role=pb.ROLE_USER, content="go")],
                            agent=_spec("nope", "lookup", {}, "c-x"),
                        )
                    )
                )
            except grpc.RpcError as e:
                seen.append(f"{e.code()} {e.details()} {e.trailing_metadata()}")
            listed = stub.ListMcpServers(pb.ListMcpServersRequest(refresh=True))
            seen.append(str(listed))
            states = {s.name: s for s in listed.servers}
            assert (
                states["web"].state == pb.MCP_SERVER_STATE_RUNNING
                and states["refused"].state == pb.MCP_SERVER_STATE_DOWN
            )
            assert "401" in states["refused"].last_error or states["refused"].last_error
        cli_env = {**os.environ, **env, "LUOSHOD_ADDRESS": daemon.address}
        mcp_list = subprocess.run(
            [sys.executable, "-m", "luoshod", "mcp", "list"],
            capture_output=True,
            text=True,
            env=cli_env,
            timeout=60,
        )
        assert mcp_list.returncode == 0, mcp_list.stderr
        assert re.search(r"^web\s+http\s+running\s+1\s+7", mcp_list.stdout, re.M), mcp_list.stdout
        assert re.search(r"^files__delete_record\s+gated\s+Deletes a record", mcp_list.stdout, re.M)
        assert re.search(r"^files__lookup\s+-\s+", mcp_list.stdout, re.M)
        seen += [mcp_list.stdout, mcp_list.stderr]
        show = subprocess.run(
            [sys.executable, "-m", "luoshod", "config", "show", "--config", str(config)],
            capture_output=True,
            text=True,
            env=cli_env,
            timeout=60,
        )
        assert show.returncode == 0, show.stderr
        # where each secret comes from (a variable's name, a file's path) is shown, never its value
        assert '[mcp_servers.web.headers_env]\nAuthorization = "WEB_AUTH"' in show.stdout, (
            show.stdout
        )
        assert '[mcp_servers.files.env_from]\nAPI_KEY = "FILES_KEY"' in show.stdout
        seen += [show.stdout, show.stderr]
        assert daemon.terminate() == 0
        out, err = daemon.proc.stdout.read(), daemon.stderr()
        seen += [out, err]
        assert "MCP server web started" in err  # the logs were on, at DEBUG
    finally:
        daemon.stop()
        server.stop()
    store = (tmp_path / "luoshod.db").read_bytes() + b"".join(
        p.read_bytes() for p in tmp_path.glob("luoshod.db-*")
    )
    for secret in (TOKEN, WRONG, ENV_SECRET):
        for text in seen:
            assert secret not in text, text
        assert secret.encode() not in store
