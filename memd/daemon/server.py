"""The asyncio Unix-socket server: newline-delimited JSON-RPC 2.0, one request per line.

Requests are answered from a method table (`Dispatcher`, the engine): each method's handler is
a plain synchronous function run where its declaration says (on the loop, or in a worker
thread so a slow call never blocks other clients). Malformed requests get a JSON-RPC error
object and the connection keeps working; peers running as another user are refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import socket
import struct
import sys
from pathlib import Path
from typing import Any, Protocol

from memd.api import protocol
from memd.api.methods import Method
from memd.core.errors import DaemonAlreadyRunning, MemdError, ProtocolError
from memd.core.paths import ensure_private_dir

log = logging.getLogger(__name__)


class Dispatcher(Protocol):
    """The method table the server answers from (the engine)."""

    def lookup(self, name: str, params: Any) -> tuple[Method[Any, Any], Any]:
        """The method and its validated params; raises MethodNotFound / InvalidParams."""
        ...

    def dispatch(self, method: Method[Any, Any], params: Any) -> Any:
        """Run the method on validated params and return its result."""
        ...


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process on the other end of a Unix socket (None when unknown)."""
    try:
        if hasattr(socket, "SO_PEERCRED"):
            creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            return int(struct.unpack("3i", creds)[1])
        if sys.platform == "darwin":
            # LOCAL_PEERCRED (0x001) at level SOL_LOCAL (0) returns struct xucred.
            raw = sock.getsockopt(0, 0x001, struct.calcsize("IIh16I") + 8)
            return int(struct.unpack_from("II", raw)[1])
    except OSError:
        return None
    return None


def bind_unix_socket(path: Path) -> socket.socket:
    """Bind a listening socket at `path` (0600 in a 0700 folder), replacing only a stale one."""
    ensure_private_dir(path.parent)
    if path.exists() or path.is_symlink():
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.settimeout(1)
        try:
            probe.connect(str(path))
        except (ConnectionRefusedError, FileNotFoundError):
            log.info("removing stale socket %s", path)
            path.unlink(missing_ok=True)
        except OSError as exc:
            if exc.errno not in (errno.ECONNREFUSED, errno.ENOENT, errno.ENOTSOCK):
                raise
            path.unlink(missing_ok=True)
        else:
            raise DaemonAlreadyRunning(
                f"another memd daemon is already serving {path}",
                hint="use `memd status` to see it, or stop it first",
            )
        finally:
            probe.close()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(str(path))
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(256)
    sock.setblocking(False)
    return sock


class Server:
    """Serves a method table on one listening Unix socket."""

    def __init__(
        self,
        methods: Dispatcher,
        *,
        max_request_bytes: int = 1 << 20,
        read_timeout: float = 60.0,
        allowed_uid: int | None = None,
    ) -> None:
        self.methods = methods
        self.max_request_bytes = max_request_bytes
        self.read_timeout = read_timeout
        self.allowed_uid = os.getuid() if allowed_uid is None else allowed_uid
        self._server: asyncio.AbstractServer | None = None
        self._inflight = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._writers: set[asyncio.StreamWriter] = set()
        self.requests = 0
        self.refused = 0

    async def start(self, sock: socket.socket) -> None:
        self._server = await asyncio.start_unix_server(
            self._serve, sock=sock, limit=self.max_request_bytes + 1
        )

    async def stop(self, grace: float = 5.0) -> None:
        """Stop accepting, let in-flight requests finish (up to `grace`), then close connections."""
        if self._server is not None:
            self._server.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), grace)
        for w in list(self._writers):
            w.close()
        if self._server is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), 1.0)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        uid = peer_uid(sock) if sock is not None else None
        if uid is None or (uid != self.allowed_uid and uid != 0):
            self.refused += 1
            log.warning("refused a connection from uid %s", uid)
            # TimeoutError is an OSError; ValueError is a request line over the size limit.
            with contextlib.suppress(OSError, ValueError):
                writer.write(
                    protocol.encode_error(
                        None, protocol.PERMISSION_DENIED, "permission denied: not your daemon"
                    )
                )
                await writer.drain()
                # Closing at once would make the client's first send fail with EPIPE before it
                # reads why: take its request (up to a second), then close.
                await asyncio.wait_for(reader.readline(), 1.0)
            writer.close()
            return
        self._writers.add(writer)
        try:
            while True:
                try:
                    # asyncio.timeout, not wait_for: wait_for wraps every read in a new task.
                    async with asyncio.timeout(self.read_timeout):
                        line = await reader.readline()
                except TimeoutError:
                    break
                except (ValueError, asyncio.LimitOverrunError):
                    # The line is over the limit: the stream cannot be resynchronised safely.
                    writer.write(
                        protocol.encode_error(
                            None,
                            protocol.REQUEST_TOO_LARGE,
                            f"request larger than {self.max_request_bytes} bytes",
                        )
                    )
                    await writer.drain()
                    break
                if not line:
                    break
                if not line.strip():
                    continue
                response = await self._dispatch(line)
                if response is not None:
                    writer.write(response)
                    await writer.drain()
        except (ConnectionResetError, BrokenPipeError):
            pass  # the client went away mid-request; nothing of ours is harmed
        finally:
            self._writers.discard(writer)
            with contextlib.suppress(Exception):
                writer.close()

    async def _dispatch(self, line: bytes) -> bytes | None:
        try:
            req = protocol.decode_request(line)
        except ProtocolError as exc:
            return protocol.encode_error(None, protocol.error_code(exc), str(exc))
        self.requests += 1
        self._inflight += 1
        self._idle.clear()
        try:
            method, params = self.methods.lookup(req.method, req.params)
            if method.where(params) == "loop":
                # A read well under a millisecond: a thread hand-off would cost more than it.
                result = self.methods.dispatch(method, params)
            else:
                result = await asyncio.to_thread(self.methods.dispatch, method, params)
            out = protocol.encode_result(req.id, result)
        except MemdError as exc:
            data = {"hint": exc.hint} if exc.hint else None
            out = protocol.encode_error(req.id, protocol.error_code(exc), str(exc), data)
        except Exception as exc:
            log.exception("method %s failed", req.method)
            out = protocol.encode_error(req.id, protocol.APP_ERROR, f"internal error: {exc}")
        finally:
            self._inflight -= 1
            if self._inflight == 0:
                self._idle.set()
        return None if req.id is None else out
