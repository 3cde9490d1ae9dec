"""What the log formats share: a line's JSON object, times in any epoch unit or ISO-8601, and
typed fields, with a `ParseError` naming the file, line and field when one is wrong."""

from __future__ import annotations

import hashlib
import json
import math
from datetime import UTC, datetime
from typing import Any

import orjson

from memd.core.errors import ParseError
from memd.core.models import MAX_TS
from memd.core.redact import join_redacted

ROLES = ("user", "assistant")


# Epoch numbers are read by magnitude: below 1e11 seconds (the year 5138), below 1e14
# milliseconds, below 1e17 microseconds, below 1e20 nanoseconds. Times must fall between the
# epoch and the end of the year 9999, the range every date function can show.
_EPOCH_UNITS = ((1e11, 1.0), (1e14, 1e3), (1e17, 1e6), (1e20, 1e9))


_TS_HELP = "epoch seconds, milliseconds, microseconds or nanoseconds, or an ISO-8601 string"


def load_object(raw: bytes, *, path: str, lineno: int) -> dict[str, Any] | None:
    """The JSON object on a line; None for a blank line."""
    if not raw.strip():
        return None
    try:
        # orjson parses a log line ~5x faster than json. It refuses a BOM and reads integers
        # beyond 64 bits as floats (an integer id would change): such lines, and any it
        # rejects, go through json, which then decides (and words the error). Ids and
        # timestamps are top-level fields, so only those are checked.
        if raw.startswith(b"\xef\xbb\xbf"):
            raise orjson.JSONDecodeError("", "", 0)
        obj = orjson.loads(raw)
        if isinstance(obj, dict) and any(
            type(v) is float and abs(v) >= 2.0**63 for v in obj.values()
        ):
            raise orjson.JSONDecodeError("", "", 0)
    except orjson.JSONDecodeError:
        try:
            # Decoding first skips json.loads' encoding detection (a fifth of its time).
            obj = json.loads(raw.decode("utf-8-sig"))
        except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError
            raise ParseError(f"not valid JSON: {exc}", path=path, line=lineno) from exc
    if not isinstance(obj, dict):
        raise ParseError(f"expected a JSON object, got {json_type(obj)}", path=path, line=lineno)
    return obj


def parse_ts(
    value: Any, *, path: str, lineno: int, required: bool, field: str = "timestamp"
) -> float:
    """Epoch seconds (UTC) from an epoch number in any unit (`epoch_seconds`) or an ISO-8601
    string; 0.0 when absent and not `required`. The error names `field`."""
    if value is None or value == "":
        if required:
            raise ParseError(f'missing "{field}"', path=path, line=lineno, field=field)
        return 0.0
    number = as_number(value)
    if number is None and isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if number is not None:
        seconds = epoch_seconds(number)
        if seconds is None:
            raise ParseError(f'"{field}": {value!r} is not a time from 1970 to 9999 ({_TS_HELP})',
                             path=path, line=lineno, field=field)  # fmt: skip
        return seconds
    if not isinstance(value, str):
        raise ParseError(f'"{field}" must be a time ({_TS_HELP}), got {json_type(value)}',
                         path=path, line=lineno, field=field)  # fmt: skip
    seconds = _parse_iso(value.strip())
    if seconds is None or not 0 <= seconds <= MAX_TS:
        raise ParseError(f'"{field}": unreadable time {value!r} (expected {_TS_HELP}, from 1970 to 9999)',
                         path=path, line=lineno, field=field)  # fmt: skip
    return seconds


def epoch_seconds(number: float) -> float | None:
    """An epoch number in seconds, ms, µs or ns (told apart by magnitude) as seconds; None
    when it is not finite or falls outside 1970 to 9999."""
    if not math.isfinite(number) or number < 0:
        return None
    for limit, per_second in _EPOCH_UNITS:
        if number < limit:
            seconds = number / per_second
            return seconds if seconds <= MAX_TS else None
    return None


def _parse_iso(value: str) -> float | None:
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return moment.timestamp()
    except (OverflowError, ValueError):
        return None


def epoch_or_none(value: Any) -> float | None:
    """An epoch number as seconds (`epoch_seconds`); None when it is not one."""
    number = as_number(value)
    return None if number is None else epoch_seconds(number)


def as_number(value: Any) -> float | None:
    """A JSON number as a float (booleans are not numbers); None for anything else."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:  # an integer of hundreds of digits
            return math.inf if value > 0 else -math.inf
    return None


def id_field(obj: dict[str, Any], key: str, *, path: str, lineno: int, required: bool) -> str:
    """An id field (a string, or an integer as its digits); "" when absent and not `required`."""
    value = obj.get(key)
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if value is None or value == "":
        if required:
            raise ParseError(f'missing "{key}"', path=path, line=lineno, field=key)
        return ""
    raise ParseError(
        f'"{key}" must be a string or an integer, got {json_type(value)}',
        path=path, line=lineno, field=key,
    )  # fmt: skip


def str_field(obj: dict[str, Any], key: str, *, path: str, lineno: int) -> str:
    """An optional string field; "" when absent."""
    value = obj.get(key)
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    raise ParseError(
        f'"{key}" must be a string, got {json_type(value)}', path=path, line=lineno, field=key
    )


def parts_text(content: Any, *, what: str, path: str, lineno: int) -> str:
    """Text of a string or a list of content parts; non-text parts are ignored."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        pieces: list[str] = []
        for part in content:
            if isinstance(part, str):
                pieces.append(part.strip())
            elif (
                isinstance(part, dict)
                and part.get("type") in ("text", "input_text", "output_text")
                and isinstance(part.get("text"), str)
            ):
                pieces.append(part["text"].strip())
        return join_redacted([p for p in pieces if p], "\n\n")
    raise ParseError(
        f"{what} must be a string or an array of parts, got {json_type(content)}",
        path=path,
        line=lineno,
        field=what.strip('"'),
    )


def sha1_json(values: list[Any]) -> str:
    """A stable id for `values` (the sha1 of their compact JSON)."""
    encoded = json.dumps(values, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha1(encoded.encode("utf-8")).hexdigest()


def json_type(value: Any) -> str:
    """The JSON name of a value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"
