"""The retrieval recipe: which rankings a query asks for, and the cross-script rule of the fusion."""

from __future__ import annotations

import pytest

from memd.core.text import estimate_tokens
from memd.semantic.bridge import Dictionary
from memd.semantic.fusion import Ranked, Script
from memd.semantic.passages import Turn
from memd.semantic.recipe import (
    FTS,
    FTS_BRIDGED,
    QUERY_EMBED_TOKENS,
    VECTOR,
    Weights,
    fuse,
    passage_texts,
    plan,
)

CEDICT = """\
測試 测试 [ce4 shi4] /to test (machinery etc)/a test/
框架 框架 [kuang4 jia4] /(construction) frame/(fig.) framework/
數據庫 数据库 [shu4 ju4 ku4] /database/
"""


@pytest.fixture(scope="module")
def small() -> Dictionary:
    return Dictionary.from_lines(CEDICT.splitlines())


@pytest.mark.parametrize(
    ("query", "script", "full_text"),
    [
        ("测试框架", "cjk", {FTS: "测试框架", FTS_BRIDGED: "test frame framework"}),
        (
            "Which test framework?",
            "latin",
            {FTS: "Which test framework?", FTS_BRIDGED: "测试 框架"},
        ),
        # Nothing the dictionary translates: only the query as typed.
        ("hello there", "latin", {FTS: "hello there"}),
        ("？", "", {FTS: "？"}),
        ("Привет", "other", {FTS: "Привет"}),
    ],
)
def test_plan(small: Dictionary, query: str, script: str, full_text: dict[str, str]) -> None:
    p = plan(query, small)
    assert p.script == script
    assert dict(p.full_text) == full_text
    assert p.embed == query
    assert (p.bridged is None) == (FTS_BRIDGED not in full_text)


def test_plan_without_dictionary() -> None:
    p = plan("测试框架")
    assert dict(p.full_text) == {FTS: "测试框架"} and p.bridged is None


@pytest.mark.parametrize(
    "prompt",
    [
        "Here is the stack trace from the failing deploy, what went wrong? " * 12,
        "我们上周讨论过数据库迁移的方案，请帮我回忆一下当时的结论和原因。" * 6,
    ],
)
def test_a_long_prompt_is_embedded_by_its_start_and_searched_whole(prompt: str) -> None:
    p = plan(prompt)
    assert p.full_text[FTS] == prompt
    assert estimate_tokens(p.embed) <= QUERY_EMBED_TOKENS
    assert estimate_tokens(p.embed) > QUERY_EMBED_TOKENS * 0.8
    assert prompt.startswith(p.embed)
    if prompt.isascii():
        assert prompt[len(p.embed)] in " ,.;:"  # cut between words


def test_a_short_query_is_embedded_as_typed() -> None:
    q = "where does my sister live?\n(in Berlin, I think)"
    assert plan(q).embed == q


def test_passages_are_the_turn_after_the_one_before() -> None:
    turns = [Turn("a", "Did you finish the race?"), Turn("b", "Yes, in 52 minutes.")]
    assert passage_texts(turns) == [
        "a: Did you finish the race?",
        "a: Did you finish the race?\nb: Yes, in 52 minutes.",
    ]


W = Weights(vector=0.5, bridged=1.0, cross_vector=0.5)
SCRIPTS: dict[str, Script] = {"en1": "latin", "en2": "latin", "zh1": "cjk", "zh2": "cjk"}


@pytest.mark.parametrize(
    ("query", "lists", "order", "found_by"),
    [
        # A Chinese question over a mixed memory: its own words count for the Chinese
        # documents only (en1 matched by a Latin name is not trusted), its English bridge for
        # the English ones only.
        # Lists without scores are scored by position (first 1, last 0): en2 0 + 0.5 × 1,
        # zh1 1 × 0 + 0.5 × 0.
        ("测试框架", {FTS: ["en1", "zh1"], FTS_BRIDGED: ["zh2", "en2"], VECTOR: ["en2", "zh1"]},
         ["en2", "zh1"], {"zh1": (FTS, VECTOR), "en2": (FTS_BRIDGED, VECTOR)}),
        # An English question: the query as typed for English documents, the bridge for Chinese.
        ("test framework", {FTS: ["en1", "zh1"], FTS_BRIDGED: ["zh2"], VECTOR: ["en1"]},
         ["en1", "zh2"], {"en1": (FTS, VECTOR), "zh2": (FTS_BRIDGED,)}),
        # Without vectors (semantic recall off) the full-text order is kept.
        ("test framework", {FTS: ["en2", "en1"]}, ["en2", "en1"], {"en2": (FTS,), "en1": (FTS,)}),
        # Vectors alone (no full-text match) still rank, in their order.
        ("test framework", {FTS: [], VECTOR: ["zh1", "en1"]}, ["zh1", "en1"],
         {"en1": (VECTOR,), "zh1": (VECTOR,)}),
    ],
)  # fmt: skip
def test_fuse_cross_script_rule(
    small: Dictionary,
    query: str,
    lists: dict[str, list[str]],
    order: list[str],
    found_by: dict[str, tuple[str, ...]],
) -> None:
    p = plan(query, small)
    fused = fuse(p, {n: Ranked(keys) for n, keys in lists.items()}, SCRIPTS, weights=W)
    assert fused.keys() == order
    assert {h.key: h.found_by for h in fused.hits} == found_by


def test_unknown_scripts_are_never_crossed(small: Dictionary) -> None:
    p = plan("测试框架", small)
    fused = fuse(p, {FTS: Ranked(["x"]), FTS_BRIDGED: Ranked(["y"])}, {}, weights=W)
    assert fused.keys() == ["x", "y"]


def test_fuse_uses_the_scores(small: Dictionary) -> None:
    # memd's scores put en2 just under en1, the vectors put it second of three: together
    # en2 (8.9 / 9 + 0.5 × 0.5) passes en1 (1 + 0.5 × 0) and en3 (0 + 0.5 × 1).
    p = plan("test framework", small)
    lists = {
        FTS: Ranked(["en1", "en2", "en3"], [10.0, 9.9, 1.0]),
        VECTOR: Ranked(["en3", "en2", "en1"], [0.9, 0.85, 0.8]),
    }
    scripts: dict[str, Script] = {"en1": "latin", "en2": "latin", "en3": "latin"}
    fused = fuse(p, lists, scripts, weights=W)
    assert fused.keys() == ["en2", "en1", "en3"]
    assert [round(h.score, 4) for h in fused.hits] == [1.2389, 1.0, 0.5]


def test_a_query_with_no_bridge_counts_as_typed_for_every_script(small: Dictionary) -> None:
    # "git rerere": nothing the dictionary translates, so no list searches the Chinese reply
    # that says "rerere"; the query as typed is the only full-text evidence there is for it.
    p = plan("git rerere", small)
    assert p.bridged is None
    fused = fuse(p, {FTS: Ranked(["zh1", "en1"]), VECTOR: Ranked(["en2"])}, SCRIPTS, weights=W)
    assert {h.key: h.found_by for h in fused.hits}["zh1"] == (FTS,)


def test_chinese_words_written_in_an_english_document_count(small: Dictionary) -> None:
    # "测试框架" in an English document (a name in brackets, a quote) is matched by the
    # question's own Chinese words, not by a Latin name: the list counts there. An English
    # document its own words found without holding them (a Latin name) stays left out.
    texts = {"en1": "Testing: the team's framework (测试框架)", "en2": "pytest"}
    p = plan("测试框架", small)
    lists = {FTS: Ranked(["en1", "en2", "zh1"]), FTS_BRIDGED: Ranked(["zh2"])}
    fused = fuse(p, lists, SCRIPTS, weights=W, text_of=lambda k: texts.get(k, ""))
    found_by = {h.key: h.found_by for h in fused.hits}
    assert found_by["en1"] == (FTS,)
    assert "en2" not in found_by
    # Without the texts, the rule as before.
    plain = fuse(p, lists, SCRIPTS, weights=W)
    assert "en1" not in {h.key for h in plain.hits}
