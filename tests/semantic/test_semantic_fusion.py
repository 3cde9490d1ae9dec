"""Fusion rules, table-driven. Pure functions: no numpy, no model."""

from __future__ import annotations

from typing import Any

import pytest

from memd.semantic.fusion import (
    FusionParams,
    common_terms_only,
    dominant_script,
    fuse,
)


@pytest.mark.parametrize(
    ("text", "script"),
    [
        ("When did Caroline go to the LGBTQ support group?", "latin"),
        ("Caroline是什么时候去参加LGBTQ互助小组的？", "cjk"),
        ("我喜欢用 Vue 写前端", "cjk"),
        ("I like 记忆 systems", "latin"),
        ("Café au lait, s'il vous plaît", "latin"),
        ("Привет, как дела?", "other"),
        ("東京で寿司を食べた", "cjk"),
        ("", ""),
        ("42 — 7 + 3", ""),
    ],
)
def test_dominant_script(text: str, script: str) -> None:
    assert dominant_script(text) == script


@pytest.mark.parametrize(
    ("shares", "threshold", "common"),
    [
        ([0.5, 0.45], 0.2, True),    # only the two speakers' names matched
        ([0.5, 0.01], 0.2, False),   # a rare term matched too
        ([0.5, 0.0], 0.2, True),     # a term that matched nothing does not count
        ([], 0.2, False),            # nothing matched: not "common only"
        ([0.0, 0.0], 0.2, False),
        ([0.2], 0.2, True),          # the threshold is inclusive
    ],
)  # fmt: skip
def test_common_terms_only(shares: list[float], threshold: float, common: bool) -> None:
    assert common_terms_only(shares, threshold) is common


P = FusionParams(k=1.0, depth=10)


@pytest.mark.parametrize(
    ("name", "fts", "vector", "kwargs", "order", "provenance", "rules"),
    [
        ("plain rrf: found by both beats found by one",
         ["a", "b", "c"], ["c", "d"], {},
         ["c", "a", "b", "d"], {"a": "fts", "b": "fts", "c": "both", "d": "vector"}, ()),
        ("no vectors (extra off): the full-text order, unchanged",
         ["a", "b", "c"], [], {},
         ["a", "b", "c"], {"a": "fts", "b": "fts", "c": "fts"}, ()),
        ("no full-text hits: the vector order",
         [], ["x", "y"], {},
         ["x", "y"], {"x": "vector", "y": "vector"}, ()),
        ("equal scores: the better rank in either list first, then the full-text rank",
         ["a", "b"], ["x", "y"], {},
         ["a", "x", "b", "y"], {"a": "fts", "x": "vector", "b": "fts", "y": "vector"}, ()),
        ("common terms only: trust the vector list",
         ["a", "b", "c"], ["c", "b"], {"term_shares": [0.6, 0.5]},
         ["c", "b"], {"c": "both", "b": "both"}, ("common-terms",)),
        ("a rare term matched too: plain rrf",
         ["a", "b", "c"], ["c", "b"], {"term_shares": [0.6, 0.01]},
         ["c", "b", "a"], {"a": "fts", "b": "both", "c": "both"}, ()),
        ("cross-script documents lose their full-text weight",
         ["en1", "zh1"], ["zh2", "en2"],
         {"query_script": "cjk", "doc_scripts": {"en1": "latin", "zh1": "cjk"}},
         ["zh2", "zh1", "en2"], {"zh1": "fts", "zh2": "vector", "en2": "vector"}, ("cross-script",)),
        ("unknown script (not in doc_scripts) is never cross-script",
         ["a"], [], {"query_script": "cjk", "doc_scripts": {}},
         ["a"], {"a": "fts"}, ()),
        ("duplicates in a list count once, at their best rank",
         ["a", "a", "b"], ["b", "b"], {},
         ["b", "a"], {"a": "fts", "b": "both"}, ()),
    ],
)  # fmt: skip
def test_fuse_rules(
    name: str,
    fts: list[str],
    vector: list[str],
    kwargs: dict[str, Any],
    order: list[str],
    provenance: dict[str, str],
    rules: tuple[str, ...],
) -> None:
    got = fuse(fts, vector, params=P, **kwargs)
    assert got.keys() == order, name
    assert {h.key: h.provenance for h in got.hits} == provenance, name
    assert got.rules == rules, name


def test_partial_weights_blend_instead_of_dropping() -> None:
    params = FusionParams(k=1.0, cross_script_fts_weight=0.5, common_fts_weight=0.5)
    got = fuse(["en1"], ["zh1"], query_script="cjk", doc_scripts={"en1": "latin"}, params=params)
    assert got.keys() == ["zh1", "en1"]
    assert got.hits[1].score == pytest.approx(0.5 / 2)
    both = fuse(["a"], [], term_shares=[0.9], query_script="cjk", doc_scripts={"a": "latin"},
                params=params)  # fmt: skip
    assert both.hits[0].score == pytest.approx(0.25 / 2)  # the two rules multiply
    assert both.rules == ("common-terms", "cross-script")


def test_ranks_scores_depth_and_limit() -> None:
    got = fuse(["a", "b", "c", "d"], ["d", "e"], params=FusionParams(k=60.0, depth=3), limit=3)
    assert [(h.key, h.fts_rank, h.vector_rank) for h in got.hits] == [
        ("a", 1, None), ("d", None, 1), ("b", 2, None),
    ]  # fmt: skip
    assert got.hits[0].score == pytest.approx(1 / 61)
    # depth 3: "d" at full-text rank 4 is not read, so it counts as found by vectors only
    assert got.hits[1].provenance == "vector"


def test_weights_shift_the_balance() -> None:
    fts, vec = ["a", "b"], ["b", "a"]
    assert fuse(fts, vec, params=FusionParams(vector_weight=2.0)).keys() == ["b", "a"]
    assert fuse(fts, vec, params=FusionParams(fts_weight=2.0)).keys() == ["a", "b"]


# -- fuse_lists: any number of named rankings ------------------------------------------------
from memd.semantic.fusion import Ranked, fuse_lists, neighbour_smooth  # noqa: E402


@pytest.mark.parametrize(
    ("lists", "kwargs", "order"),
    [
        # RRF, equal weights: a key both lists ranked beats either list's top alone; equal
        # scores go to the key first reached (a before c, b before d).
        ({"memd": Ranked(["a", "b", "c"]), "vec": Ranked(["c", "d", "a"])}, {"k": 1.0}, ["a", "c", "b", "d"]),
        # A small weight on the vectors keeps memd's order at the top.
        ({"memd": Ranked(["a", "b", "c"]), "vec": Ranked(["c", "d", "a"])},
         {"k": 1.0, "weights": {"vec": 0.1}}, ["a", "b", "c", "d"]),
        # Weight 0: the list ranks nothing, and keys only it found are dropped.
        ({"memd": Ranked(["a", "b"]), "vec": Ranked(["c", "a"])}, {"weights": {"vec": 0.0}}, ["a", "b"]),
        # Depth: entries past it are not read.
        ({"memd": Ranked(["a", "b", "c"]), "vec": Ranked(["d", "e", "c"])}, {"k": 1.0, "depth": 2},
         ["a", "d", "b", "e"]),
        # Three lists; ties go to the better rank, then to the earlier list.
        ({"memd": Ranked(["a"]), "vec": Ranked(["b"]), "vec2": Ranked(["c"])}, {}, ["a", "b", "c"]),
        # Score fusion: scores min-max normalised per list (b: 0.9875 + 0.5), then summed.
        ({"memd": Ranked(["a", "b", "c"], [9.0, 8.9, 1.0]), "vec": Ranked(["c", "b", "a"], [0.9, 0.8, 0.7])},
         {"method": "score"}, ["b", "a", "c"]),
        # ... where RRF would put b last but one: its ranks are 2 and 2.
        ({"memd": Ranked(["a", "b", "c"], [9.0, 8.9, 1.0]), "vec": Ranked(["c", "b", "a"], [0.9, 0.8, 0.7])},
         {"k": 1.0}, ["a", "c", "b"]),
        # Score fusion without scores: positions stand in for them (a 1 + 0, c 0 + 1, b 0.5 + 0).
        ({"memd": Ranked(["a", "b", "c"]), "vec": Ranked(["c", "b"], [])}, {"method": "score"}, ["a", "c", "b"]),
        # One empty list: the other's order, unchanged.
        ({"memd": Ranked(["a", "b"]), "vec": Ranked([])}, {}, ["a", "b"]),
        ({}, {}, []),
    ],
)  # fmt: skip
def test_fuse_lists_order(
    lists: dict[str, Ranked[str]], kwargs: dict[str, Any], order: list[str]
) -> None:
    assert fuse_lists(lists, **kwargs).keys() == order


def test_fuse_lists_provenance_and_limit() -> None:
    fused = fuse_lists({"memd": Ranked(["a", "b", "a"]), "vec": Ranked(["b", "c"])}, k=1.0, limit=2)
    assert [h.key for h in fused.hits] == ["b", "a"]
    b, a = fused.hits
    assert b.ranks == {"memd": 2, "vec": 1} and b.found_by == ("memd", "vec")
    assert a.ranks == {"memd": 1} and a.found_by == ("memd",)  # a repeated key counts once
    assert a.score == pytest.approx(1 / 2)
    assert b.score == pytest.approx(1 / 3 + 1 / 2)


@pytest.mark.parametrize(
    ("scores", "groups", "weights", "expected"),
    [
        # Scores are taken above the median (here 1.0) first.
        ([1.0, 3.0, 1.0], [1, 1, 1], (0.5,), [1.0, 2.0, 1.0]),
        # The turn after a strong one rises; across a session boundary nothing moves.
        ([1.0, 3.0, 1.0, 1.0], [1, 1, 1, 2], (0.5,), [1.0, 2.0, 1.0, 0.0]),
        # Distance 2 with its own weight; the better of the two neighbours counts.
        ([0.0, 4.0, 0.0, 2.0, 0.0], [1] * 5, (0.5, 0.25), [2.0, 4.5, 2.0, 3.0, 1.0]),
        ([], [], (0.5,), []),
    ],
)
def test_neighbour_smooth(
    scores: list[float], groups: list[int], weights: tuple[float, ...], expected: list[float]
) -> None:
    assert neighbour_smooth(scores, groups, weights) == pytest.approx(expected)
