"""What every message builds on: the params and result bases, a method's `Signature`, the
shared field types and limits, and the check of a path param."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Generic, Literal, TypeVar

from msgspec import Meta, Struct, UnsetType

from memd.core.errors import InvalidParams

Document = dict[str, Any]
# Past these a path cannot name a file on Linux or macOS (PATH_MAX, NAME_MAX): refuse it as
# invalid params rather than let the OS fail inside a handler.
MAX_PATH_BYTES = 4096
MAX_NAME_BYTES = 255
NonNegative = Annotated[int, Meta(ge=0)]
Limit = Annotated[int, Meta(ge=1, le=1000)]
Budget = Annotated[int, Meta(ge=0, le=200_000)]
Scope = Literal["user", "project", "agent"]


class Params(Struct, frozen=True, kw_only=True):
    """Base of every params type."""


class Result(Struct, kw_only=True):
    """Base of every result type."""


P = TypeVar("P", bound=Params)
R = TypeVar("R")
T = TypeVar("T")


def or_default(value: T | UnsetType, default: T) -> T:
    """A field a message may leave unset (an older daemon's answer, a part not made), or
    `default` when it is."""
    return default if isinstance(value, UnsetType) else value


@dataclass(frozen=True, slots=True)
class Signature(Generic[P, R]):
    """A method's name with its params and result types (what client and server agree on)."""

    name: str
    params: type[P]
    result: type[R]


def check_path(value: str, field: str) -> None:
    """Refuse a path param no file can have: a NUL byte, or over PATH_MAX / NAME_MAX."""
    if "\x00" in value:
        raise InvalidParams(f"param {field!r}: a path cannot hold a NUL byte")
    raw = value.encode("utf-8", "surrogateescape")
    if len(raw) > MAX_PATH_BYTES:
        raise InvalidParams(f"param {field!r}: path longer than {MAX_PATH_BYTES} bytes")
    if any(len(part) > MAX_NAME_BYTES for part in raw.split(b"/")):
        raise InvalidParams(f"param {field!r}: a path name is longer than {MAX_NAME_BYTES} bytes")


class NoParams(Params, frozen=True, kw_only=True):
    """The params of a method that takes none (`status`, `sync_status`, `sync_init_schema`)."""
