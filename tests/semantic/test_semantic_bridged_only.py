"""A hit full text found only through the query's bridge is shown unless its vector says it is
further from the query than an unrelated text (`memd.semantic.recipe.BRIDGED_ONLY_SD`)."""

from __future__ import annotations

from memd.semantic import recipe
from memd.semantic.recipe import FTS, FTS_BRIDGED, VECTOR, plan
from memd.semantic.service import SemanticRecall

# "Which day is my girlfriend's birthday?": its bridge carries 天 as "day" and "sky", and an
# English turn that "grows all day" matches one of them.
QUESTION = plan("我女朋友的生日是哪天")
MEAN, SD = recipe.COSINE_STATS[("cjk", "latin")]


def test_a_hit_found_only_through_the_bridge_and_unlike_the_query_is_not_shown() -> None:
    far = MEAN - 1.0 * SD  # less like the question than the average unrelated text
    assert not SemanticRecall.kept(QUESTION, (FTS_BRIDGED, VECTOR), far, "latin")
    assert not SemanticRecall.kept(QUESTION, (FTS_BRIDGED,), far, "latin")


def test_a_hit_found_through_the_bridge_and_close_enough_is_shown() -> None:
    near = MEAN + 1.0 * SD
    assert SemanticRecall.kept(QUESTION, (FTS_BRIDGED, VECTOR), near, "latin")
    # Its cosine unknown (not among the nearest vectors): full text's word stands.
    assert SemanticRecall.kept(QUESTION, (FTS_BRIDGED,), None, "latin")


def test_a_hit_the_query_as_typed_found_is_shown_whatever_its_cosine() -> None:
    far = MEAN - 3.0 * SD
    assert SemanticRecall.kept(QUESTION, (FTS, FTS_BRIDGED, VECTOR), far, "latin")
    assert SemanticRecall.kept(QUESTION, (FTS,), far, "latin")


def test_a_hit_found_by_its_vector_alone_still_needs_the_floor() -> None:
    floor = recipe.VECTOR_SCALE[("cjk", "latin")][0]
    assert not SemanticRecall.kept(QUESTION, (VECTOR,), floor - 0.001, "latin")
    assert SemanticRecall.kept(QUESTION, (VECTOR,), floor + 0.001, "latin")
