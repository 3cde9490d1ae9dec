"""The parts of `search`'s page that are worked out apart or late, for speed, give what the whole
did: a section's head words read as its file's and its heading's, and a snippet made only for
the hits shown (on the page or as a source)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memd.conversations import ranking
from memd.conversations.ranking import Candidate, Found, Item, Query, rank
from memd.core.models import Hit
from memd.core.text import file_words, snippet, terms
from memd.memory.repo import SectionRow
from memd.memory.search import FusedSection

# Letters of several scripts and the marks the word patterns treat apart (', ’, -, digits,
# the Greek capital sigma whose lower case depends on what follows it).
_TEXT = st.text(
    alphabet=st.sampled_from(list("abcXYZ ΣσΑ'’-_/.0123 数据库迁移的了 İ\t")), max_size=30
)


@settings(max_examples=300, deadline=None)
@given(title=_TEXT, rel=_TEXT, owner=_TEXT, heading=_TEXT)
def test_head_words_read_apart_are_the_words_of_the_whole(
    title: str, rel: str, owner: str, heading: str
) -> None:
    whole = ranking.text_words(f"{file_words(title, rel, owner)} {heading}")
    assert ranking._file_head(title, rel, owner) | ranking._heading_words(heading) == whole


def _row(i: int, kind: str, text: str, heading: str = "Notes") -> SectionRow:
    path = f"/m/{'journal' if kind == 'journal' else 'topics'}/f{i}.md"
    rel = path.removeprefix("/m/")
    return SectionRow(i, path, rel, kind, "", f"f{i}", f"F{i}", None, heading, 0, 1,
                      1 + text.count("\n"), text, 10, -1.0 - i)  # fmt: skip


def test_shown_sections_and_sources_have_the_snippet_and_items_of_their_match() -> None:
    """A curated note and the journal line repeating it: the note is shown with the journal
    line as its source; each has the snippet of its matching item, as made before late."""
    long_tail = " and ".join(f"padding word {n}" for n in range(30))
    note = _row(1, "topic", f"- always use vitest for unit tests, {long_tail}\n- tabs please")
    journal = _row(2, "journal", f"- **Q:** always use vitest for unit tests, {long_tail}")
    query = "vitest unit tests"
    found = Found(Query.of(query, None),
                  [FusedSection(note, 2.0, (), ""), FusedSection(journal, 1.0, (), "")],
                  terms(query), [], [])  # fmt: skip
    hits = rank(found, 10)
    assert [h.path for h in hits] == [note.path]
    first = ranking.section_items(note.text, note.start_line)[0]
    assert hits[0].snippet == snippet(first.text, terms(query))
    assert hits[0].items == [first.text]
    [source] = hits[0].sources
    entry = ranking.section_items(journal.text, journal.start_line)[0]
    assert (source.kind, source.snippet) == ("journal", snippet(entry.text, terms(query)))
    assert source.snippet.startswith("Q: always use vitest")


def test_only_a_sections_snippet_and_items_are_made_late() -> None:
    hit = Hit(kind="turn", path="p", heading="s", start_line=1, end_line=1, score=0.0,
              snippet="made with the turn")  # fmt: skip
    c = Candidate(hit, ranking.TURN, 0, 1.0, 1.0, frozenset())
    shown = c.shown([])
    assert (shown.snippet, shown.items, shown.score) == ("made with the turn", [], 0.0)
    item = Item(1, "x", {})
    section = Candidate(
        Hit(kind="section", path="p", heading="h", start_line=1, end_line=2, score=0.0,
            snippet=""), ranking.CURATED, 0, 1.0, 1.0, frozenset(), [item],
        excerpt="an excerpt about vitest", terms=["vitest"],
    )  # fmt: skip
    shown = section.shown([])
    assert (shown.snippet, shown.items, shown.score) == ("an excerpt about vitest", ["x"], 0.0)


def _turn(turn_id: str, role: str, text: str, score: float, match: float) -> Candidate:
    hit = Hit(kind="turn", path="log", heading="", start_line=1, end_line=1, score=0.0,
              snippet=text, text=text, session_id="s1", turn_id=turn_id, role=role)  # fmt: skip
    c = Candidate(hit, ranking.TURN, 0, score, match, frozenset())
    c.score = score
    return c


def test_a_journal_line_folds_into_the_turn_of_its_exchange_that_matches_the_query() -> None:
    """For "git rerere", the journal line of the exchange (question "how do I avoid it?", answer
    naming rerere) is folded into the answer, which holds the query's words, even when the
    question is placed above it (found by its vector); before, into the first placed."""
    ask = _turn("u2", "user", "以后怎么避免？", 0.05, 0.0)
    answer = _turn("a2", "assistant", "rebase 之前先打一个备份分支；或者打开 rerere。", 0.04, 0.5)
    entry = Item(3, "02:05 **Q:** 以后怎么避免？ **A:** rebase 之前先打一个备份分支；或者打开 rerere。",
                 {"turn": "u2"})  # fmt: skip
    journal = Candidate(
        Hit(kind="section", path="/m/journal/2026-11-02.md", heading="Git rescue · s1",
            start_line=3, end_line=3, score=0.0, snippet="", file_kind="journal"),
        ranking.JOURNAL, 0, 1.0, 0.5, frozenset(), [entry], [entry],
    )  # fmt: skip
    journal.score = 0.3
    page = ranking.collapse([ask, answer, journal])
    assert [c.hit.turn_id for c in page] == ["a2", "u2"]
    assert page[0].sources == [journal] and page[0].score == 0.3
