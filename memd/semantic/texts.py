"""What is embedded for each kind of document, and the keys and hashes that identify it.

- a **section**: its file's name, its heading and its text without memd's metadata comments,
  capped at `MAX_CHARS`; keyed by a hash of what it is made of (file name, heading, text
  hash), so a file re-indexed with new section ids, or a section moved, keeps its vector;
- an **item** of a section too long to embed whole: its text, so the rest of the section
  can still be found by meaning;
- a **turn**: the recipe's passage (`memd.semantic.recipe.passage_texts`: the turn after the
  one before it in its session), keyed by the turn's id; its text hash says when the turn or
  the turn before it changed.

Pure functions, no numpy.
"""

from __future__ import annotations

import hashlib
import re

from memd.semantic.fusion import Script, dominant_script
from memd.semantic.passages import Turn
from memd.semantic.recipe import passage_texts

MAX_CHARS = 2000
"""Characters of a section embedded (the packaged model reads ~512 tokens at most); a longer
section also gets a vector per list item."""
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
    return f"{title}\n{body}"[:MAX_CHARS] if title else body[:MAX_CHARS]


def item_key(text: str) -> str:
    """The content key of an item."""
    return text_hash(f"item\0{text}")


def turn_passage(label: str, text: str, prev_label: str = "", prev_text: str = "") -> str:
    """The recipe's passage for a turn, given the turn before it in its session (if any)."""
    turns = [Turn(label, text)]
    if prev_text:
        turns.insert(0, Turn(prev_label, prev_text))
    return passage_texts(turns)[-1]


def script_of(text: str) -> Script:
    """The dominant script of a text (the fusion rule compares it with the query's)."""
    return dominant_script(text)
