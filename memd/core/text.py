"""Text helpers shared by indexing and retrieval: CJK bigrams, FTS5 queries, token estimates.

Why CJK bigrams: SQLite's unicode61 tokenizer turns a run of Chinese/Japanese/Korean characters
into one token, so ``记忆`` inside ``我想优化记忆系统的性能`` is not findable, and the trigram
tokenizer ignores terms shorter than three characters. Like Lucene's CJK analyzer we index each
CJK run as overlapping character bigrams (``优化 化记 记忆 忆系 …``) and turn a CJK query term into
the phrase of its bigrams, which matches exactly the texts that contain the term.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping

_CJK_RANGES = (
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3400-\u4dbf"  # CJK ext A
    "\u4e00-\u9fff"  # CJK unified
    "\uac00-\ud7af"  # hangul syllables
    "\uf900-\ufaff"  # compatibility ideographs
)
# The `<!-- memd key=value … -->` comment that carries a list item's metadata; group 1 is its
# body (`memd.memory.parse.parse_meta` reads the pairs).
META_COMMENT = re.compile(r"<!--[ \t]*memd[: ]?(.*?)-->")
# The same comment closing a line, with the blanks around it: what is cut to show the line.
META_COMMENT_AT_END = re.compile(r"[ \t]*" + META_COMMENT.pattern + r"[ \t]*$")
_CJK_RUN = re.compile(f"[{_CJK_RANGES}]+")
_NOT_CJK_RUN = re.compile(f"[^{_CJK_RANGES}]+")


def item_dates(meta: Mapping[str, str]) -> str:
    """The dates of a memory item as a person reads them: "said 2026-03-02, added 2026-03-04"
    when it was extracted later than its turn was said (`at` the turn's day, `added` the
    run's), else "added <at>"; "" without dates (a line written by hand)."""
    at, added = meta.get("at", ""), meta.get("added", "")
    if at and added and added != at:
        return f"said {at}, added {added}"
    return f"added {at or added}" if at or added else ""


_CJK_CHAR = re.compile(f"[{_CJK_RANGES}]")
# A word ends where a CJK run starts ("Go的错误" is "Go" and "的错误"), as in the index.
_WORD = re.compile(
    rf"[{_CJK_RANGES}]+|[^\W_{_CJK_RANGES}]+(?:['’-][^\W_{_CJK_RANGES}]+)*", re.UNICODE
)

STOPWORDS = frozenset(
    """
    a an and are as at be been but by can could did do does doing for from had has have how
    i if in into is it its me my of on or our she so that the their them then there these
    they this to was we were what when where which who whom why will with would you your he
    him his her hers about after all also am any because before being both each few more
    most no nor not only other out over own same should some such than too under until up
    very just don't didn't let's us tell know remember anything something thing things like
    get got go going went said say 的 了 吗 呢 吧 啊 是 我 你 他 她 它 们 在 有 和 与 就 都 也 还 这 那 么 什么 怎么
    """.split()
)


def cjk_bigrams(run: str) -> list[str]:
    """Overlapping bigrams of one CJK run; a single character stays as is."""
    if len(run) <= 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def index_text(text: str) -> str:
    """Text as stored in the FTS table: CJK runs replaced by their space-separated bigrams."""
    if text.isascii():  # most texts: no regex pass at all
        return text
    return _CJK_RUN.sub(lambda m: " " + " ".join(cjk_bigrams(m.group())) + " ", text)


def file_words(title: str, rel: str, owner: str = "") -> str:
    """What names a file, as every section of it is indexed and matched by: the words of its
    title, of its path inside its root without the extension (``projects/blog/context.md``:
    "projects blog context") and its owner (a project's slug, for the files of the project's
    own folder), each word once: a name in both the title and the path counts as one match,
    not two."""
    path = rel.replace("\\", "/")
    name = path.rsplit("/", 1)[-1]
    if "." in name.lstrip("."):
        path = path[: path.rfind(".")]
    words: dict[str, str] = {}
    for w in (*title.split(), *path.replace("/", " ").split(), owner):
        if w:
            words.setdefault(w.lower(), w)
    return " ".join(words.values())


def terms(query: str, *, drop_stopwords: bool = True) -> list[str]:
    """Search terms of a free-text query (words and CJK runs), lower-cased, de-duplicated.

    A stopword the query writes as a name (`names`: "Go" in "errors in Go", any Latin word of
    "Go 的错误处理") is kept; the others are dropped."""
    seen: dict[str, None] = {}
    toks = _WORD.findall(query)
    kept = names(query, toks) if drop_stopwords else frozenset()
    for tok in toks:
        low = tok.lower()
        if drop_stopwords and low in STOPWORDS and low not in kept:
            continue
        seen.setdefault(low, None)
    return list(seen)


# A word the query quotes, and one written with a capital inside a sentence (not after its
# start or a mark that ends one).
_QUOTED = re.compile(r"[\"“]([^\"“”]+)[\"”]")
_CAPITALISED_INSIDE = re.compile(r"(?<![.!?:;\"“(]\s)(?<=\s)[A-Z][a-z]*\b")


def names(query: str, toks: list[str] | None = None) -> frozenset[str]:
    """The stopwords `query` writes as names, lower-cased, decided by how it writes them and
    by its other words, never by a list of names: in a query written mostly in Chinese
    (Japanese, Korean) every Latin word ("Go 的错误处理"); in any query a word it quotes
    ('"go" and "just"', as `memd.semantic.bridge` writes the names it carries) and a word
    written with a capital inside a sentence ("errors in Go"; not "I", not a sentence's first
    word)."""
    if toks is None:
        toks = _WORD.findall(query)
    if not query.isascii() and _mostly_cjk(toks):
        out = {t.lower() for t in toks if t.isascii()}
    else:
        out = {w.lower() for q in _QUOTED.findall(query) for w in _WORD.findall(q)}
    out.update(w.lower() for w in _CAPITALISED_INSIDE.findall(query) if w != "I")
    return frozenset(w for w in out if w in STOPWORDS)


def _mostly_cjk(toks: list[str]) -> bool:
    """Whether a query's tokens (`_WORD`'s) hold more CJK characters than other words (a CJK
    character carries about what a Latin word does)."""
    cjk = sum(len(t) for t in toks if _CJK_CHAR.match(t))
    return cjk > sum(1 for t in toks if not _CJK_CHAR.match(t))


def fts_term(term: str) -> str:
    """One term as an FTS5 expression: a quoted token, or the phrase of a CJK run's bigrams."""
    if _CJK_RUN.fullmatch(term):
        return '"' + " ".join(cjk_bigrams(term)) + '"'
    # Hyphenated compounds ("sqlite-with-wal") are searched as the phrase of their parts.
    parts = [p for p in re.split(r"[-'’]", term) if p] if "-" in term else [term]
    return '"' + " ".join(p.replace('"', '""') for p in parts) + '"'


# Characters that make a bigram a function word rather than content ("的", "如何", "怎么" …).
_CJK_FUNCTION_CHARS = frozenset(
    "的了吗呢吧啊是我你他她它们在有和与就都也还这那么什如何怎么哪谁个把被给让从对"
)
# A CJK run longer than this is a sentence, not a word: search its content bigrams instead.
CJK_PHRASE_MAX = 4


def expand_cjk(ts: list[str]) -> list[str]:
    """Replace sentence-like CJK runs by their content bigrams; keep words and short runs.

    A content bigram holds no function character; a run with none (a name holding one, "京都",
    asked about in function words: "京都住在哪里") keeps the bigrams that are not two function
    characters, rather than nothing."""
    out: dict[str, None] = {}
    for t in ts:
        if _CJK_RUN.fullmatch(t) and len(t) > CJK_PHRASE_MAX:
            grams = cjk_bigrams(t)
            content = [bg for bg in grams if not (set(bg) & _CJK_FUNCTION_CHARS)]
            for bg in content or [bg for bg in grams if not set(bg) <= _CJK_FUNCTION_CHARS]:
                out.setdefault(bg, None)
        else:
            out.setdefault(t, None)
    return list(out)


def fts_query(query: str, *, mode: str = "or") -> str:
    """Build a safe FTS5 MATCH expression from free text (user input never reaches FTS syntax).

    ``mode="and"`` requires every term; ``"or"`` ranks by how many terms match (bm25 does the
    weighting). Returns "" when the query has no searchable terms.
    """
    ts = expand_cjk(terms(query) or terms(query, drop_stopwords=False))
    if not ts:
        return ""
    joiner = " AND " if mode == "and" else " OR "
    return joiner.join(fts_term(t) for t in ts)


def estimate_tokens(text: str) -> int:
    """A conservative offline token estimate (no tokenizer download, no network).

    CJK characters count ~1 token each (real tokenizers give 0.6-1.0); other text counts one token
    per 3.2 characters (English averages ~4), and 10% is added on top. Never underestimates by much,
    so a budget computed with it is safe.
    """
    if not text:
        return 0
    return tokens_for(cjk_count(text), len(text))


def cjk_count(text: str) -> int:
    """How many CJK characters `text` holds (what `estimate_tokens` counts one token each)."""
    # What is left once every run of other characters is taken out: one pass building one
    # string, 2.5x faster than listing the CJK runs on the sections of a mixed tree.
    return 0 if text.isascii() else len(_NOT_CJK_RUN.sub("", text))


def tokens_for(cjk: int, length: int) -> int:
    """`estimate_tokens` of a non-empty text of `length` characters, `cjk` of them CJK: a text
    made of parts is estimated from its parts' counts, without counting it again."""
    return math.ceil((cjk * 1.0 + (length - cjk) / 3.2) * 1.1)


def shorten(text: str, limit: int, ellipsis: str = "…") -> str:
    """Cut `text` to at most `limit` characters at a word boundary (or between CJK characters)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: max(0, limit - len(ellipsis))]
    # Back up to a space unless the cut point sits inside CJK text, where any boundary is fine.
    if cut and not _CJK_CHAR.match(cut[-1]):
        space = cut.rfind(" ")
        if space > limit // 2:
            cut = cut[:space]
    return cut.rstrip(" ,.;:，。；：") + ellipsis


# A character one of the patterns below needs: without any, the text has no Markdown to take out.
_MD_MARKS = re.compile(r"[*_`\[#>\-+0-9]")
_MD_IMAGE_OR_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")
_MD_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_MD_EMPHASIS = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])")
_MD_CODE = re.compile(r"`+([^`\n]+?)`+")
_MD_LINE_START = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]+|>[ \t]?|[-*+][ \t]+(?:\[[ xX]\][ \t]+)?|\d+[.)][ \t]+)", re.M
)


def plain_text(text: str) -> str:
    """Markdown as a person reads it: no emphasis markers (``**Q:**`` is ``Q:``), code without
    its backticks, a link as its text, no heading marks, list markers or quote marks at line
    starts, no memd metadata comments. Line breaks are kept."""
    out = META_COMMENT.sub("", text)
    if not _MD_MARKS.search(out):
        return out
    out = _MD_IMAGE_OR_LINK.sub(r"\1", out)
    out = _MD_CODE.sub(r"\1", out)
    out = _MD_STRONG.sub(r"\2", out)
    out = _MD_EMPHASIS.sub(r"\1", out)
    return _MD_LINE_START.sub("", out)


def snippet(text: str, query_terms: list[str], width: int = 160) -> str:
    """A one-line excerpt of `text` around the first query term found (case-insensitive), as
    plain text (`plain_text`), cut between words: "…" marks where it was cut.

    memd's metadata comments (``<!-- memd id=… -->``) are left out: they are for memd, not
    for the person reading the hit.
    """
    flat = " ".join(plain_text(text).split())
    if len(flat) <= width:
        return flat
    low = flat.lower()
    found = [p for p in (low.find(t.lower()) for t in query_terms if t) if p != -1]
    pos = min(found, default=-1)
    if pos <= width // 3:
        return shorten(flat, width)
    start = _word_start(flat, pos - width // 3, pos)
    return "…" + shorten(flat[start:], width - 1)


def _word_start(flat: str, start: int, limit: int) -> int:
    """`start` moved to the start of a word: forward to the next one when it falls inside a
    word (never past `limit`), between two CJK characters as it is."""
    if flat[start - 1] == " " or _CJK_CHAR.match(flat[start]) or _CJK_CHAR.match(flat[start - 1]):
        return start
    nxt = flat.find(" ", start, limit)
    if nxt != -1:
        return nxt + 1
    back = flat.rfind(" ", 0, start)
    return back + 1


def short_id(ident: str) -> str:
    """How a long id (a session's, a turn's) is shown: short ids whole, long ones as their
    first 8 characters and 4 of their hash (what the journal's headings and `search` print, and
    what `recall` and `forget` take back)."""
    if len(ident) <= 16:
        return ident
    return f"{ident[:8]}-{hashlib.sha1(ident.encode()).hexdigest()[:4]}"


_PUNCT = re.compile(r"[^\w\s]+", re.UNICODE)


def normalize(text: str) -> str:
    """Case-folded text without punctuation or extra spaces (the identity of a statement)."""
    return " ".join(_PUNCT.sub(" ", text.casefold()).split())


def counted(n: int | float, noun: str, plural: str = "") -> str:
    """``1 section``, ``2 sections``, ``12,400 sections``: a count with its noun, in the one way
    the CLI and the page print numbers (thousands separated by commas). `plural` defaults to
    the noun with an ``s``."""
    word = noun if n == 1 else (plural or noun + "s")
    return f"{n:,} {word}"
