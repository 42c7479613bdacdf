"""Real providers in a real ``luoshod serve`` process: a kill -9 between the model's answer
and the tool results (R22: the model is not asked again on resume), the API key kept out
of logs, errors and checkpoints, and configuration errors at start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import grpc

from luosho.v1 import agent_pb2 as pb
from tests.support.daemon_process import DaemonProcess, db_url
from tests.support.harness import Harness, assert_valid_transcript, error_info
from tests.support.model_fakes import FakeServer, Fault, turn
from tests.support.providers import KEY_ENV, add, llm_agent, provider_toml


async def test_kill9_between_the_models_answer_and_the_tool_results(
    fake: FakeServer, tmp_path: Path
) -> None:
    config = tmp_path / "luoshod.toml"
    config.write_text(provider_toml(fake))
    # Restarted under the same --lease-owner: its killed incarnation's lease is freed.
    args = ("--store", db_url(tmp_path), "--config", str(config), "--lease-owner", "d1")
    env = {KEY_ENV: fake.key}
    fake.script = [
        turn("two calls at once", ("add", {"a": 1}), ("add", {"a": 2})),
        turn("", ("add", {"a": 3})),
        turn("all done"),
    ]
    first = DaemonProcess(*args, env=env).start()
    killed: list[str] = []
    try:
        h = Harness(first.address)

        async def kill_at_first_tool_call(e: pb.Event) -> None:
            if e.type == "tool.call" and not killed:  # the turn is checkpointed (R1), no result yet
                killed.append(e.tool_call.call.id)
                first.kill9()

        log = await h.run("crash", "go", llm_agent(), on_event=kill_at_first_tool_call)
        assert killed and log.error is not None
        assert log.error.code() == grpc.StatusCode.UNAVAILABLE
        await h.close()
    finally:
        first.stop()
    assert fake.answered() == [0]

    second = DaemonProcess(*args, env=env).start()
    try:
        h = Harness(second.address)
        cp = await h.get("crash")
        assert cp.status == pb.CHECKPOINT_STATUS_IN_PROGRESS
        saved = cp.messages[-1]
        assert saved.role == pb.ROLE_ASSISTANT and saved.content == "two calls at once"
        handed: list[str] = []
        log = await h.run(
            "crash",
            None,
            resume=True,
            tools={"add": add},
            on_event=lambda e: (
                handed.append(e.tool_call.call.id) if e.type == "tool.call" else None
            ),
        )
        assert log.error is None, log.error
        assert log.done.final_text == "all done"
        # The saved turn's calls ran (the one lost in the crash again, same id: R24), and
        # the model was never asked for that turn again (R22).
        assert handed[:2] == [c.id for c in saved.tool_calls] and handed[0] == killed[0]
        assert fake.answered() == [0, 1, 2]
        cp = await h.get("crash")
        assert_valid_transcript(cp)
        assert cp.usage.model_calls == 3
        await h.close()
    finally:
        second.stop()


async def test_the_key_never_appears_in_logs_errors_or_checkpoints(
    fake: FakeServer, tmp_path: Path
) -> None:
    secret = "sk-luoshod-test-" + "9f8e7d6c5b4a" * 3
    fake.key = secret
    config = tmp_path / "luoshod.toml"
    config.write_text(provider_toml(fake))
    stderr_path = tmp_path / "daemon.log"
    env = {
        **os.environ,
        KEY_ENV: secret,
        "LUOSHOD_CONFIG": str(config),  # the environment variable, not the flag
        "LUOSHOD_LOG_LEVEL": "DEBUG",  # the chattiest the daemon gets, SDK loggers included
    }
    with stderr_path.open("w") as stderr:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "luoshod",
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--store",
                db_url(tmp_path),
            ],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env=env,
        )
    try:
        line = proc.stdout.readline()
        assert line.startswith("luoshod listening on "), stderr_path.read_text()
        h = Harness(line.removeprefix("luoshod listening on ").strip())
        fake.script = [turn("", ("add", {"a": 1, "b": 1})), turn("2")]
        good = await h.run("good", "1+1", llm_agent(), {"add": add})
        assert good.error is None, good.error
        assert {fake.received_key(r.headers) for r in fake.requests} == {secret}  # it was used

        # An upstream error that quotes the key it received (as real APIs do).
        fake.faults = [Fault(401, "authentication_error", echo_key=True)]
        bad = await h.run("bad", "hi", llm_agent())
        code, reason, meta = error_info(bad.error)
        assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "PROVIDER_REJECTED")
        assert secret not in bad.error.details() and "[redacted]" in bad.error.details()
        assert all(secret not in v for v in meta.values())
        assert "[redacted]" in meta["provider_message"]

        for sid in ("good", "bad"):
            try:
                cp = await h.get(sid)
            except grpc.aio.AioRpcError:
                continue
            assert secret.encode() not in cp.SerializeToString()
        await h.close()
    finally:
        proc.terminate()
        proc.wait(20)
        proc.stdout.close()
    log = stderr_path.read_text()
    assert "DEBUG" in log and "run ended with error" in log
    assert secret not in log
    stores = list(tmp_path.glob("luoshod.db*"))
    assert stores and all(secret.encode() not in f.read_bytes() for f in stores)


def serve(*args: str, unset: str = "") -> subprocess.CompletedProcess[str]:
    """``luoshod serve`` that is expected to refuse to start."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "luoshod",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--store",
            "memory://",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if k != unset},
    )


def test_a_bad_config_file_stops_the_daemon_naming_the_key(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text('[providers.openai]\nkind = "openia"\n')
    out = serve("--config", str(config))
    assert out.returncode == 2
    assert "providers.openai.kind: must be one of openai, openai_responses, anthropic" in out.stderr


def test_a_missing_key_variable_stops_the_daemon(tmp_path: Path) -> None:
    config = tmp_path / "nokey.toml"
    config.write_text(
        '[providers.claude]\nkind = "anthropic"\napi_key_env = "LUOSHOD_TEST_UNSET_KEY"\n'
    )
    out = serve("--config", str(config), unset="LUOSHOD_TEST_UNSET_KEY")
    assert out.returncode == 2
    assert (
        "providers.claude.api_key_env: environment variable LUOSHOD_TEST_UNSET_KEY is not set"
        in out.stderr
    )
