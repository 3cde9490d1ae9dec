"""The socket wire format: newline-delimited JSON-RPC 2.0. Pure encode/decode, no I/O."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from memd.core.errors import InvalidParams, MemdError, ParseRequestError, ProtocolError

JSONRPC = "2.0"
# Application error codes (JSON-RPC reserves -32768..-32000 for the protocol itself).
APP_ERROR = -32000
MEMORY_DISABLED = -32001
NOT_FOUND = -32002
REQUEST_TOO_LARGE = -32003
PERMISSION_DENIED = -32004


@dataclass(frozen=True, slots=True)
class Request:
    """One decoded request; `id` is None for notifications."""

    method: str
    params: dict[str, Any]
    id: int | str | None


def decode_request(line: bytes) -> Request:
    """Decode one request line or raise a `ProtocolError` subclass with its JSON-RPC code."""
    try:
        obj = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ParseRequestError(f"parse error: {exc}") from exc
    if not isinstance(obj, dict) or obj.get("jsonrpc") != JSONRPC:
        raise ProtocolError('invalid request: expected an object with "jsonrpc": "2.0"')
    method = obj.get("method")
    if not isinstance(method, str) or not method:
        raise ProtocolError('invalid request: "method" must be a non-empty string')
    params = obj.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise InvalidParams('invalid params: "params" must be an object (named parameters)')
    rid = obj.get("id")
    if rid is not None and (isinstance(rid, bool) or not isinstance(rid, int | str)):
        raise ProtocolError('invalid request: "id" must be a string or an integer')
    return Request(method=method, params=params, id=rid)


def encode_result(rid: int | str | None, result: Any) -> bytes:
    """A response line (the daemon's side: answers are large, so the fast encoder is used)."""
    return _dump_fast({"jsonrpc": JSONRPC, "id": rid, "result": result})


def encode_error(
    rid: int | str | None, code: int, message: str, data: dict[str, Any] | None = None
) -> bytes:
    err: dict[str, Any] = {"code": code, "message": message}
    if data:
        err["data"] = data
    return _dump({"jsonrpc": JSONRPC, "id": rid, "error": err})


def encode_request(method: str, params: dict[str, Any], rid: int | str) -> bytes:
    return _dump({"jsonrpc": JSONRPC, "id": rid, "method": method, "params": params})


def error_code(exc: MemdError) -> int:
    """Map a memd error to its JSON-RPC error code."""
    from memd.core.errors import MemoryDisabled, NotFound

    if isinstance(exc, ProtocolError):
        return exc.code
    if isinstance(exc, MemoryDisabled):
        return MEMORY_DISABLED
    if isinstance(exc, NotFound):
        return NOT_FOUND
    return APP_ERROR


def _dump(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str).encode() + b"\n"


def _dump_fast(obj: dict[str, Any]) -> bytes:
    """`_dump` through orjson: a 20 KB `context` answer encodes in 0.01 ms instead of 0.18 ms.

    Imported here, not at the top: clients import this module and orjson's import costs ~14 ms.
    The options keep the bytes `_dump` would produce for the same values; anything orjson
    refuses (an integer over 64 bits, say) goes through `_dump`.
    """
    import orjson

    opts = (
        orjson.OPT_NON_STR_KEYS
        | orjson.OPT_APPEND_NEWLINE
        | orjson.OPT_PASSTHROUGH_DATACLASS
        | orjson.OPT_PASSTHROUGH_DATETIME
    )
    try:
        return orjson.dumps(obj, default=str, option=opts)
    except orjson.JSONEncodeError:
        return _dump(obj)
