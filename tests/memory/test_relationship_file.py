"""The relationship.md format: memd rewrites only its own lines, reads hand-edited values back."""

from __future__ import annotations

import datetime as dt
import functools

import pytest

from memd.memory.relationship import (
    MOOD_MARK,
    STATUS_MARK,
    Mood,
    Standing,
    StatusUpdate,
    compact,
    new_trust,
    read_relationship,
    update_status,
)

STANDING = Standing(3, 41, dt.date(2026, 3, 1), dt.date(2026, 3, 2), 12)
# A StatusUpdate on STANDING: update(trust_step=2, mood=...).
update = functools.partial(StatusUpdate, STANDING)


def test_a_new_file_gets_the_title_status_and_mood() -> None:
    text = update_status("", update(trust_step=2, mood=Mood("pleased", "2026-03-02: thanks")))
    assert text == (
        "# Agent Relationship\n\n"
        f"## Basic Status\n{STATUS_MARK}\n"
        "- Trust Level: 52/100\n- Familiarity: 12/100\n- Total Interactions: 3 sessions, 41 turns\n"
        "- First Interaction: 2026-03-01\n- Last Interaction: 2026-03-02\n\n"
        f"## Current Mood\n{MOOD_MARK}\n- Status: pleased\n- Notes: 2026-03-02: thanks\n"
    )


def test_status_goes_after_the_title_and_the_rest_is_kept_byte_for_byte() -> None:
    user = (
        "---\ntags: [ally]\n---\n# Ally and me\n\nWhat I think of Ally.\n\n"
        "## Memory Points\n\n- keep it short <!-- memd id=m_1 type=preference -->\n"
        "- my own line, no metadata\n\n## Notes\n\n```\n## not a heading\n```\n"
    )
    text = update_status(user, update(trust_step=-3))
    head, _, tail = text.partition("## Memory Points")
    assert "## Memory Points" + tail == user[user.index("## Memory Points") :]
    assert head.startswith("---\ntags: [ally]\n---\n# Ally and me\n\nWhat I think of Ally.\n\n")
    assert "- Trust Level: 47/100\n" in head and "## Current Mood" not in text
    assert read_relationship(text).points[0].text == "keep it short"


def test_only_memds_lines_change_and_the_users_lines_in_its_sections_stay() -> None:
    first = update_status("", update(mood=Mood("neutral", "n")))
    edited = first.replace("- Familiarity: 12/100\n", "- Familiarity: 12/100\n- I like Ally\n")
    edited = edited.replace("- Status: neutral\n", "* Status: grumpy (my word)\n")
    later = Standing(4, 50, STANDING.first, dt.date(2026, 3, 5), 15)
    text = update_status(edited, StatusUpdate(later, trust_step=1))
    changed = [(a, b) for a, b in zip(edited.split("\n"), text.split("\n"), strict=True) if a != b]
    assert changed == [
        ("- Trust Level: 50/100", "- Trust Level: 51/100"),
        ("- Familiarity: 12/100", "- Familiarity: 15/100"),
        (
            "- Total Interactions: 3 sessions, 41 turns",
            "- Total Interactions: 4 sessions, 50 turns",
        ),
        ("- Last Interaction: 2026-03-02", "- Last Interaction: 2026-03-05"),
    ]
    assert read_relationship(text).mood == "grumpy (my word)"


@pytest.mark.parametrize(
    ("written", "step", "expected"),
    [
        ("80", 2, "82/100"),
        ("80/100", -5, "75/100"),
        ("80 %", 0, "80/100"),
        ("99/100", 5, "100/100"),
        ("3", -5, "0/100"),
        ("120/100", 0, "100/100"),
        ("62.6/100", 0, "63/100"),
    ],
)
def test_a_hand_edited_trust_is_where_memd_goes_on_from(
    written: str, step: int, expected: str
) -> None:
    text = update_status("", update()).replace("Trust Level: 50/100", f"Trust Level: {written}")
    out = update_status(text, update(trust_step=step))
    assert f"- Trust Level: {expected}\n" in out


def test_trust_spelled_differently_is_still_the_trust_line() -> None:
    text = "# Ally\n\n## basic status\n- trust：70\n"
    out = update_status(text, update(trust_step=1))
    assert out.startswith("# Ally\n\n## basic status\n")
    assert "- Trust Level: 71/100\n" in out and "trust：70" not in out


def test_an_unreadable_trust_is_left_as_written_and_not_moved() -> None:
    text = update_status("", update()).replace("Trust Level: 50/100", "Trust Level: high")
    out = update_status(text, update(trust_step=3))
    assert "- Trust Level: high\n" in out and "12/100" in out
    assert new_trust(text, update(trust_step=3)) is None
    assert read_relationship(out).trust is None and read_relationship(out).trust_text == "high"


def test_without_a_trust_line_the_start_value_is_used() -> None:
    text = "# Agent Relationship\n\n## Basic Status\n- Familiarity: 1/100\n"
    out = update_status(text, update(trust_step=1, trust_start=70))
    assert "- Trust Level: 71/100\n" in out


def test_a_sub_agent_has_no_trust_line() -> None:
    out = update_status("", update(with_trust=False))
    assert "Trust" not in out and "- Familiarity: 12/100" in out


def test_crlf_files_stay_crlf() -> None:
    text = update_status("", update()).replace("\n", "\r\n") + "\r\n## Mine\r\n- x\r\n"
    out = update_status(text, update(trust_step=1, mood=Mood("happy", "yay")))
    assert "\n" not in out.replace("\r\n", "")
    assert "- Trust Level: 51/100\r\n" in out and "## Current Mood\r\n" in out
    assert out.endswith("## Mine\r\n- x\r\n")


def test_same_update_twice_changes_nothing_the_second_time() -> None:
    u = update(mood=Mood("pleased", "p"))
    once = update_status("# Agent Relationship\n\n## Memory Points\n- a\n", u)
    assert update_status(once, update()) == once


def test_a_setext_heading_keeps_its_underline() -> None:
    text = "# Ally\n\nBasic Status\n------------\n- Trust Level: 40/100\n"
    out = update_status(text, update(trust_step=1))
    assert out.startswith("# Ally\n\nBasic Status\n------------\n" + STATUS_MARK + "\n")
    assert "- Trust Level: 41/100" in out


def test_read_relationship_and_points() -> None:
    text = update_status("", update(mood=Mood("happy", "great day")))
    text += (
        "\n## Memory Points\n- short answers <!-- memd id=m_1 -->\n"
        "- long answers <!-- memd id=m_0 superseded=2026-03-01 by=m_1 -->\n- by hand\n"
    )
    rel = read_relationship(text)
    assert (rel.trust, rel.familiarity, rel.interactions) == (50, 12, "3 sessions, 41 turns")
    assert (rel.first, rel.last, rel.mood, rel.mood_note) == (
        "2026-03-01",
        "2026-03-02",
        "happy",
        "great day",
    )
    assert [(p.text, p.id) for p in rel.points] == [("short answers", "m_1"), ("by hand", "")]


def test_compact_lines_for_context() -> None:
    text = update_status("", update(trust_step=12, mood=Mood("pleased", "thanked twice")))
    rel_status = text.split("## Basic Status\n")[1].split("## Current Mood")[0]
    rel_mood = text.split("## Current Mood\n")[1]
    assert compact(rel_status, rel_mood) == (
        "Trust 62/100 · familiarity 12/100 · 3 sessions, 41 turns (first 2026-03-01, last"
        " 2026-03-02)\nMood: pleased — thanked twice"
    )
    assert compact("- Familiarity: 1/100\n- note of mine\n", "") == (
        "familiarity 1/100\n- note of mine"
    )
