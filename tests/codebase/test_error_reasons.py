"""The proto's ErrorReason enum is the list of reasons the daemon sends, no more, no less.

The code's reason strings are found by reading its syntax trees: a ``reason="X"`` keyword, a
class's ``reason = "X"``, the HTTP layer's ``invalid("X", …)``, ``_refused("X", …)``,
``RpcFailure(code, "X", …)`` and any UPPER_SNAKE string assigned to a variable ``reason``.
The HTTP layer's one computed reason, ``INVALID_<FIELD>`` for a bad query parameter, is
expanded for every field of the messages its routes read from a query string.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import grpc
import pytest
from google.protobuf.descriptor import FieldDescriptor
from google.rpc import error_details_pb2, status_pb2

from luosho.v1 import agent_pb2 as pb
from luoshod import errors
from luoshod.server import status

ROOT = Path(__file__).resolve().parents[2]
UPPER_SNAKE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$")
#: Calls whose argument at this position is a reason.
REASON_ARG = {"invalid": 0, "_refused": 0, "RpcFailure": 1}


def _name(node: ast.expr) -> str:
    return (
        node.id
        if isinstance(node, ast.Name)
        else node.attr
        if isinstance(node, ast.Attribute)
        else ""
    )


def _strings(node: ast.AST) -> list[str]:
    return [
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def code_reasons() -> dict[str, set[str]]:
    """Every reason string in luoshod/ and drivers/ → the files it is in."""
    found: dict[str, set[str]] = {}
    files = [
        p for d in ("luoshod", "drivers") for p in (ROOT / d).rglob("*.py") if "_pb2" not in p.name
    ]
    for path in files:
        tree = ast.parse(path.read_text(), str(path))
        where = str(path.relative_to(ROOT))
        for node in ast.walk(tree):
            values: list[str] = []
            if isinstance(node, ast.Call):
                values += [s for k in node.keywords if k.arg == "reason" for s in _strings(k.value)]
                pos = REASON_ARG.get(_name(node.func))
                if pos is not None and len(node.args) > pos:
                    values += (
                        _strings(node.args[pos])
                        if not isinstance(node.args[pos], ast.JoinedStr)
                        else []
                    )
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                named = any(_name(t) == "reason" for t in targets)
                if named and node.value is not None and not isinstance(node.value, ast.JoinedStr):
                    values += _strings(node.value)
            for value in values:
                if UPPER_SNAKE.match(value):
                    found.setdefault(value, set()).add(where)
    return found


def query_field_reasons() -> set[str]:
    """``INVALID_<FIELD>`` for each non-string field the HTTP routes read from a query string."""
    source = (ROOT / "luoshod" / "http" / "api.py").read_text()
    messages = set(re.findall(r"query_request\(\s*request,\s*pb\.(\w+)\(", source))
    assert messages, "no query_request(request, pb.X()) found in luoshod/http/api.py"
    assert 'reason = f"INVALID_{field.name.upper()}"' in source, (
        "the computed reason changed: update this test"
    )
    return {
        f"INVALID_{f.name.upper()}"
        for m in messages
        for f in getattr(pb, m).DESCRIPTOR.fields
        if f.cpp_type != FieldDescriptor.CPPTYPE_STRING and not f.is_repeated
    }


def test_the_enum_follows_the_mapping_rule() -> None:
    names = pb.ErrorReason.keys()
    assert names[0] == "ERROR_REASON_UNSPECIFIED" and pb.ErrorReason.Value(names[0]) == 0
    assert all(n.startswith(status.REASON_PREFIX) and UPPER_SNAKE.match(n) for n in names)
    assert status.reason_value("SESSION_BUSY") == pb.ERROR_REASON_SESSION_BUSY
    assert status.reason_value("NOT_A_REASON") == pb.ERROR_REASON_UNSPECIFIED


def test_the_daemon_sends_no_reason_outside_the_enum() -> None:
    found = code_reasons()
    # The scan sees the code: a broken scan would pass by finding nothing.
    assert {
        "SESSION_BUSY",
        "INVALID_SESSION_ID",
        "CSRF_TOKEN_INVALID",
        "NO_SUCH_ROUTE",
    } <= found.keys()
    sent = found.keys() | query_field_reasons()
    unknown = {
        r: sorted(found.get(r, {"luoshod/http/api.py (a query field)"}))
        for r in sent - status.REASONS
    }
    assert not unknown, (
        f"reasons the daemon can send but ErrorReason lacks (add them to the proto): {unknown}"
    )


#: Reasons the daemon no longer sends: they stay in the enum (a v1 value is never removed,
#: docs/compatibility.md), marked deprecated there, and are listed here.
RETIRED: set[str] = set()


def test_every_enum_reason_is_sent_somewhere() -> None:
    sent = code_reasons().keys() | query_field_reasons()
    stale = sorted(status.REASONS - sent - RETIRED)
    assert not stale, (
        f"ErrorReason values no code sends (mark them deprecated and list them in RETIRED): {stale}"
    )


def test_every_error_class_reason_is_in_the_enum() -> None:
    classes = [
        c
        for c in vars(errors).values()
        if isinstance(c, type) and issubclass(c, errors.LuoshoError)
    ]
    assert len(classes) > 20
    assert {c.__name__: c.reason for c in classes if c.reason not in status.REASONS} == {}


def test_a_reason_outside_the_enum_is_never_sent(caplog: pytest.LogCaptureFixture) -> None:
    """A reason the enum lacks is a bug: logged, and the caller gets INTERNAL."""
    sent = status.to_status(errors.InvalidArgument("x", reason="NOT_A_REASON"))
    assert sent.code == grpc.StatusCode.INTERNAL
    ((_, raw),) = sent.trailing_metadata
    info = error_details_pb2.ErrorInfo()
    assert status_pb2.Status.FromString(raw).details[0].Unpack(info) and info.reason == "INTERNAL"
    assert "NOT_A_REASON" in caplog.text
    ok = status.to_status(errors.InvalidArgument("x", reason="INVALID_JSON"))
    assert ok.code == grpc.StatusCode.INVALID_ARGUMENT
