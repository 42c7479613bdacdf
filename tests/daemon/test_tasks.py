"""Finished tasks (docs/reference/rules.md R65) through the gRPC API, on every store of ``h``
(memory,
an SQLite file, LMDB): a task that ended stays with its session (listed by
``GetSession``, carried by ``Fork``), a ``task`` call with its ``task_id`` continues it
with its whole transcript (``mode`` resume) or a copy under a new task id (``fork``), and
an unknown task id, or one of another session, is the error result
``SUBAGENT_TASK_NOT_FOUND``.

The scripted provider plays the turn numbered by the assistant turns already in the
transcript, so a continued task's sub-agent plays the turn after the ones it played."""

from __future__ import annotations

import json

from luosho.v1 import agent_pb2 as pb
from tests.support.harness import Harness, assert_valid_transcript, calls
from tests.support.subagents import lead, lookup, researcher, result_of, task

SUB_SCRIPT = [
    calls(("lookup", {"q": "a"})),
    {"text": "first answer"},
    {"text": "second answer"},
    {"text": "third answer"},
]


def footer_of(cp: pb.Checkpoint, call_id: str) -> str:
    return json.loads(result_of(cp, call_id).content).rsplit("\n\n", 1)[-1]


def contents(state: pb.SubAgentState) -> list[str]:
    return [m.content for m in state.messages]


async def test_r65_a_finished_task_is_listed_and_continued_with_its_whole_transcript(
    h: Harness,
) -> None:
    spec = lead(
        [
            calls(task("researcher", "p1")),
            {"text": "lead 1"},
            calls(task("researcher", "p2", task_id="task_1")),
            {"text": "lead 2"},
            calls(task("researcher", "p3", task_id="task_1", mode="fork")),
            {"text": "lead 3"},
        ],
        [researcher(SUB_SCRIPT)],
    )
    tools = {"lookup": lookup}
    first = await h.run("r65", "go", spec, tools)
    assert first.done.finish_reason == pb.FINISH_REASON_STOP, first.error
    cp = await h.get("r65")
    assert not cp.subagents and [t.task_id for t in cp.tasks] == ["task_1"]
    done = cp.tasks[0]
    assert (done.name, done.depth, list(done.path), done.step_index) == (
        "researcher",
        1,
        ["researcher"],
        2,
    )
    assert contents(done)[1:] == ["p1", "", '{"fact": "fact about a"}', "first answer"]
    # Listed, the session counts the lead's messages, not its tasks' too.
    listed = await h.stub.ListSessions(pb.ListSessionsRequest(session_id_prefix="r65"))
    assert [(s.session_id, s.message_count) for s in listed.sessions] == [("r65", len(cp.messages))]

    # mode resume (the default): the same task, its transcript, the new prompt next.
    second = await h.run("r65", "again", spec, tools)
    assert second.done.finish_reason == pb.FINISH_REASON_STOP, second.error
    cp = await h.get("r65")
    assert footer_of(cp, "call_2_0") == (
        "[sub-agent 'researcher': 1 step(s), finish reason 'stop', task_id 'task_1']"
    )
    assert json.loads(result_of(cp, "call_2_0").content).startswith("second answer")
    assert [t.task_id for t in cp.tasks] == ["task_1"]
    assert contents(cp.tasks[0])[1:] == [
        "p1",
        "",
        '{"fact": "fact about a"}',
        "first answer",
        "p2",
        "second answer",
    ]
    assert cp.tasks[0].step_index == 3
    # Its events carry the task it continues.
    tags = {e.subagent.task_id for e in second.events if e.HasField("subagent")}
    assert tags == {"task_1"}
    continued_prompt = next(
        e for e in second.events if e.type == "model.turn" and e.HasField("subagent")
    )
    # It saw its whole transcript (the scripted provider counts a quarter of the characters).
    seen = sum(len(c) for c in contents(cp.tasks[0])[:-1])
    assert continued_prompt.model_turn.usage.prompt_tokens == seen // 4 + 1

    # The session's Fork carries its tasks; the fork's continuation leaves the source's.
    entries = (await h.stub.History(pb.HistoryRequest(session_id="r65"))).entries
    forked = await h.stub.Fork(pb.ForkRequest(session_id="r65", from_step=entries[0].step))
    assert [list(t.messages) for t in forked.checkpoint.tasks] == [
        list(t.messages) for t in cp.tasks
    ]

    # mode fork: a copy under a new task id; the task it copies is left as it was.
    third = await h.run("r65", "fork it", spec, tools)
    assert third.done.finish_reason == pb.FINISH_REASON_STOP, third.error
    after = await h.get("r65")
    assert footer_of(after, "call_4_0").endswith("task_id 'task_2']")
    assert json.loads(result_of(after, "call_4_0").content).startswith("third answer")
    by_id = {t.task_id: t for t in after.tasks}
    assert sorted(by_id) == ["task_1", "task_2"]
    assert list(by_id["task_1"].messages) == list(cp.tasks[0].messages)
    assert contents(by_id["task_2"]) == [*contents(cp.tasks[0]), "p3", "third answer"]
    assert_valid_transcript(after)
    # The forked session continues task_1 on its own copy: nothing of it reaches r65.
    fork_run = await h.run(forked.session_id, "fork it", spec, tools)
    assert fork_run.done.finish_reason == pb.FINISH_REASON_STOP, fork_run.error
    assert list((await h.get("r65")).tasks[0].messages) == list(cp.tasks[0].messages)


async def test_r65_an_unknown_task_or_one_of_another_session_is_subagent_task_not_found(
    h: Harness,
) -> None:
    spec = lead([calls(task("researcher", "p1")), {"text": "lead 1"}], [researcher(SUB_SCRIPT)])
    log = await h.run("r65-own", "go", spec, {"lookup": lookup})
    assert log.done.finish_reason == pb.FINISH_REASON_STOP, log.error
    # task_1 is r65-own's; r65-other has none, and asks for it and for task_9.
    other = lead(
        [
            calls(
                task("researcher", "x", task_id="task_1"), task("researcher", "y", task_id="task_9")
            ),
            {"text": "ok"},
        ],
        [researcher(SUB_SCRIPT)],
    )
    calls_before = h.model_calls("r65-other")
    log = await h.run("r65-other", "go", other, {"lookup": lookup})
    assert log.done.finish_reason == pb.FINISH_REASON_STOP, log.error
    cp = await h.get("r65-other")
    for call_id, task_id in (("call_0_0", "task_1"), ("call_0_1", "task_9")):
        r = result_of(cp, call_id)
        body = json.loads(r.content)
        assert (
            r.is_error
            and body["reason"] == "SUBAGENT_TASK_NOT_FOUND"
            and body["task_id"] == task_id
        )
        assert "this session has no such task" in body["error"]
    assert h.model_calls("r65-other") == calls_before + 2  # the lead's two turns: no sub-agent ran
    assert not cp.tasks
    assert not (await h.get("r65-own")).tasks[0].messages[-1].content.startswith("second")


async def test_r65_a_task_can_only_be_continued_by_the_subagent_that_ran_it(h: Harness) -> None:
    helper = pb.SubAgent(name="helper", description="helps", agent=researcher(SUB_SCRIPT).agent)
    spec = lead(
        [
            calls(task("researcher", "p1")),
            calls(
                task("helper", "p2", task_id="task_1"), task("researcher", "p3", task_id="task_1")
            ),
            calls(task("researcher", "p4", task_id="task_1")),
            {"text": "done"},
        ],
        [researcher(SUB_SCRIPT), helper],
    )
    log = await h.run("r65-who", "go", spec, {"lookup": lookup})
    assert log.done.finish_reason == pb.FINISH_REASON_STOP, log.error
    cp = await h.get("r65-who")
    wrong = json.loads(result_of(cp, "call_1_0").content)
    assert wrong["reason"] == "SUBAGENT_TASK_NOT_FOUND" and "run by 'researcher'" in wrong["error"]
    assert json.loads(result_of(cp, "call_1_1").content).startswith("second answer")
    # Continued again by the next turn: one more turn of the same transcript.
    assert json.loads(result_of(cp, "call_2_0").content).startswith("third answer")
    assert [t.task_id for t in cp.tasks] == ["task_1"] and cp.tasks[0].step_index == 4
    assert_valid_transcript(cp)


# -- R67: Compare lists a task's steps under its task call ----------------------------------


async def test_r67_compare_lists_each_tasks_steps_under_its_task_call(h: Harness) -> None:
    """Two sessions whose sub-agents went different ways to the same answer: the lead's
    transcripts are the same, yet they diverge at the step that delegated, and each task
    call carries its sub-agent's steps (a continued task only the stretch of its call)."""

    def spec_for(q: str) -> pb.AgentSpec:
        sub = researcher([calls(("lookup", {"q": q})), {"text": "same answer"}, {"text": "more"}])
        return lead(
            [
                calls(task("researcher", "p1")),
                calls(task("researcher", "p2", task_id="task_1")),
                {"text": "lead done"},
            ],
            [sub],
        )

    same = {"lookup": lambda args: {"fact": "one fact"}}
    for sid, q in (("r67a", "a"), ("r67b", "b")):
        log = await h.run(sid, "go", spec_for(q), same)
        assert log.done.finish_reason == pb.FINISH_REASON_STOP, log.error
    a, b = await h.get("r67a"), await h.get("r67b")
    assert list(a.messages) == list(b.messages)  # the lead cannot tell them apart
    cmp = await h.stub.Compare(pb.CompareRequest(session_id_a="r67a", session_id_b="r67b"))
    assert cmp.HasField("diverged_at") and cmp.diverged_at == 1
    first_a, first_b = cmp.a[0].calls[0], cmp.b[0].calls[0]
    assert (first_a.task_id, first_b.task_id) == ("task_1", "task_1")
    assert [s.text for s in first_a.task_steps] == ["", "same answer"]
    looked = [
        (s.calls[0].name, json.loads(s.calls[0].arguments_json))
        for s in (first_a.task_steps[0], first_b.task_steps[0])
    ]
    assert looked == [("lookup", {"q": "a"}), ("lookup", {"q": "b"})]
    assert first_a.task_steps[0].calls[0].HasField("result_json")
    # The continuation (R65) lists only its own stretch: one step, "more".
    second = cmp.a[1].calls[0]
    assert second.task_id == "task_1" and [s.text for s in second.task_steps] == ["more"]
    # A session compared with itself: no divergence, the same tree on both sides.
    itself = await h.stub.Compare(pb.CompareRequest(session_id_a="r67a", session_id_b="r67a"))
    assert not itself.HasField("diverged_at") and list(itself.a) == list(itself.b)


def test_r65_sessions_show_prints_the_finished_tasks(capsys) -> None:
    from luosho.client import Agent, Client, SubAgent, Tool
    from luoshod.cli import main
    from tests.support.threaded_daemon import threaded_daemon

    worker = Agent("scripted:w", tools=[Tool("lookup")], model_settings={"script": SUB_SCRIPT})
    boss = Agent(
        "scripted:boss",
        model_settings={
            "script": [
                {
                    "tool_calls": [
                        {"name": "task", "arguments": {"agent": "researcher", "prompt": "find it"}}
                    ]
                },
                {"text": "found"},
            ]
        },
        subagents=[SubAgent("researcher", "finds facts", worker)],
    )
    with threaded_daemon(store="memory://", tool_timeout_s=30) as d, Client(d.address) as client:
        done = client.execute("cli-tasks", "go", agent=boss, tools={"lookup": lookup}).result()
        assert done.final_text == "found"
        code = main(["sessions", "show", "cli-tasks", "--address", d.address])
        out = capsys.readouterr().out
    assert code == 0
    assert "Tasks done (1; continue one with task_id)" in out
    assert "  researcher task_1 (researcher)  2 step(s), 4 messages" in out
    assert "first answer" in out and "find it" in out


async def test_r65_r59_a_continued_task_interrupted_mid_way_resumes_where_it_was(
    h: Harness,
) -> None:
    """The client drops the stream while a continued task waits for its tool (a crashed
    app, R6): the resumed run goes on inside the same task, on its whole transcript,
    without generating any of its turns again."""
    sub = researcher(
        [
            calls(("lookup", {"q": "a"})),
            {"text": "first answer"},
            calls(("lookup", {"q": "c"})),
            {"text": "second answer"},
        ]
    )
    spec = lead(
        [
            calls(task("researcher", "p1")),
            {"text": "lead 1"},
            calls(task("researcher", "p2", task_id="task_1")),
            {"text": "lead 2"},
        ],
        [sub],
    )
    log = await h.run("r65-crash", "go", spec, {"lookup": lookup})
    assert log.done.finish_reason == pb.FINISH_REASON_STOP, log.error
    cut = await h.run(
        "r65-crash",
        "again",
        spec,
        {"lookup": lookup},
        stop_at=lambda e: e.type == "tool.call" and e.HasField("subagent"),
    )
    assert cut.dropped
    await h.idle("r65-crash")
    paused = await h.get("r65-crash")
    (state,) = paused.subagents  # the continued task, unfinished, with its whole transcript
    assert state.task_id == "task_1" and not paused.tasks
    assert contents(state)[-2:] == ["p2", ""]
    done = await h.run("r65-crash", agent=spec, tools={"lookup": lookup}, resume=True)
    assert done.done.finish_reason == pb.FINISH_REASON_STOP, done.error
    assert not [
        e
        for e in done.of("model.turn")
        if e.HasField("subagent") and e.model_turn.step == 1 and e.model_turn.message.tool_calls
    ]  # its saved turn was not generated again
    assert h.model_calls("r65-crash") == 8  # the lead's 4 turns, the task's 4: each once
    cp = await h.get("r65-crash")
    assert [t.task_id for t in cp.tasks] == ["task_1"] and not cp.subagents
    assert contents(cp.tasks[0])[1:] == [
        "p1",
        "",
        '{"fact": "fact about a"}',
        "first answer",
        "p2",
        "",
        '{"fact": "fact about c"}',
        "second answer",
    ]
    assert json.loads(result_of(cp, "call_2_0").content).startswith("second answer")
    assert_valid_transcript(cp)


async def test_r59_parallel_tasks_only_ever_append_to_the_session_log(
    h: Harness, store_url: str
) -> None:
    """Three tasks of one turn at once, their results answered together: every save of
    each, while its siblings add messages, appends to the one message log of the session
    (a save that miscounted what the store holds would start a new log, rewriting all)."""
    subs = [
        pb.SubAgent(
            name=n,
            description=n,
            agent=researcher(
                [
                    calls(("lookup", {"q": n})),
                    calls(("lookup", {"q": n + "2"})),
                    {"text": n.upper()},
                ]
            ).agent,
        )
        for n in ("a", "b", "c")
    ]
    spec = lead(
        [calls(*(task(n, "p") for n in ("a", "b", "c"))), {"text": "ok"}], subs, tool_concurrency=3
    )
    log = await h.run("r59-par", "go", spec, {"lookup": lookup})
    assert log.done.finish_reason == pb.FINISH_REASON_STOP, log.error
    cp = await h.get("r59-par")
    assert sorted(t.task_id for t in cp.tasks) == ["task_1", "task_2", "task_3"]
    for t in cp.tasks:
        assert [m.role for m in t.messages].count(pb.ROLE_TOOL) == 2 and t.step_index == 3
    if store_url.startswith("sqlite"):
        import sqlite3

        with sqlite3.connect(store_url.removeprefix("sqlite://")) as conn:
            (logs,) = conn.execute(
                "SELECT count(*) FROM logs WHERE session_id = 'r59-par'"
            ).fetchone()
        conn.close()
        assert logs == 1


async def test_r65_a_mode_other_than_resume_or_fork_is_refused_by_the_task_tools_schema(
    h: Harness,
) -> None:
    spec = lead(
        [
            calls(task("researcher", "p1")),
            calls(task("researcher", "p2", task_id="task_1", mode="merge")),
            {"text": "ok"},
        ],
        [researcher(SUB_SCRIPT)],
    )
    log = await h.run("r65-mode", "go", spec, {"lookup": lookup})
    assert log.done.finish_reason == pb.FINISH_REASON_STOP, log.error
    cp = await h.get("r65-mode")
    refused = json.loads(result_of(cp, "call_1_0").content)
    assert refused["error"] == "arguments do not match the tool's input schema"
    assert any(d.startswith("mode:") for d in refused["details"])
    assert cp.tasks[0].step_index == 2  # the task was not continued
