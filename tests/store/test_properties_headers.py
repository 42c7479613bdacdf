"""Properties, with Hypothesis, of a checkpoint header's two stored forms
(luoshod/store/kit/codec.py): the JSON every driver could store and the compact form the
embedded drivers store (raw deflate with a preset dictionary, after a marker byte and the
dictionary's id). Any header ``encode_header`` writes reads back the same through both,
headers written before (JSON, of any format) still read, and bytes that are not a whole
compact header are refused, never misread."""

from __future__ import annotations

import contextlib
import json
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from luoshod.domain import (
    AgentSpec,
    AppliedRequest,
    Checkpoint,
    Decision,
    Drift,
    Fingerprint,
    FinishReason,
    Message,
    Role,
    Status,
    SubTask,
    ToolCall,
    Usage,
)
from luoshod.errors import NEWER_LUOSHOD, StoreError
from luoshod.store.kit import codec, tasklog
from luoshod.store.kit.codec import (
    COMPACT_HEADER,
    HEADER_DICTIONARIES,
    HEADER_DICTIONARY,
    compact_header,
    decode_header,
    decode_messages,
    encode_compact_header,
    encode_header,
)

PROPERTIES = settings(max_examples=150, derandomize=True, deadline=None, database=None)

text = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=40)
short = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=12)
counts = st.integers(0, 2**40)
floats = st.floats(allow_nan=False, allow_infinity=False, min_value=0, max_value=1e12)
usages = st.builds(Usage, counts, counts, counts, counts, floats)
fingerprints = st.builds(
    Fingerprint, short, short, st.dictionaries(short, short, max_size=3), short
)


@st.composite
def _message(draw: st.DrawFn) -> Message:
    """A message as a run makes one: tool calls on the assistant's, a call id and tool
    name on a tool result's."""
    role = draw(st.sampled_from(list(Role)))
    calls = (
        draw(st.lists(st.builds(ToolCall, short, short, text), max_size=2))
        if role is Role.ASSISTANT
        else []
    )
    call_id, name = (draw(short.filter(bool)), draw(short)) if role is Role.TOOL else ("", "")
    return Message(role, draw(text), tuple(calls), call_id, name, draw(st.booleans()))


messages = _message()


@st.composite
def subtasks(draw: st.DrawFn, depth: int = 1) -> SubTask:
    children = draw(st.dictionaries(short, subtasks(depth + 1), max_size=2)) if depth < 3 else {}
    name = draw(short)
    return SubTask(
        name,
        "",  # numbered by checkpoints()
        depth,
        tuple(draw(st.lists(short, min_size=depth, max_size=depth))),
        draw(st.lists(messages, max_size=3)),
        draw(st.integers(0, 10**4)),
        draw(usages),
        draw(st.none() | fingerprints),
        children,
    )


def _numbered(tasks: dict[str, SubTask], first: int = 1) -> int:
    """Give the tasks of a tree their ids in order, ``task_<first>`` on, as a session
    numbers them (each task's log records are keyed by its number); the next number."""
    n = first
    for task in tasks.values():
        task.task_id = f"task_{n}"
        n = _numbered(task.children, n + 1)
    return n


@st.composite
def checkpoints(draw: st.DrawFn) -> Checkpoint:
    """Checkpoints with any header: every key at its default or away from it."""
    cp = Checkpoint(
        session_id=draw(text),
        messages=draw(st.lists(messages, max_size=3)),
        step_index=draw(st.integers(0, 10**6)),
        usage=draw(usages),
        total_usage=draw(usages),
        business_state_json=draw(st.just("null") | text),
        status=draw(st.sampled_from(list(Status))),
        approval_id=draw(st.just("") | short),
        finish_reason=draw(st.sampled_from(list(FinishReason))),
        fingerprint=draw(st.none() | fingerprints),
        agent=draw(st.none() | st.builds(AgentSpec, short, text)),
        run_id=draw(short),
        run_start=draw(st.integers(0, 100)),
        updated_at=draw(floats),
        version=draw(st.integers(0, 2**40)),
        last_seq=draw(st.integers(0, 2**40)),
        decisions=draw(
            st.dictionaries(
                short, st.builds(Decision, st.booleans(), text, st.booleans()), max_size=2
            )
        ),
        queued_input=draw(st.lists(messages, max_size=2)),
        history_limit=draw(st.none() | st.integers(0, 1000)),
        run_requests=draw(
            st.lists(
                st.builds(AppliedRequest, short, short, short, st.integers(0, 10**6)), max_size=2
            )
        ),
        last_drift=draw(
            st.none()
            | st.builds(
                Drift,
                short,
                short,
                st.lists(short, max_size=2).map(tuple),
                st.lists(short, max_size=2).map(tuple),
                st.lists(short, max_size=2).map(tuple),
                st.booleans(),
            )
        ),
        retention_s=draw(st.none() | floats),
        subtasks=draw(st.dictionaries(short, subtasks(), max_size=2)),
        # Kept only when a sub-agent called a model (a header without it: none).
        delegated_usage=draw(st.just(Usage()) | usages.filter(lambda u: u.model_calls > 0)),
        task_count=draw(st.integers(0, 10**6)),
        early_results=draw(st.dictionaries(short, messages, max_size=2)),  # R76
    )
    cp.task_count = max(cp.task_count, _numbered(cp.subtasks) - 1)
    return cp


def _log(cp: Checkpoint) -> list[codec.LogRecord]:
    return decode_messages(b"".join(tasklog.all_bodies(cp, codec.agent_text(cp))))


@PROPERTIES
@given(checkpoints())
def test_every_header_reads_back_the_same_through_both_forms(cp: Checkpoint) -> None:
    text = encode_header(cp)
    compact = encode_compact_header(cp)
    assert compact[:2] == bytes((COMPACT_HEADER, HEADER_DICTIONARY))
    assert compact == compact_header(text)
    assert codec.header_json(compact) == codec.header_json(text) == text
    assert decode_header(compact) == decode_header(text) == decode_header(text.encode())
    assert decode_header(memoryview(compact)) == decode_header(text)  # LMDB's buffers
    # The whole checkpoint, over its log, from either form.
    log = _log(cp)
    assert codec.decode_checkpoint(compact, log) == codec.decode_checkpoint(text, log) == cp
    assert codec.decode_summary(compact, len(log)) == codec.decode_summary(text, len(log))


@PROPERTIES
@given(checkpoints())
def test_headers_written_before_the_compact_form_still_read(cp: Checkpoint) -> None:
    # Format 0 (no "format" key, the agent inline), as JSON text or UTF-8 bytes.
    old = json.dumps(cp.header_dict(with_tasks=False))
    log = _log(cp)
    for stored in (old, old.encode()):
        assert codec.checkpoint_of(decode_header(stored), log) == cp


@PROPERTIES
@given(checkpoints(), st.data())
def test_a_cut_compact_header_is_refused(cp: Checkpoint, data: st.DataObject) -> None:
    compact = encode_compact_header(cp)
    cut = data.draw(st.integers(0, len(compact) - 1))
    with pytest.raises(ValueError, match="compact"):
        decode_header(compact[:cut] if cut else compact[:1])
    with pytest.raises(ValueError, match="compact"):
        decode_header(compact + b"\x00")  # bytes after its end


@PROPERTIES
@given(st.binary(max_size=80))
def test_any_bytes_after_the_marker_read_as_a_header_or_fail_cleanly(blob: bytes) -> None:
    # Not deflate, not JSON, or JSON that is not a header: one of these errors.
    with contextlib.suppress(ValueError, KeyError, TypeError, AttributeError):
        decode_header(bytes((COMPACT_HEADER, HEADER_DICTIONARY)) + blob)


def test_a_header_of_an_unknown_dictionary_is_refused_as_written_by_a_newer_luoshod() -> None:
    newer = max(HEADER_DICTIONARIES) + 1
    compact = encode_compact_header(Checkpoint("s", [Message(Role.USER, "hi")]))
    with pytest.raises(StoreError, match=f"header dictionary {newer}.* newer luoshod") as e:
        decode_header(bytes((COMPACT_HEADER, newer)) + compact[2:])
    assert e.value.metadata["written_by"] == NEWER_LUOSHOD
    assert e.value.metadata["found_header_dictionary"] == str(newer)


def test_dictionary_1_is_frozen() -> None:
    """Headers compressed with dictionary 1 read only with its exact bytes: a change is a
    new id (codec.HEADER_DICTIONARIES), never an edit. Its digest, as released:"""
    import hashlib

    assert hashlib.sha256(HEADER_DICTIONARIES[1]).hexdigest()[:16] == FROZEN_1


#: sha256 of dictionary 1's bytes (first 16 hex digits), as released.
FROZEN_1 = "0c470fb82174f82f"


def test_the_compact_form_is_a_third_of_the_json_for_a_header_with_a_subagent() -> None:
    """The reason for the form: a header of a session paused in a sub-agent (as the
    bench's 50-task session saves 50 of), its JSON against its compact form."""
    task = SubTask(
        "worker",
        "task_48",
        1,
        ("worker",),
        [],
        9,
        Usage(90, 81, 171, 9),
        Fingerprint(
            "f3e47e7010f24a15", "scripted:worker", {"work": "a2c799262a3ce3c1"}, "e3b0c44298fc1c14"
        ),
    )
    cp = Checkpoint(
        "many-tasks",
        [],
        step_index=48,
        usage=Usage(32572, 4837, 37409, 574),
        run_id="3e9759a83f5d4833",
        updated_at=1796336557.3702054,
        version=1052,
        last_seq=2725,
        run_requests=[
            AppliedRequest(
                "01a23e00-8def-7a10-878e-a50607139ac0",
                "3f24ef65a18950527ac8a2cfb1cbd3ec",
                "3e9759a83f5d4833",
                1,
            )
        ],
        subtasks={"call_47_0": task},
        delegated_usage=Usage(6294, 4405, 10699, 526),
        task_count=48,
    )
    text, compact = encode_header(cp), encode_compact_header(cp)
    assert len(compact) * 3 < len(text.encode())
    # zlib alone (no dictionary) would keep more than half of it.
    assert len(zlib.compress(text.encode(), 9)) * 2 > len(text.encode())
