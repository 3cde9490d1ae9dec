"""Blocking socket client for the daemon (no heavy imports: the CLI and hooks start fast).

`request(socket_path, SIGNATURE, params)` and `Client.request` send a typed params struct and
return the typed result (`memd.api.messages`). `Client.call(method, params)` is the raw
JSON-RPC call, params and answer as the wire's JSON, for what must speak the wire itself: the
doctor and `memd workspace add|remove`, which read a daemon of any version, and tests that
send params no type takes.
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from memd.api.protocol import encode_request, error_class
from memd.core.errors import DaemonNotRunning, MemdError, ProtocolError, ServerBusy

if TYPE_CHECKING:
    from memd.api.messages import Params, Signature

P = TypeVar("P", bound="Params")
RETRY_BACKLOG_S = 1.0  # how long a connect is retried while the daemon's backlog is full
RETRY_REFUSED_S = 0.3  # ... and while its socket refuses (a restart in progress)
R = TypeVar("R")


class RemoteError(MemdError):
    """The daemon answered with a JSON-RPC error object."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data
        if isinstance(data, dict) and data.get("hint"):
            self.hint = str(data["hint"])


class Client:
    """One connection to the daemon; `request` (typed) or `call` (raw JSON) sends a request and
    waits for its answer."""

    def __init__(self, socket_path: Path, timeout: float = 30.0) -> None:
        self.socket_path = socket_path
        self.timeout = timeout
        self._sock: socket.socket | None = None
        self._buf = b""
        self._ids = itertools.count(1)

    def connect(self) -> Client:
        """Connect, retrying briefly while the daemon's backlog is full or it is restarting."""
        start = time.monotonic()
        delay = 0.005
        while True:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(self.timeout)
            try:
                sock.connect(str(self.socket_path))
            except (BlockingIOError, InterruptedError, ConnectionRefusedError) as exc:
                sock.close()
                # EAGAIN: the listen backlog is full (a burst of clients); ECONNREFUSED: the
                # socket file is there but nobody accepts yet (a restart). Both pass quickly.
                waited = time.monotonic() - start
                limit = RETRY_BACKLOG_S if isinstance(exc, BlockingIOError) else RETRY_REFUSED_S
                if waited + delay > min(limit, self.timeout):
                    raise self._not_running(exc) from exc
                time.sleep(delay)
                delay = min(delay * 2, 0.1)
                continue
            except OSError as exc:
                sock.close()
                raise self._not_running(exc) from exc
            self._sock = sock
            return self

    def _not_running(self, exc: OSError) -> DaemonNotRunning:
        if isinstance(exc, FileNotFoundError | ConnectionRefusedError):
            return DaemonNotRunning(
                f"no memd daemon is listening on {self.socket_path}",
                hint="start it with `memd serve` (or `memd service install`)",
            )
        return DaemonNotRunning(f"cannot connect to {self.socket_path}: {exc}")

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> Client:
        return self.connect() if self._sock is None else self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(self, sig: Signature[P, R], params: P) -> R:
        """Call a method with typed params; its result as the method's result type."""
        from memd.api.messages import decode_result

        return decode_result(sig, self.call(sig.name, params))

    def call(self, method: str, params: Any = None) -> Any:
        """Call `method` by name with JSON params and return its result as JSON, or raise the
        error the daemon reported (`request` is the typed form).

        A connection the daemon refused as one too many (it did not read the request) is made
        again, briefly, before `ServerBusy` reaches the caller.
        """
        start = time.monotonic()
        while True:
            try:
                return self._call(method, params)
            except ServerBusy:
                self.close()
                if time.monotonic() - start > min(RETRY_BACKLOG_S, self.timeout):
                    raise
                time.sleep(0.05)

    def _call(self, method: str, params: Any) -> Any:
        if self._sock is None:
            self.connect()
        assert self._sock is not None
        rid = next(self._ids)
        try:
            self._sock.sendall(encode_request(method, {} if params is None else params, rid))
            line = self._readline()
        except (BrokenPipeError, ConnectionResetError) as exc:
            self.close()
            raise DaemonNotRunning(f"the daemon closed the connection: {exc}") from exc
        except TimeoutError as exc:
            self.close()
            raise DaemonNotRunning(f"the daemon did not answer within {self.timeout}s") from exc
        msg = json.loads(line)
        if "error" in msg:
            err = msg["error"]
            code, text = err.get("code", 0), err.get("message", "")
            cls = error_class(code)
            # Errors about the request itself are raised as their own class; the rest (a failure
            # inside the daemon) as RemoteError, which keeps the code and the daemon's hint.
            if cls is not None and cls is not ProtocolError:
                error = cls(text)
                if isinstance(err.get("data"), dict) and err["data"].get("hint"):
                    error.hint = str(err["data"]["hint"])
                raise error
            raise RemoteError(code, text, err.get("data"))
        return msg.get("result")

    def _readline(self) -> bytes:
        assert self._sock is not None
        while b"\n" not in self._buf:
            chunk = self._sock.recv(65536)
            if not chunk:
                raise ConnectionResetError("connection closed before a full answer")
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line


def project_param(value: str, *, base: Path | None = None) -> str:
    """A `project` param as the daemon takes it, resolved where the caller is.

    A slug (no `/`, not starting with `.` or `~`) is sent as it is; a path gets `~` expanded
    and is made absolute against `base` (default: the current folder), `..` folded. The daemon
    refuses relative paths: only the caller knows what they are relative to.
    """
    if not value or not ("/" in value or os.sep in value or value.startswith((".", "~"))):
        return value
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = (base if base is not None else Path.cwd()) / path
    return os.path.normpath(path)


def request(socket_path: Path, sig: Signature[P, R], params: P, timeout: float = 30.0) -> R:
    """One-shot typed call: connect, call, close."""
    with Client(socket_path, timeout=timeout) as c:
        return c.request(sig, params)
