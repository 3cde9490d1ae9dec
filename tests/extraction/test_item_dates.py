"""The day an extracted item carries (`at`) is the day its turn was said, also when the model
names no usable source turn; the day it was written is `added`.

Through the real extraction job and the real `anthropic` client against a local fake Messages
API: a batch holds a turn from two days ago and one from today.
"""

from __future__ import annotations

from typing import Any

from memd.core.models import JobOutcome
from memd.extraction.job import run_extraction
from tests.fakes.anthropic_server import FakeAnthropic, json_reply
from tests.jobenv import Env
from tests.jobenv import item_meta as meta_of


def _memory(content: str, type_: str, ids: Any, subject: str = "") -> dict[str, Any]:
    return {"content": content, "type": type_, "importance": 6, "source_turn_ids": ids,
            "subject": subject, "topic": "", "due": ""}  # fmt: skip


def _two_days(env: Env) -> tuple[str, str, str]:
    """A turn two days ago, then an assistant reply and a user turn today: (old, today, day)."""
    [old] = env.say("s1", "I moved to Lisbon last year and I mostly write Elixir.")
    old_day = env.clock.day()
    env.clock.advance(days=2)
    env.say("s1", "Sure, what would you like to refactor?", role="assistant")
    [new] = env.say("s1", "Can you make this function shorter?")
    return old, new, old_day


def test_a_bad_source_id_dates_the_item_by_the_turn_that_says_it(
    env: Env, server: FakeAnthropic
) -> None:
    env.online(server)
    old, new, old_day = _two_days(env)
    server.enqueue(json_reply({"memories": [
        _memory("User lives in Lisbon", "personal", ["turn-7"], "city"),  # no such turn
        _memory("User mainly writes Elixir", "skill", "t1"),  # not a list
        _memory("User likes short functions", "preference", [new]),  # a real id
    ]}))  # fmt: skip
    res = run_extraction(env.ctx())
    assert res.outcome is JobOutcome.SUCCESS and res.counts["added"] == 3, res
    today = env.clock.day()
    city = meta_of(env, "_core/profile.md", "User lives in Lisbon")
    assert (city["at"], city["added"], city["src"]) == (old_day, today, f"s1#{old}")
    skill = meta_of(env, "_core/profile.md", "User mainly writes Elixir")
    assert (skill["at"], skill["src"]) == (old_day, f"s1#{old}")
    short = meta_of(env, "_core/preferences.md", "User likes short functions")
    assert (short["at"], short["src"]) == (today, f"s1#{new}")


def test_without_any_turn_that_supports_it_the_earliest_user_turn_dates_it(
    env: Env, server: FakeAnthropic
) -> None:
    # Dated no later than the batch's first user turn, an item without provenance never
    # replaces a fact a later turn of the batch states.
    env.online(server)
    old, new, old_day = _two_days(env)
    server.enqueue(json_reply({"memories": [
        _memory("User's timezone is WET", "personal", [], "timezone"),
        _memory("User's timezone is UTC+1", "personal", [new], "timezone"),
    ]}))  # fmt: skip
    assert run_extraction(env.ctx()).outcome is JobOutcome.SUCCESS
    unsourced = meta_of(env, "_core/profile.md", "User's timezone is WET")
    sourced = meta_of(env, "_core/profile.md", "User's timezone is UTC+1")
    assert (unsourced["at"], unsourced["src"]) == (old_day, f"s1#{old}")
    assert unsourced["by"] == sourced["id"] and "superseded" not in sourced
