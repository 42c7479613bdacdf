"""R92: tokens have names and roles (read, operate, approve, admin), enforced on gRPC and
on the HTTP API; who decided an approval is recorded with the decision
(``approval.resolved``, saved with the claim) and shown by Watch and the JSON API."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.config import ConfigError, Secret
from luoshod.server.auth import Role, TokenAuth, load_tokens, role_needed
from tests.support.console import ConsoleFactory, _token_stub, assert_error
from tests.support.harness import error_info

TOKENS = (
    Secret("viewer:r-secret read"),
    Secret("ops:o-secret operate"),
    Secret("boss:a-secret approve"),
    Secret("root:x-secret"),  # no role: admin, as every token configured before roles
)


def bearer(token: str) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {token}")]


def test_r92_roles_are_read_from_the_entries_and_each_allows_what_the_ones_before_do(
    tmp_path: Path,
) -> None:
    file = tmp_path / "tokens"
    file.write_text("# roles\nviewer:r-secret read\nops:o-secret OPERATE\nplain-token\n")
    auth = TokenAuth(load_tokens([Secret("boss:a-secret approve")], file))
    allowed = {
        token: [
            m
            for m in ("GetSession", "Watch", "Execute", "DeleteSession", "Resolve", "SomethingNew")
            if auth.accepts(bearer(token), f"/luosho.v1.AgentService/{m}") is None
        ]
        for token in ("r-secret", "o-secret", "a-secret", "plain-token", "viewer:r-secret")
    }
    assert allowed == {
        "r-secret": ["GetSession", "Watch"],
        "viewer:r-secret": ["GetSession", "Watch"],  # the whole entry is the same token
        "o-secret": ["GetSession", "Watch", "Execute", "DeleteSession"],
        "a-secret": ["GetSession", "Watch", "Execute", "DeleteSession", "Resolve"],
        "plain-token": [
            "GetSession",
            "Watch",
            "Execute",
            "DeleteSession",
            "Resolve",
            "SomethingNew",
        ],
    }
    refused = auth.accepts(bearer("r-secret"), "/luosho.v1.AgentService/Execute")
    assert refused is not None and refused.reason == "ROLE_NOT_ALLOWED"
    # R85: compacting a session by hand is an operator's act, as deleting it is.
    assert auth.accepts(bearer("r-secret"), "/luosho.v1.AgentService/Compact") is not None
    assert auth.accepts(bearer("o-secret"), "/luosho.v1.AgentService/Compact") is None
    assert refused.metadata == {"method": "Execute", "role": "read", "needed": "operate"}
    assert role_needed("/luosho.v1.AgentService/Resolve") is Role.APPROVE
    assert role_needed("/some.Admin/Thing") is Role.ADMIN  # anything not listed: admin only


@pytest.mark.parametrize("entry", ["ops:o-secret writer", "ops:o-secret read extra"])
def test_r92_an_unknown_role_is_a_config_error_naming_the_roles(entry: str) -> None:
    with pytest.raises(ConfigError, match="read, operate, approve, admin"):
        load_tokens([Secret(entry)], None)


async def test_r92_a_read_token_cannot_execute_resolve_or_delete_over_grpc(
    make_console: ConsoleFactory,
) -> None:
    console = await make_console(token="x-secret", auth_tokens=TOKENS)
    approval_id = await console.paused_refund("refund-1")
    channel = console.app.channel
    viewer = _token_stub(channel, "r-secret")
    got = await viewer.GetSession(pb.GetSessionRequest(session_id="refund-1"))
    assert got.checkpoint.status == pb.CHECKPOINT_STATUS_AWAITING_APPROVAL
    assert [
        a.approval_id for a in (await viewer.ListApprovals(pb.ListApprovalsRequest())).approvals
    ] == [approval_id]
    refused = [
        viewer.Execute(
            pb.ExecuteRequest(
                session_id="new-1", input=[pb.Message(role=pb.ROLE_USER, content="hi")]
            )
        ),
        viewer.Resolve(pb.ResolveRequest(approval_id=approval_id, approved=True)),
    ]
    for call in refused:
        with pytest.raises(grpc.aio.AioRpcError) as e:
            async for _ in call:
                pass
        assert error_info(e.value)[:2] == (grpc.StatusCode.PERMISSION_DENIED, "ROLE_NOT_ALLOWED")
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await viewer.DeleteSession(pb.DeleteSessionRequest(session_id="refund-1"))
    code, reason, meta = error_info(e.value)
    assert (code, reason, meta["role"], meta["needed"]) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "ROLE_NOT_ALLOWED",
        "read",
        "operate",
    )
    operator = _token_stub(channel, "o-secret")
    with pytest.raises(grpc.aio.AioRpcError) as e:
        async for _ in operator.Resolve(pb.ResolveRequest(approval_id=approval_id, approved=True)):
            pass
    assert error_info(e.value)[2]["needed"] == "approve"
    # Nothing was done by the refused calls.
    got = await viewer.GetSession(pb.GetSessionRequest(session_id="refund-1"))
    assert got.checkpoint.status == pb.CHECKPOINT_STATUS_AWAITING_APPROVAL
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await viewer.GetSession(pb.GetSessionRequest(session_id="new-1"))
    assert e.value.code() == grpc.StatusCode.NOT_FOUND

    # The approver's decision names it, in the run's stream and in the session's log. The
    # approved refund is then handed out: the approver answers it, and the run finishes.
    boss = _token_stub(channel, "a-secret")
    events = []
    async for r in boss.Resolve(
        pb.ResolveRequest(approval_id=approval_id, approved=True, note="refund ok'd by phone")
    ):
        events.append(r.event)
        if r.event.type == "tool.call":
            answer = await boss.SubmitToolResult(
                pb.SubmitToolResultRequest(
                    session_id="refund-1",
                    tool_call_id=r.event.tool_call.call.id,
                    result_json=json.dumps({"ok": True}),
                )
            )
            assert answer.outcome == pb.SUBMIT_OUTCOME_ACCEPTED
    assert events[-1].type == "run.done", [e.type for e in events]
    resolved = [e for e in events if e.type == "approval.resolved"]
    assert (
        len(resolved) == 1
        and events[0].type == "run.start"
        and events[1].type == "approval.resolved"
    )
    r = resolved[0].approval_resolved
    assert (r.approval_id, r.approved, r.note, r.decided_by, r.expired) == (
        approval_id,
        True,
        "refund ok'd by phone",
        "token boss",
        False,
    )
    logged = [
        w.event async for w in viewer.Watch(pb.WatchRequest(session_id="refund-1", follow=False))
    ]
    assert [e.approval_resolved.decided_by for e in logged if e.type == "approval.resolved"] == [
        "token boss"
    ]


async def test_r92_a_read_token_cannot_change_anything_over_http_and_the_decider_is_shown(
    make_console: ConsoleFactory,
) -> None:
    console = await make_console(token="x-secret", auth_tokens=TOKENS)
    approval_id = await console.paused_refund("refund-2")
    http = console.http
    read = {"Authorization": "Bearer r-secret"}
    async with http.get(console.base + "/api/v1/sessions", headers=read) as r:
        assert r.status == 200 and [s["session_id"] for s in (await r.json())["sessions"]] == [
            "refund-2"
        ]
    changes = [
        ("post", "/api/v1/sessions/refund-2/resume", {}),
        ("post", f"/api/v1/approvals/{approval_id}/resolve", {"approved": True}),
        ("post", "/api/v1/sessions/refund-2/fork", {"from_step": 1}),
        ("post", "/api/v1/sessions/refund-2/cancel", {}),
        ("delete", "/api/v1/sessions/refund-2", None),
    ]
    for method, path, body in changes:
        async with http.request(method, console.base + path, json=body, headers=read) as r:
            assert_error(r.status, await r.json(), 403, "PERMISSION_DENIED", "ROLE_NOT_ALLOWED")
    async with http.post(
        console.base + f"/api/v1/approvals/{approval_id}/resolve",
        json={"approved": True},
        headers={"Authorization": "Bearer o-secret"},
    ) as r:
        assert_error(r.status, await r.json(), 403, "PERMISSION_DENIED", "ROLE_NOT_ALLOWED")
    status, body = await console.get("/api/v1/sessions/refund-2")
    assert status == 200 and body["checkpoint"]["status"] == "CHECKPOINT_STATUS_AWAITING_APPROVAL"

    async with http.post(
        console.base + f"/api/v1/approvals/{approval_id}/resolve",
        json={"approved": False, "note": "not this one"},
        headers={"Authorization": "Bearer a-secret"},
    ) as r:
        assert r.status == 200
        lines = [json.loads(line) for line in (await r.text()).splitlines() if line.strip()]
    decided = [
        x["event"]["approval_resolved"]
        for x in lines
        if x.get("event", {}).get("type") == "approval.resolved"
    ]
    assert decided == [
        {
            "approval_id": approval_id,
            "tool_call_id": decided[0]["tool_call_id"],
            "tool_name": "refund",
            "approved": False,
            "note": "not this one",
            "decided_by": "token boss",
            "expired": False,
            "answer": "",  # a plain approval's decision has no answer
        }
    ]


def test_r92_the_cli_names_who_decided() -> None:
    from luoshod.cli.admin.lifecycle import event_line

    e = pb.Event(
        seq=7,
        type="approval.resolved",
        approval_resolved=pb.ApprovalResolved(
            approval_id="ap-1",
            tool_call_id="call_0_0",
            tool_name="refund",
            approved=True,
            note="ok by phone",
            decided_by="token boss",
        ),
    )
    assert event_line(e).endswith(
        "approval.resolved  refund [call_0_0] approved by token boss: “ok by phone”"
    )
    e.approval_resolved.expired, e.approval_resolved.decided_by = True, ""
    assert "rejected: the approval ap-1 expired" in event_line(e)
