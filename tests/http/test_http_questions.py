"""Questions over the HTTP API (R88): ``GET /approvals`` lists a question with its kind and
text, ``POST /approvals/{id}/resolve`` takes ``answer``, and the refusals are the gRPC ones."""

from __future__ import annotations

import json

from tests.support.console import QUESTION, Console, assert_error

API = "/api/v1"


async def test_r88_the_http_api_lists_and_answers_a_question(console: Console) -> None:
    question = await console.paused_question("report-1")
    refund = await console.paused_refund("refund-1")
    status, body = await console.get(f"{API}/approvals")
    assert status == 200
    kinds = {a["approval_id"]: (a["kind"], a.get("question", "")) for a in body["approvals"]}
    assert kinds == {
        question: ("APPROVAL_KIND_QUESTION", QUESTION),
        refund: ("APPROVAL_KIND_APPROVAL", ""),
    }
    status, body = await console.post(f"{API}/approvals/{question}/resolve", {"approved": True})
    assert_error(status, body, 400, "INVALID_ARGUMENT", "ANSWER_REQUIRED")
    status, body = await console.post(f"{API}/approvals/{refund}/resolve", {"answer": "yes"})
    assert_error(status, body, 400, "INVALID_ARGUMENT", "ANSWER_NOT_ALLOWED")
    status, lines = await console.post(
        f"{API}/approvals/{question}/resolve", {"answer": "weekly, please"}
    )
    assert status == 200, lines
    events = [line["event"] for line in lines]
    resolved = next(e["approval_resolved"] for e in events if e["type"] == "approval.resolved")
    assert resolved["answer"] == "weekly, please" and resolved["approved"] is True
    result = next(e["tool_result"] for e in events if e["type"] == "tool.result")
    assert json.loads(result["result_json"]) == {"answer": "weekly, please"}
    assert events[-1]["run_done"]["finish_reason"] == "FINISH_REASON_STOP"
    assert not any(e["type"] == "tool.call" for e in events)
