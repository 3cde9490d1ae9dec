"""The words of a query and of a hit as `search`'s page compares them
(`memd.conversations.ranking`): light English stems and the bigrams of CJK runs."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from memd.core.text import cjk_bigrams, expand_cjk, terms

# A word is letters and digits (an apostrophe inside): "_" parts words, as it does in a query's
# terms (`memd.core.text.terms`) and in full text's tokens ("pg_dump" is "pg" and "dump").
_LATIN = re.compile(r"[^\W\d_][^\W_]*(?:['’][^\W_]*)*|\d+(?:[.,:/]\d+)*", re.UNICODE)
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
_SUFFIXES = ("ingly", "edly", "ions", "ion", "ing", "ed", "es", "s", "ly")
_ES_AFTER = ("s", "x", "z", "ch", "sh")
# A stem of three letters, consonant-vowel-consonant, that lost the final "e" of its word.
_SHORT = re.compile(r"[^aeiou][aeiou][^aeiouwxy]")


# Cached: a page of hits asks for the same few thousand words hundreds of thousands of times
# (every section's items, every turn, every pair `collapse` compares).
@functools.lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A light English stem, enough to see "retries", "retry" and "retried" as one word, and
    "connection", "connect"; "database", "databases"; "migrate", "migration" (a final "e" goes,
    as full text's Porter stemmer drops it: every stem is the start of the word it came from,
    which `spelled` relies on)."""
    w = word.lower().replace("’", "'").removesuffix("'s")
    for suf in _SUFFIXES:
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            if suf == "es" and not w[:-2].endswith(_ES_AFTER):
                suf = "s"  # "notes" -> "note", as "fixes" -> "fix"
            w = w[: -len(suf)]
            if suf in ("ing", "ed", "ingly", "edly") and len(w) > 3 and w[-1] == w[-2]:
                w = w[:-1]  # "running" -> "run"
            elif suf == "ed" and _SHORT.fullmatch(w):
                w += "e"  # "named" -> "name" (still the start of the word), as "name"
            break
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]  # "database" -> "databas", as "databases"
    return w[:-1] + "i" if w.endswith("y") and len(w) > 3 else w


def query_words(text: str) -> list[str]:
    """The words of a query that a hit can hold: stems of its content words, and the content
    bigrams of its Chinese (Japanese, Korean) runs."""
    out: dict[str, None] = {}
    if text.isascii():  # no CJK run: every term is Latin words (and `expand_cjk` keeps them)
        for t in terms(text):
            for w in (t,) if t.isalpha() else _LATIN.findall(t):
                out.setdefault(stem(w), None)
        return list(out)
    for t in expand_cjk(terms(text)):
        if _CJK.fullmatch(t):
            for g in cjk_bigrams(t):
                out.setdefault(g, None)
        else:
            for w in _LATIN.findall(t):
                out.setdefault(stem(w), None)
    return list(out)


def text_words(text: str) -> frozenset[str]:
    """Every word of a text as `query_words` spells them (stems and CJK bigrams)."""
    low = text.lower()
    words = {stem(w) for w in _LATIN.findall(low)}
    if not low.isascii():  # most texts hold no CJK run: no second pass
        for run in _CJK.findall(low):
            words.update(cjk_bigrams(run))
    return frozenset(words)


def spelled(word: str) -> str:
    """What a text spells wherever `text_words` finds `word` in it: a stem is the start of the
    word it came from (lower-cased, ’ as '), but for the "i" a final "y" becomes; a CJK bigram
    is itself."""
    return word[:-1] if word.endswith("i") else word


def coverage(words: Sequence[str], held: frozenset[str]) -> float:
    """The share of `words` that `held` holds."""
    if not words:
        return 0.0
    return sum(map(held.__contains__, words)) / len(words)
