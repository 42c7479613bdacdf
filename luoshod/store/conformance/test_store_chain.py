"""The hash chain over a session's saves (docs/reference/rules.md R91): every driver records
it at each save, and what it stores verifies (``luoshod store verify``)."""

from __future__ import annotations

import pytest

from luoshod.domain import Checkpoint, Message, Role, SubTask, Usage
from luoshod.errors import LeaseLost
from luoshod.store import Capability, Store
from luoshod.store.verify import verify_session

from .backend import Backend


def _grow(cp: Checkpoint, i: int) -> None:
    cp.version += 1
    cp.step_index = i
    cp.usage.total_tokens += 7
    cp.messages.append(Message(Role.ASSISTANT, f"turn {i} ✓"))
    cp.messages.append(Message(Role.USER, f"input {i}"))
    cp.subtasks["call_0"].messages.append(Message(Role.ASSISTANT, f"sub {i}"))


async def test_r91_every_save_records_a_link_that_verifies(backend: Backend, driver: Store) -> None:
    sub = SubTask("helper", "task_1", 1, ("helper",), [Message(Role.USER, "help")])
    cp = Checkpoint("chained", [Message(Role.USER, "hi")], subtasks={"call_0": sub}, task_count=1)
    stored = 0
    links = []
    for i in range(1, 5):
        _grow(cp, i)
        await driver.save(cp, stored_messages=stored)
        stored = len(cp.messages)
        sub.stored = len(sub.messages)
        assert len(cp.chain) == 64 and cp.chain not in links  # the save set it
        links.append(cp.chain)
    latest = await driver.load("chained")
    assert latest is not None and latest.chain == links[-1]
    report = await verify_session(driver, "chained")
    assert report.state == "ok", report.line()
    if Capability.HISTORY in backend.capabilities:
        assert report.checked == 4 and report.first_version == 1
    # A refused save leaves the caller's link as it was: the next try links to the same save.
    cp.version += 2
    with pytest.raises(LeaseLost):
        await driver.save(cp, stored_messages=stored)
    assert cp.chain == links[-1]
    cp.version -= 2
    _grow(cp, 5)
    await driver.save(cp, stored_messages=stored)
    assert (await verify_session(driver, "chained")).state == "ok"
    # Loaded and saved on, as a restarted daemon does.
    again = await driver.load("chained")
    assert again is not None
    again.version += 1
    again.messages.append(Message(Role.ASSISTANT, "after a restart"))
    await driver.save(again, stored_messages=len(again.messages) - 1)
    report = await verify_session(driver, "chained")
    assert report.state == "ok", report.line()


async def test_r91_turns_with_their_model_and_usage_verify_beside_turns_without(
    backend: Backend, driver: Store
) -> None:
    # Turns saved before the model and usage were recorded, then turns that carry them:
    # both hash as they were saved, and the usage reads back as saved.
    cp = Checkpoint("metered", [Message(Role.USER, "hi")])
    stored = 0
    for i in range(1, 5):
        cp.version += 1
        cp.step_index = i
        usage = Usage(10 * i, i, 11 * i, 1, 0.125 * i, cached_input_tokens=i, reasoning_tokens=1)
        metered = i > 2
        cp.messages.append(
            Message(
                Role.ASSISTANT,
                f"turn {i}",
                model="scripted:demo" if metered else "",
                usage=usage if metered else None,
            )
        )
        cp.usage.add(usage)
        cp.total_usage.add(usage)
        await driver.save(cp, stored_messages=stored)
        stored = len(cp.messages)
    report = await verify_session(driver, "metered")
    assert report.state == "ok", report.line()
    loaded = await driver.load("metered")
    assert loaded is not None
    turns = [(m.model, m.usage) for m in loaded.messages if m.role is Role.ASSISTANT]
    assert turns[:2] == [("", None), ("", None)]
    assert turns[2] == ("scripted:demo", Usage(30, 3, 33, 1, 0.375, 3, 0, 1))
    assert turns[3][1] is not None and turns[3][1].cost_usd == 0.5
    assert loaded.total_usage.cached_input_tokens == 10 and loaded.usage.reasoning_tokens == 4
