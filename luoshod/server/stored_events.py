"""The form of an event in a session's event log (``StoredEvent.data``), read back as the
very event that was emitted.

An event is stored as its ``luosho.v1.Event`` bytes without what the log already says or
the event itself repeats: its ``session_id`` (the log's key), its ``seq`` (the stored
event's own), its ``type`` (the name of its payload, ``model_turn`` → ``model.turn``) and,
on a sub-agent's event, its tag's ``name`` and ``depth`` (the last element and the length
of its ``path``). Of a sub-agent's ``tool.result`` that is 40 of its 130 bytes; the event
log keeps 1000 events a session, so this is most of what a session's log costs beyond
its contents. :func:`decode` puts them back, so Watch, a replayed retry and the queue's
followers return exactly the event that was emitted; :func:`encode` leaves out only what
:func:`decode` restores exactly (an event it could not is stored whole), and
:func:`decode` reads an event stored whole (by a luoshod before this form) as it is.
:func:`encode_wire` gives the run's sink the event it encoded, so an event is built once
for the log and the stream.
"""

from __future__ import annotations

from luosho.v1 import agent_pb2 as pb

from ..engine import Event
from . import convert


def encode(event: Event) -> bytes:
    """The stored form of ``event`` (see the module)."""
    return encode_wire(event)[0]


def encode_wire(event: Event) -> tuple[bytes, pb.Event]:
    """The stored form of ``event`` and the event whole, as it is sent: one message built
    once, serialized without what :func:`decode` puts back, then given it back. What
    :func:`decode` would fill in but the event leaves empty (a tag's name and depth, a
    payload's type) is stored whole."""
    full = convert.event_pb(event)
    tag = full.subagent if full.HasField("subagent") else None
    type_, derived = full.type, _type_of(full)
    if (tag is not None and tag.path and not tag.name and not tag.depth) or (derived and not type_):
        return full.SerializeToString(), full
    session_id, seq = full.session_id, full.seq
    full.ClearField("session_id")
    full.ClearField("seq")
    if derived == type_:
        full.ClearField("type")
    if tag is not None and tag.path and tag.name == tag.path[-1] and tag.depth == len(tag.path):
        name, depth = tag.name, tag.depth
        tag.ClearField("name")
        tag.ClearField("depth")
        data = full.SerializeToString()
        tag.name, tag.depth = name, depth
    else:
        data = full.SerializeToString()
    full.session_id, full.seq, full.type = session_id, seq, type_
    return data, full


def wire_of(event: Event, wire: object | None) -> pb.Event:
    """The message of ``event`` to send: the one :func:`encode_wire` built with its stored
    form (``wire``), else built now (a store without an event log, a progress-only
    event)."""
    return wire if isinstance(wire, pb.Event) else convert.event_pb(event)


def decode(data: bytes, session_id: str, seq: int) -> pb.Event:
    """The event stored as ``data`` under ``session_id`` and ``seq``, whole."""
    event = pb.Event.FromString(data)
    if not event.session_id:
        event.session_id = session_id
    if not event.seq:
        event.seq = seq
    if not event.type:
        event.type = _type_of(event)
    if event.HasField("subagent"):
        tag = event.subagent
        if tag.path and not tag.name and not tag.depth:
            tag.name, tag.depth = tag.path[-1], len(tag.path)
    return event


def _type_of(event: pb.Event) -> str:
    """The type an event's payload is sent under: its field's name, first ``_`` a dot."""
    field = event.WhichOneof("payload")
    return field.replace("_", ".", 1) if field else ""
