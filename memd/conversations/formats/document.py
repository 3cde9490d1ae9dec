"""What the whole-document formats share (Cline and Roo Code tasks, Continue sessions, Aider
chat histories): the result of parsing one file, a JSON array read as far as it is complete,
and the reasoning spans that are never said text.

These files are rewritten in place or appended to while the assistant runs, so a read can
catch one mid-write: the parsers return what the complete part holds and name the problem,
never raise on the file's content.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import orjson

from memd.core.models import Turn


@dataclass(frozen=True, slots=True)
class ParsedDocument:
    """The turns one document holds, and what in it could not be read.

    `problems` are `(line, why)`; line 0 is the file as a whole. A problem never hides the
    turns read before and after it. `complete` is False for a document cut short (a write
    caught half way): its reader reads it again when it changes.
    """

    turns: list[Turn] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)
    complete: bool = True


def turns_of(result: list[Turn] | ParsedDocument) -> list[Turn]:
    """The turns a document parser returned, whichever of its two shapes it used."""
    return result.turns if isinstance(result, ParsedDocument) else result


@dataclass(frozen=True, slots=True)
class JsonLoad:
    """A JSON document, or as much of a top-level array as was complete."""

    value: Any
    problem: tuple[int, str] | None = None


def load_json(data: bytes) -> JsonLoad:
    """The JSON value in `data`; for an array cut short (a write caught half way), its complete
    items and a problem naming the line where it stops. `value` is None when nothing could be
    read."""
    if b"\x00" in data[:4096]:
        return JsonLoad(None, (0, "binary data, not a JSON document"))
    try:
        return JsonLoad(orjson.loads(data))
    except orjson.JSONDecodeError:
        pass
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return JsonLoad(None, (0, f"not UTF-8 text: {exc.reason} at byte {exc.start}"))
    try:
        return JsonLoad(json.loads(text))
    except RecursionError:
        return JsonLoad(None, (0, "JSON nested too deeply"))
    except json.JSONDecodeError as exc:
        items, stop = _array_prefix(text)
        where = exc.lineno if stop is None else text.count("\n", 0, stop) + 1
        if items is None:
            return JsonLoad(None, (where, f"not valid JSON: {exc.msg}"))
        return JsonLoad(items, (where, f"the JSON array ends early after {len(items)} complete "
                                       "items (a write in progress, or a cut file)"))  # fmt: skip
    except ValueError as exc:  # an integer of thousands of digits
        return JsonLoad(None, (0, f"not valid JSON: {exc}"))


_SPACE = re.compile(r"[\s,]*")


def _array_prefix(text: str) -> tuple[list[Any] | None, int | None]:
    """The complete items at the start of a top-level JSON array, and where reading stopped."""
    start = _SPACE.match(text, 0)
    pos = start.end() if start else 0
    if not text.startswith("[", pos):
        return None, None
    decoder = json.JSONDecoder()
    items: list[Any] = []
    pos += 1
    while True:
        gap = _SPACE.match(text, pos)
        pos = gap.end() if gap else pos
        if pos >= len(text) or text[pos] == "]":
            return items, pos
        try:
            item, pos = decoder.raw_decode(text, pos)
        except (json.JSONDecodeError, RecursionError):
            return items, pos
        items.append(item)


# Reasoning that models and assistants write inline with the answer: Aider's own tag
# (`thinking-content-<hash>`) and the `<think>`/`<thinking>`/`<reasoning>` tags of reasoning
# models. A span left unclosed (an interrupted reply) runs to the end of the text; a closing
# tag without its opening one ends a span that began with the text.
_REASONING_TAGS = r"think|thinking|reasoning|thinking-content-[0-9a-f]{8,64}"
_REASONING_SPAN = re.compile(rf"<({_REASONING_TAGS})>.*?</\1>", re.DOTALL)
_REASONING_OPEN = re.compile(rf"<(?:{_REASONING_TAGS})>")
_REASONING_CLOSE = re.compile(rf"</(?:{_REASONING_TAGS})>")


def strip_reasoning(text: str) -> str:
    """`text` without the reasoning spans written inline in it."""
    if "<" not in text:
        return text.strip()
    text = _REASONING_SPAN.sub("", text)
    ends = [m.end() for m in _REASONING_CLOSE.finditer(text)]
    if ends:
        text = text[ends[-1] :]
    opening = _REASONING_OPEN.search(text)
    if opening is not None:
        text = text[: opening.start()]
    return text.strip()
