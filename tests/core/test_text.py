from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memd.core.text import (
    cjk_bigrams,
    cjk_count,
    estimate_tokens,
    fts_query,
    index_text,
    shorten,
    snippet,
    terms,
    tokens_for,
)


def test_cjk_runs_become_bigrams_and_latin_is_kept() -> None:
    assert cjk_bigrams("记忆系统") == ["记忆", "忆系", "系统"]
    assert cjk_bigrams("记") == ["记"]
    out = index_text("我想优化记忆 and Vue 组件").split()
    assert "记忆" in out and "优化" in out and "Vue" in out and "组件" in out


def test_fts_query_quotes_everything_and_phrases_cjk() -> None:
    assert fts_query('记忆 "drop" OR NOT x*') == '"记忆" OR "drop" OR "x"'
    assert fts_query("优化记忆") == '"优化 化记 记忆"'
    assert fts_query("the of") == '"the" OR "of"'  # only stopwords: keep them rather than nothing
    assert fts_query("   ") == ""
    assert fts_query("x y", mode="and") == '"x" AND "y"'


def test_terms_drop_stopwords_and_dedupe() -> None:
    assert terms("How should I test this Vue vue component?") == ["test", "vue", "component"]


def test_a_latin_word_ends_where_a_cjk_run_starts() -> None:
    """ "Go的错误处理" is the name Go and a Chinese run, as the index holds them (`index_text`),
    not one token nothing holds."""
    assert terms("webhook超时改成多少秒了") == ["webhook", "超时改成多少秒了"]
    assert fts_query("Traefik的证书") == '"traefik" OR "的证 证书"'


def test_a_question_of_function_words_about_a_name_keeps_the_name() -> None:
    """ "京都住在哪里" (where do I stay in Kyoto?): every bigram holds a function character (都 of
    京都 among them); the name is searched rather than nothing."""
    assert fts_query("京都住在哪里") == '"京都" OR "都住" OR "住在" OR "哪里"'
    # A run with content bigrams keeps only those, as before.
    assert (
        fts_query("我每天早上几点跑步")
        == '"每天" OR "天早" OR "早上" OR "上几" OR "几点" OR "点跑" OR "跑步"'
    )


def test_the_latin_words_of_a_chinese_query_are_names_not_stopwords() -> None:
    assert terms("Go 的错误处理习惯") == ["go", "的错误处理习惯"]
    assert terms("Go的错误处理习惯") == ["go", "的错误处理习惯"]
    # In an English query the same word is still a stopword, and so are CJK stopwords.
    assert terms("where do I go for 午饭") == ["午饭"]
    assert terms("Go 的 错误") == ["go", "错误"]


def test_a_stopword_written_as_a_name_is_a_term() -> None:
    """Decided by how the query writes the word, not by a list of names: with a capital
    inside a sentence, or quoted (as the bridge writes the names it carries)."""
    assert terms("how do I handle errors in Go?") == ["handle", "errors", "go"]
    assert terms('"go" sql query') == ["go", "sql", "query"]
    assert terms("which libraries do I use with Go and Just?") == ["libraries", "use", "go", "just"]
    # Not the first word of a sentence, not "I", not a word in lower case.
    assert terms("Go to the gym. Where do I go? Go home") == ["gym", "home"]
    assert terms("I just go") == []


@pytest.mark.parametrize(
    ("text", "at_least"),
    [("hello world " * 50, 600 / 4), ("记忆系统的性能" * 20, 140), ("mixed 中文 text " * 30, 0)],
)
def test_estimate_is_conservative(text: str, at_least: float) -> None:
    # ~4 chars/token for English and ~1 token per CJK char are typical; we must not go under.
    assert estimate_tokens(text) >= at_least
    assert estimate_tokens("") == 0


# Kana, CJK ideographs, hangul, compatibility ideographs, their neighbours, Latin, accents,
# punctuation and an emoji: every side of every range's edge.
_MIXED = st.text(
    st.sampled_from(list("ab é—’\n#\u303f\u3040\u30ff\u3100\u33ff\u3400\u4dbf\u4dc0"
                         "\u4e00记忆\u9fff\ua000\uabff\uac00\ud7af\ud7b0\uf8ff\uf900\ufaff\ufb00😀"))
)  # fmt: skip


def _is_cjk(ch: str) -> bool:
    return any(lo <= ch <= hi for lo, hi in (("\u3040", "\u30ff"), ("\u3400", "\u4dbf"),
               ("\u4e00", "\u9fff"), ("\uac00", "\ud7af"), ("\uf900", "\ufaff")))  # fmt: skip


@given(_MIXED, _MIXED)
def test_a_texts_cjk_count_and_estimate_are_its_characters_and_its_parts(a: str, b: str) -> None:
    # The estimate of a text made of parts is computed from the parts' counts (the context
    # block is estimated that way): the same figure as counting the whole text.
    assert cjk_count(a) == sum(map(_is_cjk, a))
    whole = a + b
    if whole:
        cjk = cjk_count(a) + cjk_count(b)
        assert tokens_for(cjk, len(whole)) == estimate_tokens(whole)
        assert estimate_tokens(whole) == math.ceil((cjk + (len(whole) - cjk) / 3.2) * 1.1)


def test_shorten_never_cuts_inside_a_word_or_character() -> None:
    s = shorten("The quick brown fox jumps over the lazy dog", 20)
    assert s.endswith("…") and len(s) <= 20 and "jum" not in s
    zh = shorten("我想优化记忆系统的性能非常重要", 8)
    assert len(zh) <= 8 and zh.endswith("…")
    assert shorten("short", 20) == "short"


def test_snippet_centres_on_the_first_match() -> None:
    text = "lorem " * 100 + "vitest is great " + "ipsum " * 100
    s = snippet(text, ["vitest"], width=60)
    assert "vitest" in s and len(s) <= 62
