"""What a turn's fused score gains after fusion: a named speaker, its neighbours, for a
question asking when, saying when, and a date the question names
(`memd.conversations.turn_search._after_fusion`); and the bridged list's share before it."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from memd.conversations.dates import asks_when, says_when
from memd.conversations.turn_search import (
    AfterFusion,
    TurnHit,
    TurnLists,
    _after_fusion,
    bridged_share,
    fuse_turns,
)
from memd.semantic.bridge import Bridged
from memd.semantic.fusion import Ranked
from memd.semantic.recipe import FTS, FTS_BRIDGED, VECTOR, Plan, Weights
from memd.semantic.service import SemanticRecall


def _hit(rowid: int, text: str, score: float, session: str = "s1", speaker: str = "") -> TurnHit:
    return TurnHit(rowid, session, f"t{rowid}", "user", text, 0.0, score, "jsonl", "/x.jsonl",
                   rowid, "", speaker)  # fmt: skip


@pytest.mark.parametrize(
    ("query", "asks"),
    [
        ("When did Caroline go to the LGBTQ support group?", True),
        ("When was the pottery class?", True),
        ("Melanie是什么时候报名陶艺课的？", True),
        ("他哪一年搬家的", True),
        ("What did Melanie paint?", False),
        ("whenever I run the tests they hang", False),
        ("数据库迁移怎么做", False),
    ],
)
def test_a_question_asking_when_is_told_apart(query: str, asks: bool) -> None:
    assert asks_when(query) is asks


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("I went to a support group yesterday and it was so powerful.", True),
        ("Last Fri I finally took my kids to a pottery workshop.", True),
        ("I went to a conference two days ago.", True),
        ("We moved there in May.", True),
        ("上周我去了陶艺课", True),
        ("三天前我们去露营了", True),
        ("Thanks, Melanie! Painting helps me explore my identity.", False),
        ("我很喜欢画画", False),
    ],
)
def test_a_turn_saying_when_is_told_apart(text: str, says: bool) -> None:
    assert says_when(text) is says


def test_a_turn_saying_when_goes_first_for_a_question_asking_when() -> None:
    hits = [_hit(1, "I love the pottery class, it is so calming.", 1.0),
            _hit(5, "I signed up for a pottery class yesterday.", 1.0)]  # fmt: skip
    after = AfterFusion()
    assert after.when > 0
    got = _after_fusion(hits, "When did Melanie sign up for the pottery class?", after)
    assert [h.rowid for h in got] == [5, 1]
    # A question not asking when keeps the fused order (ties by row).
    got = _after_fusion(hits, "What class did Melanie sign up for?", after)
    assert [h.rowid for h in got] == [1, 5]


def test_a_turn_next_to_a_strong_hit_gains_part_of_its_score() -> None:
    # Row 11 is the reply to row 10 (a strong hit); row 30 scores the same as row 11 alone.
    hits = [_hit(10, "Did you go anywhere this summer?", 2.0),
            _hit(30, "A beach trip sounds fun.", 0.5, session="s2"),
            _hit(11, "We went camping at the beach.", 0.5)]  # fmt: skip
    after = AfterFusion(neighbour=0.2, session=0.0)
    got = _after_fusion(hits, "Where did they go camping?", after)
    assert [h.rowid for h in got] == [10, 11, 30]
    assert got[1].score == pytest.approx(0.5 + after.neighbour * 2.0)
    # A turn of another session with the next row id is no neighbour.
    hits = [_hit(10, "Did you go anywhere this summer?", 2.0),
            _hit(11, "We went camping at the beach.", 0.5, session="s2")]  # fmt: skip
    got = _after_fusion(hits, "Where did they go camping?", after)
    assert got[1].score == pytest.approx(0.5)


def test_a_named_speaker_still_counts_after_fusion() -> None:
    hits = [_hit(1, "I paint lakes.", 1.0, speaker="Caroline"),
            _hit(9, "I paint horses.", 1.0, session="s2", speaker="Melanie")]  # fmt: skip
    after = AfterFusion(neighbour=0.0, when=0.0, session=0.0)
    got = _after_fusion(hits, "What has Melanie painted?", after)
    assert [h.rowid for h in got] == [9, 1]
    assert got[0].score == pytest.approx(1.0 * (1 + AfterFusion().speaker))


def test_a_turn_of_the_date_a_question_names_gains_after_fusion() -> None:
    # A Chinese question's own words find no English turn, so its date is seen only here.
    may = dt.datetime(2023, 5, 23, 14, 0).timestamp()
    hits = [_hit(1, "I went to a job fair.", 1.0),
            dataclasses.replace(_hit(7, "I just got accepted for an internship!", 0.8), ts=may)]  # fmt: skip
    after = AfterFusion(speaker=0.0, when=0.0, date=1.0, session=0.0)
    got = _after_fusion(hits, "Gina在2023年5月23日被录取获得了什么样的职业经历？", after, now=may)
    assert [h.rowid for h in got] == [7, 1]
    assert got[0].score == pytest.approx(0.8 * 2)
    # A question naming no date keeps the fused order.
    got = _after_fusion(hits, "Gina被录取获得了什么样的职业经历？", after, now=may)
    assert [h.rowid for h in got] == [1, 7]


def test_the_bridged_lists_weight_shrinks_with_the_words_the_bridge_translated() -> None:
    def plan_of(n: int) -> Plan:
        words = tuple((f"词{i}", (f"w{i}", f"v{i}")) for i in range(n))
        b = Bridged("cjk", "latin", tuple(t for _, ts in words for t in ts), words)
        return Plan("问题", "cjk", b, {"fts": "问题", "fts:bridged": b.text}, "问题")

    assert bridged_share(plan_of(1), 0.5) == 1.0
    assert bridged_share(plan_of(4), 0.5) == pytest.approx(0.5)
    assert bridged_share(plan_of(4), 1.0) == pytest.approx(0.25)
    assert bridged_share(plan_of(4), 0.0) == 1.0
    assert bridged_share(Plan("q", "latin", None, {"fts": "q"}, "q"), 1.0) == 1.0


def test_a_turn_of_the_session_most_of_the_fused_score_is_in_goes_first() -> None:
    # Turns 1 and 2 of one session answer together; turn 9, alone in its session, scored as
    # high as turn 2 by fusion.
    hits = [_hit(1, "We adopted a puppy last spring.", 1.0),
            _hit(9, "Puppies need a lot of sleep.", 0.8, session="s2"),
            _hit(2, "She is a golden retriever named Bailey.", 0.8)]  # fmt: skip
    after = AfterFusion()
    assert after.session > 0
    got = _after_fusion(hits, "What dog did they adopt?", after)
    assert [h.rowid for h in got] == [1, 2, 9]
    s1 = 1.0 + 0.8
    assert got[1].score == pytest.approx(0.8 * (1 + after.session))
    assert got[2].score == pytest.approx(0.8 * (1 + after.session * 0.8 / s1))


def test_a_date_the_question_names_counts_after_fusion_by_default() -> None:
    may = dt.datetime(2023, 5, 23, 14, 0).timestamp()
    hits = [_hit(1, "I went to a job fair.", 1.0),
            dataclasses.replace(_hit(7, "I got an internship!", 0.8, session="s2"), ts=may)]  # fmt: skip
    got = _after_fusion(hits, "What happened on 23 May 2023?", AfterFusion(), now=may)
    assert [h.rowid for h in got] == [7, 1]


def test_over_turns_the_vector_list_counts_as_much_as_the_question_as_typed() -> None:
    # Full text ranks turn 1 far above turn 2; the vectors rank turn 2 first.
    hits = {i: _hit(i, f"turn {i}", 0.0) for i in (1, 2, 3)}
    lists = {FTS: Ranked([1, 2, 3], [2.0, 1.2, 1.0]), VECTOR: Ranked([2, 3, 1], [0.95, 0.9, 0.8])}
    t = TurnLists(hits, lists, dict.fromkeys(hits, "latin"), {2: 0.95, 3: 0.9, 1: 0.8})
    p = Plan("which turn", "latin", None, {FTS: "which turn"}, "which turn")
    sem = SemanticRecall()
    assert [h.rowid for h in fuse_turns(p, t, sem, limit=3, gate=False)] == [2, 1, 3]
    # At the sections' weight (half the full-text list's) full text's order would stand.
    half = fuse_turns(p, t, sem, limit=3, gate=False, weights=Weights(vector=0.5))
    assert [h.rowid for h in half] == [1, 2, 3]


def test_over_turns_a_chinese_questions_vectors_outweigh_its_bridge() -> None:
    # A Chinese question over English turns: only the bridge and the vectors can find them.
    hits = {i: _hit(i, f"turn {i}", 0.0) for i in (1, 2, 3)}
    lists = {FTS_BRIDGED: Ranked([1, 2, 3], [2.0, 1.2, 1.0]),
             VECTOR: Ranked([2, 3, 1], [0.95, 0.9, 0.8])}  # fmt: skip
    t = TurnLists(hits, lists, dict.fromkeys(hits, "latin"), {2: 0.95, 3: 0.9, 1: 0.8})
    b = Bridged("cjk", "latin", ("turn",), (("哪个", ("turn",)),))
    p = Plan("哪个", "cjk", b, {FTS: "哪个", FTS_BRIDGED: b.text}, "哪个")
    sem = SemanticRecall()
    assert [h.rowid for h in fuse_turns(p, t, sem, limit=3, gate=False)][0] == 2
    before = fuse_turns(p, t, sem, limit=3, gate=False, weights=Weights(cross_vector=0.75))
    assert [h.rowid for h in before][0] == 1
