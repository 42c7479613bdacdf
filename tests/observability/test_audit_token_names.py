"""Issue 17: audit lines name the token by the name the configuration gives it
(``NAME:TOKEN`` in the token file and in ``auth_tokens``), an unnamed token by its SHA-256
prefix, and never print a token. A real daemon subprocess; its log is read."""

from __future__ import annotations

import hashlib
from pathlib import Path

import grpc

from luosho.v1 import agent_pb2 as pb
from luosho.v1 import agent_pb2_grpc as pb_grpc
from tests.support.cli import PAY, luoshod
from tests.support.daemon_process import DaemonProcess, db_url
from tests.support.harness import user

SECRETS = ("s3cr3t-ana-91f2", "plain-token-77ab", "b0t-token-c0ffee")


def paused(address: str, session_id: str, token: str) -> str:
    with grpc.insecure_channel(address) as ch:
        call = pb_grpc.AgentServiceStub(ch).Execute(
            pb.ExecuteRequest(session_id=session_id, input=[user("go")], agent=PAY),
            metadata=[("authorization", f"Bearer {token}")],
        )
        return [r.event for r in call][-1].run_done.approval_id


def test_audit_lines_say_the_tokens_name_and_never_the_token(tmp_path: Path) -> None:
    ana, plain, bot = SECRETS
    (tmp_path / "tokens").write_text(f"# operators\nana:{ana}\n{plain}\n")
    d = DaemonProcess(
        "--store",
        db_url(tmp_path),
        "--auth-token-file",
        str(tmp_path / "tokens"),
        "--log-level",
        "INFO",
        env={"LUOSHOD_AUTH_TOKENS": f"ci-bot:{bot}"},
    ).start()
    try:
        first, second = paused(d.address, "pay-1", bot), paused(d.address, "pay-2", bot)
        assert (
            luoshod(
                "approvals", "approve", first, address=d.address, env={"LUOSHOD_TOKEN": ana}
            ).returncode
            == 0
        )
        out = luoshod(
            "approvals",
            "reject",
            second,
            "--note",
            "no",
            address=d.address,
            env={"LUOSHOD_TOKEN": plain},
        )
        assert out.returncode == 0, out.stderr
        assert (
            luoshod(
                "sessions", "delete", "pay-2", address=d.address, env={"LUOSHOD_TOKEN": bot}
            ).returncode
            == 0
        )
        # The whole line is a token too (a secret with a colon, set before names existed,
        # keeps working); a wrong secret under a right name is not.
        assert (
            luoshod(
                "sessions", "list", address=d.address, env={"LUOSHOD_TOKEN": f"ana:{ana}"}
            ).returncode
            == 0
        )
        refused = luoshod(
            "sessions", "list", address=d.address, env={"LUOSHOD_TOKEN": f"ana:{bot}"}
        )
        assert refused.returncode != 0 and "TOKEN_INVALID" in refused.stderr + refused.stdout
    finally:
        assert d.terminate() == 0
        log = d.stderr()
        d.stop()
    assert f"audit: approve approval={first} session=pay-1 by='token ana'" in log, log
    digest = hashlib.sha256(plain.encode()).hexdigest()[:8]
    assert f"audit: reject approval={second} session=pay-2 by='token sha256:{digest}'" in log, log
    assert "audit: delete session=pay-2 keep_history=False by='token ci-bot'" in log, log
    for secret in SECRETS:
        assert secret not in log


def test_a_name_given_twice_is_refused_at_start(tmp_path: Path) -> None:
    (tmp_path / "tokens").write_text("ana:token-one-1\nana:token-two-2\n")
    d = DaemonProcess("--store", db_url(tmp_path), "--auth-token-file", str(tmp_path / "tokens"))
    try:
        d.start()
        raise AssertionError("the daemon started")
    except RuntimeError as e:
        message = str(e)
    finally:
        d.stop()
    assert "the token name 'ana' is given twice" in message
    assert "token-one-1" not in message and "token-two-2" not in message
