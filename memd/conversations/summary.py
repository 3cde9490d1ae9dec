"""PURE: an extractive session summary — sentences picked from the turns, no LLM needed.

Sentences are scored by how many of the session's frequent terms they carry (a centroid
summary), the user's words weigh more than the assistant's (they say what the session was
about), and the opening question is always kept. The chosen sentences stay in their original
order. The LLM summariser of the jobs replaces this text (``summary_kind='llm'``) when it runs.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from memd.core.text import STOPWORDS, cjk_bigrams, shorten

_FENCED = re.compile(r"```.*?(?:```|\Z)", re.S)
_SENTENCE_END = re.compile(r"(?<=[.!?。！？；;])\s+|(?<=[。！？；])|\n+")
_CJK_CLASS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK = re.compile(f"[{_CJK_CLASS}]")
_KEY = re.compile(rf"[{_CJK_CLASS}]{{2,}}|[^\W_{_CJK_CLASS}]{{3,}}")
_TRIVIAL = re.compile(
    r"^(hi|hello|hey|thanks?( you)?|thx|ok(ay)?|sure|yes|no|great|cool|got it|bye|"
    r"你好|您好|谢谢|好的|嗯|好|是的|再见)[\s!.,。！，]*$",
    re.I,
)
_ENDS = (".", "!", "?", "…", "。", "！", "？", ";", "；", ":", "：")
USER_WEIGHT = 1.4
MAX_TURNS = 40
HEAD_TURNS = 8
SENTENCES_PER_TURN = 4  # what a turn is about is said first
SENTENCE_CHARS = 180


def _sentences(text: str) -> list[str]:
    if "```" in text:
        text = _FENCED.sub(" ", text)
    out = []
    for raw in _SENTENCE_END.split(text):
        s = " ".join(raw.split()).strip(" -*#>")
        if not s or (len(s) < 16 and (len(_CJK.findall(s)) < 4 or _TRIVIAL.match(s))):
            continue
        out.append(s)
    return out


def _keys(sentence: str) -> set[str]:
    keys = set(_KEY.findall(sentence.lower())) - STOPWORDS
    if _CJK.search(sentence):
        runs = {k for k in keys if _CJK.match(k)}
        keys -= runs
        for run in runs:
            keys.update(cjk_bigrams(run))
    return keys


def _sample(turns: Sequence[tuple[str, str]]) -> Sequence[tuple[str, str]]:
    """The opening turns and an even spread of the rest: a long session costs no more."""
    if len(turns) <= MAX_TURNS:
        return turns
    rest = turns[HEAD_TURNS:]
    step = len(rest) / (MAX_TURNS - HEAD_TURNS)
    return [*turns[:HEAD_TURNS], *(rest[int(i * step)] for i in range(MAX_TURNS - HEAD_TURNS))]


def summarize(
    turns: Sequence[tuple[str, str]], *, max_sentences: int = 4, max_chars: int = 600
) -> str:
    """Summarise a session from its `(role, text)` turns, oldest first.

    Returns "" when the turns hold nothing worth keeping (greetings, empty texts).
    """
    cands: list[tuple[int, str, str, set[str]]] = []  # (position, role, sentence, keys)
    for role, text in _sample(turns):
        for s in _sentences(text)[:SENTENCES_PER_TURN]:
            cands.append((len(cands), role, s, _keys(s)))
    if not cands:
        return ""
    df = Counter(k for _, _, _, keys in cands for k in keys)
    # Terms seen in several sentences are what the session is about; a term seen once is noise.
    weight = {k: math.log(n) for k, n in df.items() if n > 1}
    first_user = next((c for c in cands if c[1] == "user"), cands[0])
    scored: list[tuple[float, int]] = []
    for pos, role, _s, keys in cands:
        if pos == first_user[0]:
            continue
        score = sum(weight.get(k, 0.0) for k in keys) / math.sqrt(len(keys) + 1)
        if role == "user":
            score *= USER_WEIGHT
        scored.append((score, pos))
    scored.sort(key=lambda x: (-x[0], x[1]))
    chosen = {first_user[0]}
    used = len(shorten(first_user[2], SENTENCE_CHARS))
    for score, pos in scored:
        if len(chosen) >= max_sentences or score <= 0:
            break
        piece = shorten(cands[pos][2], SENTENCE_CHARS)
        if used + len(piece) + 1 > max_chars:
            continue
        if any(_similar(cands[pos][3], cands[c][3]) for c in chosen):
            continue
        chosen.add(pos)
        used += len(piece) + 1
    parts = []
    for pos in sorted(chosen):
        _, role, s, _ = cands[pos]
        piece = shorten(s, SENTENCE_CHARS)
        if not piece.endswith(_ENDS):
            piece += "。" if _CJK.match(piece[-1]) else "."
        parts.append(("Asked: " if role == "user" else "") + piece)
    return shorten(" ".join(parts), max_chars)


def _similar(a: set[str], b: set[str]) -> bool:
    if not a or not b:
        return False
    return len(a & b) / min(len(a), len(b)) > 0.7
