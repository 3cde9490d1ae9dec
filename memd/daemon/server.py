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
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol, TypeVar

from memd.api import protocol
from memd.api.messages import Params
from memd.api.methods import Method
from memd.core.errors import (
    DaemonAlreadyRunning,
    MemdError,
    ProtocolError,
    RequestTooLarge,
    ServerBusy,
)
from memd.core.paths import ensure_private_dir
from memd.core.trim import give_memory_back
from memd.daemon.pool import ReaderPool

log = logging.getLogger(__name__)

CHUNK = 16 * 1024  # read size; the transport pauses a client past twice this
SMALL_LINE = 32 * 1024  # a partial line up to this needs no share of the shared budget
BACKLOG = 4096  # pending connects the kernel holds while the loop is busy
BUDGET_WAIT_S = 2.0  # how long a growing line waits for others to finish before it is refused


P = TypeVar("P", bound=Params)
R = TypeVar("R")


class Dispatcher(Protocol):
    """The method table the server answers from (the engine)."""

    def lookup(self, name: str, params: Any) -> tuple[Method[Any, Any], Any]:
        """The method and its validated params; raises MethodNotFound / InvalidParams."""
        ...

    def dispatch(self, method: Method[P, R], params: P) -> R:
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
    sock.listen(BACKLOG)
    sock.setblocking(False)
    return sock


class _Budget:
    """Bytes of partial request lines (past `SMALL_LINE` each), all connections together.

    A connection whose line grows past its free share waits here a moment (its client's sends
    block in the kernel) for others to finish, and is refused as busy if they do not: many slow
    senders cost bounded memory, not a line each.
    """

    def __init__(self, total: int) -> None:
        self.total = total
        self.used = 0
        self._changed = asyncio.Condition()

    async def take(self, n: int, wait_s: float) -> bool:
        """Reserve `n` bytes, waiting up to `wait_s` for them; False when they did not come."""
        async with self._changed:
            try:
                async with asyncio.timeout(wait_s):
                    await self._changed.wait_for(lambda: self.used + n <= self.total)
            except TimeoutError:
                return False
            self.used += n
            return True

    async def give(self, n: int) -> None:
        if n <= 0:
            return
        async with self._changed:
            self.used -= n
            self._changed.notify_all()


class _Conn:
    """One client's partial input and its share of the budget."""

    __slots__ = ("buf", "reserved", "scanned")

    def __init__(self) -> None:
        self.buf = bytearray()
        self.reserved = 0
        self.scanned = 0


class Server:
    """Serves a method table on one listening Unix socket."""

    def __init__(
        self,
        methods: Dispatcher,
        *,
        max_request_bytes: int = 1 << 20,
        read_timeout: float = 60.0,
        allowed_uid: int | None = None,
        max_connections: int = 2048,
        max_buffered_bytes: int = 64 << 20,
        workers: int = 8,
        readers: int = 2,
        on_reader_thread: Callable[[], None] | None = None,
    ) -> None:
        self.methods = methods
        self.max_request_bytes = max_request_bytes
        self.read_timeout = read_timeout
        self.allowed_uid = os.getuid() if allowed_uid is None else allowed_uid
        self.max_connections = max_connections
        self._budget = _Budget(max(max_buffered_bytes, max_request_bytes))
        # Two bounded pools: short reads (context, search) never queue behind slow writes.
        self._pools: dict[str, Executor] = {
            # The thread that went idle last answers first: one client's queries keep to one
            # warm page cache (see memd/daemon/pool.py).
            "reader": ReaderPool(readers, "memd-reader", initializer=on_reader_thread),
            "pool": ThreadPoolExecutor(workers, thread_name_prefix="memd-worker"),
        }
        self._server: asyncio.AbstractServer | None = None
        self._inflight = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._trim: asyncio.TimerHandle | None = None
        self.requests = 0
        self.refused = 0
        self.busy = 0

    def apply_limits(
        self,
        *,
        max_request_bytes: int,
        read_timeout: float,
        max_connections: int,
        max_buffered_bytes: int,
    ) -> None:
        """New limits from a settings reload: they apply from the next read or connection on."""
        self.max_request_bytes = max_request_bytes
        self.read_timeout = read_timeout
        self.max_connections = max_connections
        self._budget.total = max(max_buffered_bytes, max_request_bytes)

    async def start(self, sock: socket.socket) -> None:
        self._server = await asyncio.start_unix_server(
            self._serve, sock=sock, limit=CHUNK, backlog=BACKLOG
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
        for pool in self._pools.values():
            pool.shutdown(wait=False, cancel_futures=True)

    @property
    def connections(self) -> int:
        return len(self._writers)

    async def _refuse(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, code: int, text: str
    ) -> None:
        # TimeoutError is an OSError; ValueError is a request line over the size limit.
        with contextlib.suppress(OSError, ValueError, asyncio.LimitOverrunError):
            writer.write(protocol.encode_error(None, code, text))
            await writer.drain()
            # Closing at once would make the client's first send fail with EPIPE (or reset
            # the connection) before it reads why: take some of its request first.
            await asyncio.wait_for(reader.read(CHUNK), 1.0)
        writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        uid = peer_uid(sock) if sock is not None else None
        if uid is None or (uid != self.allowed_uid and uid != 0):
            self.refused += 1
            log.warning("refused a connection from uid %s", uid)
            await self._refuse(
                reader, writer, protocol.PERMISSION_DENIED, "permission denied: not your daemon"
            )
            return
        if len(self._writers) >= self.max_connections:
            self.busy += 1
            if self.busy in (1, 10, 100) or self.busy % 1000 == 0:
                log.warning(
                    "refused a connection: %d open (cap %d)", self.busy, self.max_connections
                )
            await self._refuse(
                reader, writer, protocol.SERVER_BUSY,
                f"too many connections ({self.max_connections}): try again shortly",
            )  # fmt: skip
            return
        self._writers.add(writer)
        # asyncio's socket transport reads up to 256 KiB at a time into the stream's buffer
        # before it pauses; a thousand slow senders would hold a quarter GB that way.
        if isinstance(getattr(writer.transport, "max_size", None), int):
            writer.transport.max_size = CHUNK  # type: ignore[attr-defined]
        conn = _Conn()
        # Why the connection ended, for the debug log: a client whose connections all close
        # without an answer can tell an idle timeout from a refusal from a crash.
        why = "end of stream"
        answered = 0
        try:
            while True:
                try:
                    # asyncio.timeout, not wait_for: wait_for wraps every read in a new task.
                    async with asyncio.timeout(self.read_timeout):
                        line = await self._readline(reader, conn)
                except TimeoutError:
                    why = f"idle for {self.read_timeout:g} s"
                    break
                except (RequestTooLarge, ServerBusy) as exc:
                    # The stream cannot be resynchronised safely: answer, then close.
                    why = str(exc)
                    writer.write(protocol.encode_error(None, protocol.error_code(exc), str(exc)))
                    await writer.drain()
                    break
                if line is None:
                    if conn.buf:
                        why = f"end of stream inside a request ({len(conn.buf)} bytes unread)"
                    break
                if not line.strip():
                    continue
                response = await self._dispatch(line)
                if response is not None:
                    writer.write(response)
                    await writer.drain()
                    answered += 1
        except (ConnectionResetError, BrokenPipeError) as exc:
            # The client went away mid-request; nothing of ours is harmed.
            why = f"the client went away ({type(exc).__name__})"
        finally:
            log.debug("connection closed: %s; %d answered", why, answered)
            self._writers.discard(writer)
            reserved, conn.reserved, conn.buf = conn.reserved, 0, bytearray()
            await self._budget.give(reserved)
            if reserved:
                self._give_memory_back()
            with contextlib.suppress(Exception):
                writer.close()

    async def _readline(self, reader: asyncio.StreamReader, conn: _Conn) -> bytes | None:
        """The next request line, None at the end of the stream.

        The line is read in chunks; past `SMALL_LINE` it takes its growth from the shared
        budget first, and past `max_request_bytes` it is refused.
        """
        buf = conn.buf
        while True:
            i = buf.find(b"\n", conn.scanned)
            if i > self.max_request_bytes:
                raise RequestTooLarge(f"request larger than {self.max_request_bytes} bytes")
            if i >= 0:
                line = bytes(buf[: i + 1])
                del buf[: i + 1]
                conn.scanned = 0
                keep = max(0, len(buf) - SMALL_LINE)
                await self._budget.give(conn.reserved - keep)
                conn.reserved = keep
                return line
            conn.scanned = len(buf)
            if len(buf) > self.max_request_bytes:
                raise RequestTooLarge(f"request larger than {self.max_request_bytes} bytes")
            chunk = await reader.read(CHUNK)
            if not chunk:
                return None
            need = max(0, len(buf) + len(chunk) - SMALL_LINE) - conn.reserved
            if need > 0:
                if not await self._budget.take(need, BUDGET_WAIT_S):
                    raise ServerBusy(
                        f"busy: {self._budget.total >> 20} MiB of requests are already arriving;"
                        " try again shortly"
                    )
                conn.reserved += need
            buf += chunk

    def _give_memory_back(self) -> None:
        """Ask the C allocator to return freed memory to the OS once big lines are gone.

        Debounced: a burst of closing connections ends in one trim, half a second after the
        last one.
        """
        if self._trim is not None:
            self._trim.cancel()
        self._trim = asyncio.get_running_loop().call_later(0.5, self._trim_now)

    def _trim_now(self) -> None:
        self._trim = None
        if self._budget.used:
            return  # other big lines are still arriving; their end trims again
        # Closed connections' transports and buffers sit in reference cycles until a full
        # collection (which `give_memory_back` runs first); only then is their memory free.
        give_memory_back()

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
            where = method.where(params)
            if where == "loop":
                # A read well under a millisecond: a thread hand-off would cost more than it.
                result = self.methods.dispatch(method, params)
            else:
                loop = asyncio.get_running_loop()
                result = await loop.run_in_executor(
                    self._pools[where], self.methods.dispatch, method, params
                )
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
