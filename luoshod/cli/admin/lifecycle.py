"""``luoshod sessions watch|cancel|resume|compare``: follow a session's events, abort its
run, finish a crashed app's run, and set two trajectories side by side.

``resume`` is how an operator finishes a run whose app crashed. The run's tools are the
app's code, so the daemon waits for the app to answer each ``tool.call`` (300 s by default,
then the model reads a timeout error). ``resume`` therefore says at once when the run
waits on the app's tools and stops there (the app's next Resume runs them), unless
``--tool-timeout`` is given: then the run goes on, each call the app does not answer
within that time recorded as a timeout error result for the model to read.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from luosho.v1 import agent_pb2 as pb

from . import render
from .errors import CommandFailed


def decision_line(r: pb.ApprovalResolved) -> str:
    """``refund [call_0_0] approved by token boss: “note”`` (R92)."""
    if r.expired:
        return f"{r.tool_name} [{r.tool_call_id}] rejected: the approval {r.approval_id} expired"
    if r.answer:  # R88: a question's answer
        return f"{r.tool_name} [{r.tool_call_id}] answered by {r.decided_by or 'anonymous'}: " + (
            f"“{render.clip(r.answer, 60)}”"
        )
    verdict = "approved" if r.approved else "rejected"
    return f"{r.tool_name} [{r.tool_call_id}] {verdict} by {r.decided_by or 'anonymous'}" + (
        f": “{render.clip(r.note, 60)}”" if r.note else ""
    )


def event_line(e: pb.Event) -> str:
    """One line per event: seq, time, type and what it says."""
    kind = e.WhichOneof("payload")
    what = ""
    if kind == "run_start":
        what = (
            f"{pb.RunMode.Name(e.run_start.mode).removeprefix('RUN_MODE_').lower()} at step "
            f"{e.run_start.step_index}"
        )
    elif kind == "step_start":
        what = f"step {e.step_start.step}"
    elif kind == "model_turn":
        m = e.model_turn.message
        calls = ", ".join(f"{c.name} [{c.id}]" for c in m.tool_calls)
        what = render.clip(m.content, 80) + (f" → {calls}" if calls else "")
    elif kind == "tool_call":
        c = e.tool_call.call
        runner = (
            "run by the daemon"
            if e.tool_call.executor == pb.TOOL_EXECUTOR_DAEMON
            else "for the app"
        )
        what = (
            f"{c.name} [{c.id}] {render.clip(c.arguments_json, 60)} (waits "
            f"{e.tool_call.timeout_ms / 1000:g}s {runner})"
        )
    elif kind == "tool_result":
        r = e.tool_result
        what = (
            f"{r.tool_name} [{r.tool_call_id}] "
            f"{'error ' if r.is_error else ''}{render.clip(r.result_json, 60)}"
        )
    elif kind == "step_done":
        what = f"step {e.step_done.step}"
    elif kind == "approval_requested":
        what = render.one_line(e.approval_requested)
    elif kind == "approval_resolved":
        what = decision_line(e.approval_resolved)
    elif kind == "agent_drift":
        what = render.one_line(e.agent_drift)
    elif kind == "run_done":
        d = e.run_done
        what = f"{render.status_label(d.status)} ({render.finish_label(d.finish_reason)})"
        if d.approval_id:
            what += f", approval {d.approval_id}"
    elif kind == "text_delta":
        what = render.clip(e.text_delta.text, 80)
    seq = str(e.seq) if e.seq else "-"
    return f"{seq:>5}  {render.timestamp(e.time)}  {e.type:<18} {what}".rstrip()


def _print_event(e: pb.Event, as_json: bool) -> None:
    import json  # not at the top: the CLI's start-up does without it

    if as_json:
        print(json.dumps(render.as_dict(e)), flush=True)
    else:
        print(event_line(e), flush=True)


def watch(d: Any, args: argparse.Namespace) -> int:
    """The session's kept events after ``--after-seq``, then live ones until its run ends
    (or until Ctrl-C with ``--follow``)."""
    d.client.get_session(args.session_id)  # an unknown session is an error, not silence
    call = d.stub.Watch(
        pb.WatchRequest(session_id=args.session_id, after_seq=args.after_seq, follow=args.follow)
    )
    try:
        for response in call:
            if response.event.type == "text.delta" and not args.deltas:
                continue
            _print_event(response.event, args.json)
    except KeyboardInterrupt:
        call.cancel()
    return 0


def cancel(d: Any, args: argparse.Namespace) -> int:
    cancelled = d.client.cancel(args.session_id)
    if args.json:
        render.emit({"session_id": args.session_id, "cancelled": cancelled})
    elif cancelled:
        print(
            f"cancelled the run of session {args.session_id}: it stops at its next boundary, "
            "aborted (pending calls get a cancelled error result)"
        )
    if not cancelled:
        raise CommandFailed(
            f"no run of session {args.session_id!r} is active in this daemon; nothing cancelled"
        )
    return 0


def resume(d: Any, args: argparse.Namespace) -> int:
    cp = d.client.get_session(args.session_id)
    request = pb.ResumeRequest(
        session_id=args.session_id, request_id=args.request_id or "", wake=args.wake
    )
    if args.tool_timeout is not None:
        # The saved agent with a shorter tool timeout: the same fingerprint (the timeout is
        # not part of it), so no drift.
        spec = pb.AgentSpec()
        spec.CopyFrom(cp.agent)
        spec.tool_timeout_ms = max(1, int(args.tool_timeout.total_seconds() * 1000))
        request.agent.CopyFrom(spec)
    call = d.stub.Resume(request)
    done: pb.RunDone | None = None
    waiting: pb.ToolCall | None = None
    try:
        for response in call:
            e = response.event
            _print_event(e, args.json)
            if (
                e.type == "tool.call"
                and args.tool_timeout is None
                and e.tool_call.executor != pb.TOOL_EXECUTOR_DAEMON
            ):
                waiting = e.tool_call.call
                break
            if e.type == "run.done":
                done = e.run_done
    except KeyboardInterrupt:
        pass
    finally:
        call.cancel()  # the run stops at its next boundary; what it did is saved
    if args.json:
        return 0
    if waiting is not None:
        print(
            f"session {args.session_id} waits for the app to run {waiting.name} [{waiting.id}]: "
            "the app's next "
            f"Resume runs it. Or: luoshod sessions resume {args.session_id} --tool-timeout 5s "
            "(each call the app "
            "does not answer in 5s becomes a timeout error the model reads), or: luoshod "
            "sessions cancel "
            f"{args.session_id} while it runs",
            file=sys.stderr,
        )
    elif done is not None:
        print(
            f"session {args.session_id} is {render.status_label(done.status)} "
            f"({render.finish_label(done.finish_reason)})"
        )
    elif cp.status == pb.CHECKPOINT_STATUS_FINISHED:
        print(f"session {args.session_id} is finished: nothing to run")
    return 0


def compare(d: Any, args: argparse.Namespace) -> int:
    c = d.stub.Compare(pb.CompareRequest(session_id_a=args.session_a, session_id_b=args.session_b))
    if args.json:
        render.emit(render.as_dict(c))
        return 0
    rows = []
    for i in range(max(len(c.a), len(c.b))):
        a = c.a[i] if i < len(c.a) else None
        b = c.b[i] if i < len(c.b) else None
        # Steps count from 1, as fork --step, show and the console; ≠ marks each step that
        # differs (call ids aside), not every step after the first difference.
        mark = "≠" if _differs(a, b) else ""
        rows.append((i + 1, mark, _step(a), _step(b)))
    print(render.table(("STEP", "", args.session_a, args.session_b), rows))
    dr = c.drift
    where = f"diverged at step {c.diverged_at}" if c.HasField("diverged_at") else "same trajectory"
    print(
        f"{where}; steps {dr.steps_a} vs {dr.steps_b}; finish "
        f"{render.finish_label(dr.finish_reason_a)} vs "
        f"{render.finish_label(dr.finish_reason_b)}; tool order "
        f"{'changed' if dr.tool_order_changed else 'same'}; "
        f"{len(dr.arguments)} argument change{'s' if len(dr.arguments) != 1 else ''}"
    )
    if c.HasField("diverged_at"):
        for line in _difference(c.diverged_at, c.a, c.b, args.session_a, args.session_b):
            print(line)
    return 0


def _key(s: pb.TrajectoryStep) -> tuple[object, ...]:
    """A step without its call ids (which two runs draw differently), JSON compared parsed,
    as the daemon compares."""
    return (
        s.text,
        tuple(
            (
                c.name,
                _json(c.arguments_json),
                c.HasField("result_json"),
                _json(c.result_json),
                c.is_error,
                tuple(_key(t) for t in c.task_steps),
            )
            for c in s.calls
        ),
    )


def _json(text: str) -> str:
    import json  # not at the top: the CLI's start-up does without it

    try:
        return json.dumps(json.loads(text), sort_keys=True)
    except ValueError:
        return text


def _differs(a: pb.TrajectoryStep | None, b: pb.TrajectoryStep | None) -> bool:
    return a is None or b is None or _key(a) != _key(b)


def _difference(n: int, steps_a: Any, steps_b: Any, name_a: str, name_b: str) -> list[str]:
    """What differs at step ``n``: its text, or each call whose arguments or result differ,
    both sides."""
    a = steps_a[n - 1] if n <= len(steps_a) else None
    b = steps_b[n - 1] if n <= len(steps_b) else None
    if a is None or b is None:
        return [f"step {n}: only {name_a if b is None else name_b} has it"]
    lines = []
    if a.text != b.text:
        lines.append(f"step {n} text: {render.clip(a.text, 60)!r} vs {render.clip(b.text, 60)!r}")
    for i in range(max(len(a.calls), len(b.calls))):
        ca = a.calls[i] if i < len(a.calls) else None
        cb = b.calls[i] if i < len(b.calls) else None
        if ca is None or cb is None:
            only = ca or cb
            assert only is not None
            lines.append(f"step {n}: only {name_a if cb is None else name_b} calls {only.name}")
            continue
        if ca.name != cb.name or _json(ca.arguments_json) != _json(cb.arguments_json):
            lines.append(
                f"step {n} {ca.name}: arguments {render.clip(ca.arguments_json, 50)} vs "
                f"{render.clip(cb.arguments_json, 50)}"
            )
        has_a, has_b = ca.HasField("result_json"), cb.HasField("result_json")
        if (has_a, _json(ca.result_json), ca.is_error) != (
            has_b,
            _json(cb.result_json),
            cb.is_error,
        ):
            ra = render.clip(ca.result_json, 50) if has_a else "(no result)"
            rb = render.clip(cb.result_json, 50) if has_b else "(no result)"
            lines.append(f"step {n} {ca.name} result: {ra} vs {rb}")
    return lines or [f"step {n}: its sub-agent's steps differ"]


def _step(s: pb.TrajectoryStep | None) -> str:
    if s is None:
        return "-"
    calls = ", ".join(f"{c.name}({render.clip(c.arguments_json, 30)})" for c in s.calls)
    return render.clip(calls or s.text or "(empty)", 50)


def add_sessions_commands(ss: Any, command: Any, duration: Any) -> None:
    """The lifecycle subcommands of ``luoshod sessions`` (``command`` registers one)."""
    p = command(
        ss,
        "watch",
        watch,
        "follow a session's events: what is kept, then live until the run ends",
        "luoshod sessions watch trip-1\n  luoshod sessions watch trip-1 --after-seq 12 --follow "
        "--json",
    )
    p.add_argument("session_id")
    p.add_argument(
        "--after-seq", type=int, default=0, metavar="SEQ", help="only events after this seq"
    )
    p.add_argument(
        "--follow", action="store_true", help="keep following after the run ends (until Ctrl-C)"
    )
    p.add_argument("--deltas", action="store_true", help="print text.delta progress too")
    p = command(
        ss,
        "cancel",
        cancel,
        "abort the session's active run (its calls still without a result get a 'cancelled' error "
        "result)",
        "luoshod sessions cancel trip-1",
    )
    p.add_argument("session_id")
    p = command(
        ss,
        "resume",
        resume,
        "finish an interrupted run with its saved agent; stops when the run waits on the app's "
        "tools",
        "luoshod sessions resume trip-1\n  luoshod sessions resume trip-1 --tool-timeout 5s\n"
        "  luoshod sessions resume nightly-7 --wake   # a sleeping session, now\n"
        "  luoshod sessions resume trip-1 --request-id fix-1   # again after a failure: applied "
        "once",
    )
    p.add_argument("session_id")
    p.add_argument(
        "--request-id",
        metavar="ID",
        help="an idempotency key: the same command run again with the same ID after a "
        "failure resumes or replays that run instead of starting another",
    )
    p.add_argument(
        "--wake",
        action="store_true",
        help="wake a sleeping session now instead of at its time (R86)",
    )
    p.add_argument(
        "--tool-timeout",
        type=duration,
        metavar="DURATION",
        help="go on past the app's tool calls: each one unanswered after DURATION (5s, 1m) "
        "is recorded as a timeout error result the model reads",
    )
    p = command(
        ss,
        "compare",
        compare,
        "two sessions' trajectories side by side: steps, where they diverge, drift",
        "luoshod sessions compare trip-1 trip-1.fork-1",
    )
    p.add_argument("session_a")
    p.add_argument("session_b")


__all__ = ["add_sessions_commands", "event_line"]
