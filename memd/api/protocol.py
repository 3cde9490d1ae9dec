"""The socket wire format: newline-delimited JSON-RPC 2.0. Pure encode/decode, no I/O.

`ERRORS` is the one table from memd's error classes to JSON-RPC error codes: the server
answers with it and the client raises the same classes back from it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from memd.core import jsontext
from memd.core.errors import (
    DaemonStarting,
    DiskFull,
    EditConflict,
    InvalidParams,
    MemdError,
    MemoryDisabled,
    MethodNotFound,
    NotFound,
    ParseRequestError,
    PathError,
    PermissionDenied,
    ProtocolError,
    RequestTooLarge,
    ServerBusy,
    UndoConflict,
)

JSONRPC = "2.0"
APP_ERROR = -32000  # a bug in memd (the daemon logs it with its traceback); nothing else

# Error class -> code, most specific first. JSON-RPC reserves -32768..-32000 for itself;
# memd's own codes count down from -32001. Every error memd raises on purpose has a code
# here (the last row catches the rest), so -32000 means a bug.
ERRORS: tuple[tuple[type[MemdError], int], ...] = (
    (ParseRequestError, -32700),
    (MethodNotFound, -32601),
    (InvalidParams, -32602),
    (RequestTooLarge, -32003),
    (ProtocolError, -32600),
    (MemoryDisabled, -32001),
    (NotFound, -32002),
    (PermissionDenied, -32004),
    (ServerBusy, -32005),
    (DiskFull, -32006),
    (DaemonStarting, -32007),
    (UndoConflict, -32008),  # later edits touched the lines of the change to undo
    (EditConflict, -32009),  # the file or item changed since it was read: reload, try again
    (PathError, -32602),  # a path given in the params cannot be used (no such folder, …)
    (MemdError, -32010),  # memd could not do it; `error.data.hint` says what to do
)
PARSE_ERROR, METHOD_NOT_FOUND, INVALID_PARAMS, INVALID_REQUEST = -32700, -32601, -32602, -32600
MEMORY_DISABLED, NOT_FOUND, REQUEST_TOO_LARGE, PERMISSION_DENIED = -32001, -32002, -32003, -32004
SERVER_BUSY, DAEMON_STARTING, UNDO_CONFLICT, EDIT_CONFLICT = -32005, -32007, -32008, -32009
MEMD_ERROR = -32010


def error_code(exc: MemdError) -> int:
    """The JSON-RPC code of a memd error (`APP_ERROR` when it has none of its own)."""
    for cls, code in ERRORS:
        if isinstance(exc, cls):
            return code
    return APP_ERROR


def error_class(code: int) -> type[MemdError] | None:
    """The memd error class a code stands for (the client's side of `ERRORS`)."""
    for cls, c in ERRORS:
        if c == code:
            return cls
    return None


@dataclass(frozen=True, slots=True)
class Request:
    """One decoded request; `id` is None for notifications. `params` is not yet validated."""

    method: str
    params: Any
    id: int | str | None


def decode_request(line: bytes) -> Request:
    """Decode one request line or raise a `ProtocolError` subclass.

    A batch (a JSON array) is refused with -32600: memd answers one request per line, and a
    client wanting several answers sends several lines on the same connection.
    """
    try:
        # A number memd cannot use (5,000 digits, NaN) stays in place as `Unreadable`: the
        # params check names the param holding it (-32602).
        obj = jsontext.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        deep = isinstance(exc, json.JSONDecodeError) and exc.msg == jsontext.DEEP
        raise ParseRequestError(f"parse error: {jsontext.DEEP if deep else exc}") from exc
    if isinstance(obj, list):
        raise ProtocolError("invalid request: batches are not supported; send one request per line")
    if not isinstance(obj, dict) or obj.get("jsonrpc") != JSONRPC:
        raise ProtocolError('invalid request: expected an object with "jsonrpc": "2.0"')
    method = obj.get("method")
    if not isinstance(method, str) or not method or not method.isprintable():
        raise ProtocolError('invalid request: "method" must be a non-empty string')
    rid = obj.get("id")
    if rid is not None and (isinstance(rid, bool) or not isinstance(rid, int | str)):
        raise ProtocolError('invalid request: "id" must be a string or an integer')
    if isinstance(rid, str) and not _encodable(rid):
        raise ProtocolError('invalid request: "id" holds a lone surrogate')
    params = obj.get("params")
    return Request(method=method, params={} if params is None else params, id=rid)


def _encodable(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def encode_result(rid: int | str | None, result: Any) -> bytes:
    """A response line (the daemon's side: answers are large, so the fast encoders are used).

    Typed results (msgspec structs) are encoded by msgspec, plain values by orjson.
    """
    import msgspec

    if isinstance(result, msgspec.Struct):
        head = _dump({"jsonrpc": JSONRPC, "id": rid})[:-2]  # without the closing "}\n"
        return head + b',"result":' + msgspec.json.encode(result) + b"}\n"
    return _dump_fast({"jsonrpc": JSONRPC, "id": rid, "result": result})


def encode_error(
    rid: int | str | None, code: int, message: str, data: dict[str, Any] | None = None
) -> bytes:
    err: dict[str, Any] = {"code": code, "message": message}
    if data:
        err["data"] = data
    return _dump({"jsonrpc": JSONRPC, "id": rid, "error": err})


def encode_request(method: str, params: Any, rid: int | str) -> bytes:
    """A request line; `params` is a dict or a params struct."""
    import msgspec

    if isinstance(params, msgspec.Struct):
        head = _dump({"jsonrpc": JSONRPC, "id": rid, "method": method})[:-2]
        return head + b',"params":' + msgspec.json.encode(params) + b"}\n"
    return _dump({"jsonrpc": JSONRPC, "id": rid, "method": method, "params": params})


def _dump(obj: dict[str, Any]) -> bytes:
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str)
    try:
        return text.encode() + b"\n"
    except UnicodeEncodeError:  # a lone surrogate in some text: \u-escapes keep the line valid
        return json.dumps(obj, separators=(",", ":"), default=str).encode() + b"\n"


def _dump_fast(obj: dict[str, Any]) -> bytes:
    """`_dump` through orjson: a 20 KB answer encodes in 0.01 ms instead of 0.18 ms.

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
