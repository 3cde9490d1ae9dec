"""One memd operation = one change, without passing the history through every function.

An operation opens a scope; the file writers it calls (however deep) report each write with
`note_write(path, before)`; when the scope closes, everything written in it is recorded as one
change::

    with change_scope(history, Cause.REMEMBER) as scope:
        item = append_item(path, ...)          # the writer calls note_write(path, before=...)
        scope.detail = f"id={item.id} {text}"  # known only once written

The scope lives in a context variable, so it follows the operation on its thread and is
invisible to other threads; `note_write` outside any scope does nothing. A scope that ends with
an exception still records what was written before it: those writes happened.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from memd.history.models import Cause


class _Recorder(Protocol):
    def record(
        self,
        paths: list[str | Path],
        cause: Cause | str,
        detail: str = "",
        *,
        before: Mapping[str | Path, str | bytes | None] | None = None,
        trailers: Mapping[str, str] | None = None,
    ) -> None: ...


@dataclass
class ChangeScope:
    """The files one operation wrote, and what each held before its first write."""

    cause: Cause
    detail: str = ""
    trailers: dict[str, str] = field(default_factory=dict)
    paths: list[str] = field(default_factory=list)
    before: dict[str | Path, str | bytes | None] = field(default_factory=dict)

    def add(self, path: str | os.PathLike[str], before: str | bytes | None, known: bool) -> None:
        key = os.path.abspath(path)
        if key in self.paths:
            return  # the first write's `before` is the state before this operation
        self.paths.append(key)
        if known:
            self.before[key] = before


_SCOPE: contextvars.ContextVar[ChangeScope | None] = contextvars.ContextVar(
    "memd_history_scope", default=None
)
_UNKNOWN = object()


def note_write(
    path: str | os.PathLike[str], before: str | bytes | None | object = _UNKNOWN
) -> None:
    """Tell the open scope (if any) that `path` was just written, created, moved or deleted.

    `before` is what the file held when the writer read it before writing (None: it did not
    exist); leave it out when the writer did not read the file.
    """
    scope = _SCOPE.get()
    if scope is None:
        return
    known = before is not _UNKNOWN
    scope.add(path, before if known else None, known)  # type: ignore[arg-type]


@contextlib.contextmanager
def change_scope(
    history: _Recorder | None,
    cause: Cause | str,
    detail: str = "",
    *,
    trailers: Mapping[str, str] | None = None,
) -> Iterator[ChangeScope]:
    """Collect the writes of one operation and record them as one change when it ends.

    With `history` None (history off) the scope still collects, so writers need no check.
    """
    scope = ChangeScope(Cause(cause), detail, dict(trailers or {}))
    token = _SCOPE.set(scope)
    try:
        yield scope
    finally:
        _SCOPE.reset(token)
        if history is not None and scope.paths:
            history.record(
                list(scope.paths),
                scope.cause,
                scope.detail,
                before=scope.before or None,
                trailers=scope.trailers,
            )


def current_scope() -> ChangeScope | None:
    """The scope open in this context (None outside any): lets a writer learn the cause."""
    return _SCOPE.get()
