"""The page's pure helpers: highlighting, return paths, form → socket params, charts."""

from __future__ import annotations

import datetime as dt

import pytest

from memd.api.messages import (
    UNSET,
    ChangeInfo,
    ContextResult,
    ContextSection,
    DroppedSection,
    JobRun,
    MoveTo,
    RecalledSession,
    RememberParams,
    TierQuotas,
    UndoParams,
    UndoResult,
    to_builtins,
)
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
    assert to_builtins(present.edit_params(edit_form(text="Use  rebase merges "))) == {
        "id": "m_1",
        "expect_text": "Use squash merges",
        "text": "Use rebase merges",
    }
    changed = present.edit_params(edit_form(importance="9", pinned="on", expires="2027-01-31"))
    assert to_builtins(changed) == {
        "id": "m_1",
        "expect_text": "Use squash merges",
        "importance": 9,
        "pinned": True,
        "expires": "2027-01-31",
    }
    assert (
        present.edit_params(edit_form(orig_pinned="on", orig_expires="2027-01-31")).pinned is False
    )
    assert present.edit_params(edit_form(orig_expires="2027-01-31")).expires == ""
    moved = present.edit_params(edit_form(move_path="topics/git.md", move_section="Merging"))
    assert moved.move_to == MoveTo(path="topics/git.md", section="Merging")


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
    assert present.remember_params({"text": " a  b ", "scope": "user", "type": ""}) == (
        RememberParams(text="a b", scope="user")
    )
    assert present.remember_params(
        {"text": "x", "scope": "agent", "agent_id": " bot ", "type": "task", "project": "p"}
    ) == RememberParams(text="x", scope="agent", type="task", agent_id="bot")
    with pytest.raises(InvalidParams):
        present.remember_params({"text": " "})


def session(source: str, date: str = "", started_at: float = 0.0) -> RecalledSession:
    return RecalledSession(session_id="s", title="", summary="", summary_kind="", source=source,
                           source_path="", agent_id="", project="", started_at=started_at,
                           updated_at=0.0, date=date, turn_count=1)  # fmt: skip


def context(
    sections: list[tuple[str, int]], dropped: list[tuple[str, int]], quotas: TierQuotas | None
) -> ContextResult:
    """A `context` answer with sections and dropped ones of (tier, tokens)."""
    return ContextResult(
        enabled=True, text="", tokens=0, budget=2000,
        sections=[ContextSection(tier=t, source="", title="", tokens=n, score=1.0, reason="")
                  for t, n in sections],
        dropped=[DroppedSection(tier=t, source="", title="", tokens=n, reason="")
                 for t, n in dropped],
        quotas=UNSET if quotas is None else quotas,
    )  # fmt: skip


def test_timeline_counts_sessions_per_day_and_source() -> None:
    today = dt.date(2026, 11, 23)
    sessions = [
        session("claude-code", "2026-11-23"),
        session("ingest", "2026-11-23"),
        session("claude-code", "2026-11-23"),
        session("ingest", "2026-11-20"),
        session("ingest", "2026-09-01"),  # outside a 7-day window
        session("chatgpt", started_at=dt.datetime(2026, 11, 21, 9).timestamp()),
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


def test_tier_bars_show_the_quotas_the_daemon_reported() -> None:
    result = context(
        [("user", 500), ("user", 300), ("conversation", 100)],
        [("user", 90), ("project", 40)],
        TierQuotas(user=587, project=783, conversation=587),
    )
    bars = charts.tier_bars(result)
    assert [(b.tier, b.used, b.quota, b.sections, b.dropped) for b in bars] == [
        ("user", 800, 587, 2, 1),
        ("project", 0, 783, 0, 1),
        ("conversation", 100, 587, 1, 0),
    ]
    assert bars[0].over and not bars[2].over
    svg = str(bars[0].svg())
    assert 'width="100.00"' in svg and 'aria-label="800 of 587 tokens"' in svg
    assert svg.count("<rect") == 3  # background, used, the quota mark


def test_tier_bars_of_a_daemon_without_quotas_show_what_was_used_only() -> None:
    """The page never makes quotas up: an answer without them gets bars without a quota."""
    bars = charts.tier_bars(context([("user", 50)], [], None))
    assert [(b.tier, b.used, b.quota) for b in bars] == [
        ("user", 50, None),
        ("project", 0, None),
        ("conversation", 0, None),
    ]
    assert not bars[0].over
    svg = str(bars[0].svg())
    assert 'aria-label="50 tokens"' in svg and svg.count("<rect") == 2


def run(job: str, **counts: int) -> JobRun:
    return JobRun(id=1, job=job, started=0.0, finished=0.0, seconds=0.0, outcome="success",
                  message="", counts=counts)  # fmt: skip


def test_a_run_can_be_undone_when_it_names_its_run_and_wrote_something() -> None:
    wrote = run("extract", run=1795449219554262, added=2, merged=0)
    assert present.undoable_run(wrote) == "1795449219554262"
    archived = run("archive", run=77, journal_days=0, items=3)
    assert present.undoable_run(archived) == "77"
    nothing = run("extract", run=5, added=0, sessions=3)
    assert present.undoable_run(nothing) == ""
    assert present.undoable_run(run("summarize", summaries=4)) == ""
    assert present.undoable_run(run("extract", run=5, added=True)) == ""
    assert present.undoable_run(run("x")) == ""


def change(detail: str = "", change_id: str = "3f9a0c1d2e4b", summary: str = "") -> ChangeInfo:
    return ChangeInfo(id=change_id, commit="", at=0.0, cause="forget", detail=detail,
                      summary=summary, author="memd", files=[])  # fmt: skip


def test_a_change_names_an_item_by_its_whole_id() -> None:
    c = change("id=m_1a2b always use vitest")
    assert present.names_item(c, "m_1a2b")
    assert not present.names_item(c, "m_1a")  # a prefix is another item
    assert not present.names_item(c, "")
    assert present.names_item(change("id=m_9; id=m_1a2b x"), "m_1a2b")
    assert not present.names_item(change("run 5: 2 added"), "m_1a2b")


def test_diff_lines_are_classified_for_colouring() -> None:
    diff = (
        "diff --git a/_core/notes.md b/_core/notes.md\n"
        "--- a/_core/notes.md\n"
        "+++ b/_core/notes.md\n"
        "@@ -1,3 +1,3 @@\n"
        " # Notes\n"
        "--- an item that starts with two dashes\n"
        "+++ and one added with pluses\n"
        "\\ No newline at end of file\n"
        "diff --git a/x.md b/x.md\n"
        "--- /dev/null\n"
    )
    kinds = [(d.kind, d.text[:4]) for d in present.diff_lines(diff)]
    assert kinds == [
        ("file", "diff"),
        ("file", "--- "),
        ("file", "+++ "),
        ("hunk", "@@ -"),
        ("ctx", " # N"),
        ("del", "--- "),  # inside a hunk a line is what its first character says
        ("add", "+++ "),
        ("note", "\\ No"),
        ("file", "diff"),
        ("file", "--- "),
    ]
    assert present.diff_lines("") == []


def test_undo_params_name_one_change_or_one_run() -> None:
    assert present.undo_params({"change": " 3f9a0c1d2e4b "}) == UndoParams(change="3f9a0c1d2e4b")
    assert present.undo_params({"run": "77"}) == UndoParams(run="77")
    for bad in ({}, {"change": "a", "run": "b"}, {"change": " "}):
        with pytest.raises(InvalidParams, match="undo what"):
            present.undo_params(bad)


def test_the_undo_message_says_what_was_undone_and_written() -> None:
    r = UndoResult(
        changes=[change(summary="forget: id=m_1 x")], files=[], dry_run=False,
        written=["_core/notes.md"], warnings=["a secret stayed redacted"],
    )  # fmt: skip
    assert present.undo_message(r) == (
        "Undid 3f9a0c1d2e4b (forget: id=m_1 x): rewrote _core/notes.md."
        " Note: a secret stayed redacted"
    )
    nothing = UndoResult(changes=[], files=[], warnings=[], dry_run=False, written=[])
    assert present.undo_message(nothing).endswith("no file needed a change.")
