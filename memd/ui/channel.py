"""The page's channel to memd: the daemon's socket, or, with no daemon, the index itself.

The fallback is the CLI's (`memd.cli.commands.call`): reads from an `Engine` over
`Store.open_readonly`, so the page answers as the daemon would from the same index, and a
change is written as the CLI writes it without a daemon (`memd.app.writing_engine`: under the
daemon's lock, so never beside a daemon, recorded in the history like any change).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, TypeVar

from memd.api import client
from memd.api.client import RemoteError
from memd.core.errors import (
    DaemonError,
    DaemonNotRunning,
    DaemonStarting,
    MemdError,
    MethodNotFound,
    StoreError,
)
from memd.core.settings import Settings

if TYPE_CHECKING:
    from memd.api.messages import Params, Signature

P = TypeVar("P", bound="Params")
R = TypeVar("R")
METHOD_NOT_FOUND = -32601


def method_missing(exc: BaseException) -> bool:
    """Whether an error says the daemon has no such method (an older or trimmed daemon)."""
    if isinstance(exc, MethodNotFound):
        return True
    return isinstance(exc, RemoteError) and exc.code == METHOD_NOT_FOUND


class Channel:
    """Calls socket methods; falls back to the read-only index while the daemon is down."""

    def __init__(self, settings: Settings, *, timeout: float = 30.0) -> None:
        self.settings = settings
        self.timeout = timeout
        self._lock = threading.Lock()
        self._fallback: Any = None  # (Engine, Store) while the daemon is down
        self._probes: dict[tuple[str, str], bool] = {}

    def request(self, sig: Signature[P, R], params: P, *, write: bool = False) -> R:
        """Ask the daemon with the method's own types: its params in, its result out; without
        a daemon, answer from the index, and write as the CLI does. An answer that is not of the
        method's result type (a daemon of another version) is a `DaemonError`."""
        import msgspec

        try:
            result = client.request(self.settings.socket_path, sig, params, timeout=self.timeout)
        except msgspec.ValidationError as exc:
            raise DaemonError(f"the daemon's answer to {sig.name} cannot be read: {exc}") from exc
        except DaemonStarting:
            if write:  # the daemon writes as soon as it is up: never beside it
                raise
            return self._read_directly(sig, params)
        except DaemonNotRunning:
            if write:
                return self._write_directly(sig, params)
            return self._read_directly(sig, params)
        self._close_fallback()
        return result

    def has(self, sig: Signature[P, R], probe: P, *, daemon: str) -> bool:
        """Whether the method exists, asked once per daemon (`daemon` names it, e.g. its pid).

        `probe` must be params the method refuses or answers without changing anything: a
        write method is probed with a missing required param, which an existing method answers
        with "invalid params" and a missing one with "method not found".
        """
        method = sig.name
        key = (daemon, method)
        if key in self._probes:
            return self._probes[key]
        try:
            self.request(sig, probe)
            found = True
        except (DaemonNotRunning, StoreError):
            return False  # no answer at all: ask again next time
        except MemdError as exc:
            found = not method_missing(exc)
        self._probes[key] = found
        return found

    def close(self) -> None:
        self._close_fallback()

    def _write_directly(self, sig: Signature[P, R], params: P) -> R:
        from memd.app import writing_engine

        with writing_engine(self.settings) as engine:
            return engine.call(sig, params)

    def _read_directly(self, sig: Signature[P, R], params: P) -> R:
        result: R = self._engine().call(sig, params)
        return result

    def _engine(self) -> Any:
        with self._lock:
            if self._fallback is None:
                from memd.app import Engine
                from memd.db import Store

                store = Store.open_readonly(self.settings.db_path)
                self._fallback = (Engine(self.settings, store), store)
            return self._fallback[0]

    def _close_fallback(self) -> None:
        if self._fallback is None:
            return
        with self._lock:
            if self._fallback is not None:
                self._fallback[1].close()
                self._fallback = None
