"""On `search`'s page a hit's match with a Chinese query bridged into English counts the
query's words it holds, not the dictionary senses: holding one sense of a word is holding the
word, and a word of five senses does not weigh five times one of one sense."""

from __future__ import annotations

from memd.conversations.ranking import Query, text_words
from memd.semantic.bridge import Bridged
from memd.semantic.recipe import FTS, FTS_BRIDGED, Plan

# "Docker 镜像太大怎么办" (the Docker image is too big: what to do?): 镜像 mirror/image,
# 太大 too big (four senses' words), and the name Docker kept as typed.
WORDS = {"镜像": ("mirror", "image"), "太大": ("highest", "greatest", "big", "large")}
TERMS = ("Docker", *(t for ts in WORDS.values() for t in ts))
PLAN = Plan(
    "Docker 镜像太大怎么办",
    "cjk",
    Bridged("cjk", "latin", TERMS, tuple(WORDS.items())),
    {FTS: "Docker 镜像太大怎么办", FTS_BRIDGED: " ".join(TERMS)},
    "Docker 镜像太大怎么办",
)
Q = Query.of(PLAN.query, PLAN)


def test_a_text_holding_one_sense_of_each_of_two_words_holds_two_of_three() -> None:
    held = text_words("The image is also 1.2 GB in the Docker registry.")
    assert abs(Q.match(held) - 2 / 3) < 1e-9


def test_a_text_holding_only_the_name_holds_one_of_three() -> None:
    held = text_words("pytest with a real Postgres in Docker; no mocks of the database.")
    assert abs(Q.match(held) - 1 / 3) < 1e-9


def test_a_query_without_a_bridge_matches_by_its_own_words() -> None:
    q = Query.of("docker image size", None)
    assert abs(q.match(text_words("the docker image")) - 2 / 3) < 1e-9


def test_a_name_that_is_a_stopword_is_one_of_the_query_s_words() -> None:
    """ "Go 的数据库" (Go's database): the name Go is held by a Go note as the database is;
    dropped as the English stopword "go", the note held one word of one."""
    words = {"数据库": ("database",)}
    bridged = Bridged("cjk", "latin", ("Go", "database"), tuple(words.items()))
    plan = Plan("Go 的数据库", "cjk", bridged, {FTS: "Go 的数据库", FTS_BRIDGED: bridged.text},
                "Go 的数据库")  # fmt: skip
    q = Query.of(plan.query, plan)
    assert abs(q.match(text_words("Go: pgx as the database driver")) - 1.0) < 1e-9
    assert abs(q.match(text_words("Postgres is the database")) - 1 / 2) < 1e-9


def test_a_bridged_hit_holding_one_of_several_words_needs_its_vector_close() -> None:
    """Found only through the bridge, by one sense of one of the query's words ("image" of
    镜像) and no other: shown when its vector is `ONE_SENSE_SD` above unrelated pairs."""
    from memd.semantic import recipe

    mu, sd = recipe.COSINE_STATS[("cjk", "latin")]
    near, far = mu + (recipe.ONE_SENSE_SD + 0.5) * sd, mu + (recipe.ONE_SENSE_SD - 0.5) * sd
    one = "Astro's <Image /> converts images to WebP"
    assert Q.shown((FTS_BRIDGED, "vector"), near, "latin", False, text=one)
    assert not Q.shown((FTS_BRIDGED, "vector"), far, "latin", False, text=one)
    # Holding two of the three words, or found by the query as typed, it stands as before.
    assert Q.shown((FTS_BRIDGED, "vector"), far, "latin", False, text=one + " in Docker")
    assert Q.shown((FTS, FTS_BRIDGED), far, "latin", False, text=one)
