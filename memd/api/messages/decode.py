"""Params in (validated, the field named in the error) and results out, as msgspec does it."""

from __future__ import annotations

import threading
from typing import Any, TypeVar

import msgspec

from memd.api.messages.base import P, R, Signature
from memd.core.errors import InvalidParams
from memd.core.jsontext import Unreadable, find_unreadable

# msgspec builds a Struct type's decoding info on its first conversion, and two threads doing
# that first conversion of one type at once crashed the daemon (a segmentation fault under 100
# concurrent `context` calls). The first conversion of each type is therefore made alone.
T = TypeVar("T")
_converted: set[Any] = set()
_first_conversion = threading.Lock()


def convert(value: Any, type_: type[T], *, strict: bool = True) -> T:
    """`msgspec.convert`, with each type's first conversion made alone (see above)."""
    if type_ in _converted:
        return msgspec.convert(value, type_, strict=strict)
    with _first_conversion:
        try:
            return msgspec.convert(value, type_, strict=strict)
        finally:
            _converted.add(type_)  # built even when this value did not validate


def decode_params(params_type: type[P], params: Any) -> P:
    """Validate a request's params (a JSON object, already parsed) into `params_type`.

    Raises `InvalidParams` naming the field. A ``null`` value counts as absent.
    """
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise InvalidParams('invalid params: "params" must be an object (named parameters)')
    if None in params.values():
        params = {k: v for k, v in params.items() if v is not None}
    _refuse_unusable(params)
    try:
        return convert(params, params_type, strict=True)
    except msgspec.ValidationError as exc:
        raise InvalidParams(validation_message(exc)) from None


def _refuse_unusable(params: dict[str, Any]) -> None:
    """A string with half of a UTF-16 pair (JSON allows the escape) is not text memd can
    store, search or write, and a number the request decoder could not read (`Unreadable`: an
    integer of thousands of digits, NaN) is no number: refuse them here, naming the param,
    instead of failing later."""
    for key, value in params.items():
        stack = [key, value]
        while stack:
            v = stack.pop()
            if isinstance(v, Unreadable):
                where, first = find_unreadable(value) or ("", v)
                name = f"{key}{'' if where.startswith('[') or not where else '.'}{where}"
                raise InvalidParams(f"param {name!r}: {first.what}")
            if isinstance(v, str):
                if v.isascii():
                    continue
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError as exc:
                    bad = v[exc.start]
                    raise InvalidParams(
                        f"param {key!r}: holds a lone surrogate ({ascii(bad)[1:-1]}),"
                        " which is not valid Unicode"
                    ) from None
            elif isinstance(v, dict):
                stack.extend(v.keys())
                stack.extend(v.values())
            elif isinstance(v, list):
                stack.extend(v)


def decode_result(sig: Signature[Any, R], result: Any) -> R:
    """A result as its typed value (the client's side; a feature's answer on the server)."""
    return convert(result, sig.result, strict=False)


def to_builtins(value: Any) -> Any:
    """A message as plain JSON values (dicts, lists, …), unset fields left out."""
    return msgspec.to_builtins(value)


def validation_message(exc: msgspec.ValidationError) -> str:
    """``Expected `int` >= 0 - at `$.budget_tokens` `` → ``param 'budget_tokens': expected int >= 0``."""
    text = str(exc)
    what, sep, where = text.rpartition(" - at `$")
    if not sep:
        return f"invalid params: {text}"
    field = where.rstrip("`").lstrip(".")
    what = what.replace("`", "")
    return f"param {field!r}: {what[:1].lower()}{what[1:]}"
