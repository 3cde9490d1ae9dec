"""How `search`'s page reads a query's words in a hit: a word and its inflections are one word
(a bridged "connect" is held by a heading "Connection pooling", "database" by "databases")."""

from __future__ import annotations

from memd.conversations.match_words import query_words, stem, text_words
from memd.conversations.ranking import Query


def test_a_word_and_the_noun_made_of_it_are_one_word() -> None:
    assert stem("connect") == stem("connection") == stem("connections") == stem("connected")
    assert stem("migrate") == stem("migration") == stem("migrations")


def test_a_final_e_does_not_part_a_word_from_its_plural() -> None:
    assert stem("database") == stem("databases")
    assert stem("note") == stem("notes")
    assert stem("change") == stem("changes")
    assert stem("cache") == stem("caches")
    assert stem("fix") == stem("fixes")
    assert stem("retry") == stem("retries") == stem("retried")


def test_a_short_word_and_its_past_are_one_word() -> None:
    """ "a cat named Miso" holds the "name" of "what is the cat's name?"."""
    assert stem("named") == stem("name") == stem("names")
    assert stem("hoped") == stem("hope") and stem("noted") == stem("note")
    assert stem("fixed") == stem("fix") and stem("added") == stem("add")


def test_every_stem_is_the_start_of_its_word_but_for_a_final_y() -> None:
    for w in (
        "connection",
        "database",
        "migrations",
        "changes",
        "running",
        "notes",
        "fixes",
        "named",
        "hoped",
    ):
        assert w.startswith(stem(w)), w


def test_a_heading_naming_the_query_word_in_another_form_matches_it() -> None:
    q = Query.of("database connection", None)
    assert q.match(text_words("Connection pooling for every database")) == 1.0
    assert set(query_words("databases connect")) <= text_words("a database connection")


def test_an_identifier_s_words_are_parted_by_underscores_in_a_text_as_in_a_query() -> None:
    """ "statement_cache_size 要设成几" holds "statement", "cach" and "size": so does a note
    that writes the identifier, which full text finds by them."""
    note = text_words("asyncpg behind PgBouncer needs statement_cache_size=0")
    assert set(query_words("statement_cache_size 要设成几")) & note == {"statement", "cach", "size"}
    assert Query.of("is pg_dump enough?", None).match(text_words("a nightly pg_dump")) == 2 / 3
    assert text_words("K3S_URL and don't") == {"k3s", "url", "and", "don't"}
