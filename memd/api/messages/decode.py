"""Params in (validated, the field named in the error) and results out, as msgspec does it."""

from __future__ import annotations

from typing import Any

import msgspec

from memd.api.messages.base import P, R, Signature
from memd.core.errors import InvalidParams


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
    _refuse_lone_surrogates(params)
    try:
        return msgspec.convert(params, params_type, strict=True)
    except msgspec.ValidationError as exc:
        raise InvalidParams(validation_message(exc)) from None


def _refuse_lone_surrogates(params: dict[str, Any]) -> None:
    """A string with half of a UTF-16 pair (JSON allows the escape) is not text memd can
    store, search or write: refuse it here, naming the param, instead of failing later."""
    for key, value in params.items():
        stack = [key, value]
        while stack:
            v = stack.pop()
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
    return msgspec.convert(result, sig.result, strict=False)


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
