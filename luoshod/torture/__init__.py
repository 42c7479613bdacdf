"""``luoshod torture``: real daemons killed at random moments, every invariant checked.

N sessions of a scripted agent run through ``luoshod serve`` processes on the store URL
given (any installed driver, a third party's too). In each *cycle* the client drives every
unfinished session and kills a daemon at a moment the seed chooses: ``kill -9`` right after
a persistence boundary the client can see (a ``tool.call`` — the turn is saved, R1 — a
``SubmitToolResult`` answered ``ACCEPTED`` — the result is saved, R54 — a ``tool.result``,
``step.start``, ``model.turn``, ``run.start``, ``run.done``), optionally a few milliseconds
later so the kill lands inside the next write; or, where the driver allows several daemons
(``MULTI_PROCESS`` and ``LEASES``), ``SIGSTOP`` past the lease TTL while a second daemon
takes the sessions over, then ``SIGCONT`` so the frozen one's late writes meet the new
lease. After each cycle it reads every session back (``GetSession``, the event log through
``Watch``) and checks:

- R20/R23: every tool call has at most one result, directly after its turn, in call order;
  all of them once finished;
- R21/R54: a call whose result was answered ``ACCEPTED`` is in the store with that result
  and is never handed out again (a *lost save* otherwise);
- R22: no model turn the client saw saved is generated again (the scripted call log);
- R7: a session's version and transcript never go back;
- the event log: strictly increasing seqs, and every event a client saw is in it as seen;
- R53: results the client sends as input for pending calls are taken, and not asked again;
- R51/R52: with two daemons, a session is only ever run by the holder of its lease — the
  checks above after every takeover;
- R68/R69, no lost queued input: while a run is active the client sometimes sends more input
  with ``if_busy=ENQUEUE`` (a request id each), and counts it *acknowledged* once its stream
  says ``input.queued``. Every acknowledged input is, at every check, in the transcript
  exactly once, or in the queue (``GetSession``), or applied behind the pending calls of an
  unfinished run (its ``run.start`` in the log); those in the transcript and the queue are in
  the order they were acknowledged; none is ever in the transcript twice. A queued input
  that a daemon's sweep runs after a crash hands out tool calls nobody else answers: the
  client follows it, as a client retrying its ``Execute`` does (the same request id, R74,
  R75), and answers them (a check's ``Watch`` answers those of a run it finds live). At the
  end every session with queued input is driven to its end, unkilled, and then every
  acknowledged input must be in its transcript exactly once, and no queue holds anything
  unless its session is paused on an approval;
- R68/R69/R74, abandoned queued input: half of the queued inputs' callers leave once
  ``input.queued`` acknowledges them and never retry; the session's client then sends no
  retry of its own and only ``Watch``es the session, answering the calls of the runs the
  daemon starts by itself. Kills land inside a queued input's own run, after the save that
  applied it (``queued step.start``, ``queued model.turn``). A queued input's message is
  never directly followed by another's (one merged turn answering both), and at the end
  each abandoned input has been run to its end, answered, by the daemon alone.

Beside them, each cycle drives one session of each *phase* (:mod:`.phases`, ``--phases``):
a run redirected by input sent with ``if_busy`` ``INTERRUPT`` or ``ROLLBACK`` (R68: applied
once, by a run of its own, after the interrupted run's messages with its last checkpoint
kept, R6, R12; or, rolled back, with nothing of that run left), a lead whose sub-agent has
a sub-agent (R55-R59: each level resumed from its saved state, no turn of any level
generated twice, the usage rolled up exactly once, R56), and an agent calling daemon tools
of an MCP server torture runs (R71: a call whose result is recorded never runs again);
kills can be aimed at their moments (``redirect input.queued``, ``depth-2 tool.call``,
``daemon tool.call`` …).

It ends with a report (cycles, kills, boundaries hit, violations with a reproduction: the
seed, the cycle, the session and the events it saw) and exits 1 on any violation.

The package: :mod:`.runner` (the run, its checks and report, the command),
:mod:`.workload` (the scripted sessions and what their clients remember), :mod:`.phases`
(the phases' sessions, clients and checks), :mod:`.daemons` (the processes it kills),
:mod:`.forkserver` (which forks them warm) and :mod:`.mcptool` (the MCP server).
"""

import os

# The daemons are forked while this client's gRPC threads run; gRPC's fork handlers have
# nothing to do for a child that execs at once, and would log a line per start. (Set before
# any module of the package imports grpc.)
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

from .runner import add_arguments, main  # noqa: E402

__all__ = ["add_arguments", "main"]
