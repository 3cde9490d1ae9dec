"""The feedback search over turns (`memd.conversations.turn_search.feedback_terms`,
`with_feedback`): a second full-text pass with the words of the best turns of the first
fusion brings in evidence that shares no word with the question. A real index file."""

from __future__ import annotations

from memd.conversations.ingest import write_turns
from memd.conversations.turn_search import (
    TurnHit,
    feedback_terms,
    fuse_turns,
    turn_lists,
    with_feedback,
)
from memd.db import Store
from memd.semantic.bridge import Bridged
from memd.semantic.recipe import FTS_FEEDBACK, Plan, Weights, plan
from memd.semantic.service import SemanticRecall
from tests.conversations.helpers import turn

T0 = 1_750_000_000.0


def _hit(rowid: int, text: str, speaker: str = "") -> TurnHit:
    return TurnHit(rowid, "s1", f"t{rowid}", "user", text, 0.0, 1.0, "jsonl", "/x.jsonl", rowid,
                   "", speaker)  # fmt: skip


def test_feedback_terms_are_the_querys_then_the_best_turns_shared_words() -> None:
    hits = [_hit(1, "The kids loved the dinosaur exhibit at the museum.", "Melanie"),
            _hit(2, "Melanie, the dinosaur bones were huge! We saw 3 of them.", "Caroline"),
            _hit(3, "The museum shop sold fossils.", "Melanie"),
            _hit(4, "We painted a sunset together.", "Melanie")]  # fmt: skip
    words = feedback_terms(plan("What do Melanie's kids like?"), hits, turns=3, most=4)
    # The query's own terms first; then words held by two of the best three turns before
    # words held by one, ties by the turn they first appear in. Never a speaker's name, a
    # number, a word shorter than three letters, or a word of a turn below the best three.
    assert words[:2] == ["melanie's", "kids"]
    assert words[2:] == ["dinosaur", "museum", "loved", "exhibit"]
    assert "sunset" not in words and "melanie" not in words and "caroline" not in words


def test_a_chinese_questions_feedback_keeps_only_the_bridged_words() -> None:
    # The best turns are English: the question's Chinese words cannot match them, its
    # bridge's English words can.
    b = Bridged("cjk", "latin", ("pottery", "ceramics"), (("陶艺", ("pottery", "ceramics")),))
    p = Plan("她的陶艺课", "cjk", b, {"fts": "她的陶艺课", "fts:bridged": b.text}, "她的陶艺课")
    words = feedback_terms(p, [_hit(1, "I signed up for a pottery class yesterday.")])
    assert "陶艺课" not in words
    assert words[:2] == ["pottery", "ceramics"]
    assert "signed" in words and "class" in words


def test_the_feedback_list_finds_evidence_sharing_no_word_with_the_question(
    store: Store,
) -> None:
    turns = [
        turn("s1", "a", "user", "My kids went crazy for the dinosaur exhibit.", T0, speaker="Mel"),
        turn("s3", "b", "user", "I bought new brushes for my painting class.", T0 + 5,
             speaker="Mel"),
        turn("s2", "c", "user", "Those fossil skeletons and the dinosaur bones were thrilling"
             " for all of them.", T0 + 500, speaker="Mel"),
        turn("s4", "d", "user", "The weather was lovely on the beach.", T0 + 505, speaker="Ann"),
    ]  # fmt: skip
    store.w.run(lambda c: write_turns(c, turns))
    conn, sem = store.read(), SemanticRecall()
    p = plan("What do Mel's kids like?")
    t = turn_lists(conn, p, sem)
    first = fuse_turns(p, t, sem, limit=10)
    assert [h.turn_id for h in first] == ["a"]  # the only turn holding a word of the question
    fb = with_feedback(conn, t, feedback_terms(p, first))
    assert FTS_FEEDBACK in fb.lists
    on = fuse_turns(p, fb, sem, limit=10, weights=Weights(feedback=1.0))
    assert [h.turn_id for h in on] == ["a", "c"]
    assert on[1].found_by == (FTS_FEEDBACK,)
    # At weight 0 the feedback list counts for nothing: the first fusion's answer.
    off = fuse_turns(p, fb, sem, limit=10, weights=Weights(feedback=0.0))
    assert [h.turn_id for h in off] == ["a"]
    # No words (no first hit): the lists as they were.
    assert with_feedback(conn, t, []) is t
