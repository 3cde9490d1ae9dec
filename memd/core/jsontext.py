"""JSON text from outside memd (a request line, an export to import) read so that every value
memd cannot use can be named where it stands.

Python's `json.loads` raises `ValueError` (not `JSONDecodeError`) for an integer of more than
4,300 digits, and reads `NaN`, `Infinity` and `1e400` as floats that are no number a person
meant (SQLite stores NaN as NULL). `loads` reads them as `Unreadable` values instead, in their
place, so the reader's own check names the field ("param 'limit': an integer of 5,000
digits"); nesting deeper than the decoder goes is `JSONDecodeError` like any malformed text.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

DEEP = "nested deeper than memd reads"


class Unreadable:
    """A value of a JSON text that memd does not read; `what` says what it was."""

    __slots__ = ("what",)

    def __init__(self, what: str) -> None:
        self.what = what

    def __repr__(self) -> str:
        return f"Unreadable({self.what!r})"


def _int(text: str) -> int | Unreadable:
    digits = len(text.lstrip("-"))
    if digits > sys.get_int_max_str_digits():
        return Unreadable(f"an integer of {digits:,} digits is no number memd reads")
    return int(text)


def _float(text: str) -> float | Unreadable:
    value = float(text)
    if not math.isfinite(value):
        return Unreadable(f"{text[:20]} is out of the range of numbers memd reads")
    return value


def _constant(text: str) -> Unreadable:
    return Unreadable(f"{text} is not a JSON number")


def loads(text: str | bytes) -> Any:
    """The value of a JSON text, with `Unreadable` in place of the values memd cannot use.

    Raises `json.JSONDecodeError` for malformed text and for nesting deeper than the decoder
    goes, `UnicodeDecodeError` for bytes that are not UTF-8.
    """
    try:
        return json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_constant)
    except RecursionError:
        raise json.JSONDecodeError(DEEP, "", 0) from None


def find_unreadable(value: Any) -> tuple[str, Unreadable] | None:
    """The first `Unreadable` in `value` and where it is (``sessions[0].chats[2].ts``)."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, v = stack.pop()
        if isinstance(v, Unreadable):
            return where, v
        if isinstance(v, dict):
            items = [(f"{where}.{k}" if where else str(k), x) for k, x in v.items()]
            stack.extend(reversed(items))  # popped in the text's order
        elif isinstance(v, list):
            stack.extend(reversed([(f"{where}[{i}]", x) for i, x in enumerate(v)]))
    return None
