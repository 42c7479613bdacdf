"""A checkpoint's header as every driver stores it — JSON, or the compact form of the
drivers that declare ``Store.compact_headers`` (``store.kit.codec.compact_header``: raw
deflate with a preset dictionary) — reads back as it was written, whatever it holds:
text of every Unicode plane and control characters, values far past deflate's 32 kB
window, every optional key set; through ``load``, ``history``, ``list_sessions`` and
``import_session`` (what ``luoshod store copy`` writes), and saved on from there."""

from __future__ import annotations

import copy
import json
from dataclasses import replace

from luoshod.domain import (
    Checkpoint,
    Decision,
    HistoryEntry,
    Message,
    Role,
    Status,
    ToolCall,
)
from luoshod.store import Capability, Store

from .backend import Backend
from .test_store_subagents import nested_checkpoint

#: Text a header's JSON escapes, or carries as it is: NUL and control characters, a lone
#: quote and backslash, Latin-1, the BMP and beyond it.
AWKWARD = '\x00\x01\t\n"\\ naïve ÿ € 中文 \u2028 𝄞 👋 \x7f'


def awkward_checkpoint(session_id: str = "headers", *, version: int = 1) -> Checkpoint:
    """A paused lead inside a depth-2 sub-agent (every nested key of a header), with
    every optional header key set, awkward text in its values and a queued input of
    60 kB (a header longer than deflate's window)."""
    base = nested_checkpoint(session_id, version=version)
    return replace(
        base,
        business_state_json=json.dumps({"note": AWKWARD, "n": [1, 2.5, None]}, ensure_ascii=False),
        run_id=f"run-{AWKWARD}",
        decisions={
            **base.decisions,
            f"call-{AWKWARD}": Decision(False, AWKWARD, expired=True),
        },
        queued_input=[
            Message(Role.USER, AWKWARD * 2000),
            Message(Role.ASSISTANT, "", (ToolCall("c1", "t", '{"q": "ü"}'),)),
        ],
        history_limit=7,
        retention_s=86_400.5,
    )


async def save_three(store: Store) -> list[Checkpoint]:
    """Three saves of one session into the opened ``store`` (a latest row and three
    history rows), ``store`` closed after them; their checkpoints. A driver's own tests
    then rewrite the rows as an older release wrote them."""
    saved = []
    try:
        cp = awkward_checkpoint()
        for i in range(3):
            cp.version, cp.step_index = i + 1, i
            if i:
                cp.messages.append(Message(Role.USER, f"more {i}"))
            await store.save(cp, stored_messages=len(cp.messages) - (1 if i else len(cp.messages)))
            saved.append(copy.deepcopy(cp))  # as saved: with the chain the save set (R91)
    finally:
        await store.close()
    return saved


async def reads_and_saves_on(store: Store, saved: list[Checkpoint]) -> None:
    """The opened ``store`` holding :func:`save_three`'s session (its rows however an
    older release wrote them) loads it, lists it, reads its history, and saves on;
    ``store`` closed after."""
    try:
        loaded = await store.load("headers")
        assert loaded == saved[-1]
        assert [e.checkpoint for e in await store.history("headers")] == saved[::-1]
        page, _ = await store.list_sessions(
            status=Status.AWAITING_APPROVAL, page_size=5, page_token=""
        )
        assert [s.session_id for s in page] == ["headers"]
        # Saving on: the new rows compact, the old ones as they were, all of them read.
        loaded.messages.append(Message(Role.USER, "after"))
        loaded.version += 1
        expected = copy.deepcopy(loaded)
        await store.save(loaded, stored_messages=len(loaded.messages) - 1)
        assert await store.load("headers") == expected
        assert [e.checkpoint for e in await store.history("headers")] == [expected, *saved[::-1]]
    finally:
        await store.close()


async def test_a_header_of_any_content_reads_back_as_written(
    backend: Backend, driver: Store
) -> None:
    cp = awkward_checkpoint()
    expected = copy.deepcopy(cp)
    await driver.save(cp, stored_messages=0)
    assert await driver.load("headers") == expected
    page, _ = await driver.list_sessions(status=None, page_size=10, page_token="")
    [summary] = page
    assert (summary.session_id, summary.status, summary.step_index, summary.approval_id) == (
        "headers",
        expected.status,
        expected.step_index,
        expected.approval_id,
    )
    assert summary.message_count == len(expected.messages)
    assert summary.last_drift == expected.last_drift
    if Capability.HISTORY in driver.capabilities:
        assert [e.checkpoint for e in await driver.history("headers")] == [expected]


async def test_every_history_entry_reads_its_own_header(backend: Backend, driver: Store) -> None:
    """Headers that differ save after save (each compressed on its own: none refers to
    another's bytes), with an entry's header read beside the latest one."""
    backend.require(Capability.HISTORY)
    cp = awkward_checkpoint()
    saved = []
    for i in range(4):
        cp.version = i + 1
        cp.step_index, cp.last_seq = i, 10 * i
        cp.business_state_json = json.dumps({"step": i, "note": AWKWARD[i:]}, ensure_ascii=False)
        cp.queued_input = cp.queued_input[:1] if i % 2 else []
        cp.status = Status.FINISHED if i == 3 else Status.IN_PROGRESS
        saved.append(copy.deepcopy(cp))
        await driver.save(cp, stored_messages=len(cp.messages) if i else 0)
    assert [e.checkpoint for e in await driver.history("headers")] == saved[::-1]
    assert await driver.load("headers") == saved[-1]
    page, _ = await driver.list_sessions(status=Status.FINISHED, page_size=10, page_token="")
    assert [s.session_id for s in page] == ["headers"]


async def test_imported_headers_read_back_and_save_on(backend: Backend, driver: Store) -> None:
    """What ``luoshod store copy`` writes from any driver (checkpoints, not a source's
    stored bytes): the destination stores the headers in its own form."""
    first = awkward_checkpoint()
    second = copy.deepcopy(first)
    second.version, second.step_index, second.updated_at = 2, 4, first.updated_at + 1
    second.queued_input = []
    history = [
        HistoryEntry(c.step_index, c.updated_at, c.status, copy.deepcopy(c))
        for c in (first, second)
    ]
    await driver.import_session("headers", latest=copy.deepcopy(second), history=history)
    assert await driver.load("headers") == second
    if Capability.HISTORY in driver.capabilities:
        assert [e.checkpoint for e in await driver.history("headers")] == [second, first]
    nxt = await driver.load("headers")
    assert nxt is not None
    nxt.messages.append(Message(Role.USER, AWKWARD))
    nxt.version = 3
    expected = copy.deepcopy(nxt)
    await driver.save(nxt, stored_messages=len(second.messages))
    assert await driver.load("headers") == expected
