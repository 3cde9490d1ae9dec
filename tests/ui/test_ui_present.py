"""The page's pure helpers: highlighting, return paths, form → socket params, charts."""

from __future__ import annotations

import datetime as dt

import pytest

from memd.core.errors import InvalidParams
from memd.ui import charts, present


def test_highlight_marks_query_words_and_escapes_the_rest() -> None:
    out = str(present.highlight("Use <script>vitest</script> for Vitest tests", "vitest"))
    assert out == (
        "Use &lt;script&gt;<mark>vitest</mark>&lt;/script&gt; for <mark>Vitest</mark> tests"
    )
    assert str(present.highlight("优化记忆系统的检索", "记忆")) == "优化<mark>记忆</mark>系统的检索"
    assert str(present.highlight("a <b> c", "")) == "a &lt;b&gt; c"
    # Regex characters in a query are plain characters.
    assert str(present.highlight("costs (c++) a lot", "c++")) == "costs (<mark>c++</mark>) a lot"


def test_snippets_lose_metadata_comments() -> None:
    raw = "- always use vitest <!-- memd id=m_1 type=preference imp=7 src=manual at=2026-11-23 -->"
    assert present.clean_snippet(raw) == "- always use vitest"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/edit?forget=x", "/edit?forget=x"),
        ("//evil.example/x", "/memory"),
        ("https://evil.example", "/memory"),
        ("/\\evil.example", "/memory"),
        ("javascript:alert(1)", "/memory"),
        ("", "/memory"),
    ],
)
def test_return_paths_stay_on_this_site(path: str, expected: str) -> None:
    assert present.safe_back(path) == expected


def test_messages_replace_earlier_ones() -> None:
    url = present.with_message(
        "/memory/file?root=0&rel=a.md&msg=old#x", msg="done é", anchor="item-m_1"
    )
    assert url == "/memory/file?root=0&rel=a.md&msg=done+%C3%A9#item-m_1"
    assert present.with_message("//evil.example", err="x") == "/memory?err=x"


def test_times() -> None:
    ts = dt.datetime(2026, 11, 23, 14, 1).timestamp()
    assert present.when(ts) == "2026-11-23 14:01"
    assert present.when("2026-11-23T14:01:42.3+00:00") == (
        dt.datetime(2026, 11, 23, 14, 1, 42, tzinfo=dt.UTC).astimezone().strftime("%Y-%m-%d %H:%M")
    )
    assert present.when(None) == "never" and present.when("soon") == "soon"
    assert present.yaml_value(True) == "true" and present.yaml_value(["a", False]) == "a, false"


def edit_form(**changes: str) -> dict[str, str]:
    form = {
        "id": "m_1",
        "expect": "Use squash merges",
        "text": "Use squash merges",
        "importance": "7",
        "orig_importance": "7",
        "orig_pinned": "",
        "expires": "",
        "orig_expires": "",
        "move_path": "_core/notes.md",
        "orig_path": "_core/notes.md",
        "move_section": "",
    }
    form.update(changes)
    return form


def test_edit_params_send_only_what_changed() -> None:
    assert present.edit_params(edit_form(text="Use  rebase merges ")) == {
        "id": "m_1",
        "expect_text": "Use squash merges",
        "text": "Use rebase merges",
    }
    assert present.edit_params(edit_form(importance="9", pinned="on", expires="2027-01-31")) == {
        "id": "m_1",
        "expect_text": "Use squash merges",
        "importance": 9,
        "pinned": True,
        "expires": "2027-01-31",
    }
    assert (
        present.edit_params(edit_form(orig_pinned="on", orig_expires="2027-01-31"))["pinned"]
        is False
    )
    assert present.edit_params(edit_form(orig_expires="2027-01-31"))["expires"] == ""
    assert present.edit_params(edit_form(move_path="topics/git.md", move_section="Merging"))[
        "move_to"
    ] == {"path": "topics/git.md", "section": "Merging"}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({}, "nothing changed"),
        ({"id": ""}, "no id"),
        ({"text": "  "}, "cannot be empty"),
        ({"importance": "11"}, "1 to 10"),
        ({"importance": "high"}, "1 to 10"),
        ({"expires": "next week"}, "a date"),
    ],
)
def test_edit_params_refuse_bad_forms(changes: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidParams, match=message):
        present.edit_params(edit_form(**changes))


def test_remember_params() -> None:
    assert present.remember_params({"text": " a  b ", "scope": "user", "type": ""}) == {
        "text": "a b",
        "scope": "user",
    }
    assert present.remember_params(
        {"text": "x", "scope": "agent", "agent_id": " bot ", "type": "task", "project": "p"}
    ) == {"text": "x", "scope": "agent", "type": "task", "agent_id": "bot"}
    with pytest.raises(InvalidParams):
        present.remember_params({"text": " "})


def test_timeline_counts_sessions_per_day_and_source() -> None:
    today = dt.date(2026, 11, 23)
    sessions = [
        {"date": "2026-11-23", "source": "claude-code"},
        {"date": "2026-11-23", "source": "ingest"},
        {"date": "2026-11-23", "source": "claude-code"},
        {"date": "2026-11-20", "source": "ingest"},
        {"date": "2026-09-01", "source": "ingest"},  # outside a 7-day window
        {"started_at": dt.datetime(2026, 11, 21, 9).timestamp(), "source": "chatgpt"},
    ]
    t = charts.session_timeline(sessions, days=7, today=today)
    assert (t.start, t.end, t.shown, t.outside) == (dt.date(2026, 11, 17), today, 5, 1)
    assert [(leg.source, leg.count) for leg in t.legend] == [
        ("claude-code", 2),
        ("ingest", 2),
        ("chatgpt", 1),
    ]
    svg = str(t.svg)
    assert svg.count("<rect") == 4  # 23rd: two sources stacked; 20th; 21st
    assert "2026-11-23: 2 sessions from claude-code" in svg
    assert "2026-11-21: 1 session from chatgpt" in svg
    assert "<script" not in svg and "style=" not in svg
    empty = charts.session_timeline([], days=30, today=today)
    assert empty.shown == 0 and "<rect" not in str(empty.svg)


def test_tier_bars_use_reported_quotas_or_the_nominal_split() -> None:
    result = {
        "budget": 2000,
        "sections": [
            {"tier": "user", "tokens": 500},
            {"tier": "user", "tokens": 300},
            {"tier": "conversation", "tokens": 100},
        ],
        "dropped": [{"tier": "user", "tokens": 90}, {"tier": "project", "tokens": 40}],
    }
    bars = charts.tier_bars(result, (600, 800, 600))
    assert [(b.tier, b.used, b.quota, b.sections, b.dropped) for b in bars] == [
        ("user", 800, 600, 2, 1),
        ("project", 0, 800, 0, 1),
        ("conversation", 100, 600, 1, 0),
    ]
    assert bars[0].over and not bars[2].over
    assert 'width="100.00"' in str(bars[0].svg())  # used fills the bar; the quota mark sits inside
    reported = charts.tier_bars({**result, "quotas": {"user": 900}}, (600, 800, 600))
    assert reported[0].quota == 900 and not reported[0].over and reported[1].quota == 800
