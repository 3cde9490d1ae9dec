"""The extraction job with the real `anthropic` client against a local fake Messages API.

Normal JSON, a thinking block first, malformed JSON, 429 then success, 529, 401, a timeout;
token budgets per day and per run; an interrupted run resuming without duplicates.
"""

from __future__ import annotations

import json
import socket
from typing import Any

from memd.core.conditions import SystemState
from memd.core.models import JobOutcome
from memd.extraction.job import run_extraction
from memd.llm.budget import llm_status
from memd.llm.repo import tokens_on
from memd.memory.context import FENCE_CLOSE, FENCE_OPEN
from tests import planted
from tests.fakes.anthropic_server import (
    FakeAnthropic,
    error,
    json_reply,
    overloaded,
    rate_limited,
    slow,
    text_reply,
    thinking_then_json,
)
from tests.jobenv import MODEL, Env
from tests.jobenv import file_items as lines
from tests.jobenv import item_meta as meta_of


def memory(content: str, type_: str, imp: int, turns: list[str], *, subject: str = "", topic: str = "",
           due: str = "") -> dict[str, Any]:  # fmt: skip
    return {"content": content, "type": type_, "importance": imp, "source_turn_ids": turns,
            "subject": subject, "topic": topic, "due": due}  # fmt: skip


def prompt(server: FakeAnthropic, i: int = -1) -> str:
    content = server.requests[i].body["messages"][0]["content"]
    assert isinstance(content, str)
    return content


def answer_for(turn: str) -> dict[str, Any]:
    return {"memories": [
        memory("User's name is Sam", "personal", 9, [turn], subject="name"),
        memory("User mainly uses React and TypeScript", "skill", 7, [turn]),
        memory("User prefers clean code style", "preference", 5, [turn]),
        memory("CKS Lite is built with React + Tauri + Python", "project", 6, [turn], topic="cks-lite"),
        memory("User must send the CKS Lite demo to Ana", "task", 4, [turn], due="2026-03-06"),
    ]}  # fmt: skip


def test_normal_answer_lands_in_the_right_files(env: Env, server: FakeAnthropic) -> None:
    env.online(server)
    recalled = (
        FENCE_OPEN + "## What the user told you before\n- User works at Initech\n" + FENCE_CLOSE
    )
    t1, _ = env.say("s1", f"{recalled}\nHi! My name is Sam. I mainly use React and TypeScript.",
                    "Nice to meet you!", role="user")  # fmt: skip
    server.enqueue(json_reply(answer_for(t1), input_tokens=500, output_tokens=120))
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.SUCCESS, res
    assert (
        res.counts["added"] == 5 and res.counts["llm_requests"] == 1 and res.counts["tokens"] == 620
    )
    body = server.requests[0].body
    assert body["model"] == MODEL and body["thinking"] == {"type": "disabled"}
    assert "Initech" not in prompt(server) and "My name is Sam" in prompt(server)
    day = env.clock.day()
    name = meta_of(env, "_core/profile.md", "User's name is Sam")
    assert (name["type"], name["imp"], name["subject"], name["src"], name["at"]) == (
        "personal",
        "9",
        "name",
        f"s1#{t1}",
        day,
    )
    assert (
        meta_of(env, "_core/profile.md", "User mainly uses React and TypeScript")["type"] == "skill"
    )
    assert meta_of(env, "_core/preferences.md", "User prefers clean code style")["imp"] == "5"
    assert (
        meta_of(env, "topics/cks-lite.md", "CKS Lite is built with React + Tauri + Python")["type"]
        == "project"
    )
    task = meta_of(env, "tasks.md", "User must send the CKS Lite demo to Ana")
    assert task["due"] == "2026-03-06" and task["type"] == "task"
    conn = env.engine.store.read()
    rows = conn.execute(
        "SELECT job, requests, input_tokens, output_tokens FROM llm_runs"
    ).fetchall()
    assert [tuple(r) for r in rows] == [("extract", 1, 500, 120)]
    assert env.cursor("s1") == env.max_turn("s1")
    # Known memories are sent on the next request so the model does not repeat them.
    env.say("s2", "Also I like dark mode in every editor.")
    server.enqueue(json_reply({"memories": [memory("User likes dark mode", "preference", 4, [])]}))
    assert run_extraction(env.ctx()).counts["added"] == 1
    assert "- User's name is Sam" in prompt(server)
    assert llm_status(env.ctx()).tokens_today == 620 + 160


def test_thinking_block_first(env: Env, server: FakeAnthropic) -> None:
    env.online(server)
    (t1,) = env.say("s1", "My name is Sam and I mainly use React and TypeScript.")
    server.enqueue(thinking_then_json(answer_for(t1)))
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.SUCCESS and res.counts["added"] == 5
    assert meta_of(env, "_core/profile.md", "User's name is Sam")["imp"] == "9"


def test_malformed_json_twice_fails_the_run_and_writes_nothing(
    env: Env, server: FakeAnthropic
) -> None:
    env.online(server)
    (t1,) = env.say("s1", "My name is Sam. I live in Berlin.")
    cut = text_reply(
        '{"memories": [{"content": "User\'s name is', input_tokens=300, output_tokens=50
    )
    server.enqueue(cut, cut)
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.ERROR and res.counts["llm_errors"] == 1, res
    assert "malformed JSON" in res.message and "nothing of this batch was written" in res.message
    assert len(server.requests) == 2  # asked once more, then given up for this run
    assert lines(env, "_core/profile.md") == [] and env.cursor("s1") == 0
    # Both unusable answers were billed: their tokens count against the budgets.
    runs = (
        env.engine.store.read()
        .execute("SELECT requests, input_tokens, output_tokens FROM llm_runs")
        .fetchall()
    )
    assert [tuple(r) for r in runs] == [(2, 600, 100)] and res.counts["tokens"] == 700
    # The next run asks again, and a good answer lands.
    server.enqueue(json_reply(answer_for(t1)))
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.SUCCESS and res.counts["added"] == 5
    assert env.cursor("s1") == env.max_turn("s1")


def test_a_batch_the_model_fails_in_three_runs_goes_to_the_rules(
    env: Env, server: FakeAnthropic
) -> None:
    env.online(server)
    env.say("s1", "My name is Sam. I live in Berlin.")
    for run in (1, 2, 3):
        server.enqueue(text_reply("I cannot help with that."), text_reply("Sorry."))
        res = run_extraction(env.ctx())
        assert res.outcome is JobOutcome.ERROR and env.cursor("s1") == 0, (run, res)
    assert "gives it to the offline rules" in res.message
    res = run_extraction(env.ctx())  # no request: the rules read the batch
    assert res.outcome is JobOutcome.SUCCESS and len(server.requests) == 6
    assert "went to the rules after failed runs" in res.message
    assert meta_of(env, "_core/profile.md", "User lives in Berlin")["type"] == "personal"
    assert env.cursor("s1") == env.max_turn("s1")
    # The next batch of the session goes to the model again.
    (t2,) = env.say("s1", "I mainly use React and TypeScript.")
    server.enqueue(json_reply(answer_for(t2)))
    assert run_extraction(env.ctx()).outcome is JobOutcome.SUCCESS and len(server.requests) == 7


def test_429_then_success_on_the_next_run(env: Env, server: FakeAnthropic) -> None:
    env.online(server)
    (t1,) = env.say("s1", "My name is Sam and I mainly use React and TypeScript.")
    server.enqueue(rate_limited())
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.RETRY_LATER and "429" in res.message
    assert env.cursor("s1") == 0 and env.read("topics/cks-lite.md") == ""
    server.enqueue(json_reply(answer_for(t1)))
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.SUCCESS and res.counts["added"] == 5
    assert len(server.requests) == 2


def test_529_is_retried_later(env: Env, server: FakeAnthropic) -> None:
    env.online(server)
    env.say("s1", "My name is Sam.")
    server.enqueue(overloaded())
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.RETRY_LATER and "529" in res.message
    assert env.cursor("s1") == 0


def test_5xx_and_a_refused_connection_are_retried_later(env: Env, server: FakeAnthropic) -> None:
    env.online(server)
    env.say("s1", "My name is Sam.")
    server.enqueue(
        error(500, "api_error", "Internal server error"), error(503, "api_error", "Unavailable")
    )
    for status in ("500", "503"):
        res = run_extraction(env.ctx())
        assert res.outcome is JobOutcome.RETRY_LATER and status in res.message
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env.use(extract_base_url=f"http://127.0.0.1:{port}")  # nothing listens there
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.RETRY_LATER and "cannot reach" in res.message
    assert env.cursor("s1") == 0


def test_401_stops_without_spinning(env: Env, server: FakeAnthropic) -> None:
    env.online(server)
    env.say("s1", "My name is Sam.")
    env.say("s2", "I live in Berlin.")
    server.enqueue(error(401, "authentication_error", "invalid x-api-key"))
    res = run_extraction(env.ctx())
    assert (
        res.outcome is JobOutcome.CONFIG_ERROR and "401" in res.message and "api_key" in res.message
    )
    assert len(server.requests) == 1  # the second session was not tried
    assert env.cursor("s1") == 0 and env.cursor("s2") == 0
    # The next scheduled runs do not call the API again with the same settings…
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.CONFIG_ERROR and len(server.requests) == 1
    assert "401" in str(llm_status(env.ctx()).config_error)
    # …until the settings change.
    env.use(extract_model="claude-other-model")
    server.enqueue(json_reply({"memories": []}), json_reply({"memories": []}))
    assert run_extraction(env.ctx()).outcome is JobOutcome.SUCCESS
    assert len(server.requests) == 3


def test_timeout_is_retried_later(env: Env, server: FakeAnthropic) -> None:
    env.online(server, extract_timeout_s=0.3)
    env.say("s1", "My name is Sam.")
    server.enqueue(slow(3.0))
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.RETRY_LATER and "timed out" in res.message
    assert env.cursor("s1") == 0


def test_daily_budget_stops_the_job_until_tomorrow(env: Env, server: FakeAnthropic) -> None:
    env.online(server, extract_daily_tokens=2500, extract_run_tokens=100_000)
    for s in ("s1", "s2", "s3"):
        env.say(s, f"My name is Sam and this is session {s}.")
    server.enqueue(
        *[json_reply({"memories": []}, input_tokens=1000, output_tokens=100) for _ in range(3)]
    )
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.BUDGET_EXHAUSTED and "daily token budget" in res.message
    assert len(server.requests) == 1 and env.cursor("s1") > 0 and env.cursor("s2") == 0
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.BUDGET_EXHAUSTED and len(server.requests) == 1
    env.use(extract_daily_tokens=1100)
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.BUDGET_EXHAUSTED and res.counts == {"tokens_today": 1100}
    env.use(extract_daily_tokens=2500)
    env.clock.advance(days=1)
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.BUDGET_EXHAUSTED and len(server.requests) == 2
    assert env.cursor("s2") > 0 and env.cursor("s3") == 0
    assert tokens_on(env.engine.store.read(), env.clock.date()) == 1100


def test_per_run_cap_spreads_the_work_over_runs(env: Env, server: FakeAnthropic) -> None:
    env.online(server, extract_run_tokens=2000)
    for s in ("s1", "s2"):
        env.say(s, f"I live in Berlin, session {s}.")
    server.enqueue(
        *[json_reply({"memories": []}, input_tokens=1000, output_tokens=100) for _ in range(2)]
    )
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.BUDGET_EXHAUSTED and "per-run token cap" in res.message
    assert res.counts["llm_requests"] == 1 and res.counts["tokens"] == 1100
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.SUCCESS and len(server.requests) == 2
    rows = env.engine.store.read().execute(
        "SELECT requests, input_tokens + output_tokens FROM llm_runs ORDER BY id"
    )
    assert [tuple(r) for r in rows] == [(1, 1100), (1, 1100)]


def test_interrupted_run_resumes_without_duplicates(env: Env, server: FakeAnthropic) -> None:
    env.online(server)
    sessions = {}
    for s, fact in (
        ("s1", "User lives in Berlin"),
        ("s2", "User works at ByteDance"),
        ("s3", "User is 28 years old"),
    ):
        (tid,) = env.say(s, f"Remember: {fact}, session {s}.")
        sessions[s] = (tid, fact)
        env.clock.advance(minutes=1)

    def reply(s: str) -> Any:
        tid, fact = sessions[s]
        return json_reply({"memories": [memory(fact, "personal", 7, [tid])]})

    server.enqueue(reply("s1"), overloaded())
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.RETRY_LATER and res.counts["added"] == 1
    server.enqueue(reply("s2"), reply("s3"))
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.SUCCESS and res.counts["added"] == 2
    # The resumed run asked only about the sessions not done yet.
    assert "session s1" not in prompt(server, -2) and "session s2" in prompt(server, -2)
    assert "session s3" in prompt(server, -1)
    texts = [t for t, _ in lines(env, "_core/profile.md")]
    assert sorted(texts) == sorted(f for _, f in sessions.values())

    # A crash after the Markdown was written but before the cursor committed: the database is
    # as it was before the run, the file already has the items. The batch is re-read and its
    # memories are recognised as this batch's own (same source turns): no duplicate, no hit.
    before = env.read("_core/profile.md")
    env.engine.store.w.run(lambda c: (c.execute("UPDATE sessions SET extracted_upto = 0"),
                                      c.execute("DELETE FROM memory_hashes")))  # fmt: skip
    server.enqueue(reply("s1"), reply("s2"), reply("s3"))
    res = run_extraction(env.ctx())
    assert (
        res.outcome is JobOutcome.SUCCESS and res.counts["added"] == 0 and res.counts["merged"] == 0
    )
    assert env.read("_core/profile.md") == before


def test_battery_and_load_defer_llm_jobs(env: Env, server: FakeAnthropic) -> None:
    env.online(server, jobs_min_battery=30)
    env.say("s1", "My name is Sam.")
    env.probe = lambda: SystemState(12.0, False, 0.2, 8)
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.DEFERRED and "battery at 12%" in res.message
    env.engine.record_job(res, env.clock(), env.clock())
    job = env.engine.handle("status", {})["jobs"]["extract"]
    assert job["last_outcome"] == "deferred" and "battery at 12%" in job["last_message"]
    env.probe = lambda: SystemState(12.0, True, 0.2, 8)  # plugged in: fine
    server.enqueue(json_reply({"memories": []}))
    assert run_extraction(env.ctx()).outcome is JobOutcome.SUCCESS
    env.say("s1", "I live in Berlin.")
    env.probe = lambda: SystemState(None, None, 9.5, 4)
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.DEFERRED and "load 9.50 > 4 cores" in res.message
    assert len(server.requests) == 1
    # Offline rules cost nothing and are not deferred.
    env.use(extract_api_key="")
    assert run_extraction(env.ctx()).outcome is JobOutcome.SUCCESS
    json.dumps(env.engine.handle("status", {}))


def test_hand_written_notes_reach_the_model_redacted(env: Env, server: FakeAnthropic) -> None:
    """The memories the model is shown as already known come from the tree: a file with
    secrets and `<private>` blocks goes without them, and so does the same text pasted into
    the conversation."""
    env.online(server)
    (env.memory / planted.REL).write_text(planted.TEXT, encoding="utf-8")
    env.engine.indexer.reconcile()
    env.say("s1", "My infra notes, for the record:\n" + planted.TEXT, gap_s=1)
    server.enqueue(json_reply({"memories": []}))
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.SUCCESS, res
    assert len(server.requests) == 1
    sent = prompt(server)
    assert planted.leaked(server.requests[0].raw) == []
    known, _, conversation = sent.partition("<conversation>")
    assert planted.carried(known) == list(planted.PUBLIC)  # the file's items, as known memories
    # The pasted lines repeating known memories are left out; the turn itself goes.
    assert "My infra notes, for the record" in conversation
