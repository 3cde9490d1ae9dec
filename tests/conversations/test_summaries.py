"""The session summary job: idle sessions get an LLM title and summary; offline, nothing changes."""

from __future__ import annotations

from typing import Any

from memd.conversations.summary_job import pick_turns, run_summaries
from memd.core.models import JobOutcome, Turn
from tests import planted
from tests.fakes.anthropic_server import FakeAnthropic, json_reply, overloaded, text_reply
from tests.jobenv import Env


def session(env: Env, sid: str) -> dict[str, Any]:
    row = (
        env.engine.store.read()
        .execute(
            "SELECT title, title_source, summary, summary_kind, summary_upto, turn_count FROM sessions WHERE session_id = ?",
            (sid,),
        )
        .fetchone()
    )
    return dict(row)


def test_idle_sessions_get_an_llm_summary_and_title(env: Env, server: FakeAnthropic) -> None:
    env.online(server)
    env.say("s1", "I want to move the shop's database from MySQL to Postgres.",
            "Let's plan the migration with pgloader.", "Do it table by table over the weekend.")  # fmt: skip
    env.say("trivial", "hi", "thanks!")
    env.clock.advance(minutes=11)
    env.say("busy", "Still talking about the release checklist.", "And the changelog.")
    before = session(env, "s1")
    assert before["summary_kind"] == "extractive" and before["title_source"] == "first"
    server.enqueue(json_reply({"title": "Shop DB migration to Postgres",
                               "summary": "Planned moving the shop database from MySQL to Postgres with pgloader."},
                              input_tokens=300, output_tokens=50))  # fmt: skip
    res = run_summaries(env.ctx())
    assert res.outcome is JobOutcome.SUCCESS, res
    assert (
        res.counts["summarized"] == 1 and res.counts["skipped"] == 1 and res.counts["tokens"] == 350
    )
    assert len(server.requests) == 1
    sent = server.requests[0].body["messages"][0]["content"]
    assert "pgloader" in sent and "release checklist" not in sent
    s1 = session(env, "s1")
    assert s1["title"] == "Shop DB migration to Postgres" and s1["title_source"] == "llm"
    assert s1["summary"].startswith("Planned moving") and s1["summary_kind"] == "llm"
    assert s1["summary_upto"] == s1["turn_count"] == 3
    assert session(env, "busy")["summary_kind"] != "llm"
    runs = (
        env.engine.store.read()
        .execute("SELECT job, input_tokens + output_tokens FROM llm_runs")
        .fetchall()
    )
    assert [tuple(r) for r in runs] == [("summarize", 350)]
    # Nothing new: no request. The busy session goes idle later and gets its turn; the trivial
    # one is not looked at again.
    assert run_summaries(env.ctx()).outcome is JobOutcome.NOTHING_TO_DO
    env.clock.advance(minutes=11)
    server.enqueue(
        json_reply({"title": "Release checklist", "summary": "Went through the release checklist."})
    )
    res = run_summaries(env.ctx())
    assert (
        res.counts["summarized"] == 1 and res.counts["skipped"] == 0 and len(server.requests) == 2
    )
    # A session that grows is summarised again once idle; a title given by the user stays.
    env.engine.store.w.run(lambda c: c.execute(
        "UPDATE sessions SET title = 'My title', title_source = 'user' WHERE session_id = 's1'"))  # fmt: skip
    env.say("s1", "We also need to migrate the reporting views.")
    env.clock.advance(minutes=11)
    server.enqueue(
        json_reply({"title": "Other", "summary": "Migration plan, now with reporting views."})
    )
    assert run_summaries(env.ctx()).counts["summarized"] == 1
    s1 = session(env, "s1")
    assert (
        s1["title"] == "My title" and "reporting views" in s1["summary"] and s1["summary_upto"] == 4
    )


def test_offline_keeps_the_extractive_summary(env: Env) -> None:
    env.say("s1", "I want to move the shop's database from MySQL to Postgres.", "Use pgloader.")
    env.clock.advance(minutes=30)
    before = session(env, "s1")
    res = run_summaries(env.ctx())
    assert res.outcome is JobOutcome.NOTHING_TO_DO and "offline" in res.message
    assert session(env, "s1") == before


def test_errors_retry_later_or_skip_the_session(env: Env, server: FakeAnthropic) -> None:
    env.online(server)
    env.say("s1", "I want to move the shop's database from MySQL to Postgres.", "Use pgloader.")
    env.clock.advance(minutes=11)
    server.enqueue(overloaded())
    assert run_summaries(env.ctx()).outcome is JobOutcome.RETRY_LATER
    assert session(env, "s1")["summary_kind"] == "extractive"
    # An unreadable answer is asked for once more; the second one no better: the session is
    # recorded as failed, keeps its extractive summary, and the run ends as failed.
    bad = text_reply("no json here", input_tokens=500, output_tokens=7)
    server.enqueue(bad, json_reply({"title": "Half", "summary": ""}))
    res = run_summaries(env.ctx())
    assert res.outcome is JobOutcome.ERROR and res.counts["llm_errors"] == 1, res
    assert "could not be read" in res.message
    assert session(env, "s1")["summary_kind"] == "extractive"
    assert session(env, "s1")["title_source"] != "llm"  # nothing of a half answer lands
    # Billed even though unusable: counted in the run and in the day's total.
    assert res.counts["tokens"] == 507 + 160 and res.counts["llm_requests"] == 2
    runs = (
        env.engine.store.read()
        .execute("SELECT requests, input_tokens, output_tokens FROM llm_runs")
        .fetchall()
    )
    assert [tuple(r) for r in runs] == [(2, 620, 47)]
    assert (
        run_summaries(env.ctx()).outcome is JobOutcome.NOTHING_TO_DO
    )  # not retried until it grows


def test_long_sessions_send_the_opening_and_the_latest_turns() -> None:
    turns = [
        Turn("ingest", "s", f"t{i}", "user", f"turn number {i} " + "word " * 200, float(i))
        for i in range(30)
    ]
    picked = pick_turns(turns, 2500)
    ids = [t.turn_id for t in picked]
    assert ids[:4] == ["t0", "t1", "t2", "t3"] and ids[-1] == "t29"
    assert ids == sorted(ids, key=lambda x: int(x[1:])) and len(ids) < 30
    assert pick_turns(turns[:3], 2500) == turns[:3]


def test_notes_pasted_into_a_session_reach_the_summary_redacted(
    env: Env, server: FakeAnthropic
) -> None:
    """A person pastes their hand-written notes into a conversation: the summary request
    carries them without the secrets and `<private>` spans they hold."""
    env.online(server)
    env.say("notes", "Here are my infra notes, keep them in mind:\n" + planted.TEXT,
            "Got it: blue-green deploys on tuesdays, the canary in Frankfurt.",
            "Plan this week's rollout with that.")  # fmt: skip
    env.clock.advance(minutes=11)
    server.enqueue(json_reply({"title": "Rollout plan", "summary": "Planned the rollout."}))
    res = run_summaries(env.ctx())
    assert res.outcome is JobOutcome.SUCCESS and res.counts["summarized"] == 1, res
    sent = server.requests[0].raw
    assert planted.leaked(sent) == [] and planted.carried(sent) == list(planted.PUBLIC)
