"""Compaction (docs/reference/rules.md R85): a long transcript made to fit the model's
context window before a model call.

The transcript is never rewritten: what compaction decides is a small record on the
checkpoint (:class:`~luoshod.domain.Compacted`), and each model call is sent the
transcript's *view* under that record (:func:`view`):

- the tool results before ``pruned_before`` become a short marker (the call and its
  result both stay: a call never loses its result);
- the messages before ``summarized_before`` become one user message holding
  ``summary``, but the system messages and the pinned user messages, which stay as they
  are, first.

Before a model call whose request (estimated at four characters a token, as the limits
estimate it) is above ``threshold`` of the model's context window, :func:`compact` moves
those marks forward, never into the protected tail (the newest messages within
``protect_tokens``): first the prune, then, if the request is still above, the summary,
written by the summarizing model through the providers like any model call: its worst
case checked against the limits first (R79; by hand, the session's limits only, as its
usage counts in the session's only), its usage counted. The summary's boundary never
falls between a turn's tool calls and their results. The new record is saved as a
checkpoint of its own (``compaction.start`` is written before the summary call,
``compaction.done`` with the save), so History keeps the checkpoints from before it, a
fork from one of those has no record and continues uncompacted, and a crash during it
leaves no record: the resumed run compacts again. A summary call that failed, or that a
limit refused, never fails the run: ``compaction.done`` says why, and the record keeps
only what the prune did.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from ..domain import (
    AgentSpec,
    Checkpoint,
    Compacted,
    Compaction,
    CompactionStrategy,
    Message,
    Role,
    Usage,
)
from ..errors import InvalidArgument
from ..providers import ModelRequest, Provider, ProviderRegistry
from . import budget
from . import events as ev

if TYPE_CHECKING:
    from .control import RunControl


class Host(Protocol):
    """What compaction needs of the run it compacts (``loop.Run``)."""

    cp: Checkpoint
    spec: AgentSpec
    control: RunControl

    @property
    def providers(self) -> ProviderRegistry | None: ...

    def context_window(self) -> int | None: ...

    def admit(
        self, worst: budget.Worst, scopes: Collection[str] = budget.SCOPES
    ) -> budget.Trip | None: ...

    async def emit(self, type_: str, **data: object) -> None: ...

    async def flush(self) -> None: ...

    async def save(self) -> None: ...


log = logging.getLogger("luoshod.engine")

#: What a pruned tool result says instead of its content (JSON, as a result is).
PRUNED = '{{"compacted":"this tool result was removed to save context ({n} characters)"}}'
#: The start of the message that stands for the summarized turns.
SUMMARY_HEADING = "Summary of the earlier conversation (compacted):"
SUMMARIZE_INSTRUCTIONS = (
    "You summarize the earlier part of a conversation between a user, an assistant and "
    "its tools, so that the assistant can go on with the conversation from the summary "
    "alone. Keep the user's goals and requests, decisions made, facts and figures the "
    "tools returned that still matter, and what is left to do. Write plain prose, no "
    "preamble."
)
#: Of each message the summarizing model reads, at most this many characters.
SUMMARY_INPUT_CHARS = 4000

TRIGGER_THRESHOLD = "threshold"
TRIGGER_MANUAL = "manual"


def check(providers: ProviderRegistry, spec: AgentSpec) -> None:
    """At a run's start: an agent with compaction needs its model's context window and a
    summarizing model the daemon knows (``InvalidArgument`` otherwise)."""
    _no_subagent_compaction(spec)
    conf = spec.compaction
    if conf is None:
        return
    if not 0 < conf.threshold <= 1:
        raise InvalidArgument(
            f"compaction.threshold must be above 0 and at most 1, got {conf.threshold:g}",
            reason="INVALID_COMPACTION",
            field="agent.compaction.threshold",
        )
    if conf.protect_tokens < 0:
        raise InvalidArgument(
            "compaction.protect_tokens must not be negative",
            reason="INVALID_COMPACTION",
            field="agent.compaction.protect_tokens",
        )
    provider, model, settings = providers.resolve(spec.model, spec.model_settings_json)
    if provider.context_window(model, settings) is None:
        raise InvalidArgument(
            f"the model {spec.model!r} has no known context window, so compaction has no "
            "threshold: add it to the provider's context windows "
            f'([providers.NAME.context_windows] "{model}" = TOKENS) or drop compaction',
            reason="CONTEXT_WINDOW_UNKNOWN",
            model=spec.model,
        )
    summarizer(providers, spec)


def _no_subagent_compaction(spec: AgentSpec) -> None:
    """A sub-agent's transcript is never compacted: a sub-agent that asks is refused
    rather than silently left uncompacted."""
    for sub in spec.subagents:
        if sub.agent.compaction is not None:
            raise InvalidArgument(
                f"the sub-agent {sub.name!r} has compaction: only the lead agent's transcript "
                "is compacted",
                reason="INVALID_COMPACTION",
                field="agent.subagents.agent.compaction",
            )
        _no_subagent_compaction(sub.agent)


def summarizer(
    providers: ProviderRegistry, spec: AgentSpec
) -> tuple[str, Provider, str, dict[str, Any]]:
    """The summarizing model: (its id, provider, name, settings)."""
    conf = spec.compaction or Compaction()
    model_id = conf.model or spec.model
    settings_json = conf.model_settings_json
    if not settings_json and model_id == spec.model:
        settings_json = spec.model_settings_json
    provider, model, settings = providers.resolve(model_id, settings_json)
    return model_id, provider, model, settings


def _kept(m: Message) -> bool:
    """A message a summary never stands for: system messages, pinned user messages."""
    return m.role is Role.SYSTEM or (m.pinned and m.role is Role.USER)


def summary_message(summary: str) -> Message:
    return Message(Role.USER, f"{SUMMARY_HEADING}\n{summary}")


def pruned(m: Message) -> Message:
    return replace(m, content=PRUNED.format(n=len(m.content)))


def view(messages: Sequence[Message], rec: Compacted | None) -> tuple[list[Message], int]:
    """What a model call is sent of ``messages`` under ``rec``, and the model turns the
    summary stands for."""
    if rec is None:
        return list(messages), 0
    n = min(rec.summarized_before, len(messages))
    out = [m for m in messages[:n] if _kept(m)]
    hidden = sum(1 for m in messages[:n] if m.role is Role.ASSISTANT)
    if rec.summary:
        out.append(summary_message(rec.summary))
    cut = min(rec.pruned_before, len(messages))
    out += [pruned(m) if m.role is Role.TOOL else m for m in messages[n:cut]]
    out += messages[max(n, cut) :]
    return out, hidden


def estimate(spec: AgentSpec, messages: Sequence[Message]) -> int:
    """A request's tokens as the limits estimate them (characters / 4)."""
    return budget.InputEstimate(budget.spec_chars(spec)).tokens(messages)


def tail_start(messages: Sequence[Message], protect_tokens: int) -> int:
    """The first message of the protected tail: the newest messages whose estimate adds
    up to at most ``protect_tokens``."""
    chars, i = 0, len(messages)
    while i > 0:
        m = messages[i - 1]
        chars += len(m.content) + 4 + sum(len(c.arguments_json) for c in m.tool_calls)
        if chars // budget.CHARS_PER_TOKEN > protect_tokens:
            break
        i -= 1
    return i


def threshold_tokens(run: Host) -> int | None:
    """The request size above which the run compacts; ``None``: it never does."""
    conf = run.spec.compaction
    if conf is None:
        return None
    window = run.context_window()
    return None if window is None else int(window * conf.threshold)


@dataclass(frozen=True, slots=True)
class _Plan:
    prune_to: int  # the new pruned_before
    pruned: int  # tool results it prunes
    cut: int  # the new summarized_before (== the old: no summary)
    summarized: int  # messages the summary would stand for, anew


def _plan(messages: Sequence[Message], rec: Compacted, conf: Compaction, strategy: str) -> _Plan:
    tail = tail_start(messages, conf.protect_tokens)
    prune_to, n_pruned = rec.pruned_before, 0
    if strategy in (CompactionStrategy.PRUNE, CompactionStrategy.BOTH) and tail > prune_to:
        start = max(rec.pruned_before, rec.summarized_before)
        n_pruned = sum(1 for m in messages[start:tail] if m.role is Role.TOOL)
        prune_to = tail if n_pruned else rec.pruned_before
    cut = rec.summarized_before
    if strategy in (CompactionStrategy.SUMMARIZE, CompactionStrategy.BOTH):
        cut = max(tail, rec.summarized_before)
        # Never between a turn's calls and their results: the tail starts at no result.
        while (
            cut > rec.summarized_before and cut < len(messages) and messages[cut].role is Role.TOOL
        ):
            cut -= 1
    summarized = sum(1 for m in messages[rec.summarized_before : cut] if not _kept(m))
    return _Plan(prune_to, n_pruned, cut if summarized else rec.summarized_before, summarized)


def _transcript(previous: str, messages: Sequence[Message]) -> str:
    lines = []
    if previous:
        lines.append(f"(summary of what came before)\n{previous}\n")
    for m in messages:
        text = m.content[:SUMMARY_INPUT_CHARS]
        if m.role is Role.TOOL:
            lines.append(f"tool {m.tool_name} returned: {text}")
            continue
        if text:
            lines.append(f"{m.role.value}: {text}")
        for c in m.tool_calls:
            lines.append(
                f"{m.role.value} called {c.name}({c.arguments_json[:SUMMARY_INPUT_CHARS]})"
            )
    return "\n".join(lines)


async def compact(
    run: Host, step: int, *, trigger: str, strategy: CompactionStrategy | None = None
) -> bool:
    """Compact ``run``'s transcript before the model call of ``step`` (``trigger``
    ``threshold``: only when its request is above the threshold; ``manual``: as far as
    the protected tail allows). Returns whether a new record was saved."""
    cp, spec = run.cp, run.spec
    conf = spec.compaction or Compaction()
    strategy = strategy or conf.strategy
    rec = cp.compaction or Compacted()
    before = estimate(spec, view(cp.messages, cp.compaction)[0])
    limit = threshold_tokens(run) if trigger == TRIGGER_THRESHOLD else None
    if trigger == TRIGGER_THRESHOLD and (limit is None or before <= limit):
        return False
    # A turn whose calls wait for results (a manual compaction of a paused session) stays
    # whole, with everything after it.
    end = len(cp.messages)
    if run_pending(cp):
        end = max(i for i, m in enumerate(cp.messages) if m.role is Role.ASSISTANT)
    plan = _plan(cp.messages[:end], rec, conf, strategy)
    if not plan.pruned and not plan.summarized:
        return False  # everything left is in the protected tail, or kept
    data: dict[str, Any] = {"step": step, "trigger": trigger, "tokens": before}
    if limit is not None:
        data["threshold_tokens"] = limit
    log.info("compaction start session=%s step=%d tokens=%d", cp.session_id, step, before)
    await run.emit(ev.COMPACTION_START, **data)
    await asyncio.shield(run.flush())  # durable before the summary call (a crash repeats it)
    new = replace(rec, pruned_before=plan.prune_to)
    after = estimate(spec, view(cp.messages, new)[0])
    error, usage, model_id = "", Usage(), ""
    summarize = plan.summarized and (
        strategy is CompactionStrategy.SUMMARIZE or limit is None or after > limit
    )
    if summarize:
        model_id, provider, model, settings = summarizer(run.providers or _no_registry(), spec)
        head = [
            pruned(m) if m.role is Role.TOOL and i < new.pruned_before else m
            for i, m in enumerate(cp.messages[: plan.cut])
            if i >= rec.summarized_before and not _kept(m)
        ]
        request = ModelRequest(
            cp.session_id,
            model,
            [
                Message(Role.SYSTEM, SUMMARIZE_INSTRUCTIONS),
                Message(Role.USER, _transcript(rec.summary, head)),
            ],
            AgentSpec(model=model_id),
            settings,
            scope="compaction",
        )
        # R79: a model call like any, checked against the limits of the budgets its usage
        # counts in: by hand, outside any run, the session's only.
        scopes = budget.SCOPES if trigger == TRIGGER_THRESHOLD else ("session",)
        worst = budget.worst_case(
            budget.InputEstimate().tokens(request.messages),
            budget.max_output_tokens(settings),
            provider.price(model, settings),
        )
        if (trip := run.admit(worst, scopes)) is not None:
            error = refused(trip)
            log.warning("compaction session=%s: %s", cp.session_id, error)
        else:
            try:
                answer, answered = await run.control.unless_stopped(provider.complete(request))
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - R85: a failed summary never fails the run
                log.warning("compaction summary failed session=%s: %s", cp.session_id, e)
                error = f"the summary call failed: {e}"
            else:
                if not answered or answer is None:
                    return False  # stopped: the run ends or is interrupted; nothing recorded
                usage = answer.usage.copy()
                usage.model_calls = 1
                if "run" in scopes:
                    cp.usage.add(usage)
                cp.total_usage.add(usage)
                used = {k: u.copy() for k, u in new.summary_usage.items()}
                used.setdefault(model_id, Usage()).add(usage)
                new = replace(new, summary_usage=used)
                if answer.text.strip():
                    new = replace(
                        new,
                        summarized_before=plan.cut,
                        summary=answer.text.strip(),
                        pruned_before=max(new.pruned_before, plan.cut),
                    )
                else:
                    error = "the summary call answered no text"
    changed = new != rec
    if changed:
        new = replace(new, version=cp.version + 1, count=rec.count + 1)
        cp.compaction = new
        after = estimate(spec, view(cp.messages, new)[0])
    else:
        after = before
    done: dict[str, Any] = {
        "step": step,
        "trigger": trigger,
        "tokens_before": before,
        "tokens_after": after,
        "pruned": plan.pruned if new.pruned_before != rec.pruned_before else 0,
        "summarized": plan.summarized if new.summarized_before != rec.summarized_before else 0,
        "error": error,
    }
    if model_id:
        done["summary_model"] = model_id
        done["usage"] = usage
    await run.emit(ev.COMPACTION_DONE, **done)
    log.info(
        "compaction done session=%s tokens %d -> %d%s",
        cp.session_id,
        before,
        after,
        f" ({error})" if error else "",
    )
    if changed or usage.model_calls:
        await run.save()
    else:
        await run.flush()
    return changed


def refused(trip: budget.Trip) -> str:
    """``compaction.done``'s error for a summary call the limits refused (R79)."""
    if trip.deadline:
        return f"the summary call was not made: {trip.crossing()}"
    return (
        f"the summary call was not made: it could cross {trip.crossing()} "
        f"(used {trip.used:g}, its worst case {trip.worst_case:g})"
    )


def run_pending(cp: Checkpoint) -> bool:
    """Whether the last model turn has calls without a result."""
    for m in reversed(cp.messages):
        if m.role is Role.ASSISTANT:
            done = {r.tool_call_id for r in cp.messages if r.role is Role.TOOL}
            return any(c.id not in done for c in m.tool_calls)
    return False


def _no_registry() -> ProviderRegistry:
    raise InvalidArgument("compaction needs the daemon's providers", reason="INVALID_COMPACTION")
