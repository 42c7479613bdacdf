"""Properties, with Hypothesis: round trips of the drivers' codec (and its format version),
the checkpoint header's JSON, the stores' page tokens, the History offsets and proto ⇄
domain message conversion; and the batch plan every durable driver writes."""

from __future__ import annotations

import contextlib
import json
import struct
from dataclasses import replace
from typing import cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from luosho.v1 import agent_pb2 as pb
from luoshod.domain import (
    AgentSpec,
    Checkpoint,
    Message,
    Role,
    StoredEvent,
    ToolCall,
    ToolSpec,
    Usage,
)
from luoshod.errors import NEWER_LUOSHOD, InvalidArgument, LeaseLost, StoreError
from luoshod.server import convert
from luoshod.server.validation import decode_offset, encode_offset
from luoshod.store.kit import decode_page_token, encode_page_token, eventblocks, planning
from luoshod.store.kit.codec import (
    FORMAT_VERSION,
    decode_header,
    decode_messages,
    encode_header,
    encode_message,
    encode_messages,
)
from luoshod.store.kit.groupcommit import Queued
from luoshod.store.kit.prepared import PreparedEvents, prepare

PROPERTIES = settings(max_examples=150, derandomize=True, deadline=None, database=None)

# Strings a proto can carry: any Unicode scalar value (no lone surrogates).
text = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=60)
# The codec keeps a tool call id's and a tool name's byte length in 16 bits.
short = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=200)
tool_calls = st.builds(ToolCall, short, short, text)


counts = st.integers(0, 2**40)
usages = st.builds(
    Usage,
    counts,
    counts,
    counts,
    st.integers(0, 3),
    st.floats(0, 1e6, allow_nan=False),
    counts,
    counts,
    counts,
)


@st.composite
def messages(draw: st.DrawFn) -> Message:
    role = draw(st.sampled_from(list(Role)))
    calls = tuple(draw(st.lists(tool_calls, max_size=3))) if role is Role.ASSISTANT else ()
    model, usage = "", None
    if role is Role.ASSISTANT:  # a turn records its model and usage, or (saved before) not
        model = draw(st.sampled_from(["", "scripted:demo", "openai:gpt-4o-mini ✓"]))
        usage = draw(st.none() | usages)
    return Message(
        role, draw(text), calls, draw(short), draw(short), draw(st.booleans()), model, usage
    )


def whole(transcript: list[Message]) -> list[tuple[Message, str, Usage | None]]:
    """Messages with what their equality leaves out: an assistant turn's model and usage."""
    return [(m, m.model, m.usage) for m in transcript]


@PROPERTIES
@given(st.lists(messages(), max_size=6))
def test_codec_round_trips_any_transcript(transcript: list[Message]) -> None:
    decoded = decode_messages(encode_messages(transcript))
    assert all(isinstance(m, Message) for m in decoded)
    assert whole(cast(list[Message], decoded)) == whole(transcript)
    # A stream is its messages' encodings one after the other: a save appends only new ones.
    assert encode_messages(transcript) == b"".join(encode_message(m) for m in transcript)


@PROPERTIES
@given(st.lists(messages(), min_size=1, max_size=4), st.data())
def test_codec_refuses_a_cut_stream(transcript: list[Message], data: st.DataObject) -> None:
    stream = encode_messages(transcript)
    cut = data.draw(st.integers(1, len(stream) - 1)) if len(stream) > 1 else 0
    try:
        decoded = decode_messages(stream[:cut])
    except ValueError:
        return
    # A cut that falls between two messages is a shorter, valid stream.
    assert decoded == transcript[: len(decoded)]


@PROPERTIES
@given(st.binary(max_size=80))
def test_codec_reads_any_bytes_as_messages_or_value_error(blob: bytes) -> None:
    try:
        decode_messages(blob)
    except ValueError:
        pass
    except StoreError as e:  # a first byte of a format to come
        assert e.metadata["supported_format"] == str(FORMAT_VERSION)


def encode_message_before_format_version(m: Message) -> bytes:
    """A message as the releases before the format version wrote it (role byte 0 to 3)."""
    fields = [m.content.encode(), m.tool_call_id.encode(), m.tool_name.encode()]
    calls = json.dumps([c.to_dict() for c in m.tool_calls]).encode() if m.tool_calls else b""
    lengths = [len(f) for f in fields]
    head = struct.pack(">BBIHHI", list(Role).index(m.role), m.is_error, *lengths, len(calls))
    return head + b"".join(fields) + calls


@PROPERTIES
@given(st.lists(messages(), max_size=6), st.lists(messages(), max_size=6))
def test_codec_reads_messages_written_before_the_format_version(
    old: list[Message], new: list[Message]
) -> None:
    # A log begun by an earlier release and extended by this one reads as one transcript.
    stream = b"".join(encode_message_before_format_version(m) for m in old)
    assert decode_messages(stream) == old
    assert decode_messages(stream + encode_messages(new)) == old + new
    assert all(b[0] >> 4 == FORMAT_VERSION for b in map(encode_message, new))


@PROPERTIES
@given(st.lists(messages(), max_size=6))
def test_codec_reads_format_4_records_beside_turns_with_usage(new: list[Message]) -> None:
    # Records of format 4 (no model or usage: their is_error byte is 0 or 1) read as they
    # are, in a log that goes on with turns that carry them.
    old = [replace(m, model="", usage=None) for m in new]
    stream = b"".join(bytes((4 << 4 | b[0] & 0x0F,)) + b[1:] for b in map(encode_message, old))
    decoded = decode_messages(stream + encode_messages(new))
    assert whole(cast(list[Message], decoded)) == whole(old) + whole(new)


def test_codec_refuses_a_message_of_a_newer_format_naming_both_versions() -> None:
    newer = FORMAT_VERSION + 1
    good = encode_message(Message(Role.USER, "hi"))
    stream = good + bytes([newer << 4 | good[0] & 0x0F]) + good[1:]
    with pytest.raises(StoreError, match=f"format {newer}.* up to {FORMAT_VERSION}") as e:
        decode_messages(stream)
    assert e.value.metadata == {
        "found_format": str(newer),
        "supported_format": str(FORMAT_VERSION),
        "written_by": NEWER_LUOSHOD,
    }


def test_codec_reads_a_header_written_before_the_format_version_and_refuses_a_newer() -> None:
    cp = Checkpoint("s", [Message(Role.USER, "hi")], version=3, agent=AgentSpec("m"))
    old = json.dumps(cp.header_dict())  # no "format" key: how earlier releases wrote it
    assert decode_header(old) == cp.header_dict()
    assert json.loads(encode_header(cp))["format"] == FORMAT_VERSION
    # Format 3's header leaves the agent to its log's agent record.
    from luoshod.store.kit import codec, tasklog

    log = decode_messages(b"".join(tasklog.all_bodies(cp, codec.agent_text(cp))))
    assert (
        codec.decode_checkpoint(old, log) == codec.decode_checkpoint(encode_header(cp), log) == cp
    )
    newer = {**cp.header_dict(), "format": FORMAT_VERSION + 1}
    with pytest.raises(StoreError, match=f"format {FORMAT_VERSION + 1}.* up to {FORMAT_VERSION}"):
        decode_header(json.dumps(newer).encode())


agents = st.builds(
    AgentSpec,
    short,
    text,
    st.lists(st.builds(ToolSpec, short, text, text, st.booleans()), max_size=3).map(tuple),
    model_settings_json=text,
)


@PROPERTIES
@given(st.lists(st.one_of(st.none(), agents), min_size=1, max_size=4), text)
def test_header_json_is_the_header_dict_whatever_agents_came_before(
    specs: list[AgentSpec | None], session_id: str
) -> None:
    # The agent's JSON is cached per spec (by value): each save, with the same spec as the
    # last one or another, must still encode its own checkpoint's agent.
    for spec in [*specs, *reversed(specs)]:
        from luoshod.store.kit import codec

        cp = Checkpoint(session_id, [], agent=spec, version=3, business_state_json="{}")
        h = cp.header_dict()
        for _ in range(2):  # the second from the cache
            # Format 3: the agent is the text of the log's agent record, not the header's.
            text = codec.agent_text(cp)
            assert json.loads(text) == {"agent": h["agent"], "fingerprint": h["fingerprint"]}
            assert (
                codec.checkpoint_of(decode_header(encode_header(cp)), [codec.AgentRecord(text)])
                == cp
            )


def test_the_agent_json_cache_stays_bounded() -> None:
    from luoshod.store.kit import codec

    big = "x" * (codec._AGENTS_MAX_CHARS // 3)
    specs = [AgentSpec(f"m{i}", instructions=big if i % 100 == 0 else "") for i in range(2500)]
    specs.append(AgentSpec("huge", instructions="y" * codec._AGENTS_MAX_CHARS))
    for spec in specs:
        cp = Checkpoint("s", [], agent=spec)
        assert json.loads(codec.agent_text(cp))["agent"]["model"] == spec.model
        assert len(codec._AGENTS) <= codec._AGENTS_MAX
        held = sum(len(text) for text in codec._AGENTS.values())
        assert held == codec._agents_chars <= codec._AGENTS_MAX_CHARS


@PROPERTIES
@given(text)
def test_page_token_round_trips_any_session_id(last: str) -> None:
    token = encode_page_token(last)
    assert token.isascii() and "=" not in token
    assert decode_page_token(token) == last


@PROPERTIES
@given(text)
def test_page_token_of_any_text_decodes_or_value_error(token: str) -> None:
    with contextlib.suppress(ValueError):
        decode_page_token(token)


@PROPERTIES
@given(st.integers(0, 2**62))
def test_history_offset_round_trips(offset: int) -> None:
    assert decode_offset(encode_offset(offset)) == offset


@PROPERTIES
@given(text)
def test_history_offset_of_any_text_is_an_offset_or_invalid_argument(token: str) -> None:
    try:
        assert decode_offset(token) >= 0
    except InvalidArgument as e:
        assert e.reason == "INVALID_PAGE_TOKEN"


@PROPERTIES
@given(messages())
def test_message_proto_round_trip(message: Message) -> None:
    """Exact, but for a tool call without arguments, which reads back as ``{}``."""
    calls = tuple(ToolCall(c.id, c.name, c.arguments_json or "{}") for c in message.tool_calls)
    back = convert.message_from_pb(convert.message_pb(message))
    assert whole([back]) == whole([replace(message, tool_calls=calls)])


def test_codec_fields_beyond_16_bits_fail_loudly() -> None:
    """The codec's limit the request checks must keep ids and names under (see
    test_fuzz_requests: a request with such a field is refused, never saved)."""
    with pytest.raises(Exception):  # noqa: B017, PT011 - struct.error today
        encode_message(Message(Role.TOOL, "{}", (), "x" * 70_000, "t"))
    assert pb.Message  # the proto carries such strings happily


# -- the batch plan every durable driver writes (luoshod.store.kit.planning) -------------


def _queued(payload: object) -> Queued:  # type: ignore[type-arg]
    return Queued(payload, None)  # type: ignore[arg-type]  # no caller waits here


@PROPERTIES
@given(
    st.integers(0, 5),
    st.integers(0, 10),
    st.lists(st.lists(st.integers(1, 140), max_size=6), max_size=5),
    st.integers(0, 80),
)
def test_the_plan_of_event_appends_is_the_log_model(
    stored_kept: int, stored_last: int, appends: list[list[int]], limit: int
) -> None:
    """An event is appended when its seq is above the log's last; the log keeps the events
    of its newest ``limit`` seqs (above ``last - limit``): what the plan writes and drops
    leaves exactly that, and it seals exactly the aligned ranges it completes there."""
    stored_kept = min(stored_kept, stored_last)
    on_disk = list(range(stored_last - stored_kept + 1, stored_last + 1))
    batch = [
        _queued(PreparedEvents("s", tuple(StoredEvent(q, b"") for q in seqs), limit))
        for seqs in appends
    ]
    logs = {"s": (stored_kept, stored_last)} if stored_kept else {}
    stored = planning.Stored(event_logs=logs)
    plan = planning.plan_batch(batch, stored)
    model = list(on_disk)  # a log that keeps nothing has no last seq: any seq goes in
    for q in (q for seqs in appends for q in seqs):
        if q > (model[-1] if model else 0):
            model.append(q)
    appended = [q for q in model if q not in on_disk]
    model = [q for q in model if q > model[-1] - limit] if model else []
    assert all(item.error is None for item in batch)
    if not appends:
        assert plan.events == []
        return
    (log,) = plan.events
    assert [q for q in on_disk if q > log.floor] + [e.seq for e in log.new] == model
    # ``kept`` counts them exactly when the seqs have no gaps (else it bounds them).
    assert (log.kept == 0) == (not model) and log.kept >= len(model)
    whole = on_disk + appended
    if not whole or whole == list(range(whole[0], whole[-1] + 1)):
        assert log.kept == len(model)
    assert log.existed == bool(stored_kept)
    block = eventblocks.BLOCK
    assert log.seal == [
        (q - block + 1, q) for q in appended if q % block == 0 and q - block + 1 > log.floor
    ]


@PROPERTIES
@given(st.integers(0, 3), st.lists(st.integers(0, 6), max_size=8))
def test_the_plan_takes_the_saves_whose_versions_follow_in_queue_order(
    stored_version: int, versions: list[int]
) -> None:
    """R7 inside one batch: a save goes through when its version is the stored one + 1,
    counting the saves of the batch before it; the others are refused with LeaseLost."""
    batch = [
        _queued(prepare(Checkpoint("s", [Message(Role.USER, str(v))], version=v), 0, 5))
        for v in versions
    ]
    heads = {"s": planning.Head(stored_version, 1)} if stored_version else {}
    plan = planning.plan_batch(batch, planning.Stored(heads=heads))
    expected, current = [], stored_version
    for v in versions:
        if v == current + 1:
            expected.append(v)
            current = v
    assert [p.save.checkpoint.version for p in plan.saves] == expected
    refused = [item for item in batch if item.error is not None]
    assert len(refused) == len(versions) - len(expected)
    assert all(isinstance(item.error, LeaseLost) for item in refused)
    # Each save here says the store holds none of its messages: each starts a new log,
    # and a log started over an older one (stored, or of a save before it) is "rewritten".
    assert all(p.new_log and p.start == 0 for p in plan.saves)
    over_older = len(expected) > 1 or (bool(expected) and bool(stored_version))
    assert plan.rewritten == ({"s"} if over_older else set())


def test_equal_agent_specs_of_different_runs_share_one_encoding() -> None:
    # Issue 16: thousands of runs of one agent each decode their own equal spec; their
    # saves find its JSON in the cache rather than encoding it again (and a spec that
    # differs in anything gets its own).
    from luoshod.store.kit import codec

    def spec(settings: str) -> AgentSpec:
        return AgentSpec("scripted:x", instructions="be brief", model_settings_json=settings)

    first, second = spec('{"script":[]}'), spec('{"script":[]}')
    assert first is not second and first == second
    text = codec._agent_json(first)
    assert codec._agent_json(second) is text
    other = codec._agent_json(spec('{"script":[{"text":"hi"}]}'))
    assert other != text and "hi" in other
