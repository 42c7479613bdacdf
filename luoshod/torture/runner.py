"""The torture run: its plan, its cycles of runs and kills, its checks after each cycle,
its report, and the ``luoshod torture`` command (:func:`add_arguments`, :func:`main`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shlex
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from luosho.v1 import agent_pb2 as pb
from luosho.v1 import agent_pb2_grpc as pb_grpc

from .daemons import Daemon, Zygote
from .phases import (
    BOUNDARY_PHASE,
    LEVELS,
    PHASE_BOUNDARIES,
    PHASES,
    McpServer,
    Phases,
    nested_results,
)
from .workload import (
    ABANDON_SHARE,
    ABANDONED_WAIT_S,
    BOUNDARIES,
    FOLLOW_IDLE_S,
    INPUT_QUEUED,
    LIVE_RUN_WAIT_S,
    PER_RUN,
    QUEUE_SHARE,
    RUN_TIMEOUT_S,
    SHOWN,
    STALL_S,
    UNKNOWN_SEQ,
    WATCH_IDLE_S,
    Idle,
    Session,
    Violation,
    _reason,
    checkpoint_of,
    queued_text,
    shape,
    spec_for,
    tool_result,
)

#: Seconds the end of a run waits for a --store-fault command still running.
STORE_FAULT_WAIT_S = 300


async def _responses(call: Any, idle_s: float):
    """A stream's responses; with ``idle_s``, :class:`Idle` (the call cancelled) when none
    comes for that long."""
    if not idle_s:
        async for resp in call:
            yield resp
        return
    while True:
        try:
            resp = await asyncio.wait_for(call.read(), idle_s)
        except TimeoutError:
            call.cancel()
            raise Idle from None
        if resp is grpc.aio.EOF:
            return
        yield resp


@dataclass
class Plan:
    """Where this cycle's kill happens: after the ``nth`` ``boundary`` of the cycle (over
    all sessions), ``delay_ms`` later, by ``how`` (``kill -9`` or ``SIGSTOP``)."""

    boundary: str
    nth: int
    delay_ms: float
    how: str  # kill9, sigstop, or store (--store-fault)
    target: int  # which daemon's events count (and which one dies)


class Torture(Phases):
    def __init__(self, opts: argparse.Namespace, work: Path, multi: bool) -> None:
        self.o = opts
        self.rng = random.Random(opts.seed)
        self.work = work
        self.multi = multi and opts.daemons > 1
        n = 2 if self.multi else 1
        self.zygote: Zygote | None = None
        self.mcp = McpServer(work) if "daemon-tools" in opts.phases else None
        config = self.mcp.config if self.mcp else None
        self.daemons = [
            Daemon("ab"[i], opts.store, work, opts.lease_ttl, None, config) for i in range(n)
        ]
        self.sessions: list[Session] = []
        self.phase: list[Session] = []  # the phases' sessions (.phases)
        self.kill_serial = 0  # kills and SIGSTOPs so far
        self.violations: list[Violation] = []
        self._reported: set[tuple[str, str, str]] = set()
        self.boundaries: Counter[str] = Counter()
        self.kills: Counter[str] = Counter()
        self.stats: Counter[str] = Counter()
        self.phases: defaultdict[str, float] = defaultdict(float)  # where a run's time went, in s
        self.cycle = 0
        self.last_strike = ""
        self.call_log_offset = 0
        self.prefix = f"t{opts.seed}-{os.getpid()}"
        self.store_fault: subprocess.Popen[bytes] | None = None  # the --store-fault running

    # -- the run ---------------------------------------------------------------------------

    async def run(self) -> int:
        started = time.monotonic()
        if not self.o.cold_start:
            self.zygote = Zygote(self.o.store, self.work)
            for d in self.daemons:
                d.zygote = self.zygote
        try:
            for d in self.daemons:
                d.start()
            while self.cycle < self.o.cycles:
                if self.o.time_limit and time.monotonic() - started > self.o.time_limit:
                    self.stats["stopped by --time-limit"] = 1
                    break
                self.cycle += 1
                await self.one_cycle()
                began = time.monotonic()
                known = self.turns_known()
                await self.check()
                self.check_model_calls(known)  # those of runs a check's Watch answered
                self.phases["checking the store"] += time.monotonic() - began
                if not self.o.quiet:
                    print(
                        f"cycle {self.cycle}/{self.o.cycles}: {self.last_strike}; "
                        f"{len(self.violations)} violation(s)",
                        file=sys.stderr,
                        flush=True,
                    )
                if self.violations and self.o.stop_on_violation:
                    break
            # Every queued input run to its end, nothing killed, and then checked as such;
            # not after --stop-on-violation stopped the run (the store is known broken).
            whole = not (self.violations and self.o.stop_on_violation)
            if whole:
                began = time.monotonic()
                await self.drain_queues()
                await self.drain_phases()
                self.phases["running queued inputs to the end"] += time.monotonic() - began
            else:
                self.stats["queued inputs not run to the end: stopped at the first violation"] = 1
            await self.check(
                everything=True, final=whole
            )  # the settled sessions once more, at the end
        finally:
            if self.store_fault is not None and self.store_fault.poll() is None:
                try:  # the store whole again before the daemons go
                    self.store_fault.wait(STORE_FAULT_WAIT_S)
                except subprocess.TimeoutExpired:
                    self.store_fault.kill()
                    self.store_fault.wait()
            for d in self.daemons:
                d.thaw()
                d.kill()
            if self.zygote is not None:
                self.zygote.close()
            if self.mcp is not None:
                self.mcp.close()
        self.stats["seconds"] = round(time.monotonic() - started)
        self.phases["waiting for daemons to listen"] = sum(d.startup_s for d in self.daemons)
        return 1 if self.violations else 0

    def plan(self) -> Plan:
        how = "sigstop" if self.multi and self.rng.random() < self.o.sigstop_share else "kill9"
        if (
            self.o.store_fault
            and self.rng.random() < self.o.store_fault_share
            and (self.store_fault is None or self.store_fault.poll() is not None)
        ):
            how = "store"  # the store fails instead, its last fault over
        boundary = self.rng.choice(
            self.o.boundary
            or BOUNDARIES
            + tuple(b for b, phase in BOUNDARY_PHASE.items() if phase in self.o.phases)
        )
        return Plan(
            boundary=boundary,
            nth=self.rng.randint(
                1,
                max(1, PHASE_BOUNDARIES[boundary])
                if boundary in PHASE_BOUNDARIES
                else max(1, self.o.sessions * PER_RUN.get(boundary, 8) // 2),
            ),
            delay_ms=self.rng.choice([0.0, 0.0, self.rng.uniform(0, 5)]),
            how=how,
            target=self.rng.randrange(len(self.daemons)),
        )

    async def one_cycle(self) -> None:
        live = [s for s in self.sessions if not s.done]
        while len(live) < self.o.sessions:
            s = Session(f"{self.prefix}-{len(self.sessions)}", self.rng.choice([1, 1, 2]))
            self.sessions.append(s)
            live.append(s)
        phase = self.phase_sessions(self.prefix, self.phase)
        plan = self.plan()
        fired = asyncio.Event()
        counts: Counter[str] = Counter()
        victim = self.daemons[plan.target]
        known = self.turns_known()  # R22: turns seen saved before this cycle
        on_victim: list[asyncio.Future[None]] = []

        async def boundary(kind: str, daemon: Daemon) -> None:
            if fired.is_set() or daemon is not victim:
                return
            counts[kind] += 1
            if kind == plan.boundary and counts[kind] == plan.nth:
                fired.set()
                if plan.delay_ms:
                    await asyncio.sleep(plan.delay_ms / 1000)
                self.boundaries[f"after {kind}" + (" (+ms)" if plan.delay_ms else "")] += 1
                self.strike(victim, plan.how, f"after {kind}")
                if victim.stopped:  # its client gives up on it and moves on
                    for t in on_victim:
                        t.cancel()

        channels = {d.name: grpc.aio.insecure_channel(d.address) for d in self.daemons}
        began = time.monotonic()
        try:
            tasks = []
            for s in live:
                d = self.daemons[self.rng.randrange(len(self.daemons))]
                stub = pb_grpc.AgentServiceStub(channels[d.name])
                tasks.append(asyncio.ensure_future(self.drive(s, d, stub, boundary, enqueue=True)))
                if d is victim:
                    on_victim.append(tasks[-1])
            for s in phase:
                d = self.daemons[self.rng.randrange(len(self.daemons))]
                stub = pb_grpc.AgentServiceStub(channels[d.name])
                tasks.append(asyncio.ensure_future(self.drive_any(s, d, stub, boundary)))
                if d is victim:
                    on_victim.append(tasks[-1])
            await self.wait_for_clients(tasks, victim)
        finally:
            for c in channels.values():
                await c.close()
            self.phases["running sessions until the kill"] += time.monotonic() - began
        if not fired.is_set():  # everything finished first: the kill lands between runs
            self.boundaries["after every run ended"] += 1
            self.strike(victim, plan.how, "after every run ended")
        self.check_model_calls(known)
        if victim.stopped:
            began = time.monotonic()
            await self.take_over(live + phase, victim)
            self.phases["takeovers (lease TTL waits included)"] += time.monotonic() - began
        for d in self.daemons:
            if not d.alive:
                d.start()

    async def wait_for_clients(self, tasks: Sequence[asyncio.Future[None]], victim: Daemon) -> None:
        """Until every session's client is done; at most ``RUN_TIMEOUT_S``, and at most
        ``STALL_S`` once the victim is stopped (the other daemon may wait on a lock the
        stopped one holds: that is counted, and the clients give up for this cycle)."""
        loop = asyncio.get_running_loop()
        deadline, stalled_at = loop.time() + RUN_TIMEOUT_S, None
        pending = set(tasks)
        while pending:
            _, pending = await asyncio.wait(pending, timeout=0.25)
            if victim.stopped and stalled_at is None:
                stalled_at = loop.time() + STALL_S
            if pending and (loop.time() > deadline or (stalled_at and loop.time() > stalled_at)):
                self.stats[
                    "cycles cut short: "
                    + (
                        "the other daemon stalled while one was stopped"
                        if stalled_at
                        else "clients timed out"
                    )
                ] += 1
                for t in pending:
                    t.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
                break
        self.client_errors([t.exception() for t in tasks if t.done() and not t.cancelled()])

    def strike(self, daemon: Daemon, how: str, when: str) -> None:
        if how == "store":  # --store-fault: no daemon dies, the store fails under them
            self.last_strike = f"store fault ({self.o.store_fault}) {when}"
            self.store_fault = subprocess.Popen(
                shlex.split(self.o.store_fault), stdin=subprocess.DEVNULL
            )
            self.kills["store fault"] += 1
            return
        self.kill_serial += 1
        self.last_strike = (
            f"{'SIGSTOP' if how == 'sigstop' else 'kill -9'} daemon {daemon.name} {when}"
        )
        if how == "sigstop":
            daemon.freeze()
            self.kills["SIGSTOP past the lease TTL"] += 1
        else:
            daemon.kill()
            self.kills["kill -9"] += 1

    async def take_over(self, live: list[Session], frozen: Daemon) -> None:
        """The frozen daemon's sessions, run by the other one once its leases ran out
        (R52); then the frozen one wakes up and its late writes meet the new lease."""
        other = next(d for d in self.daemons if d is not frozen)
        if not other.alive:
            other.start()
        await asyncio.sleep(self.o.lease_ttl * 1.5)
        async with grpc.aio.insecure_channel(other.address) as channel:
            stub = pb_grpc.AgentServiceStub(channel)

            async def nothing(kind: str, daemon: Daemon) -> None:
                return None

            known = self.turns_known()
            for s in live:  # where the frozen daemon left them (and what it saved, R54)
                if s.kind:
                    await self.check_phase(stub, s, other)
                else:
                    await self.check_session(stub, s, other)
            # The model calls of runs live meanwhile (a queued input a sweep runs), against
            # the turns known before the checks read newer ones.
            self.check_model_calls(known)
            known = self.turns_known()
            drives = asyncio.gather(
                *(self.drive_any(s, other, stub, nothing) for s in live if not s.done),
                return_exceptions=True,
            )
            try:
                self.client_errors(await asyncio.wait_for(drives, STALL_S))
            except TimeoutError:
                self.stats["takeovers stalled while the other daemon was stopped"] += 1
        self.check_model_calls(known)
        self.stats["takeovers"] += 1
        frozen.thaw()
        await asyncio.sleep(min(1.0, self.o.lease_ttl))  # its late saves are refused (R51)
        frozen.kill()
        # What the woken daemon did before its lease loss stopped it is not a resumed run:
        # its model calls are counted apart, not checked against R22.
        self.stats["model calls by a daemon woken without its lease"] += self.skip_model_calls()
        if n := self.forget_mcp_attempts():
            self.stats["daemon tool attempts by a daemon woken without its lease"] += n

    # -- one session's client --------------------------------------------------------------

    async def drive_any(
        self, s: Session, daemon: Daemon, stub: pb_grpc.AgentServiceStub, boundary
    ) -> None:
        """A phase's session: a redirect session by its own client, the others as the
        scripted ones (their agent is the phase's)."""
        if s.kind in ("interrupt", "rollback"):
            await self.drive_redirect(s, daemon, stub, boundary)
        elif s.kind:
            await self.drive(s, daemon, stub, boundary)
        else:
            await self.drive(s, daemon, stub, boundary, enqueue=True)

    async def drive(
        self,
        s: Session,
        daemon: Daemon,
        stub: pb_grpc.AgentServiceStub,
        boundary,
        *,
        enqueue: bool = False,
    ) -> None:
        """Run (or resume) one session until it ends or its daemon dies; a run paused on
        an approval is resolved, and the resolved run driven on. Queued inputs sent and not
        yet seen applied are followed first (and those ``enqueue`` sends while a run is
        active), each by its own task: it answers the tool calls of the run that applies it."""
        s.watcher, s.gave_up = None, False
        s.followers = [
            asyncio.ensure_future(self.follow(s, daemon, stub, rid, boundary))
            for rid in s.outstanding()
        ]
        if s.followers:
            self.stats["queued inputs followed again (their Execute retried)"] += len(s.followers)
        try:
            await self._drive(s, daemon, stub, boundary, enqueue)
        finally:
            # Done, given up on (cancelled) or its daemon gone: so are the followers left.
            for t in s.followers:
                t.cancel()
            if s.followers:
                await asyncio.gather(*s.followers, return_exceptions=True)
            s.followers = []

    async def _drive(
        self, s: Session, daemon: Daemon, stub: pb_grpc.AgentServiceStub, boundary, enqueue: bool
    ) -> None:
        idle = 0
        for _attempt in range(100):
            try:
                if (
                    s.left_to_daemon()
                    and not s.awaiting
                    and not self.watching(s, daemon, stub, boundary)
                ):
                    return  # the watcher failed: the daemon died
                if s.gave_up:
                    return  # nothing moved: looked at again next cycle
                if s.awaiting:
                    if not await self.resolve(s, daemon, stub, boundary):
                        continue  # decided already, by a Resolve whose answer was lost: resume
                elif pending := [t for t in s.followers if not t.done()]:
                    # A queued input's run holds the session (or will): its follower answers
                    # it. Resolve if it pauses; look at the store when nothing moves.
                    done, _ = await asyncio.wait(
                        pending, timeout=1.0, return_when=asyncio.FIRST_COMPLETED
                    )
                    idle = 0 if done else idle + 1
                    if (
                        idle >= 2
                        and (cp := await self.stored(stub, s)) is not None
                        and cp.status == pb.CHECKPOINT_STATUS_AWAITING_APPROVAL
                    ):
                        s.awaiting = cp.approval_id
                    continue
                elif s.finished:
                    return
                elif s.left_to_daemon():
                    continue  # never "go" while the daemon alone must run abandoned input
                else:
                    if s.queued and (cp := await self.stored(stub, s)) is not None:
                        # Queued input may have finished the session meanwhile: a "go" now
                        # would be a new turn (R14), not the retry it is meant to be (R13).
                        if cp.status == pb.CHECKPOINT_STATUS_FINISHED:
                            s.finished = True
                            continue
                        if cp.status == pb.CHECKPOINT_STATUS_AWAITING_APPROVAL:
                            s.awaiting = cp.approval_id
                            continue
                    await self.execute(s, daemon, stub, boundary, enqueue=enqueue)
                if not s.awaiting and not any(not t.done() for t in s.followers):
                    return
            except grpc.aio.AioRpcError as e:
                reason = _reason(e)
                if e.code() == grpc.StatusCode.ABORTED and "SESSION_BUSY" in reason:
                    await asyncio.sleep(0.1)  # another daemon's lease: wait it out (R51)
                    continue
                if (
                    e.code() == grpc.StatusCode.FAILED_PRECONDITION
                    and reason == "SESSION_AWAITING_APPROVAL"
                ):
                    cp = (
                        await stub.GetSession(
                            pb.GetSessionRequest(session_id=s.sid), timeout=RUN_TIMEOUT_S
                        )
                    ).checkpoint
                    s.awaiting = cp.approval_id  # paused by a run whose end this client missed
                    continue
                if e.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
                    return  # the daemon died
                if e.code() == grpc.StatusCode.ABORTED and "LEASE_LOST" in reason:
                    return
                self.violate(
                    "errors", s, f"the run failed with {e.code().name} {reason}: {e.details()}"
                )
                return

    async def stored(self, stub: pb_grpc.AgentServiceStub, s: Session) -> pb.Checkpoint | None:
        try:
            return checkpoint_of(
                await stub.GetSession(pb.GetSessionRequest(session_id=s.sid), timeout=RUN_TIMEOUT_S)
            )
        except grpc.aio.AioRpcError as e:
            if e.code() == grpc.StatusCode.NOT_FOUND:
                return None
            raise

    def enqueue(
        self, s: Session, daemon: Daemon, stub: pb_grpc.AgentServiceStub, boundary, *, then: bool
    ) -> None:
        """Send one more input with ``if_busy=ENQUEUE`` (its own request id), followed by a
        task of its own; ``then``: once it is acknowledged, send another."""
        if not s.may_enqueue():
            return
        rid = f"{s.sid}-q{len(s.queued) + 1}"
        s.queued[rid] = pb.ExecuteRequest(
            session_id=s.sid,
            input=[pb.Message(role=pb.ROLE_USER, content=queued_text(rid))],
            agent=spec_for(s.concurrency),
            request_id=rid,
            if_busy=pb.IF_BUSY_ENQUEUE,
        )
        self.stats["queued inputs sent (if_busy ENQUEUE)"] += 1
        if self.rng.random() < self.o.abandon_share:
            s.abandoned.add(rid)

        def acked() -> None:
            if then:
                self.enqueue(s, daemon, stub, boundary, then=False)

        s.followers.append(
            asyncio.ensure_future(self.follow(s, daemon, stub, rid, boundary, on_ack=acked))
        )

    async def follow(
        self,
        s: Session,
        daemon: Daemon,
        stub: pb_grpc.AgentServiceStub,
        rid: str,
        boundary,
        on_ack=None,
    ) -> None:
        """Send (or send again: a retry, the same request id, R74) the queued input ``rid``
        and follow its stream: ``input.queued`` (the acknowledgement), then the run that
        applies it, whose tool calls this answers, whichever daemon runs it. Done once the
        input is in the transcript; the daemon dying ends it (the next drive follows again)."""
        request = s.queued[rid]
        for _attempt in range(20):
            if daemon.stopped:
                return
            try:
                try:
                    await self.stream(
                        s,
                        daemon,
                        stub,
                        lambda: stub.Execute(request),
                        boundary,
                        set(),
                        queued=rid,
                        on_ack=on_ack,
                        idle_s=FOLLOW_IDLE_S,
                    )
                except Idle:
                    self.stats[
                        f"queued inputs' streams sent again after {FOLLOW_IDLE_S:g} s without an "
                        "event"
                    ] += 1
                if rid in s.abandoned and rid in s.acked:
                    # Its caller went away once it was acknowledged, and never comes back:
                    # the daemon must run it alone; the session's watcher answers its calls.
                    self.stats["queued inputs abandoned (caller gone after input.queued)"] += 1
                    self.watching(s, daemon, stub, boundary)
                    return
                cp = await self.stored(stub, s)
            except grpc.aio.AioRpcError as e:
                reason = _reason(e)
                if (
                    e.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)
                    or "LEASE_LOST" in reason
                ):
                    return  # the daemon died (or lost the session): followed again next time
                if e.code() == grpc.StatusCode.ABORTED and reason == "INPUT_DEQUEUED":
                    self.violate(
                        "R69",
                        s,
                        f"lost queued input: request {rid}'s stream ended INPUT_DEQUEUED, "
                        f"but torture never dequeues (seed {self.o.seed})",
                    )
                    s.completed.add(rid)
                    return
                if e.code() == grpc.StatusCode.ABORTED and "SESSION_BUSY" in reason:
                    await asyncio.sleep(0.1)
                    continue
                if e.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                    return
                self.violate(
                    "errors",
                    s,
                    f"queued input {rid} failed with {e.code().name} {reason}: {e.details()}",
                )
                s.completed.add(rid)
                return
            if cp is not None and any(
                m.role == pb.ROLE_USER and m.content == queued_text(rid) for m in cp.messages
            ):
                s.completed.add(rid)
                self.stats["queued inputs seen applied by their follower"] += 1
                return
            if cp is not None and cp.status == pb.CHECKPOINT_STATUS_AWAITING_APPROVAL:
                # Applied behind calls of a turn paused on an approval (R12), or kept queued
                # until it is decided (R69): the drive resolves it; followed again next time.
                s.awaiting = s.awaiting or cp.approval_id
                return
            await asyncio.sleep(0.1)

    def watching(
        self, s: Session, daemon: Daemon, stub: pb_grpc.AgentServiceStub, boundary
    ) -> bool:
        """Make sure the session's watcher runs (the abandoned inputs' runs need their tool
        calls answered); False if it ended by an error (its daemon died)."""
        w = s.watcher
        if w is not None and not w.done():
            return True
        if w is not None and not w.cancelled() and w.exception() is not None:
            return False
        s.watcher = asyncio.ensure_future(self.watch(s, daemon, stub, boundary))
        s.followers.append(s.watcher)
        return True

    async def watch(
        self, s: Session, daemon: Daemon, stub: pb_grpc.AgentServiceStub, boundary
    ) -> None:
        """What an app watching its sessions does: ``Watch`` the session (``follow``) and
        answer the tool calls of the runs the daemon starts by itself for abandoned inputs,
        until each of them is in the transcript (or the session pauses on an approval).
        Gives up on this cycle (``s.gave_up``) when the session does not move for
        ``ABANDONED_WAIT_S``: the end says whether the daemon ever ran them."""
        loop = asyncio.get_running_loop()
        version, moved = -1, loop.time()
        while s.left_to_daemon() and not daemon.stopped:
            with contextlib.suppress(Idle):
                await self.stream(
                    s,
                    daemon,
                    stub,
                    lambda: stub.Watch(
                        pb.WatchRequest(session_id=s.sid, after_seq=s.checked_seq, follow=True)
                    ),
                    boundary,
                    set(),
                    idle_s=WATCH_IDLE_S,
                    watch=True,
                )
            cp = await self.stored(stub, s)
            if cp is None:
                continue
            if cp.version != version:
                version, moved = cp.version, loop.time()
            elif loop.time() - moved > ABANDONED_WAIT_S:
                self.stats["waits for the daemon to run abandoned input given up for a cycle"] += 1
                s.gave_up = True
                return
            self.mark_applied(s, cp)
            if cp.status == pb.CHECKPOINT_STATUS_AWAITING_APPROVAL:
                s.awaiting = s.awaiting or cp.approval_id
                return

    def mark_applied(self, s: Session, cp: pb.Checkpoint) -> None:
        """Queued inputs seen in the transcript: none left to follow. An abandoned one is
        left to the daemon until its run has answered it too (text after it, or the gated
        call whose approval a Resolve's run then owns): the client sends nothing meanwhile,
        so a run the daemon dropped halfway stays unanswered, and the end says so."""
        msgs = list(cp.messages)
        for rid in s.queued:
            if rid in s.completed:
                continue
            at = next(
                (
                    i
                    for i, m in enumerate(msgs)
                    if m.role == pb.ROLE_USER and m.content == queued_text(rid)
                ),
                None,
            )
            if at is None:
                continue
            if rid in s.abandoned:
                if not any(
                    m.role == pb.ROLE_ASSISTANT
                    and (
                        (m.content and not m.tool_calls)
                        or any(c.name == "pay" for c in m.tool_calls)
                    )
                    for m in msgs[at + 1 :]
                ):
                    continue
                self.stats["abandoned queued inputs seen run (by the daemon alone)"] += 1
            s.completed.add(rid)

    async def execute(
        self,
        s: Session,
        daemon: Daemon,
        stub: pb_grpc.AgentServiceStub,
        boundary,
        *,
        enqueue: bool = False,
    ) -> None:
        inputs = [
            pb.Message(role=pb.ROLE_USER, content="go")
        ]  # a retry on an existing session (R13)
        # R53: results the client ran whose save it never heard of go back as input.
        given = set()
        for cid in s.pending:
            if cid in s.ran and cid not in s.accepted and self.rng.random() < 0.5:
                inputs.append(
                    pb.Message(
                        role=pb.ROLE_TOOL,
                        tool_call_id=cid,
                        tool_name=s.names.get(cid, "add"),
                        content=s.ran[cid],
                    )
                )
                given.add(cid)
                self.stats["results sent as input (R53)"] += 1
        request = pb.ExecuteRequest(session_id=s.sid, input=inputs, agent=self.spec_of(s))
        # R68: some runs get more input queued while they are active, at one of their calls.
        at = (
            self.rng.randint(1, 3)
            if enqueue and s.may_enqueue() and self.rng.random() < self.o.queue_share
            else 0
        )
        two = self.rng.random() < 0.4

        def busy() -> None:
            self.enqueue(s, daemon, stub, boundary, then=two)

        await self.stream(
            s,
            daemon,
            stub,
            lambda: stub.Execute(request),
            boundary,
            given,
            enqueue_at=at,
            on_busy=busy,
        )

    async def resolve(
        self, s: Session, daemon: Daemon, stub: pb_grpc.AgentServiceStub, boundary
    ) -> bool:
        """Decide ``s.awaiting`` and drive the resolved run; a quarter of the time two
        opposite decisions race (on the other daemon, when there are two): exactly one may
        win (R33). False when no Resolve won: the approval was decided before."""
        aid = s.awaiting
        approve = self.rng.random() < 0.6
        decisions = [approve] + ([not approve] if self.rng.random() < 0.25 else [])
        s.sent.setdefault(aid, set()).update(decisions)
        winners: list[bool] = []
        others = [d for d in self.daemons if d is not daemon and d.alive and not d.stopped]
        channels: list[grpc.aio.Channel] = []

        async def one(decision: bool, st: pb_grpc.AgentServiceStub, d: Daemon) -> None:
            def started() -> None:
                winners.append(decision)
                self.stats["approvals decided (seen recorded)"] += 1
                s.decided.setdefault(aid, decision)
                s.decided_in.setdefault(aid, self.cycle)
                if s.awaiting == aid:
                    s.awaiting = ""
                if len(winners) == 2:
                    self.violate("R33", s, f"two resolutions of approval {aid} both won")

            request = pb.ResolveRequest(
                approval_id=aid, approved=decision, note=f"torture {self.cycle}"
            )
            await self.stream(
                s, d, st, lambda: st.Resolve(request), boundary, set(), on_start=started
            )

        calls = [one(decisions[0], stub, daemon)]
        if len(decisions) == 2:
            self.stats["resolutions raced (R33)"] += 1
            second, where = stub, daemon
            if others:
                channels.append(grpc.aio.insecure_channel(others[0].address))
                second, where = pb_grpc.AgentServiceStub(channels[-1]), others[0]
            calls.append(one(decisions[1], second, where))
        try:
            results = await asyncio.gather(*calls, return_exceptions=True)
        finally:
            for c in channels:
                await c.close()
        errors = [r for r in results if isinstance(r, BaseException)]
        lost = [
            e
            for e in errors
            if isinstance(e, grpc.aio.AioRpcError)
            and e.code() == grpc.StatusCode.NOT_FOUND
            and _reason(e) == "APPROVAL_NOT_FOUND"
        ]
        if len(decisions) == 2:
            for e in errors:
                code = (
                    f"{e.code().name} {_reason(e)}".strip()
                    if isinstance(e, grpc.aio.AioRpcError)
                    else repr(e)
                )
                self.stats[f"raced resolutions that failed: {code}"] += 1
        for e in errors:
            if e not in lost:
                raise e
        if winners:
            return True
        s.awaiting = ""
        return False

    async def stream(
        self,
        s,
        daemon,
        stub,
        call,
        boundary,
        given: set[str],
        on_start=None,
        *,
        queued: str = "",
        on_ack=None,
        enqueue_at: int = 0,
        on_busy=None,
        idle_s: float = 0,
        watch: bool = False,
        on_event=None,
    ) -> None:
        """One stream's events, its tool calls answered. ``queued``: the stream of that
        queued input (``input.queued`` acknowledges it, then ``on_ack``; its events are read
        from the log, so a tool call in it may be an older hand-out than the one a run waits
        for); ``enqueue_at``: call ``on_busy`` at this stream's n-th tool call (the run is
        active: R68); ``watch``: a ``Watch`` of the session, whose tool calls are answered
        while the run is an abandoned input's (read from the log, as a queued input's)."""
        submits: list[asyncio.Future[bool]] = []
        answered: set[str] = set()
        calls = 0
        rpc = call()
        try:
            async for resp in _responses(rpc, idle_s):
                e = resp.event
                if daemon.stopped:
                    return  # a frozen daemon's late events: this client moved on
                if e.type == INPUT_QUEUED:
                    if queued and queued not in s.acked:
                        s.acked[queued] = self.cycle
                        self.stats[
                            "redirects acknowledged (input.queued)"
                            if queued == s.redirect_rid
                            else "queued inputs acknowledged (input.queued)"
                        ] += 1
                        if on_ack is not None:
                            on_ack()
                    await boundary(INPUT_QUEUED, daemon)
                    if queued and queued == s.redirect_rid:
                        await boundary("redirect input.queued", daemon)
                    if queued in s.abandoned:
                        return  # its caller goes away, and never sends it again
                    continue
                if on_start is not None:
                    on_start()  # a Resolve's first event: the save that claimed it is done
                    on_start = None
                    await boundary("resolved", daemon)
                # A queued input's stream replays the log from its run's start: what this
                # client saw already, or a retried request's replay, is history.
                new = not e.replayed and e.seq not in s.seen
                self.see(s, e, new)
                if (
                    e.type == "tool.call"
                    and not e.replayed
                    and (not watch or s.run_rid in s.abandoned)
                    and e.tool_call.executor != pb.TOOL_EXECUTOR_DAEMON
                ):
                    cid = e.tool_call.call.id
                    if new and cid in given:
                        self.violate(
                            "R53", s, f"call {cid} handed out although this run's input answered it"
                        )
                    if new or (
                        cid not in s.accepted
                        and cid not in s.stored_results
                        and cid not in answered
                    ):
                        answered.add(cid)
                        submits.append(
                            asyncio.ensure_future(
                                self.run_tool(
                                    s, daemon, stub, e, boundary, live=not (queued or watch)
                                )
                            )
                        )
                    if new:
                        calls += 1
                        if calls == enqueue_at and on_busy is not None:
                            on_busy()
                if new and on_event is not None:
                    on_event(e)
                if new:
                    await boundary(e.type, daemon)
                    for kind in self.phase_kinds(s, e) if s.kind else ():
                        await boundary(kind, daemon)
                    if e.type in ("step.start", "model.turn") and s.run_rid in s.queued:
                        # Inside a queued input's own run, after the save that applied it.
                        await boundary(f"queued {e.type}", daemon)
        except BaseException:
            for t in submits:  # given up on (cancelled) or failed: so are its submissions
                t.cancel()
            raise
        finally:
            rpc.cancel()  # a no-op once it ended; else this caller goes away
            for t in submits:
                if daemon.stopped:
                    t.cancel()
            if submits:
                await asyncio.gather(*submits, return_exceptions=True)

    def see(self, s: Session, e: pb.Event, new: bool = True) -> None:
        if e.seq == 0:
            return  # not in the log (text.delta)
        if e.type == "run.start":
            s.run_rid = e.run_start.request_id
        if e.seq in s.seen and s.seen[e.seq] != e.type:
            self.violate(
                "event log", s, f"seq {e.seq} came as {s.seen[e.seq]} and later as {e.type}"
            )
        s.seen[e.seq] = e.type
        if not new:
            return
        rid = e.run_start.request_id.rpartition("-")[2] if e.type == "run.start" else ""
        s.trail.append(f"{self.cycle}:{e.seq}:{e.type}" + (f"({rid})" if rid else ""))
        del s.trail[:-40]
        depth = e.subagent.depth if e.HasField("subagent") else 0
        if e.type == "model.turn" and depth:  # a sub-agent's turn: its own count (R59)
            level = LEVELS[depth] if depth < len(LEVELS) else str(depth)
            s.level_turns[level] = max(s.level_turns.get(level, 0), e.model_turn.step)
            self.stats["sub-agent model turns seen"] += 1
        elif e.type == "model.turn":
            s.durable_turns = max(s.durable_turns, e.model_turn.step)  # saved before seen
            self.stats["model turns seen"] += 1
        elif e.type == "approval.requested":
            approval = e.approval_requested.approval
            s.gated[approval.tool_call.id] = approval.approval_id
            s.awaiting = approval.approval_id
            self.stats["approvals requested"] += 1
        elif e.type == "tool.call":
            cid = e.tool_call.call.id
            self.stats["tool calls handed out"] += 1
            if e.tool_call.call.name == "pay":  # the gated tool: only ever run once approved
                aid = s.gated.get(cid, "")
                if not any(True in sent for sent in s.sent.values()):
                    self.violate(
                        "R27", s, f"gated call {cid} handed out although no approval was given"
                    )
                elif s.decided.get(aid) is False:
                    self.violate(
                        "R30",
                        s,
                        f"gated call {cid} handed out although approval {aid} was "
                        f"rejected (cycle {s.decided_in[aid]})",
                    )
            if cid in s.accepted and e.seq > s.accepted_seq.get(cid, 0):
                self.violate(
                    "R54",
                    s,
                    f"call {cid} handed out again after its result was ACCEPTED "
                    f"(cycle {s.accepted_in[cid]})",
                )
            elif cid in s.accepted:
                pass  # an older hand-out than the one answered, read from the log
            elif cid in s.stored_results and e.seq > s.checked_seq:
                self.violate("R21", s, f"call {cid} handed out again although its result is stored")
            elif cid in s.ran:
                self.stats["calls run again after a kill (R24)"] += 1
        elif e.type == "run.done" and not depth:
            s.finished = e.run_done.status == pb.CHECKPOINT_STATUS_FINISHED

    async def run_tool(self, s, daemon, stub, e: pb.Event, boundary, *, live: bool = True) -> bool:
        """Run the call and submit its result: to ``stub``'s daemon, else (no run waits for
        it there: a queued input's run followed through the log may be the other daemon's)
        to the other one. ``live``: ``e`` came from the run's own stream, so it is the
        hand-out the run waits for, and a later one (a greater seq) is a second hand-out;
        one read from the log may be older than the one answered (then R21 and the store's
        R54 check still hold)."""
        call = e.tool_call.call
        result = tool_result(call.id, call.arguments_json)
        s.ran[call.id] = result
        s.names[call.id] = call.name
        request = pb.SubmitToolResultRequest(
            session_id=s.sid, tool_call_id=call.id, result_json=result
        )
        try:
            resp = await stub.SubmitToolResult(request, timeout=RUN_TIMEOUT_S)
        except grpc.aio.AioRpcError as err:
            others = [d for d in self.daemons if d is not daemon and d.alive and not d.stopped]
            if err.code() != grpc.StatusCode.FAILED_PRECONDITION or not others:
                return False  # not saved (R54): the call may be asked again (R24)
            daemon = others[0]
            try:
                async with grpc.aio.insecure_channel(daemon.address) as channel:
                    resp = await pb_grpc.AgentServiceStub(channel).SubmitToolResult(
                        request, timeout=RUN_TIMEOUT_S
                    )
            except grpc.aio.AioRpcError:
                return False
        if resp.outcome != pb.SUBMIT_OUTCOME_ACCEPTED:
            return False
        s.accepted[call.id] = result
        s.accepted_in[call.id] = self.cycle
        s.accepted_seq[call.id] = max(
            s.accepted_seq.get(call.id, 0), e.seq if live else UNKNOWN_SEQ
        )
        await boundary("accepted", daemon)
        return True

    # -- the checks ------------------------------------------------------------------------

    async def check(self, *, everything: bool = False, final: bool = False) -> None:
        daemon = next(d for d in self.daemons if d.alive)
        async with grpc.aio.insecure_channel(daemon.address) as channel:
            stub = pb_grpc.AgentServiceStub(channel)
            for s in self.sessions:
                if everything or not s.settled:
                    try:
                        await self.check_session(stub, s, daemon, final=final)
                    except grpc.aio.AioRpcError as e:
                        if e.code() != grpc.StatusCode.UNAVAILABLE:
                            raise
                        # Not a rule of the store; checked again next cycle. Said, with where
                        # the daemon's log is: nothing here kills a daemon during a check.
                        self.stats["checks put off: the daemon did not answer (UNAVAILABLE)"] += 1
                        if (
                            self.stats["checks put off: the daemon did not answer (UNAVAILABLE)"]
                            <= 3
                        ):
                            state = "its process runs" if daemon.alive else "its process is gone"
                            err_file = self.work / f"{daemon.name}-{daemon.starts}.err"
                            print(
                                f"luoshod torture: cycle {self.cycle}: daemon {daemon.name} "
                                f"did not answer a check ({state}; log: {err_file})",
                                file=sys.stderr,
                            )
                        continue
                    s.settled = s.done
            for s in self.phase:
                if everything or not s.settled:
                    try:
                        await self.check_phase(stub, s, daemon, final=final)
                    except grpc.aio.AioRpcError as e:
                        if e.code() != grpc.StatusCode.UNAVAILABLE:
                            raise
                        self.stats["checks put off: the daemon did not answer (UNAVAILABLE)"] += 1
                        continue
                    s.settled = s.done

    async def drain_phases(self) -> None:
        """After the last cycle: the phases' unfinished sessions driven to their end, no
        daemon killed (the final check then asks each to be whole)."""
        for d in self.daemons:
            d.thaw()
            if not d.alive:
                d.start()
        daemon = self.daemons[0]

        async def nothing(kind: str, daemon: Daemon) -> None:
            return None

        for _ in range(2):
            todo = [s for s in self.phase if not s.finished]
            if not todo:
                return
            known = self.turns_known()
            async with grpc.aio.insecure_channel(daemon.address) as channel:
                stub = pb_grpc.AgentServiceStub(channel)
                drives = asyncio.gather(
                    *(self.drive_any(s, daemon, stub, nothing) for s in todo),
                    return_exceptions=True,
                )
                try:
                    self.client_errors(await asyncio.wait_for(drives, RUN_TIMEOUT_S))
                except TimeoutError:
                    self.stats["the phases' final runs cut short: clients timed out"] += 1
            self.check_model_calls(known)

    async def drain_queues(self) -> None:
        """After the last cycle: every session with queued input driven to its end, no
        daemon killed, so that each acknowledged input has run (checked by the final check)."""
        for d in self.daemons:
            d.thaw()
            if not d.alive:
                d.start()
        daemon = self.daemons[0]

        async def nothing(kind: str, daemon: Daemon) -> None:
            return None

        versions: dict[str, int] = {}
        before: list[tuple[str, int]] = []
        for _ in range(3):
            todo = [s for s in self.sessions if s.queued and (not s.done or s.awaiting)]
            now = [(s.sid, versions.get(s.sid, -1)) for s in todo]
            if not todo or now == before:
                return  # done, or a round moved nothing (the final check says what is left)
            before = now
            known = self.turns_known()
            async with grpc.aio.insecure_channel(daemon.address) as channel:
                stub = pb_grpc.AgentServiceStub(channel)
                drives = asyncio.gather(
                    *(self.drive(s, daemon, stub, nothing) for s in todo), return_exceptions=True
                )
                try:
                    self.client_errors(await asyncio.wait_for(drives, RUN_TIMEOUT_S))
                except TimeoutError:
                    self.stats["queued inputs' final runs cut short: clients timed out"] += 1
                for s in todo:  # where they are now (a follower may have left before the end)
                    with contextlib.suppress(grpc.aio.AioRpcError):
                        cp = await self.stored(stub, s)
                        if cp is not None:
                            versions[s.sid] = cp.version
                            s.finished = cp.status == pb.CHECKPOINT_STATUS_FINISHED
                            s.awaiting = (
                                cp.approval_id
                                if cp.status == pb.CHECKPOINT_STATUS_AWAITING_APPROVAL
                                else ""
                            )
            self.check_model_calls(known)

    def turns_known(self) -> dict[str, Any]:
        """Model turns known saved, per session (and per sub-agent level: ``sid/level``)."""
        known: dict[str, Any] = {s.sid: s.durable_turns for s in self.sessions}
        for s in self.phase:
            known[s.sid] = s.durable_turns
            known[f"{s.sid}/rolled"] = s.rolled
            for level, n in s.level_turns.items():
                known[f"{s.sid}/{level}"] = n
        return known

    async def check_session(
        self, stub: pb_grpc.AgentServiceStub, s: Session, daemon: Daemon, *, final: bool = False
    ) -> None:
        queue: list[str] = []
        try:
            got = await stub.GetSession(
                pb.GetSessionRequest(session_id=s.sid), timeout=RUN_TIMEOUT_S
            )
            found, queue = checkpoint_of(got), [q.request_id for q in got.queue]
        except grpc.aio.AioRpcError as e:
            if e.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                # Not a rule of the store: the session is checked again next cycle.
                self.stats["checks put off: GetSession unanswered for 20 s"] += 1
                return
            if e.code() != grpc.StatusCode.NOT_FOUND:
                raise
            found = None
        if found is not None:
            cp = found
        else:  # NOT_FOUND, or only queued input there (R69)
            if s.accepted or s.durable_turns:
                self.violate(
                    "R54",
                    s,
                    f"lost save: the session has no checkpoint, but the client saw "
                    f"{s.durable_turns} of its model turns saved",
                )
            cp = pb.Checkpoint(session_id=s.sid)  # checked as empty: each ACCEPTED result is lost
        self.check_checkpoint(s, cp)
        await self.check_approvals(stub, s, cp)
        started = await self.check_events(stub, s, daemon)
        if not s.queued:
            return
        self.mark_applied(s, cp)
        problems = self.check_queue(s, cp, queue, started, final=final)
        if problems:
            # Read once more: GetSession shows the checkpoint and the queue of one moment
            # only as long as a run does not save faster than it reads them (it tries a few
            # times, then answers its last pair), and the log read after it may have missed
            # a run.start (a Watch cut short). What is still wrong then is wrong.
            self.stats["queue checks read again (something looked wrong on the first read)"] += 1
            with contextlib.suppress(grpc.aio.AioRpcError):
                got = await stub.GetSession(
                    pb.GetSessionRequest(session_id=s.sid), timeout=RUN_TIMEOUT_S
                )
                started |= await self.check_events(stub, s, daemon)
                problems = self.check_queue(
                    s, got.checkpoint, [q.request_id for q in got.queue], started, final=final
                )
        for rule, message in problems:
            self.violate(rule, s, message)

    def check_queue(
        self, s: Session, cp: pb.Checkpoint, queue: list[str], started: set[str], *, final: bool
    ) -> list[tuple[str, str]]:
        """R68/R69 from the store: no queued input lost, run twice or out of order (the
        violations found). ``queue``: GetSession's queue (request ids); ``started``: the
        request ids of the log's ``run.start`` events."""
        seed = self.o.seed
        found: list[tuple[str, str]] = []
        where: dict[str, int] = {}  # request id -> index in the transcript
        for i, m in enumerate(cp.messages):
            if m.role == pb.ROLE_USER and m.content.startswith("queued input "):
                rid = m.content.removeprefix("queued input ")
                if rid in where:
                    found.append(
                        (
                            "R69",
                            f"queued input {rid} is in the transcript twice (run twice; seed "
                            f"{seed})",
                        )
                    )
                where.setdefault(rid, i)
        finished = cp.status == pb.CHECKPOINT_STATUS_FINISHED
        paused = cp.status == pb.CHECKPOINT_STATUS_AWAITING_APPROVAL
        # Applied by a run that has not ended, behind calls still pending (R12): the input
        # waits in the checkpoint, shown neither in the transcript nor in the queue.
        behind = {rid for rid in started if rid not in where and rid not in queue and not finished}
        msgs = [m for m in cp.messages if m.role != pb.ROLE_SYSTEM]
        for a, b in zip(msgs, msgs[1:], strict=False):
            # Each queued input a run of its own (R68): the scripted agent answers each with
            # a call, then text, so a queued input's message directly followed by another's
            # is one merged turn answering both.
            if all(
                m.role == pb.ROLE_USER and m.content.startswith("queued input ") for m in (a, b)
            ):
                found.append(
                    (
                        "R69",
                        f"queued inputs {a.content.removeprefix('queued input ')} and "
                        f"{b.content.removeprefix('queued input ')} answered by one merged turn, "
                        f"not each by a run of its own: {shape(cp)}; the log's runs: "
                        f"{' '.join(s.outline)} (seed {seed})",
                    )
                )
        for rid in s.left_to_daemon():
            if final and rid in where and not paused:
                found.append(
                    (
                        "R69",
                        f"abandoned queued input {rid} (its caller left after input.queued) was "
                        f"applied but its run never answered it: the daemon did not run it to "
                        f"its end by itself; the session "
                        f"{pb.CheckpointStatus.Name(cp.status)}, {shape(cp)}; the log's runs: "
                        f"{' '.join(s.outline)} (seed {seed})",
                    )
                )
        for rid, cycle in s.acked.items():
            if rid in where or rid in queue:
                continue
            if final:
                found.append(
                    (
                        "R69",
                        f"lost queued input: request {rid}"
                        + (
                            " (abandoned: its caller left, so the daemon had to run it alone)"
                            if rid in s.abandoned
                            else ""
                        )
                        + f", acknowledged (input.queued) in cycle "
                        f"{cycle}, is not in the transcript at the end (queue {queue}, status "
                        f"{pb.CheckpointStatus.Name(cp.status)}; seed {seed})",
                    )
                )
            elif rid not in behind:
                why = (
                    f"its run.start is in the log but the session is "
                    f"{pb.CheckpointStatus.Name(cp.status)} without it"
                    if rid in started
                    else "and no run.start in the log names it"
                )
                found.append(
                    (
                        "R69",
                        f"lost queued input: request {rid}, acknowledged (input.queued) in cycle "
                        f"{cycle}, is neither in the transcript nor in the queue, {why} (seed "
                        f"{seed})",
                    )
                )
        # Their order: the transcript's, then the one applied and waiting, then the queue's.
        seen = sorted((i, rid) for rid, i in where.items())
        order = [rid for _, rid in seen] + sorted(behind) + list(queue)
        acked = [rid for rid in order if rid in s.acked]
        expected = [rid for rid in s.acked if rid in acked]
        if acked != expected:
            found.append(
                (
                    "R69",
                    f"queued inputs out of order: acknowledged as {expected}, "
                    f"the session has them as {acked} (seed {seed})",
                )
            )
        if final and queue and not paused:
            found.append(
                (
                    "R69",
                    f"queued inputs {queue} still in the queue at the end, the session "
                    f"{pb.CheckpointStatus.Name(cp.status)}, not paused (seed {seed})",
                )
            )
        return found

    def check_checkpoint(self, s: Session, cp: pb.Checkpoint) -> None:
        msgs = [m for m in cp.messages if m.role != pb.ROLE_SYSTEM]
        keys = [
            (m.role, m.content, m.tool_call_id, tuple(c.id for c in m.tool_calls)) for m in msgs
        ]
        if cp.version < s.version:
            self.violate("R7", s, f"version went back from {s.version} to {cp.version}")
        if keys[: len(s.keys)] != s.keys:
            self.violate(
                "R7", s, "the stored transcript is not an extension of the one stored before"
            )
        s.version, s.keys = cp.version, keys
        results: dict[str, str] = {}
        turn_calls: list[str] = []
        open_turn: list[str] = []
        for i, m in enumerate(msgs):
            if m.role == pb.ROLE_ASSISTANT:
                if open_turn and i > 0:
                    self.violate("R20", s, f"calls {open_turn} have no result before the next turn")
                turn_calls = [c.id for c in m.tool_calls]
                open_turn = list(turn_calls)
            elif m.role == pb.ROLE_TOOL:
                cid = m.tool_call_id
                if cid in results:
                    self.violate("R20", s, f"call {cid} has two results")
                elif not open_turn or open_turn[0] != cid:
                    self.violate(
                        "R23", s, f"result for {cid} out of place (expected {open_turn[:1]})"
                    )
                else:
                    open_turn.pop(0)
                results[cid] = m.content
            elif open_turn:
                self.violate(
                    "R23",
                    s,
                    f"a {pb.Role.Name(m.role)} message between calls {open_turn} and their results",
                )
        finished = cp.status == pb.CHECKPOINT_STATUS_FINISHED
        if finished and open_turn:
            self.violate("R20", s, f"finished with calls {open_turn} unanswered")
        # A result saved ahead of its turn (R76) is stored, outside the transcript.
        stored = results | {m.tool_call_id: m.content for m in cp.early_results}
        if s.kind == "subagents":
            stored |= nested_results(cp)  # the sub-agents' results, by qualified id (R58)
        for cid, body in s.accepted.items():
            if cid not in stored:
                self.violate(
                    "R54",
                    s,
                    f"lost save: the result of call {cid} was ACCEPTED in cycle "
                    f"{s.accepted_in[cid]} but the store has no result for it",
                )
            elif stored[cid] != body:
                self.violate("R54", s, f"the stored result of call {cid} is not the one ACCEPTED")
        self.check_decisions(s, cp, msgs, results)
        s.stored_results = set(stored)  # the early ones too: never handed out again (R76)
        s.pending = open_turn
        s.durable_turns = max(s.durable_turns, sum(1 for m in msgs if m.role == pb.ROLE_ASSISTANT))
        s.finished = finished

    def check_decisions(
        self, s: Session, cp: pb.Checkpoint, msgs: list[pb.Message], results: dict[str, str]
    ) -> None:
        """R27-R33 from the store: a decision the client saw recorded is never lost, and the
        gated call's one result is what was decided."""
        awaiting = cp.status == pb.CHECKPOINT_STATUS_AWAITING_APPROVAL
        if awaiting and cp.approval_id in s.decided:
            aid = cp.approval_id
            self.violate(
                "R33",
                s,
                f"lost decision: approval {aid} was "
                f"{'approved' if s.decided[aid] else 'rejected'} in cycle {s.decided_in[aid]} "
                "but the session still waits on it",
            )
        s.awaiting = cp.approval_id if awaiting else ""
        gated = {
            c.id
            for m in msgs
            if m.role == pb.ROLE_ASSISTANT
            for c in m.tool_calls
            if c.name == "pay"
        }
        for cid in gated & set(results):
            aid = s.gated.get(cid, "")
            with contextlib.suppress(ValueError, AttributeError):
                rejected = bool(json.loads(results[cid]).get("rejected"))
                sent = set().union(*s.sent.values()) if s.sent else set()
                if (not rejected) not in sent:
                    self.violate(
                        "R30" if rejected else "R27",
                        s,
                        f"gated call {cid} has a "
                        f"{'rejection' if rejected else 'result'}, but the client never "
                        f"{'rejected' if rejected else 'approved'} it",
                    )
                elif aid in s.decided and s.decided[aid] == rejected:
                    self.violate(
                        "R33",
                        s,
                        f"approval {aid} was {'approved' if s.decided[aid] else 'rejected'} "
                        f"(cycle {s.decided_in[aid]}), but call {cid} has "
                        f"{'a rejection' if rejected else 'a result'}",
                    )

    async def check_approvals(
        self, stub: pb_grpc.AgentServiceStub, s: Session, cp: pb.Checkpoint
    ) -> None:
        """The stored approvals match the checkpoint (the paused run's one, else none), and
        a decided approval cannot be decided again (R33)."""
        for _ in range(3):
            try:
                listed = [
                    a.approval_id
                    for a in (
                        await stub.ListApprovals(
                            pb.ListApprovalsRequest(session_id=s.sid, page_size=10),
                            timeout=RUN_TIMEOUT_S,
                        )
                    ).approvals
                ]
            except grpc.aio.AioRpcError as e:
                if e.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
                    raise
                self.stats["checks put off: ListApprovals unanswered for 20 s"] += 1
                return
            expected = (
                [cp.approval_id] if cp.status == pb.CHECKPOINT_STATUS_AWAITING_APPROVAL else []
            )
            if listed == expected:
                break
            # A run live during the check (a queued input a sweep runs) may have saved
            # between the two reads: wrong only if the checkpoint did not move meanwhile.
            again = await self.stored(stub, s)
            if again is None or again.version == cp.version:
                self.violate(
                    "R33",
                    s,
                    f"pending approvals {listed} in the store, the checkpoint says {expected}",
                )
                break
            cp = again
        for aid, approved in list(s.decided.items()):
            if aid in s.retried:
                continue
            s.retried.add(aid)
            try:
                async for _ in stub.Resolve(
                    pb.ResolveRequest(approval_id=aid, approved=not approved), timeout=RUN_TIMEOUT_S
                ):
                    self.violate(
                        "R33",
                        s,
                        f"approval {aid}, decided in cycle {s.decided_in[aid]}, was resolved again",
                    )
                    break
            except grpc.aio.AioRpcError as e:
                if e.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                    s.retried.discard(aid)  # tried again at the next check
                    self.stats["checks put off: Resolve unanswered for 20 s"] += 1
                    continue
                if e.code() != grpc.StatusCode.NOT_FOUND or _reason(e) != "APPROVAL_NOT_FOUND":
                    self.violate(
                        "R33",
                        s,
                        f"resolving decided approval {aid} again gave {e.code().name} "
                        f"{_reason(e)}, not APPROVAL_NOT_FOUND",
                    )
            self.stats["decided approvals resolved again: refused (R33)"] += 1

    async def check_events(
        self, stub: pb_grpc.AgentServiceStub, s: Session, daemon: Daemon
    ) -> set[str]:
        """The event log against what the clients saw; the request ids of its runs' starts.
        A run the daemon holds live is followed to its end, its tool calls answered: a queued
        input a sweep ran after a crash waits on calls nobody else answers."""
        log: dict[int, str] = {}
        outline: list[str] = []
        started: set[str] = set()
        last = 0
        submits: list[asyncio.Future[bool]] = []

        async def nothing(kind: str, daemon: Daemon) -> None:
            return None

        async def replay() -> None:
            nonlocal last
            async for resp in stub.Watch(pb.WatchRequest(session_id=s.sid, after_seq=0)):
                e = resp.event
                if e.seq == 0:
                    continue  # text.delta, never stored
                if e.seq <= last:
                    self.violate("event log", s, f"seq {e.seq} replayed after seq {last}")
                last = e.seq
                log[e.seq] = e.type
                if e.type in ("run.start", "run.done", "input.queued", "run.error"):
                    outline.append(
                        f"{e.seq}:{e.type}"
                        + (
                            f"({e.run_start.request_id.rpartition('-')[2]})"
                            if e.type == "run.start"
                            else ""
                        )
                    )
                if e.type == "run.start":
                    s.run_rid = e.run_start.request_id  # the log's last run, at the end
                    if e.run_start.request_id:
                        started.add(e.run_start.request_id)
                elif (
                    e.type == "tool.call"
                    and e.tool_call.call.id not in s.stored_results | set(s.accepted)
                    and e.tool_call.executor != pb.TOOL_EXECUTOR_DAEMON
                ):
                    submits.append(
                        asyncio.ensure_future(
                            self.run_tool(s, daemon, stub, e, nothing, live=False)
                        )
                    )

        try:
            await asyncio.wait_for(replay(), LIVE_RUN_WAIT_S)
        except grpc.aio.AioRpcError:
            pass
        except TimeoutError:
            # Watch replays the stored log, then follows a run the daemon still holds until
            # it ends: the stored part was read whole, so the checks below still hold.
            self.stats["event log replays cut: a run still live on the daemon"] += 1
            if self.stats["event log replays cut: a run still live on the daemon"] <= 3:
                print(
                    f"luoshod torture: cycle {self.cycle}: session {s.sid} still has a live run "
                    f"{LIVE_RUN_WAIT_S:g} s after its client left",
                    file=sys.stderr,
                )
        if submits:
            answered = await asyncio.gather(*submits, return_exceptions=True)
            if n := sum(1 for a in answered if a is True):
                self.stats[
                    "tool calls a check answered (a run it found live: a queued input after a "
                    "crash)"
                ] += n
        s.checked_seq = max(s.checked_seq, last)
        if outline:
            s.outline = outline
        first = min(log, default=0)
        for seq, type_ in s.seen.items():
            if seq >= first and log.get(seq) != type_:
                self.violate(
                    "event log",
                    s,
                    f"the client saw seq {seq} {type_}; the log has "
                    f"{log.get(seq, 'nothing')} there",
                )
        return started

    def new_model_calls(self) -> list[bytes]:
        """The lines the daemons added to the scripted call log since the last read."""
        path = self.work / "model-calls.jsonl"
        if not path.exists():
            return []
        with path.open("rb") as f:
            f.seek(self.call_log_offset)
            data = f.read()
        end = data.rfind(b"\n") + 1  # a line cut by a kill is read with the next cycle
        self.call_log_offset += end
        return data[:end].splitlines()

    def skip_model_calls(self) -> int:
        return len(self.new_model_calls())

    def check_model_calls(self, known: dict[str, int]) -> None:
        """R22: a model call for a turn the client had seen saved before the runs began."""
        by_id = {s.sid: s for s in self.sessions + self.phase}
        for line in self.new_model_calls():
            with contextlib.suppress(ValueError):
                entry = json.loads(line)
                self.stats["model calls"] += 1
                s = by_id.get(entry.get("session_id"))
                if s is None:
                    continue
                if s.kind == "rollback" and s.redirect_rid and not known.get(f"{s.sid}/rolled"):
                    # A rollback sent and not seen applied when the turns were counted: the
                    # session starts afresh at a moment the client does not see, and its
                    # turns are generated anew on purpose.
                    self.stats["model calls not checked (R22): a rollback in between"] += 1
                    continue
                level = entry.get("model", "") if s.kind == "subagents" else ""
                if level in ("mid", "leaf"):
                    if entry["turn"] < known.get(f"{s.sid}/{level}", 0):
                        self.violate(
                            "R59",
                            s,
                            f"sub-agent {level}'s model turn {entry['turn']} generated again "
                            "after it was saved",
                        )
                elif s.sid in known and entry["turn"] < known[s.sid]:
                    self.violate(
                        "R22", s, f"model turn {entry['turn']} generated again after it was saved"
                    )

    def client_errors(self, results: list[Any]) -> None:
        """This client's own failures: counted, and the first few printed."""
        for r in results:
            if isinstance(r, Exception) and not isinstance(r, grpc.aio.AioRpcError):
                self.stats["client exceptions"] += 1
                if self.stats["client exceptions"] <= 3:
                    print(f"luoshod torture: client exception: {r!r}", file=sys.stderr)

    def violate(self, rule: str, s: Session, message: str) -> None:
        if (rule, s.sid, message) in self._reported:  # found again by a later cycle's check
            return
        self._reported.add((rule, s.sid, message))
        self.violations.append(Violation(rule, s.sid, self.cycle, message, list(s.trail[-40:])))

    # -- the report ------------------------------------------------------------------------

    def report(self) -> dict[str, Any]:
        return {
            "store": self.o.store,
            "seed": self.o.seed,
            "daemons": len(self.daemons),
            "cycles": self.cycle,
            "kills": dict(self.kills),
            "boundaries": dict(sorted(self.boundaries.items())),
            "sessions": len(self.sessions),
            "sessions_finished": sum(1 for s in self.sessions if s.finished),
            "phase_sessions": dict(Counter(s.kind for s in self.phase)),
            "phase_sessions_finished": dict(Counter(s.kind for s in self.phase if s.finished)),
            "stats": dict(self.stats),
            "seconds_spent": {k: round(v, 1) for k, v in self.phases.items()},
            "violations": [v.as_dict() for v in self.violations],
        }


def render(r: dict[str, Any], argv: list[str]) -> str:
    lines = [
        f"luoshod torture: {r['store']}, seed {r['seed']}, {r['daemons']} daemon(s)",
        f"cycles      {r['cycles']}",
        "kills       " + (", ".join(f"{k} {v}" for k, v in r["kills"].items()) or "none"),
        "boundaries  " + (", ".join(f"{k} {v}" for k, v in r["boundaries"].items()) or "none"),
        f"sessions    {r['sessions']} ({r['sessions_finished']} finished)",
    ]
    if r.get("phase_sessions"):
        lines.append(
            "phases      "
            + ", ".join(
                f"{k} {v} ({r['phase_sessions_finished'].get(k, 0)} finished)"
                for k, v in sorted(r["phase_sessions"].items())
            )
        )
    lines += [f"            {k}: {v}" for k, v in sorted(r["stats"].items())]
    if r.get("seconds_spent"):
        lines.append(
            "time        " + ", ".join(f"{k} {v} s" for k, v in r["seconds_spent"].items())
        )
    lines.append(f"violations  {len(r['violations'])}")
    shown = sorted(r["violations"], key=lambda v: "lost save" not in v["message"])[:SHOWN]
    for v in shown:
        lines.append(
            f"  [{v['rule']}] session {v['session_id']}, cycle {v['cycle']}: {v['message']}"
        )
        lines.append(f"    events seen (cycle:seq:type): {' '.join(v['events']) or 'none'}")
    if len(r["violations"]) > SHOWN:
        lines.append(
            f"  … and {len(r['violations']) - SHOWN} more (all of them in --report's JSON)"
        )
    if r["violations"]:
        lines.append(f"  reproduce: luoshod torture {' '.join(argv)}")
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--store", required=True, help="the store URL the daemons share (any installed driver)"
    )
    p.add_argument("--cycles", type=int, default=100, help="kill cycles (default 100)")
    p.add_argument(
        "--sessions", type=int, default=4, help="unfinished sessions driven each cycle (default 4)"
    )
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="makes the kill plan repeatable (default: random, printed)",
    )
    p.add_argument(
        "--daemons",
        type=int,
        choices=(1, 2),
        default=1,
        help="2: two daemons share the store, and a second one takes over the sessions of "
        "a SIGSTOPped one, if the driver allows several daemons (default 1)",
    )
    p.add_argument(
        "--sigstop-share",
        type=float,
        default=0.2,
        help="share of the cycles that SIGSTOP instead of kill -9 (two daemons)",
    )
    p.add_argument(
        "--store-fault",
        metavar="COMMAND",
        help="a command run in place of a kill in some cycles (--store-fault-share), while "
        "the sessions go on: a fault of the store itself, e.g. one that kills a PostgreSQL "
        "cluster's primary (`python tests/support/patroni_cluster.py failover DIR`); the "
        "next waits until it has ended",
    )
    p.add_argument(
        "--store-fault-share",
        type=float,
        default=0.25,
        help="share of the cycles that run --store-fault instead of a kill (default 0.25)",
    )
    p.add_argument(
        "--queue-share",
        type=float,
        default=QUEUE_SHARE,
        help=f"share of runs that get input queued while active (default {QUEUE_SHARE:g})",
    )
    p.add_argument(
        "--abandon-share",
        type=float,
        default=ABANDON_SHARE,
        help="share of queued inputs whose caller goes away once input.queued acknowledges "
        f"them, never to send them again: the daemon must run them alone (default "
        f"{ABANDON_SHARE:g})",
    )
    p.add_argument(
        "--phases",
        type=lambda v: [x for x in v.split(",") if x],
        default=list(PHASES),
        help="the phases driven beside the scripted sessions, one session each a cycle, "
        "comma-separated: redirect (if_busy INTERRUPT or ROLLBACK), subagents (depth 2), "
        "daemon-tools (an MCP server's tools); '' for none (default: all)",
    )
    p.add_argument(
        "--rollback-share",
        type=float,
        default=0.5,
        help="share of the redirect sessions that redirect with ROLLBACK, not INTERRUPT "
        "(default 0.5)",
    )
    p.add_argument(
        "--boundary",
        action="append",
        choices=sorted(set(BOUNDARIES) | set(PHASE_BOUNDARIES)),
        help="kill only after this boundary (repeatable; default: any, chosen by the seed)",
    )
    p.add_argument(
        "--lease-ttl", type=float, default=1.0, help="the daemons' lease TTL in seconds (default 1)"
    )
    p.add_argument(
        "--time-limit", type=float, default=0, help="stop starting cycles after this many seconds"
    )
    p.add_argument(
        "--stop-on-violation", action="store_true", help="stop at the first cycle with a violation"
    )
    p.add_argument(
        "--cold-start",
        action="store_true",
        help="start each daemon as `python -m luoshod serve` (~1 s) instead of forking it from a "
        "process that imported luoshod once (~50 ms); the kills are the same",
    )
    p.add_argument("--quiet", action="store_true", help="no progress line per cycle on stderr")
    p.add_argument("--report", type=Path, help="also write the report as JSON to this file")
    p.add_argument(
        "--work-dir",
        type=Path,
        help="the daemons' logs and call log (default: a temporary directory, removed)",
    )


def main(opts: argparse.Namespace, argv: list[str]) -> int:
    from ..store import Capability, driver_for

    if opts.seed is None:
        opts.seed = random.randrange(1, 2**31)
        argv = [*argv, "--seed", str(opts.seed)]
    try:
        caps = driver_for(opts.store).capabilities
    except ValueError as e:
        print(f"luoshod torture: {e}", file=sys.stderr)
        return 2
    if Capability.DURABLE not in caps:
        print(
            f"luoshod torture: {opts.store} is not durable: nothing survives a kill",
            file=sys.stderr,
        )
        return 2
    multi = Capability.MULTI_PROCESS in caps and Capability.LEASES in caps
    if unknown := set(opts.phases) - set(PHASES):
        print(
            f"luoshod torture: unknown phase(s) {sorted(unknown)}: choose from {', '.join(PHASES)}",
            file=sys.stderr,
        )
        return 2
    with contextlib.ExitStack() as stack:
        work = opts.work_dir or Path(
            stack.enter_context(tempfile.TemporaryDirectory(prefix="luoshod-torture-"))
        )
        work.mkdir(parents=True, exist_ok=True)
        torture = Torture(opts, work, multi)
        code = asyncio.run(torture.run())
        r = torture.report()
    if opts.report:
        opts.report.write_text(json.dumps(r, indent=2) + "\n")
    print(render(r, argv))
    return code
