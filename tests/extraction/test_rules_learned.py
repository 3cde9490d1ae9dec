"""The learned layer behind the readers (memd/extraction/rules/learned.py): the clause gate keeps
a lasting statement of the user's that no reader read, the classifier types it, and a later turn
that says a change replaces the earlier memory it is most like. Questions, hypotheses, someone
else's facts, quotes and requests of the same shapes are not kept; a later turn that says no
change, or a memory of another type, replaces nothing.

The messages are made up for these tests, not taken from any extraction set.
"""

from __future__ import annotations

import pytest

from memd.core.models import ExtractedMemory
from memd.extraction.rules import learned
from memd.extraction.rules.generic import apply_generic
from memd.extraction.rules.learned import (
    clause_type,
    cut,
    kept,
    model,
    statement_score,
)
from tests.extraction.session import extract

# Statements of the user's no reader reads, each with the type the classifier gives it.
STATEMENTS = [
    ("My allotment has six raised beds and a greenhouse.", "six raised beds", "personal"),
    ("Living near the coast means I surf most mornings before work.", "surf", "personal"),
    ("家里两只橘猫天天掉毛，烦死了。", "橘猫", "personal"),
    ("我老家的院子里种了一棵枇杷树。", "枇杷树", "personal"),
]
# The same shapes, not the user's lasting statement: nothing is kept.
NOT_STATEMENTS = [
    "My sister's allotment has six raised beds and a greenhouse.",
    "If my allotment had six raised beds, how many tomatoes could I grow?",
    '"My allotment has six raised beds" is what the ad says.',
    "Could you tell me how to build six raised beds and a greenhouse?",
    "I think my allotment has six raised beds and a greenhouse.",
    "Write a short bio: a retired sailor whose allotment has six raised beds.",
    "Our CI is broken again.",
    "We moved the standup to Thursday.",
    "我妹妹家里两只橘猫天天掉毛，烦死了。",
    "如果家里两只橘猫天天掉毛，该怎么办？",
    "听说家里两只橘猫的人天天在吸毛。",
    "你老家的院子里种了一棵枇杷树吗？",
]


@pytest.mark.parametrize(("text", "words", "type_"), STATEMENTS)
def test_the_gate_keeps_a_statement_no_reader_reads(text: str, words: str, type_: str) -> None:
    memories = [m for m in extract(text) if words in m.content]
    assert [m.type for m in memories] == [type_], extract(text)


@pytest.mark.parametrize(("text", "words", "type_"), STATEMENTS)
def test_without_the_model_no_reader_keeps_them(
    text: str, words: str, type_: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the gate kept above is its own: the readers alone keep nothing of it."""
    monkeypatch.setattr(learned, "model", lambda: None)
    assert not [m for m in extract(text) if words in m.content and m.type == type_]


@pytest.mark.parametrize("text", NOT_STATEMENTS)
def test_the_gate_keeps_nothing_of_the_same_shapes_not_stated(text: str) -> None:
    assert extract(text) == []


def test_the_model_ships_and_scores_a_statement_above_its_question() -> None:
    m = model()
    assert m is not None and 0 < m.threshold < 1 and m.gate and set(m.types) == set(learned.TYPES)
    clause = "I volunteer at the food bank on Saturdays"  # read by a reader too
    assert statement_score(clause) >= m.threshold
    assert statement_score(clause, question=True) < statement_score(clause)


@pytest.mark.parametrize(
    ("clause", "type_"),
    [
        ("I prefer dark themes in every editor", "preference"),
        ("I write most of my scripts in Rust", "skill"),
        ("We decided to keep the monolith for another year", "decision"),
        ("My side project is a Discord bot for my chess club", "project"),
        ("家里两只橘猫天天掉毛", "personal"),
        ("我习惯用深色主题", "preference"),
    ],
)
def test_the_classifier_types_a_clause(clause: str, type_: str) -> None:
    assert clause_type(clause) == type_


@pytest.mark.parametrize(
    "clause",
    [
        "I don't use Ruby anymore",  # a negation
        "my nephew is nine and loves Scratch",  # someone else
        "I'd use Postgres here",  # a hypothesis
        "put this into Spanish",  # a request
        "I agree",  # too short to state a fact
        "我不用 Ruby 了",
        "我侄子九岁了",
        "觉得 Postgres 更好",
        "帮我翻译一下",
    ],
)
def test_shapes_never_kept_whatever_their_score(clause: str) -> None:
    assert not kept(clause)


def test_clauses_are_cut_at_commas_and_new_subjects() -> None:
    assert cut("Honestly, I'm renovating a terrace house and I'm tired.") == [
        "I'm renovating a terrace house",
        "I'm tired",
    ]
    assert cut("家里两只橘猫天天掉毛，烦死了。") == ["家里两只橘猫天天掉毛", "烦死了"]


# -- generic supersession -------------------------------------------------------------------------
def _mem(content: str, type_: str = "personal", subject: str = "") -> ExtractedMemory:
    return ExtractedMemory(content, type_, 5, ("t0",), subject)


@pytest.mark.parametrize(
    ("old", "turn", "new"),
    [
        ("User: I'm renovating a 1920s terrace house this year",
         "Update: I'm renovating a 1930s semi this year now.",
         "User: I'm renovating a 1930s semi this year now"),
        ("用户在备考雅思", "雅思考完了，现在在备考托福。", "用户：现在在备考托福"),
        # the turn leaves the old value by name, the new memory says it in other words
        ("User's routine: on-call at Zendesk every other week",
         "I took the Intercom offer, so the Zendesk pager is not my problem now.",
         "User: I took the Intercom offer"),
    ],
)  # fmt: skip
def test_a_change_replaces_the_earlier_memory_most_like_it(old: str, turn: str, new: str) -> None:
    out = [_mem(old), _mem("User: something else entirely", "preference"), _mem(new)]
    apply_generic(turn, out, 2)
    assert out[0].subject and out[2].subject == out[0].subject, out
    assert not out[1].subject


def test_extraction_links_a_change_no_reader_links() -> None:
    memories = extract(
        "我老家的院子里种了一棵枇杷树。",
        "现在老家的院子里种了一棵石榴树。",
    )
    [old] = [m for m in memories if "枇杷树" in m.content]
    [new] = [m for m in memories if "石榴树" in m.content]
    assert old.subject and new.subject == old.subject


@pytest.mark.parametrize(
    ("old", "turn", "new"),
    [
        # no change said
        ("User: I'm renovating a 1920s terrace house this year",
         "I'm renovating a 1930s semi this year as well.",
         "User: I'm renovating a 1930s semi this year as well"),
        ("用户在备考雅思", "我在备考托福。", "用户在备考托福"),
    ],
)  # fmt: skip
def test_no_change_said_replaces_nothing(old: str, turn: str, new: str) -> None:
    out = [_mem(old), _mem(new)]
    apply_generic(turn, out, 1)
    assert not out[0].subject and not out[1].subject


def test_a_memory_of_another_type_is_not_replaced() -> None:
    out = [
        _mem("User needs to renovate the terrace house by May", "task"),
        _mem("User: I'm renovating a 1930s semi now"),
    ]
    apply_generic("Now I'm renovating a 1930s semi.", out, 1)
    assert not out[0].subject and not out[1].subject


def test_a_change_a_reader_keyed_is_left_as_it_is() -> None:
    out = [
        _mem("User uses Jest for testing", "skill", "tool:testing"),
        _mem("User: I write my tests in plain files now", "skill"),
        _mem("User switched to Vitest from Jest", "skill", "tool:testing"),
    ]
    apply_generic("Switched to Vitest now, I write my tests in plain files.", out, 1)
    assert [m.subject for m in out] == ["tool:testing", "", "tool:testing"]


def test_without_the_model_nothing_is_linked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(learned, "model", lambda: None)
    out = [_mem("用户在备考雅思"), _mem("用户：现在在备考托福")]
    apply_generic("雅思考完了，现在在备考托福。", out, 1)
    assert not out[0].subject and not out[1].subject


@pytest.mark.parametrize(
    ("old", "turn", "ended", "new"),
    [
        ("User: I play cello in an orchestra on Thursday nights",
         "I quit the orchestra and sold the cello. Thursday nights are pottery class now.",
         "User: I quit the orchestra and sold the cello",
         "User: Thursday nights are pottery class now"),
        ("用户手上的测试机是一台荣耀 Magic6", "荣耀那台摔坏了，现在手上的测试机是一台 OPPO。",
         "用户：荣耀那台摔坏了", "用户：现在手上的测试机是一台 OPPO"),
    ],
)  # fmt: skip
def test_a_memory_that_says_what_ended_is_no_new_value(
    old: str, turn: str, ended: str, new: str
) -> None:
    out = [_mem(old), _mem(ended), _mem(new)]
    apply_generic(turn, out, 1)
    assert out[0].subject and out[2].subject == out[0].subject, out
    assert not out[1].subject


@pytest.mark.parametrize(
    "turn",
    [
        "My brother has ten raised beds and a polytunnel now.",
        "Should my allotment have ten raised beds now?",
        "If my allotment had ten raised beds now, would it be too much?",
        "我同事家的院子里现在种了一棵石榴树。",
        "如果老家的院子里现在种一棵石榴树呢？",
    ],
)
def test_someone_elses_change_a_question_or_a_hypothesis_replaces_nothing(turn: str) -> None:
    out = [_mem("User's allotment has six raised beds"), _mem("User: ten raised beds now")]
    apply_generic(turn, out, 1)
    assert not out[0].subject and not out[1].subject


def test_a_keyed_fact_and_a_pair_of_the_readers_are_theirs() -> None:
    keyed = [_mem("User lives in Leeds", subject="city"), _mem("User: ten raised beds now")]
    apply_generic("Now I have ten raised beds.", keyed, 1)
    assert [m.subject for m in keyed] == ["city", ""]
    readers = [_mem("User's allotment has six raised beds"), _mem("User has ten raised beds now")]
    apply_generic("Now my allotment has ten raised beds.", readers, 1, gated=set())
    assert not readers[0].subject and not readers[1].subject
    apply_generic("Now my allotment has ten raised beds.", readers, 1, gated={readers[1].content})
    assert readers[0].subject and readers[1].subject == readers[0].subject
