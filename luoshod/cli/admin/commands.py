"""The admin commands: ``sessions``, ``approvals`` and ``prune`` against a running daemon.

Each command reads through :class:`luosho.client.Client` (typed errors, paging), except
``approvals approve|reject``, which reads the Resolve stream with the raw stub because
the operator cannot run the app's tools: it stops at the first ``tool.call`` and leaves
that call to the app's next Resume. Every failure becomes one line on stderr and exit
status 1 (:func:`run`); a usage error is argparse's exit status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import grpc

from luosho.client import Client, LuoshoError, ToolResultPatch
from luosho.v1 import agent_pb2 as pb
from luosho.v1 import agent_pb2_grpc as pb_grpc

from .. import connect as connection
from ..connect import DEFAULT_ADDRESS
from ..parser import Parser
from . import render
from .errors import CommandFailed
from .prune import parse_duration, stale
from .render import STATUSES

PAGE_SIZE = 500


class Daemon:
    """The connection of one command to the daemon. (A plain class: a dataclass costs
    every command's start-up a quarter of a millisecond to make.)"""

    __slots__ = ("address", "client", "stub", "channel")

    def __init__(
        self, address: str, client: Client, stub: pb_grpc.AgentServiceStub, channel: grpc.Channel
    ) -> None:
        self.address = address
        self.client = client
        self.stub = stub
        self.channel = channel


@contextmanager
def connect(args: argparse.Namespace) -> Iterator[Daemon]:
    """The daemon at ``args.address``, with the TLS options and token of ``args``."""
    try:
        ch = connection.channel(args, args.address)
    except (ValueError, OSError) as e:  # an unreadable token or certificate file
        raise CommandFailed(str(e)) from None
    try:
        with Client(channel=ch) as client:
            yield Daemon(args.address, client, pb_grpc.AgentServiceStub(ch), ch)
    finally:
        ch.close()


# -- sessions ---------------------------------------------------------------------------------


def sessions_list(d: Daemon, args: argparse.Namespace) -> int:
    wanted = _statuses(args.status)
    # One status is filtered by the daemon; several are filtered here.
    query = next(iter(wanted)) if len(wanted) == 1 else None
    listed = d.client.list_sessions(
        query, page_size=PAGE_SIZE, prefix=args.prefix or "", costliest_first=args.by_cost
    )
    rows = [s for s in listed if not wanted or s.status in wanted]
    return _listing(
        args, rows[: args.limit] if args.limit else rows, render.session_rows, "no sessions"
    )


def sessions_show(d: Daemon, args: argparse.Namespace) -> int:
    got = d.client.session(args.session_id)  # one GetSession: checkpoint, queue, failure
    cp, queue = got.checkpoint, list(got.queue)
    failure = got.last_model_failure if got.HasField("last_model_failure") else None
    history = list(d.client.history(args.session_id, page_size=PAGE_SIZE))
    if args.json:
        answer = render.structured_answer(cp)
        render.emit(
            {
                "checkpoint": render.as_dict(cp),
                "history": [render.as_dict(e) for e in history],
                "queue": [render.as_dict(q) for q in queue],
                "last_model_failure": render.as_dict(failure) if failure is not None else None,
                "usage_by_model": {m: render.as_dict(u) for m, u in got.usage_by_model.items()},
                # R83: the structured answer parsed (null without one).
                "output": None if answer is render.NO_ANSWER else answer,
            }
        )
    else:
        clip = None if args.full else render.CLIP
        print(render.session_text(cp, history, clip, by_model=got.usage_by_model))
        if failure is not None:
            print(failure_text(failure))
        if queue:
            print(queue_text(queue, None if args.full else render.CLIP))
    return 0


def failure_text(f: Any) -> str:
    """Why the session's last model call failed, and when the daemon calls again."""
    meta = f.metadata
    what = " ".join(
        x
        for x in (f"HTTP {meta['status']}" if "status" in meta else "", meta.get("error_type", ""))
        if x
    )
    said = meta.get("provider_message", "")
    at = f.failed_at.ToDatetime().strftime("%Y-%m-%d %H:%M:%SZ")
    again = f.retry_not_before.ToDatetime().strftime("%Y-%m-%d %H:%M:%SZ")
    lines = [
        f"\nlast model call failed: {f.reason} ({what}) at {at}, {f.failures} in a row",
        f"  {meta.get('provider', '?')}:{meta.get('model', '?')} said: {said!r}" if said else "",
        "  no retry can fix it: change the request or the agent, then resume"
        if f.reason == "PROVIDER_REJECTED"
        else f"  the daemon calls that model again for this session from {again}",
    ]
    return "\n".join(x for x in lines if x)


IF_BUSY_NAMES = {1: "reject", 2: "enqueue", 3: "interrupt", 4: "rollback"}


def queue_text(queue: list[Any], clip: int | None) -> str:
    """The inputs queued on a busy session (R69), in the order they will run."""
    lines = [f"\nqueued inputs ({len(queue)}, in the order they run):"]
    for n, q in enumerate(queue, 1):
        text = " / ".join(m.content for m in q.input)
        when = q.enqueued_at.ToDatetime().strftime("%Y-%m-%d %H:%M:%SZ")
        lines.append(
            f"  {n}. {q.request_id}  {IF_BUSY_NAMES.get(q.if_busy, 'enqueue')}  {when}  "
            f"{text if clip is None else text[:clip]!r}"
        )
    return "\n".join(lines)


def sessions_dequeue(d: Daemon, args: argparse.Namespace) -> int:
    removed = d.client.dequeue_input(args.session_id, args.request_id)
    if args.json:
        render.emit(
            {"session_id": args.session_id, "request_id": args.request_id, "removed": removed}
        )
    elif removed:
        print(f"removed input {args.request_id} from the queue of session {args.session_id}")
    if not removed:
        raise CommandFailed(
            f"session {args.session_id!r} queues no input {args.request_id!r} (never queued, "
            "removed, or already running)"
        )
    return 0


def sessions_history(d: Daemon, args: argparse.Namespace) -> int:
    d.client.get_session(args.session_id)  # an unknown session is an error, not an empty list
    entries = list(
        d.client.history(
            args.session_id,
            include_checkpoint=args.checkpoints,
            page_size=50 if args.checkpoints else PAGE_SIZE,
        )
    )
    if args.json and args.checkpoints:
        # R83: each save that holds a structured answer gives it parsed, as "output".
        rows = []
        for e in entries:
            row = render.as_dict(e)
            if (answer := render.structured_answer(e.checkpoint)) is not render.NO_ANSWER:
                row["output"] = answer
            rows.append(row)
        render.emit(rows)
        return 0
    return _listing(args, entries, render.history_rows, "no history kept")


def sessions_delete(d: Daemon, args: argparse.Namespace) -> int:
    deleted = d.client.delete_session(args.session_id, keep_history=args.keep_history)
    if args.json:
        render.emit({"session_id": args.session_id, "deleted": deleted})
    elif deleted:
        print(
            f"deleted session {args.session_id}" + (" (history kept)" if args.keep_history else "")
        )
    if not deleted:
        raise CommandFailed(
            f"CHECKPOINT_NOT_FOUND: session {args.session_id!r} has no checkpoint; nothing deleted"
        )
    return 0


def sessions_compact(d: Daemon, args: argparse.Namespace) -> int:
    resp = d.client.compact(args.session_id, strategy=args.strategy)
    cp = resp.checkpoint
    if args.json:
        render.emit(
            {
                "session_id": args.session_id,
                "compacted": resp.compacted,
                "compaction": render.as_dict(cp.compaction) if cp.HasField("compaction") else None,
            }
        )
    elif resp.compacted:
        c = cp.compaction
        print(
            f"compacted session {args.session_id}: tool results before message "
            f"{c.pruned_before} pruned, messages before {c.summarized_before} summarized "
            f"(compaction {c.count}, checkpoint version {c.version})"
        )
    else:
        print(
            f"nothing to compact in session {args.session_id}: what is left is in the "
            "protected tail"
        )
    return 0


def sessions_fork(d: Daemon, args: argparse.Namespace) -> int:
    kw: dict[str, Any] = {"new_session_id": args.new_id or "", "append_input": args.append or ""}
    if args.state is not None:
        kw["business_state"] = _json_arg(args.state, "--state")
    if args.tool_result:
        call_id, sep, body = args.tool_result.partition("=")
        if not sep:
            raise CommandFailed(
                '--tool-result takes CALL_ID=JSON, e.g. call_0_0=\'{"sky": "rain"}\''
            )
        kw["tool_result"] = ToolResultPatch(call_id, _json_arg(body, "--tool-result"), args.error)
    forked = d.client.fork(args.session_id, args.step, **kw)
    if args.json:
        render.emit(
            {
                "session_id": forked.session_id,
                "step": forked.step,
                "checkpoint": render.as_dict(forked.checkpoint),
            }
        )
    else:
        cp = forked.checkpoint
        print(
            f"forked {args.session_id} at step {forked.step} into {forked.session_id} "
            f"({render.status_label(cp.status)}, {len(cp.messages)} messages); "
            "continue it with Resume, or inspect it with: luoshod sessions show "
            f"{forked.session_id}"
        )
    return 0


# -- approvals --------------------------------------------------------------------------------


def approvals_list(d: Daemon, args: argparse.Namespace) -> int:
    rows = list(d.client.approvals(args.session, page_size=PAGE_SIZE))
    return _listing(args, rows, render.approval_rows, "no pending approvals")


def approvals_decide(d: Daemon, args: argparse.Namespace) -> int:
    """Resolve and follow the run until it needs the app (a ``tool.call``) or ends; an
    ``answer`` answers a question (R88)."""
    answer = args.answer if args.decision == "answer" else ""
    approved = args.decision in ("approve", "answer")
    call = d.stub.Resolve(
        pb.ResolveRequest(
            approval_id=args.approval_id,
            approved=approved,
            answer=answer,
            note=args.note or "",
            request_id=args.request_id or "",
            session_id=args.session or "",
            # The daemon ends the stream (OK) once the run waits on the app's tools, so
            # the CLI reads it to its end instead of cancelling it (a CANCELLED Resolve).
            detach_on_tool_call=True,
        )
    )
    session, waiting, done = "", None, None
    try:
        for response in call:
            event = response.event
            session = session or event.session_id
            # The app's call to run; a daemon tool's (MCP) runs on in the daemon.
            if (
                event.type == "tool.call"
                and waiting is None
                and event.tool_call.executor != pb.TOOL_EXECUTOR_DAEMON
            ):
                waiting = event.tool_call.call
            if event.type == "run.done":
                done = event.run_done
    finally:
        call.cancel()  # the run stops at its next boundary; the decision is already saved
    verb = "answered" if answer else "approved" if approved else "rejected"
    if args.json:
        render.emit(
            {
                "approval_id": args.approval_id,
                "approved": approved,
                **({"answer": answer} if answer else {}),
                "session_id": session,
                "waiting_for_tool": render.as_dict(waiting) if waiting else None,
                "run_done": render.as_dict(done) if done else None,
            }
        )
    elif waiting is not None:
        print(
            f"{verb} {args.approval_id}: session {session} is in progress and waits for the app "
            f"to run {waiting.name} [{waiting.id}]; the app's next Resume runs it"
        )
    elif done is not None:
        status = render.status_label(done.status)
        extra = f", new approval {done.approval_id}" if done.approval_id else ""
        print(
            f"{verb} {args.approval_id}: session {session} is {status} "
            f"({render.finish_label(done.finish_reason)}{extra})"
        )
    else:
        print(f"{verb} {args.approval_id}: session {session}")
    return 0


# -- prune ------------------------------------------------------------------------------------


def prune(d: Daemon, args: argparse.Namespace) -> int:
    """Every page is read before the first delete, so deleting cannot shift the pages."""
    cutoff = datetime.now(UTC) - args.older_than
    # A run in progress may be running right now, or be a crashed app's to finish, and a
    # sleeping session waits for its time (R86): each is pruned only when asked for by name.
    wanted = _statuses(args.status) or {
        v for k, v in STATUSES.items() if k not in ("in-progress", "sleeping")
    }
    every = list(d.client.list_sessions(page_size=PAGE_SIZE))
    chosen = stale(every, cutoff, wanted)
    kept = [] if args.status else stale(every, cutoff, {STATUSES["in-progress"]})
    if chosen and not args.dry_run and not args.yes:
        _confirm(chosen, cutoff)
    deleted, failed = [], []
    for s in chosen if not args.dry_run else ():
        try:
            if d.client.delete_session(s.session_id, keep_history=args.keep_history):
                deleted.append(s)
        except LuoshoError as e:  # a session busy with a run is skipped, not fatal
            failed.append((s, e))
    if args.json:
        render.emit(
            {
                "cutoff": cutoff.isoformat(),
                "dry_run": args.dry_run,
                "matched": [render.as_dict(s) for s in chosen],
                "deleted": [s.session_id for s in deleted],
                "failed": [
                    {"session_id": s.session_id, "reason": e.reason, "message": e.message}
                    for s, e in failed
                ],
            }
        )
    else:
        if chosen:
            print(render.session_rows(chosen))
        verb = "would delete" if args.dry_run else "deleted"
        count = len(chosen) if args.dry_run else len(deleted)
        print(
            f"{verb} {count} session{'s' if count != 1 else ''} last saved before "
            f"{cutoff:%Y-%m-%d %H:%M:%SZ}"
        )
        if kept:
            print(
                f"kept {len(kept)} in-progress session{'s' if len(kept) != 1 else ''} as old "
                "(give --status in-progress to prune them)"
            )
        for s, err in failed:
            print(f"not deleted {s.session_id}: {err}", file=sys.stderr)
    return 1 if failed else 0


class Unconfirmed(Exception):
    """``prune`` was not confirmed: a usage error (exit status 2)."""


def _confirm(chosen: Sequence[pb.SessionSummary], cutoff: datetime) -> None:
    """Ask on the terminal before deleting; with no terminal, ``--yes`` is required."""
    n = f"{len(chosen)} session{'s' if len(chosen) != 1 else ''}"
    if not sys.stdin.isatty():
        raise Unconfirmed(
            f"prune would delete {n}; give --yes to delete without asking, or --dry-run to list "
            "them"
        )
    print(render.session_rows(chosen), file=sys.stderr)
    print(
        f"delete these {n} last saved before {cutoff:%Y-%m-%d %H:%M:%SZ}? [y/N] ",
        end="",
        file=sys.stderr,
        flush=True,
    )
    if sys.stdin.readline().strip().lower() not in ("y", "yes"):
        raise Unconfirmed("nothing deleted")


# -- plumbing ---------------------------------------------------------------------------------


def _listing(
    args: argparse.Namespace, rows: Sequence[Any], table: Callable[[Sequence[Any]], str], empty: str
) -> int:
    """A list of protos: a JSON array with ``--json``, else a table (``empty`` if none)."""
    if args.json:
        render.emit([render.as_dict(r) for r in rows])
    else:
        print(table(rows) if rows else empty)
    return 0


def _statuses(given: list[str] | None) -> set[int]:
    return {STATUSES[s] for s in given or ()}


def _json_arg(text: str, flag: str) -> Any:
    import json  # not at the top: the CLI's start-up does without it

    try:
        return json.loads(text)
    except ValueError as e:
        raise CommandFailed(f"{flag}: not JSON: {e}") from None


def _failure_line(err: Exception, args: argparse.Namespace) -> str:
    """``REASON: message`` as the daemon's ErrorInfo says, or why the daemon was not reached."""
    if isinstance(err, LuoshoError):
        reason, message, code = err.reason, err.message, err.code
    elif isinstance(err, grpc.RpcError) and isinstance(err, grpc.Call):  # the raw Resolve stream
        # Here only: grpc_status pulls in grpc.experimental, which no other command needs.
        from google.rpc import error_details_pb2
        from grpc_status import rpc_status

        status = rpc_status.from_call(err)
        reason, message, code = "", status.message if status else err.details() or "", err.code()
        for detail in status.details if status else ():
            info = error_details_pb2.ErrorInfo()
            if detail.Unpack(info):
                reason = info.reason
                break
    else:
        return str(err)
    address = args.address
    if reason:
        return f"{reason}: {message}"
    if code == grpc.StatusCode.UNAVAILABLE:
        return (
            f"cannot reach the daemon at {address}: {message}{connection.tls_hint(args, address)}"
        )
    return f"{code.name}: {message}"


def run(args: argparse.Namespace) -> int:
    """Run the command ``args`` were parsed for (:func:`add_command`). The one error
    boundary of the admin commands: one readable line, never a traceback."""
    handler: Callable[[Daemon, argparse.Namespace], int] | None = args.admin
    if handler is None:  # `luoshod sessions` alone: its subcommands
        print(args.group_help(), end="")
        return 0
    try:
        with connect(args) as d:
            return handler(d, args)
    except (LuoshoError, grpc.RpcError, CommandFailed) as e:
        print(f"luoshod: {_failure_line(e, args)}", file=sys.stderr)
    except Unconfirmed as e:
        print(f"luoshod: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `luoshod sessions list | head`
        sys.stderr.close()
    return 1


# -- the parsers ------------------------------------------------------------------------------


def _duration(text: str) -> Any:
    """``--older-than``/``--tool-timeout``: a wrong duration is a wrong command line (exit 2)."""
    try:
        return parse_duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _status(text: str) -> str:
    """``in_progress`` is read as ``in-progress``; the choices are listed once, with ``-``."""
    return text.replace("_", "-")


class _Unparsed:
    """Stands for the parser of a subcommand the command line does not name: what is added
    to it is dropped (argparse never parses it; it is listed, with its help line, by its
    group's help). Building every subcommand's arguments cost a third of ``luoshod sessions
    list``'s start-up (bench/cli_start.py)."""

    def __getattr__(self, name: str) -> Callable[..., _Unparsed]:
        return lambda *args, **kwargs: self


def add_command(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    help: str,
    only: str | None = None,
) -> None:
    """Register ``name`` (``sessions``, ``approvals`` or ``prune``) on ``luoshod``'s
    subparsers, with ``help`` as its line in ``luoshod --help``. ``only``: the subcommand
    the command line names (``list`` of ``sessions list``); the others of the group are
    listed but get no arguments (None: every one gets its arguments)."""
    common = Parser(add_help=False)
    common.add_argument(
        "--address",
        default=os.environ.get("LUOSHOD_ADDRESS", DEFAULT_ADDRESS),
        help="the daemon: host:port or unix:/path (env LUOSHOD_ADDRESS; default "
        f"{DEFAULT_ADDRESS})",
    )
    common.add_argument("--json", action="store_true", help="JSON for scripts instead of tables")
    connection.add_token_arguments(common)
    connection.add_tls_arguments(common)
    common.set_defaults(log_level="WARNING")

    def command(
        parent: Any, word: str, handler: Callable[..., int], text: str, examples: str = ""
    ) -> argparse.ArgumentParser:
        if parent is not sub and only is not None and word != only:
            parent.add_parser(word, help=text)
            return _Unparsed()  # type: ignore[return-value]
        p = parent.add_parser(
            word,
            parents=[common],
            help=text,
            description=text,
            epilog=f"examples:\n  {examples}" if examples else None,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        p.set_defaults(admin=handler)
        return p

    def group(word: str, examples: str) -> Any:
        """A command of subcommands; alone, it prints them (like ``kubectl config``)."""
        g = sub.add_parser(
            word,
            help=help,
            description=help,
            epilog=f"examples:\n  {examples}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        g.set_defaults(admin=None, group_help=g.format_help)
        return g.add_subparsers(dest=f"{word}_command", metavar="COMMAND")

    statuses: dict[str, Any] = {"choices": sorted(STATUSES), "type": _status, "action": "append"}

    if name == "sessions":
        ss = group(
            name,
            "luoshod sessions list --status in-progress\n  luoshod sessions show trip-1\n  "
            "luoshod sessions resume trip-1 --tool-timeout 5s",
        )
        p = command(
            ss,
            "list",
            sessions_list,
            "every session, following every page",
            "luoshod sessions list\n  luoshod sessions list --status in-progress --status "
            "awaiting-approval --json\n"
            "  luoshod sessions list --prefix trip-\n  luoshod sessions list --by-cost --limit 10",
        )
        p.add_argument("--status", help="only this status (repeatable)", **statuses)
        p.add_argument("--prefix", help="only the sessions whose id starts with this")
        p.add_argument("--limit", type=int, default=0, help="at most this many rows")
        p.add_argument(
            "--by-cost",
            action="store_true",
            help="the costliest sessions first (their whole life's cost), not by id",
        )
        p = command(
            ss,
            "show",
            sessions_show,
            "a session's state, transcript and step timeline",
            "luoshod sessions show trip-1 --full",
        )
        p.add_argument("session_id")
        p.add_argument("--full", action="store_true", help="do not shorten long messages")
        p = command(
            ss,
            "dequeue",
            sessions_dequeue,
            "remove an input queued on a busy session (if_busy)",
            "luoshod sessions dequeue trip-1 q-5f3a8cfd",
        )
        p.add_argument("session_id")
        p.add_argument(
            "request_id", help="the queued input's request id (sessions show lists them)"
        )
        p = command(
            ss,
            "history",
            sessions_history,
            "a session's saved checkpoints, newest first",
            "luoshod sessions history trip-1",
        )
        p.add_argument("session_id")
        p.add_argument(
            "--checkpoints", action="store_true", help="include each full checkpoint (with --json)"
        )
        p = command(
            ss,
            "delete",
            sessions_delete,
            "delete a session's checkpoint (and history)",
            "luoshod sessions delete trip-1 --keep-history",
        )
        p.add_argument("session_id")
        p.add_argument("--keep-history", action="store_true")
        p = command(
            ss,
            "compact",
            sessions_compact,
            "compact a session's transcript for the model (prune, summarize)",
            "luoshod sessions compact trip-1 --strategy prune",
        )
        p.add_argument("session_id")
        p.add_argument(
            "--strategy",
            choices=("prune", "summarize", "both"),
            help="default: the agent's compaction strategy",
        )
        p = command(
            ss,
            "fork",
            sessions_fork,
            "a new session from a step of another's history",
            'luoshod sessions fork trip-1 --step 1 --tool-result call_0_0=\'{"sky": "rain"}\'',
        )
        p.add_argument("session_id")
        p.add_argument("--step", type=int, required=True, help="the step to fork from")
        p.add_argument("--new-id", help="the new session's id (default SESSION.fork-N)")
        p.add_argument(
            "--append", metavar="TEXT", help="a user message queued after any pending calls"
        )
        p.add_argument("--state", metavar="JSON", help="replace the business state")
        p.add_argument(
            "--tool-result",
            metavar="CALL_ID=JSON",
            help="replace (or record) one tool call's result",
        )
        p.add_argument("--error", action="store_true", help="the --tool-result is an error result")
        from .lifecycle import add_sessions_commands

        add_sessions_commands(ss, command, _duration)
    elif name == "approvals":
        aa = group(
            name,
            "luoshod approvals list\n  luoshod approvals approve ap-1796224345776-7242f607 --note "
            "'ok by Ana'\n  luoshod approvals answer ap-1796224345901-0c1d2e3f 'weekly, please'",
        )
        p = command(
            aa,
            "list",
            approvals_list,
            "pending approvals, oldest first",
            "luoshod approvals list --session pay-1",
        )
        p.add_argument("--session", help="only this session's")
        decisions = {
            "approve": ("approve a pending approval", " --note 'checked the invoice'"),
            "reject": ("reject a pending approval (decline a question)", " --note 'no receipt'"),
            "answer": ("answer a pending question", " 'weekly, please'"),
        }
        for decision, (what, example) in decisions.items():
            p = command(
                aa,
                decision,
                approvals_decide,
                f"{what} and continue its run until it needs the app",
                f"luoshod approvals {decision} ap-1796224345776-7242f607{example}",
            )
            p.add_argument("approval_id")
            if decision == "answer":
                p.add_argument("answer", help="the answer: the question's call's result (R88)")
            p.add_argument(
                "--note", help="recorded with the decision (the model reads it on a rejection)"
            )
            p.add_argument(
                "--request-id",
                metavar="ID",
                help="an idempotency key: run the same command again with the same ID "
                "(and --session) after a failure and the decision is applied once",
            )
            p.add_argument(
                "--session",
                help="the approval's session: lets a retry with --request-id be "
                "recognised once the first attempt took the decision",
            )
            p.set_defaults(decision=decision)
    elif name == "prune":
        p = command(
            sub,
            name,
            prune,
            help,
            "luoshod prune --older-than 30d --dry-run\n  luoshod prune --older-than 30d --yes\n"
            "  luoshod prune --older-than 2w --status in-progress --yes",
        )
        p.add_argument(
            "--older-than",
            type=_duration,
            required=True,
            metavar="DURATION",
            help="90s, 15m, 12h, 30d, 2w, 1d12h…",
        )
        p.add_argument(
            "--status",
            help="only this status (repeatable); in-progress sessions are pruned only when named "
            "here",
            **statuses,
        )
        p.add_argument(
            "--dry-run", action="store_true", help="list what would be deleted, delete nothing"
        )
        p.add_argument(
            "--yes",
            "-y",
            action="store_true",
            help="delete without asking (needed when stdin is not a terminal)",
        )
        p.add_argument("--keep-history", action="store_true")
    elif name == "status":
        from .status import status

        p = command(
            sub,
            name,
            status,
            help,
            "luoshod status\n  luoshod status --metrics-address 127.0.0.1:9464 --json",
        )
        p.add_argument(
            "--metrics-address",
            metavar="HOST:PORT",
            default=os.environ.get("LUOSHOD_METRICS_ADDRESS"),
            help="the daemon's --metrics-listen: adds its version, store, listeners, runs and "
            "leases (env LUOSHOD_METRICS_ADDRESS)",
        )
    elif name == "schedules":
        from .schedules import add_schedules_commands

        add_schedules_commands(
            group(name, "luoshod schedules list\n  luoshod schedules trigger daily-report"),
            command,
        )
    elif name == "mcp":
        from .mcp import add_mcp_commands

        add_mcp_commands(group(name, "luoshod mcp list"), command)
    else:
        raise ValueError(f"not an admin command: {name!r}")
