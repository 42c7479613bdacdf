"""Sub-agents (docs/reference/rules.md R55–R59): the ``task`` tool, and running a named sub-agent on
a clean context inside the lead's run, durably.

A sub-agent's state is a :class:`~luoshod.domain.SubTask` in the session's checkpoint
(``Checkpoint.subtasks``, by the lead's ``task`` call id; a sub-agent's own tasks in its
``children``), so every save of a sub-agent — its model turn before its tools, each of its
results — is a save of the session's checkpoint through the lead run's own ``save`` and
``flush``: one lease, one group-committed write, the same ordering (R7). A run resumed
after a crash finds the state and goes on where it was: a checkpointed model turn of the
sub-agent is not generated again, a recorded result is not run again (R59, R20–R24).

The state of a task leaves the checkpoint in the save that records the task's result in
its owner's transcript (``Run.announce`` for the lead, :meth:`SubRun._record` below), so
a crash can never lose a finished sub-agent's answer nor run it twice.

A gated call inside a sub-agent pauses the whole run (:class:`SubagentPaused`, R60):
the approval holds the call under its qualified id and the sub-agent's path; the decision
is recorded in the lead's checkpoint under that id, and the resumed run, going down the
same ``task`` calls, finds it there (R61, R62).

On a resume each unfinished level is compared with the resuming spec's definition of it
(:func:`drifted_levels`, R64).

Everything here sees the lead's run as a :class:`~.runport.RunPort` (what a sub-agent
needs of it: the working checkpoint, its controls, its event queue, save and flush); the
loop implements it and imports this module, never the other way.

A sub-agent's daemon tools (MCP, R70–R73) run as the lead's do
(``RunPort.call_daemon_tool`` with a ``Caller``): its ``tool.call`` marked
``executor="daemon"`` and tagged, the qualified call id as the idempotency key, its
result recorded like a client tool's; annotations gate calls like any ``needs_approval``.

On Cancel (R66) every call of an unfinished sub-agent gets its cancelled result and
``tool.result`` event (:func:`cancel_nested`), and the ``task`` call its own.

A task that ends, however it ends, joins the session's finished tasks
(``Checkpoint.tasks``, :func:`retire`) with its transcript. The store kit keeps every
task's messages in the session's message log (``store.kit.tasklog``), so a sub-agent's
save writes only its new messages, never the lead's transcript or its own earlier ones.

A ``task`` call with a ``task_id`` continues a finished task of the session (R65,
:func:`_continued`): the task itself with its whole transcript and the new prompt, or a
copy of it under a new task id (``mode`` fork).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from typing import Any

from ..config import Price
from ..domain import (
    SLEEP_TOOL,
    TASK_TOOL,
    AgentSpec,
    Checkpoint,
    FinishReason,
    Message,
    Role,
    SubTask,
    ToolCall,
)
from ..errors import ProviderError, ResumeToolMissing
from ..providers import ModelRequest, ModelResponse
from . import budget, fallback
from . import events as ev
from .control import RunInterrupted, settle_acks
from .events import SubagentTag
from .fingerprint import Drift, drift, fingerprint
from .handout import hand_out
from .runport import Caller, RunPort
from .tools import asked, check_call, decided_result, error_result

TASK = TASK_TOOL.name
#: Separates the path parts of a sub-agent call's qualified id (R58).
ID_SEPARATOR = "/"


class SubagentPaused(Exception):
    """A sub-agent's call waits for a human (R60): raised through the sub-agents above it
    to the lead's ``run_tools``, which pauses the whole run on it. The sub-agents keep
    their nested state; the resumed run finds the decision under the qualified call id."""

    def __init__(
        self,
        call: ToolCall,
        remaining: tuple[ToolCall, ...],
        path: tuple[str, ...],
        question: str | None = None,
    ) -> None:
        super().__init__(f"sub-agent {'/'.join(path)} waits for approval of {call.id}")
        self.call, self.remaining, self.path = call, remaining, path
        self.question = question  # R88: the text asked when the call is a question


class BudgetStop(Exception):
    """A sub-agent's model call would cross the limit of an agent above it (R80): raised
    through the sub-agents up to the one whose limit it is (which ends, its task's result
    an error naming the limit), or to the lead's ``run_tools``, which ends the run."""

    def __init__(self, trip: budget.Trip) -> None:
        super().__init__(trip.describe())
        self.trip = trip


def system_block(spec: AgentSpec) -> str:
    """The lead's system-prompt block (R55): one line per sub-agent."""
    lines = "\n".join(f"- {s.name}: {s.description}" for s in spec.subagents)
    return (
        "You can hand self-contained tasks to these sub-agents with the `task` tool "
        "(input: agent, prompt, description):\n"
        f"{lines}\n"
        "A sub-agent sees only the prompt you give it, not this conversation: put "
        "everything it needs in the prompt."
    )


def model_view(spec: AgentSpec, messages: list[Message]) -> tuple[AgentSpec, list[Message]]:
    """What the model of an agent with sub-agents is shown: its tools plus ``task``, and
    the sub-agent block after its system prompt. The stored transcript and the spec (so
    the fingerprint, R64) stay without them."""
    timers = (SLEEP_TOOL,) if spec.sleep_tool and spec.tool(SLEEP_TOOL.name) is SLEEP_TOOL else ()
    if not spec.subagents:
        if timers:  # R86: the daemon's timer joins the tools the model sees
            return dataclasses.replace(spec, tools=(*spec.tools, *timers)), messages
        return spec, messages
    block = system_block(spec)
    shown = AgentSpec(
        model=spec.model,
        instructions=f"{spec.instructions}\n\n{block}" if spec.instructions else block,
        tools=(*spec.tools, TASK_TOOL, *timers),
        max_steps=spec.max_steps,
        tool_concurrency=spec.tool_concurrency,
        on_agent_drift=spec.on_agent_drift,
        model_settings_json=spec.model_settings_json,
        tool_timeout_ms=spec.tool_timeout_ms,
        approval_timeout_ms=spec.approval_timeout_ms,
        subagents=spec.subagents,
        max_subagent_depth=spec.max_subagent_depth,
        limits=spec.limits,
        fallback_models=spec.fallback_models,
        reasoning=spec.reasoning,
    )
    if messages and messages[0].role is Role.SYSTEM:
        first = Message(Role.SYSTEM, shown.instructions)
        return shown, [first, *messages[1:]]
    return shown, [Message(Role.SYSTEM, block), *messages]


def drifted_levels(spec: AgentSpec, subtasks: dict[str, SubTask]) -> list[tuple[SubTask, Drift]]:
    """R64: compare every unfinished sub-agent's saved fingerprint with the resuming
    spec's definition of it, outermost first. Raises ``ResumeToolMissing`` for a paused
    sub-agent no longer declared, or one whose pending call's tool is gone (R49 at every
    level). Each drifted level's fingerprint becomes the new one (it warns once)."""
    found: list[tuple[SubTask, Drift]] = []
    for state in subtasks.values():
        sub = spec.subagent(state.name)
        where = "/".join(state.path)
        if sub is None:
            raise ResumeToolMissing(
                f"the unfinished sub-agent {where!r} is no longer declared by the resuming agent",
                subagent_path=where,
                tools=TASK,
            )
        missing = sorted(
            {c.name for c in _pending(state.messages) if sub.agent.tool(c.name) is None}
        )
        if missing:
            raise ResumeToolMissing(
                f"pending tool calls of sub-agent {where!r} use tools it no longer declares: "
                f"{', '.join(missing)}",
                subagent_path=where,
                tools=",".join(missing),
            )
        now = fingerprint(sub.agent)
        if (d := drift(state.fingerprint, now)) is not None:
            found.append((state, d))
        found.extend(drifted_levels(sub.agent, state.children))
    return found


def renew_fingerprints(spec: AgentSpec, subtasks: dict[str, SubTask]) -> None:
    """Each unfinished level takes the resuming spec's fingerprint (after a WARN)."""
    for state in subtasks.values():
        sub = spec.subagent(state.name)
        if sub is not None:
            state.fingerprint = fingerprint(sub.agent)
            renew_fingerprints(sub.agent, state.children)


def cancel_nested(root: RunPort, call_id: str, reason: str) -> None:
    """R66: the lead's ``task`` call ``call_id`` is cancelled by an abort: every call of
    its sub-agent tree without a result gets the cancelled result (R3) and its
    ``tool.result`` event, innermost first, so every level's transcript ends valid."""
    state = root.cp.subtasks.get(call_id)
    if state is not None:
        _cancel(root, state, call_id, reason)


def _cancel(root: RunPort, state: SubTask, qualified: str, reason: str) -> None:
    for child_id, child in list(state.children.items()):
        _cancel(root, child, f"{qualified}{ID_SEPARATOR}{child_id}", reason)
    for call in _pending(state.messages):
        result = error_result(call, reason, cancelled=True)
        state.messages.append(result)
        qid = f"{qualified}{ID_SEPARATOR}{call.id}"
        root.cp.decisions.pop(qid, None)
        SubRun(root, state, AgentSpec(""), qualified).emit(
            ev.TOOL_RESULT,
            step=state.step_index,
            tool_call_id=qid,
            tool_name=call.name,
            result_json=result.content,
            is_error=True,
        )
    for child in state.children.values():
        retire(root.cp, child)
    state.children.clear()


def retire(cp: Checkpoint, state: SubTask | None) -> None:
    """A task whose state leaves the unfinished ones (its result is recorded, or it was
    cancelled) joins the session's finished tasks (R65), its transcript with it (the
    store already holds what ``stored`` says: nothing is written again)."""
    if state is not None:
        for child in state.children.values():  # left only by a cancel
            retire(cp, child)
        cp.tasks[state.task_id] = state.end()  # the same object: a save in flight counts it


def tag(state: SubTask) -> SubagentTag:
    return SubagentTag(state.name, state.depth, state.path, state.task_id)


def is_task(spec: AgentSpec, call: ToolCall) -> bool:
    return call.name == TASK and bool(spec.subagents) and all(t.name != TASK for t in spec.tools)


async def run_task(
    root: RunPort,
    owner: AgentSpec,
    children: dict[str, SubTask],
    call: ToolCall,
    *,
    depth: int,
    path: tuple[str, ...],
    prefix: str,
    above: tuple[budget.Level, ...] = (),
) -> Message:
    """The result of ``call`` (a ``task`` call of ``owner``, arguments already checked
    against the task tool's schema): the sub-agent's final answer with its footer, or an
    error result (R56, R57). ``children`` holds the owner's unfinished tasks; ``depth`` is
    the depth the sub-agent would run at, ``prefix`` the qualified id of the owner's call
    path ("" for the lead); ``above`` the agents whose limits its calls count toward,
    outermost first (R80)."""
    args = json.loads(call.arguments_json or "{}")
    name = args["agent"]
    sub = owner.subagent(name)
    if sub is None:
        valid = ", ".join(s.name for s in owner.subagents)
        return error_result(call, f"unknown sub-agent {name!r} (valid sub-agents: {valid})")
    limit = root.spec.max_subagent_depth
    if depth > limit:
        return error_result(
            call,
            f"sub-agent {name!r} would run at depth {depth}, over this run's "
            f"max_subagent_depth of {limit}: nothing was run",
            depth=depth,
            max_subagent_depth=limit,
        )
    state = children.get(call.id)
    if state is None:  # a new task; a resumed one goes on from its saved state (R59)
        if args.get("task_id"):
            found = _continued(root.cp, call, args, (*path, name))
            if isinstance(found, Message):
                return found
            state = found
        else:
            root.cp.task_count += 1
            state = SubTask(name, f"task_{root.cp.task_count}", depth, (*path, name))
            if sub.agent.instructions:
                state.messages.append(Message(Role.SYSTEM, sub.agent.instructions))
        state.messages.append(Message(Role.USER, args["prompt"]))  # R56: a clean context
        state.fingerprint = fingerprint(sub.agent)
        children[call.id] = state
    qualified = f"{prefix}{ID_SEPARATOR}{call.id}" if prefix else call.id
    return await SubRun(root, state, sub.agent, qualified, above).result(call)


def _continued(
    cp: Checkpoint, call: ToolCall, args: dict[str, Any], path: tuple[str, ...]
) -> SubTask | Message:
    """R65: the state that continues the finished task ``args["task_id"]`` — the task
    itself (``mode`` resume, the default: it leaves the finished tasks while it runs) or a
    copy of its transcript under a new task id (``fork``) — or the error result
    ``SUBAGENT_TASK_NOT_FOUND`` when this session has no such finished task run by this
    sub-agent under this owner (``path``). Its steps count from 0 again: ``max_steps``
    applies to each continuation."""
    task_id, mode = args["task_id"], args.get("mode") or "resume"
    done = cp.tasks.get(task_id)
    if done is None or done.path != path:
        if any(t.task_id == task_id for t in cp.all_tasks()):
            why = "it is not finished" if done is None else f"it was run by {'/'.join(done.path)!r}"
        else:
            why = "this session has no such task"
        finished = sorted(t.task_id for t in cp.tasks.values() if t.path == path)
        return error_result(
            call,
            f"task {task_id!r} cannot be continued by {'/'.join(path)!r}: {why} "
            f"(its finished tasks: {', '.join(finished) or 'none'})",
            reason="SUBAGENT_TASK_NOT_FOUND",
            task_id=task_id,
        )
    if mode == "fork":
        cp.task_count += 1
        return SubTask(
            done.name, f"task_{cp.task_count}", done.depth, done.path, list(done.messages)
        )
    # The same task, the same object (a save in flight counts what it wrote of it): its
    # records stay where they are in the log, the new ones follow.
    del cp.tasks[task_id]
    done.step_index = 0
    return done


class SubRun:
    """One sub-agent's loop inside the lead's run ``root``: model call → tool calls →
    results, saving through ``root``."""

    def __init__(
        self,
        root: RunPort,
        state: SubTask,
        spec: AgentSpec,
        qualified: str,
        above: tuple[budget.Level, ...] = (),
    ) -> None:
        self.root, self.state, self.spec, self.qualified = root, state, spec, qualified
        self.tag = tag(state)
        #: The agents its model calls count toward (R80), outermost first, itself last.
        #: A sub-agent's run and session budgets both count its task: its own calls
        #: (``usage``) and its sub-agents' (``delegated``).
        self.levels = (
            *above,
            budget.level(
                spec.limits, state.usage, state.usage, state.path, id(state), state.delegated
            ),
        )
        self.estimate = budget.InputEstimate(budget.spec_chars(spec))
        self.price: tuple[Price | None] | None = None  # the model's, looked up once
        #: The worst case reserved for the model call in flight (R79); a fallback's
        #: replaces it (R82).
        self.reserved = fallback.Reservation(root.budgets, self.levels)

    def emit(self, type_: str, **data: object) -> None:
        """Queue a tagged event on the lead's outbox (written by its next save or flush)."""
        self.root.queue_event(type_, data, self.tag)

    async def _emit(self, type_: str, **data: object) -> None:
        self.emit(type_, **data)

    async def _flush(self) -> None:
        await asyncio.shield(self.root.flush())  # may save (see ``_record``)

    async def result(self, call: ToolCall) -> Message:
        st = self.state
        reason, text, why = await self.go()
        footer = (
            f"[sub-agent '{st.name}': {st.step_index} step(s), finish reason '{reason}', "
            f"task_id '{st.task_id}']"
        )
        if why:
            return error_result(
                call,
                f"sub-agent {st.name!r} did not finish: {why}",
                subagent=st.name,
                task_id=st.task_id,
                finish_reason=reason,
                footer=footer,
            )
        body = f"{text}\n\n{footer}" if text else footer
        return Message(Role.TOOL, json.dumps(body, ensure_ascii=False), (), call.id, TASK)

    async def go(self) -> tuple[str, str, str]:
        """Run until the sub-agent stops; returns (finish reason, final text, why it did
        not finish or "")."""
        st = self.state
        try:
            return await self._go()
        except BudgetStop as e:
            if e.trip.key != id(st):
                raise
            # R80: its own limit, crossed by a sub-agent's call: its calls without a
            # result get one naming the limit (R3), and its task ends.
            _cancel(self.root, st, self.qualified, e.trip.describe())
            return _trip_reason(e.trip), "", e.trip.describe()

    async def _go(self) -> tuple[str, str, str]:
        st, spec, control = self.state, self.spec, self.root.control
        pending = _pending(st.messages)
        if pending:  # R59/R22: the saved turn's calls without results, no model call
            await self.run_tools(pending, st.step_index)
            self.emit(ev.STEP_DONE, step=st.step_index)
        while True:
            if control.interrupted:
                raise RunInterrupted(control.interrupted)
            if control.aborted:
                return FinishReason.ABORTED.value, "", "the run was aborted"
            if st.step_index >= spec.max_steps:
                return FinishReason.MAX_STEPS.value, "", f"its max_steps ({spec.max_steps}) ran out"
            step = st.step_index + 1
            registry = self.root.providers
            assert registry is not None, "an engine with sub-agents is given its providers"
            first = registry.resolve(self.spec.model, self.spec.model_settings_json)
            provider, model, settings = first
            models = fallback.chain(registry, self.spec, first)  # R82
            messages = list(st.messages)
            if self.price is None and self.root.budgets is not None:
                self.price = (provider.price(model, settings),)
            worst = self._admit(self.price[0] if self.price else None, settings, messages)
            if isinstance(worst, budget.Trip):
                return _trip_reason(worst), "", worst.describe()
            self.reserved.hold(worst)
            self.emit(ev.STEP_START, step=step)
            try:
                await asyncio.shield(self.root.flush())  # may save (see ``_record``)
                got = await self.call_model(models, step, messages)
            except ProviderError as e:  # R56: a provider error is the task's error result
                return "error", "", f"its model call failed: {e}"
            finally:
                self.reserved.release()  # its real usage is added below
            if isinstance(got, budget.Trip):  # R79: a fallback's worst case crosses it
                return _trip_reason(got), "", got.describe()
            resp, answered_by = got
            if resp is None:
                return FinishReason.ABORTED.value, "", "the run was aborted"
            st.step_index = step
            usage = resp.usage.copy()
            usage.model_calls = 1
            st.usage.add(usage)
            for level in self.levels[1:-1]:  # R80: counted by the sub-agents above it
                if level.delegated is not None:
                    level.delegated.add(usage)
            cp = self.root.cp
            cp.usage.add(usage)  # R56: added to the lead's, and reported apart
            cp.total_usage.add(usage)
            cp.delegated_usage.add(usage)
            turn = Message(
                Role.ASSISTANT,
                resp.text,
                resp.tool_calls,
                model=answered_by,
                usage=usage,
                reasoning=resp.reasoning,  # R84
            )
            st.messages.append(turn)
            self.emit(ev.MODEL_TURN, step=step, message=turn, usage=usage)
            if not turn.tool_calls:
                self.emit(ev.STEP_DONE, step=step)
                return FinishReason.STOP.value, resp.text, ""
            # R1 at this level: saved by the flush that hands out its first call.
            self.root.defer_save()
            await self.run_tools(list(turn.tool_calls), step)
            self.emit(ev.STEP_DONE, step=step)

    def _admit(
        self, price: Price | None, settings: dict[str, Any], messages: list[Message]
    ) -> budget.Worst | budget.Trip | None:
        """R79/R80: the worst case of the next call, reserved at every level above it;
        the limit it could cross instead (its own: returned, the task ends; one above
        it: ``budget.exceeded`` and ``BudgetStop``); ``None`` when no limit applies."""
        budgets = self.root.budgets
        if budgets is None:
            return None
        worst = budget.worst_case(
            self.estimate.tokens(messages), budget.max_output_tokens(settings), price
        )
        trip = budgets.admit(self.levels, worst)
        if trip is None:
            return worst
        self.emit(ev.BUDGET_EXCEEDED, **trip.event_data())
        if trip.key != id(self.state):
            raise BudgetStop(trip)
        return trip

    async def call_model(
        self, models: list[fallback.Candidate], step: int, transcript: list[Message]
    ) -> tuple[ModelResponse | None, str] | budget.Trip:
        """One model call, by the sub-agent's model or, failing that, its fallbacks (R82):
        the answer (``None``: the run was aborted) and the model that gave it, or the limit
        a fallback's worst case would cross (R79)."""
        root = self.root
        spec, messages = model_view(self.spec, transcript)

        async def call(
            model: fallback.Candidate, on_retry: fallback.OnRetry
        ) -> ModelResponse | None:
            request = ModelRequest(
                root.cp.session_id,
                model.model,
                messages,
                spec,
                model.settings,
                scope=self.state.task_id,
                on_retry=on_retry,
            )
            answer, answered = await root.control.unless_stopped(model.provider.complete(request))
            if not answered:
                if root.control.aborted:
                    return None
                raise RunInterrupted(root.control.interrupted or "halted")
            return answer

        def admit(to: fallback.Candidate) -> budget.Worst | budget.Trip | None:
            return self._admit(to.provider.price(to.model, to.settings), to.settings, transcript)

        got = await fallback.answer(
            models,
            step,
            call,
            session_id=root.cp.session_id,
            note=lambda type_, data: self.emit(type_, **data),
            write=self._flush,
            reserved=self.reserved,
            admit=admit,
        )
        if isinstance(got, budget.Trip):
            return got
        return got[0], got[1].model_id

    async def run_tools(self, calls: list[ToolCall], step: int) -> None:
        """The calls one after the other, each result saved as it is recorded (R2); a
        gated call without a decision pauses the whole run (``SubagentPaused``, R60) with
        the calls after it remembered (R28)."""
        for n, call in enumerate(calls):
            if self.root.control.interrupted:
                raise RunInterrupted(self.root.control.interrupted)
            if self._gated(call):
                raise SubagentPaused(
                    self._qualified_call(call),
                    tuple(self._qualified_call(c) for c in calls[n + 1 :]),
                    self.state.path,
                    asked(self.spec.tool(call.name), call),
                )
            result, saved = await self.one_call(call, step)
            await self._record(result, step, saved)

    def _gated(self, call: ToolCall) -> bool:
        if (
            self._qualify(call.id) in self.root.cp.decisions
            or check_call(self.spec, call) is not None
        ):
            return False
        tool = self.spec.tool(call.name)
        return tool is not None and tool.gated

    def _qualified_call(self, call: ToolCall) -> ToolCall:
        return ToolCall(self._qualify(call.id), call.name, call.arguments_json)

    async def _record(self, result: Message, step: int, saved: asyncio.Future[None] | None) -> None:
        st = self.state
        st.messages.append(result)
        retire(self.root.cp, st.children.pop(result.tool_call_id, None))  # with its result
        qualified = self._qualify(result.tool_call_id)
        self.root.cp.decisions.pop(qualified, None)  # acted on
        self.root.cp.handed_out_at.pop(qualified, None)  # its timeout is over (R81)
        self.emit(
            ev.TOOL_RESULT,
            step=step,
            tool_call_id=qualified,
            tool_name=result.tool_name,
            result_json=result.content,
            is_error=result.is_error,
        )
        acks = [saved] if saved is not None else []
        try:
            # Shielded: a sibling task that pauses the run cancels this one (R63), and a
            # save cut off in the store would leave the checkpoint's version behind the
            # store's; the run's next save waits for this one under the write lock.
            await asyncio.shield(self.root.save())
        except BaseException as e:
            settle_acks(acks, e)
            raise
        settle_acks(acks, None)  # R54: the submitter hears ACCEPTED once it is durable

    def _qualify(self, call_id: str) -> str:
        return f"{self.qualified}{ID_SEPARATOR}{call_id}"

    async def one_call(
        self, call: ToolCall, step: int
    ) -> tuple[Message, asyncio.Future[None] | None]:
        spec, st = self.spec, self.state
        refused = check_call(spec, call)  # R25 at this level
        if refused is not None:
            return refused, None
        if is_task(spec, call):  # a sub-agent's own sub-agent (R57)
            out = await run_task(
                self.root,
                spec,
                st.children,
                call,
                depth=st.depth + 1,
                path=st.path,
                prefix=self.qualified,
                above=self.levels,
            )
            return out, None
        tool = spec.tool(call.name)
        assert tool is not None  # check_call refused undeclared tools
        qid = self._qualify(call.id)  # R58: the client answers the qualified id
        root = self.root
        decision = root.cp.decisions.get(qid)
        if decision is not None:  # R61: rejected; R88: answered or declined
            decided = decided_result(call, tool, decision)
            if decided is not None:
                return decided, None
        if tool.server:  # R71 at this level: a daemon tool, run here under the qualified id
            caller = Caller(spec, self._emit, self._flush, qid)
            return await root.call_daemon_tool(call, tool, step, caller), None
        timeout_s = spec.tool_timeout_ms / 1000 if spec.tool_timeout_ms else root.tool_timeout_s
        # R77 at this level: its attempt, and a reconcile first when handed out before.
        outcome = await hand_out(
            root, ToolCall(qid, call.name, call.arguments_json), tool, step, timeout_s, self.tag
        )
        if outcome is None:
            return error_result(
                call, f"no result within {timeout_s:g}s (tool timeout)", timeout=True
            ), None
        return (
            Message(Role.TOOL, outcome.result_json, (), call.id, call.name, outcome.is_error),
            outcome.saved,
        )


#: The footer of a task's result (R56), as ``SubRun.result`` writes it.
FOOTER = re.compile(
    r"\[sub-agent '[^']*': \d+ step\(s\), finish reason '([^']*)', task_id '([^']*)'\]\s*$"
)


def task_id_of(result: Message) -> str:
    """The task a ``task`` call's result names: in its footer, or, for a task that did not
    finish, in the error result's ``task_id``; "" when it ran none."""
    try:
        body = json.loads(result.content)
    except ValueError:
        return ""
    if isinstance(body, str) and (m := FOOTER.search(body)):
        return m.group(2)
    if isinstance(body, dict) and isinstance(task_id := body.get("task_id"), str):
        return task_id
    return ""


def locate(cp: Checkpoint, call_id: str) -> tuple[AgentSpec | None, list[Message], str] | None:
    """Where the tool call ``call_id`` is — the lead's, or a sub-agent's under its
    qualified id (R58): (the spec of the agent that made it, ``None`` when no longer
    declared; the transcript that holds it; its own id there), going down the ``task``
    calls through the unfinished sub-agents and the finished tasks (by the task id each
    ``task`` result names). ``None``: no such path of tasks."""
    if ID_SEPARATOR not in call_id or any(
        c.id == call_id for m in cp.messages for c in m.tool_calls
    ):
        return cp.agent, cp.messages, call_id
    *parts, own = call_id.split(ID_SEPARATOR)
    spec, messages, states = cp.agent, cp.messages, cp.subtasks
    for part in parts:
        state = states.get(part)
        if state is None:
            result = next(
                (m for m in messages if m.role is Role.TOOL and m.tool_call_id == part), None
            )
            state = cp.tasks.get(task_id_of(result)) if result is not None else None
            if state is None:
                return None
        sub = spec.subagent(state.name) if spec is not None else None
        spec = sub.agent if sub is not None else None
        messages, states = state.messages, state.children
    return spec, messages, own


def _pending(messages: list[Message]) -> list[ToolCall]:
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.role is Role.ASSISTANT:
            done = {r.tool_call_id for r in messages[i + 1 :] if r.role is Role.TOOL}
            return [c for c in m.tool_calls if c.id not in done]
    return []


def _trip_reason(trip: budget.Trip) -> str:
    return (FinishReason.DEADLINE_EXCEEDED if trip.deadline else FinishReason.BUDGET_EXCEEDED).value
