"""A local HTTP server speaking the PostgREST subset postgrest-py uses for memd's sync table.

Real sockets, real HTTP/1.1 (keep-alive included), so the real postgrest-py client and httpx
run unchanged against it:

    with FakePostgrest(api_key="k") as server:
        backend = SupabaseBackend(server.url, "k")
        server.fail_next(Fault.http_503_html())
        with server.outage():          # listening socket closed: connection refused
            ...

Supported: ``POST /rest/v1/<table>`` (upsert with ``on_conflict``/``columns`` and
``Prefer: resolution=merge-duplicates|ignore-duplicates, return=minimal|representation``, or
plain insert; with ``select`` the representation holds only those columns) and
``GET /rest/v1/<table>`` or ``GET /rest/v1/<table's events>`` with ``select``, ``col=op.value``
filters (eq, neq, gt, gte, lt, lte, in), ``order`` and ``limit``/``offset``. Writes follow the
trigger in ``memd/sync/sql/schema.sql``: the server sets synced_at (strictly increasing), a
replayed op_id is a no-op, a lower version from the device that already wrote the file is
dropped, a write whose non-NULL ``base_sha256`` differs from another device's stored row (and
from its own bytes) is skipped, base_sha256 is stored as NULL, and every applied write appends
an event. The representation lists only the rows written, as PostgreSQL's RETURNING does.
``FakePostgrest(base_column=False)`` serves a table made by the schema before compare-and-swap.
Constraint and type errors come back with the status and JSON body PostgREST would send, and a
batch is all-or-nothing.
"""

from __future__ import annotations

import contextlib
import json
import math
import operator
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

_COLUMNS: dict[str, type] = {
    "namespace": str,
    "path": str,
    "content": str,
    "sha256": str,
    "updated_at": float,
    "deleted": bool,
    "device_id": str,
    "version": int,
    "op_id": str,
    "synced_at": float,
    "base_sha256": str,
}
_NULLABLE = ("base_sha256",)
_EVENT_COLUMNS: dict[str, type] = {
    "op_id": str,
    "namespace": str,
    "path": str,
    "sha256": str,
    "version": int,
    "device_id": str,
    "deleted": bool,
    "updated_at": float,
    "received_at": float,
}
_DEFAULTS: dict[str, Any] = {"content": "", "deleted": False, "base_sha256": None}
_NON_EMPTY = ("namespace", "path", "device_id", "op_id")


@dataclass(frozen=True)
class Fault:
    """One injected failure, consumed by the next request (optionally only for `method`)."""

    status: int = 0  # 0: no canned response, process the request normally after `delay`
    body: bytes = b""
    content_type: str = "application/json"
    delay: float = 0.0  # seconds to wait before answering (beyond the client timeout = timeout)
    drop: bool = False  # close the connection without answering
    method: str = ""  # "" = any method

    @classmethod
    def json(cls, status: int, payload: dict[str, Any], *, method: str = "") -> Fault:
        return cls(status=status, body=json.dumps(payload).encode(), method=method)

    @classmethod
    def http_503_html(cls, *, method: str = "") -> Fault:
        """A load balancer's HTML error page: APIError gets code "503"."""
        page = b"<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>"
        return cls(status=503, body=page, content_type="text/html", method=method)

    @classmethod
    def slow(cls, seconds: float, *, method: str = "") -> Fault:
        """Answer normally (and apply a write) only after `seconds`: the client times out."""
        return cls(delay=seconds, method=method)

    @classmethod
    def disconnect(cls, *, method: str = "") -> Fault:
        return cls(drop=True, method=method)

    @classmethod
    def conflict_23505(cls, *, method: str = "") -> Fault:
        return cls.json(
            409,
            {
                "code": "23505",
                "message": 'duplicate key value violates unique constraint "memd_files_pkey"',
                "details": "Key (namespace, path)=(ns, a.md) already exists.",
                "hint": None,
            },
            method=method,
        )

    @classmethod
    def jwt_invalid(cls, *, method: str = "") -> Fault:
        return cls.json(
            401,
            {"code": "PGRST301", "message": "JWSError JWSInvalidSignature", "details": None,
             "hint": None},
            method=method,
        )  # fmt: skip

    @classmethod
    def invalid_api_key(cls, *, method: str = "") -> Fault:
        """The API gateway's answer to a wrong key (no PostgREST code)."""
        return cls.json(
            401,
            {"message": "Invalid API key",
             "hint": "Double check your Supabase `anon` or `service_role` API key."},
            method=method,
        )  # fmt: skip

    @classmethod
    def missing_table(cls, table: str = "memd_files", *, method: str = "") -> Fault:
        return cls.json(
            404,
            {"code": "PGRST205", "details": None, "hint": None,
             "message": f"Could not find the table 'public.{table}' in the schema cache"},
            method=method,
        )  # fmt: skip

    @classmethod
    def gateway_json(cls, status: int = 502, *, method: str = "") -> Fault:
        """A gateway error with a JSON body but no code (only the HTTP status tells)."""
        return cls.json(
            status,
            {"message": "An invalid response was received from the upstream server"},
            method=method,
        )


@dataclass(frozen=True)
class RecordedRequest:
    """A request as the server saw it (header names lower-cased)."""

    method: str
    path: str
    query: tuple[tuple[str, str], ...]
    headers: dict[str, str]
    body: Any = None

    def param(self, name: str) -> str | None:
        return next((value for key, value in self.query if key == name), None)

    @property
    def prefer(self) -> set[str]:
        return {p.strip() for p in self.headers.get("prefer", "").split(",") if p.strip()}


class _ApiError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.payload = {"code": code, "message": message, "details": None, "hint": None}


@dataclass
class _Table:
    rows: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    last_synced: float = 0.0


class FakePostgrest:
    """The server: start/stop, fault queue, recorded requests and the stored rows."""

    def __init__(
        self,
        *,
        tables: tuple[str, ...] = ("memd_files",),
        api_key: str | None = None,
        base_column: bool = True,
    ):
        self.api_key = api_key
        self.base_column = base_column
        self.requests: list[RecordedRequest] = []
        self._tables = {name: _Table() for name in tables}
        self._faults: list[Fault] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # lifecycle ------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakePostgrest:
        """Listen (on a free port the first time, on the same port after an outage)."""
        if self._server is not None:
            return self
        self._stopping.clear()
        server = ThreadingHTTPServer(("127.0.0.1", self.port), self._handler_class())
        server.daemon_threads = False  # joined in stop(): no handler thread outlives a test
        self._server = server
        self.port = server.server_address[1]
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True,
            name=f"fake-postgrest-{self.port}",
        )  # fmt: skip
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and cut every open connection, so clients get "connection refused"."""
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()  # wakes handlers sleeping in a slow fault
        server.shutdown()
        with self._lock:
            connections = list(self._connections)
        # Keep-alive connections would otherwise keep serving requests after the "outage".
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        server.server_close()  # joins the handler threads
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    @contextlib.contextmanager
    def outage(self) -> Iterator[None]:
        """Connection refused inside the block; serving again (same port) after it."""
        self.stop()
        try:
            yield
        finally:
            self.start()

    def __enter__(self) -> FakePostgrest:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # test controls --------------------------------------------------------------------

    def fail_next(self, *faults: Fault) -> None:
        """Queue faults; each matching request consumes one, in order."""
        with self._lock:
            self._faults.extend(faults)

    def pending_faults(self) -> int:
        with self._lock:
            return len(self._faults)

    def rows(self, table: str = "memd_files") -> list[dict[str, Any]]:
        """Stored rows, oldest synced_at first (copies)."""
        with self._lock:
            rows = [dict(r) for r in self._tables[table].rows.values()]
        return sorted(rows, key=lambda r: r["synced_at"])

    def events(self, table: str = "memd_files") -> list[dict[str, Any]]:
        """One entry per applied write, in arrival order (copies)."""
        with self._lock:
            return [dict(e) for e in self._tables[table].events]

    def clear(self) -> None:
        """Forget rows, events, faults and recorded requests."""
        with self._lock:
            for name in self._tables:
                self._tables[name] = _Table()
            self._faults.clear()
            self.requests.clear()

    # request handling -----------------------------------------------------------------

    def _take_fault(self, method: str) -> Fault | None:
        with self._lock:
            for index, fault in enumerate(self._faults):
                if not fault.method or fault.method == method:
                    return self._faults.pop(index)
        return None

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                with fake._lock:
                    fake._connections.add(self.connection)

            def finish(self) -> None:
                with fake._lock:
                    fake._connections.discard(self.connection)
                with contextlib.suppress(OSError):
                    super().finish()

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

            def do_GET(self) -> None:
                fake._serve(self, "GET")

            def do_POST(self) -> None:
                fake._serve(self, "POST")

            def do_PATCH(self) -> None:
                fake._serve(self, "PATCH")

            def do_DELETE(self) -> None:
                fake._serve(self, "DELETE")

        return Handler

    def _serve(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        split = urlsplit(handler.path)
        query = tuple(parse_qsl(split.query, keep_blank_values=True))
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        body: Any = None
        body_error = False
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body_error = True
        record = RecordedRequest(
            method=method,
            path=split.path,
            query=query,
            headers={k.lower(): v for k, v in handler.headers.items()},
            body=body,
        )
        with self._lock:
            self.requests.append(record)

        fault = self._take_fault(method)
        if fault is not None:
            if fault.drop:
                handler.close_connection = True
                with contextlib.suppress(OSError):
                    handler.connection.shutdown(socket.SHUT_RDWR)
                return
            if fault.delay and self._stopping.wait(fault.delay):
                return  # server stopping: give up on this request
            if fault.status:
                self._send(handler, fault.status, fault.body, fault.content_type)
                return

        try:
            if body_error:
                raise _ApiError(400, "PGRST102", "Empty or invalid json")
            status, payload = self._route(record)
        except _ApiError as exc:
            status, payload = exc.status, exc.payload
        data = b"" if payload is None else json.dumps(payload).encode()
        self._send(handler, status, data, "application/json")

    def _send(self, handler: BaseHTTPRequestHandler, status: int, body: bytes, ctype: str) -> None:
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", f"{ctype}; charset=utf-8")
            handler.send_header("Content-Length", str(len(body)))
            if status in (200, 201):
                handler.send_header("Content-Range", "*/*")
            handler.end_headers()
            handler.wfile.write(body)
        except OSError:
            handler.close_connection = True  # the client gave up (timeout) before the answer

    def _route(self, req: RecordedRequest) -> tuple[int, Any]:
        if self.api_key is not None and req.headers.get("apikey") != self.api_key:
            return 401, {
                "message": "Invalid API key",
                "hint": "Double check your Supabase `anon` or `service_role` API key.",
            }
        prefix = "/rest/v1/"
        if not req.path.startswith(prefix) or "/" in req.path[len(prefix) :]:
            raise _ApiError(404, "PGRST125", "Invalid path specified in request URL")
        name = req.path[len(prefix) :]
        owner = next((t for t in self._tables if _events_name(t) == name), None)
        if owner is not None and req.method == "GET":
            return 200, self._select(owner, req, events=True)
        if name not in self._tables:
            raise _ApiError(
                404, "PGRST205", f"Could not find the table 'public.{name}' in the schema cache"
            )
        if req.method == "GET":
            return 200, self._select(name, req)
        if req.method == "POST":
            return self._insert(name, req)
        raise _ApiError(405, "PGRST117", f"Unsupported HTTP method: {req.method}")

    # SQL-ish semantics -----------------------------------------------------------------

    def _columns(self, events: bool) -> dict[str, type]:
        if events:
            return _EVENT_COLUMNS
        return _COLUMNS if self.base_column else {k: v for k, v in _COLUMNS.items()
                                                   if k != "base_sha256"}  # fmt: skip

    def _select(
        self, name: str, req: RecordedRequest, events: bool = False
    ) -> list[dict[str, Any]]:
        known = self._columns(events)
        shown = _events_name(name) if events else name
        select = req.param("select") or "*"
        columns = list(known) if select == "*" else [c.strip('"') for c in select.split(",")]
        for column in columns:
            _check_column(shown, column, known, code="42703")
        filters: list[tuple[str, str, Any]] = []
        for key, value in req.query:
            if key in ("select", "order", "limit", "offset"):
                continue
            _check_column(shown, key, known, code="42703")
            op, _, raw = value.partition(".")
            if op == "in":
                filters.append((key, op, [_convert(key, v, known) for v in _in_list(raw)]))
                continue
            if op not in ("eq", "neq", "gt", "gte", "lt", "lte"):
                raise _ApiError(400, "PGRST100", f'"failed to parse filter ({value})"')
            filters.append((key, op, _convert(key, raw, known)))
        with self._lock:
            table = self._tables[name]
            source = table.events if events else table.rows.values()
            rows = [dict(r) for r in source]
        rows = [r for r in rows if all(_compare(r[c], op, v) for c, op, v in filters)]
        for term in reversed((req.param("order") or "").split(",")):
            if not term:
                continue
            column, _, direction = term.partition(".")
            _check_column(shown, column, known, code="42703")
            rows.sort(key=operator.itemgetter(column), reverse=direction.startswith("desc"))
        offset = int(req.param("offset") or 0)
        limit = req.param("limit")
        rows = rows[offset : offset + int(limit)] if limit is not None else rows[offset:]
        return [{c: r[c] for c in columns} for r in rows]

    def _insert(self, name: str, req: RecordedRequest) -> tuple[int, Any]:
        body = req.body
        items = body if isinstance(body, list) else [body]
        if not all(isinstance(item, dict) for item in items):
            raise _ApiError(400, "PGRST102", "All object keys must match")
        columns_param = req.param("columns")
        if columns_param:
            columns = [c.strip().strip('"') for c in columns_param.split(",")]
        else:
            columns = list(items[0]) if items else []
        for column in columns:
            _check_column(name, column, self._columns(False))
        shown = [c.strip('"') for c in (req.param("select") or "*").split(",")]
        if shown != ["*"]:
            for column in shown:
                _check_column(name, column, self._columns(False), code="42703")
        prefer = req.prefer
        merge = "resolution=merge-duplicates" in prefer
        ignore = "resolution=ignore-duplicates" in prefer
        on_conflict = req.param("on_conflict")
        if (merge or ignore) and on_conflict not in (None, "namespace,path"):
            raise _ApiError(
                400, "42P10",
                "there is no unique or exclusion constraint matching the ON CONFLICT specification",
            )  # fmt: skip

        candidates = [_validated(name, item, columns) for item in items]
        keys = [(c["namespace"], c["path"]) for c in candidates]
        if merge and len(set(keys)) != len(keys):
            raise _ApiError(
                500, "21000", "ON CONFLICT DO UPDATE command cannot affect row a second time"
            )
        applied: list[dict[str, Any]] = []
        with self._lock:
            table = self._tables[name]
            # All-or-nothing, like one INSERT statement: work on copies and commit at the end.
            rows = dict(table.rows)
            events = list(table.events)
            last = table.last_synced
            for candidate in candidates:
                key = (candidate["namespace"], candidate["path"])
                existing = rows.get(key)
                if existing is not None and not (merge or ignore):
                    raise _ApiError(
                        409, "23505",
                        f'duplicate key value violates unique constraint "{name}_pkey"',
                    )  # fmt: skip
                if existing is not None and ignore:
                    continue
                if _skipped(candidate, existing, events):
                    continue
                last = max(time.time(), last + 0.000001)
                stored = {**(existing or {}), **candidate, "synced_at": last}
                if self.base_column:
                    stored["base_sha256"] = None
                rows[key] = stored
                events.append(
                    {**{k: stored[k] for k in _EVENT_COLUMNS if k != "received_at"},
                     "received_at": last}
                )  # fmt: skip
                applied.append(dict(stored))
            table.rows, table.events, table.last_synced = rows, events, last
        if "return=representation" in prefer:
            if shown != ["*"]:
                applied = [{c: r[c] for c in shown} for r in applied]
            return 201, applied
        return 201, None


def _events_name(table: str) -> str:
    return "memd_file_events" if table == "memd_files" else f"{table}_events"


def _check_column(
    table: str, column: str, known: dict[str, type] = _COLUMNS, *, code: str = "PGRST204"
) -> None:
    if column not in known:
        if code == "42703":  # a read: PostgreSQL itself refuses the column
            raise _ApiError(400, code, f"column {table}.{column} does not exist")
        raise _ApiError(
            400,
            code,
            f"Could not find the '{column}' column of '{table}' in the schema cache",
        )


def _in_list(raw: str) -> list[str]:
    """The values of an ``in.(a,"b,c")`` filter (PostgREST quotes values with , ( ) or ")."""
    if not (raw.startswith("(") and raw.endswith(")")):
        raise _ApiError(400, "PGRST100", f'"failed to parse filter (in.{raw})"')
    body, values, i = raw[1:-1], [], 0
    while i < len(body):
        if body[i] == '"':
            j, chars = i + 1, []
            while body[j] != '"':
                if body[j] == "\\":
                    j += 1
                chars.append(body[j])
                j += 1
            values.append("".join(chars))
            i = j + 2  # past the quote and the comma
        else:
            j = body.find(",", i)
            j = len(body) if j < 0 else j
            values.append(body[i:j])
            i = j + 1
    return values


def _convert(column: str, raw: str, known: dict[str, type] = _COLUMNS) -> Any:
    kind = known[column]
    try:
        if kind is bool:
            if raw not in ("true", "false"):
                raise ValueError(raw)
            return raw == "true"
        return kind(raw)
    except ValueError:
        raise _ApiError(
            400, "22P02", f'invalid input syntax for type {kind.__name__}: "{raw}"'
        ) from None


def _compare(left: Any, op: str, right: Any) -> bool:
    if op == "in":
        return left in right
    if op == "eq":
        return bool(left == right)
    if op == "neq":
        return bool(left != right)
    if op == "gt":
        return bool(left > right)
    if op == "gte":
        return bool(left >= right)
    if op == "lt":
        return bool(left < right)
    return bool(left <= right)


def _validated(table: str, item: dict[str, Any], columns: list[str]) -> dict[str, Any]:
    row: dict[str, Any] = dict(_DEFAULTS)
    for column in columns:
        if column == "synced_at":
            continue  # the trigger overwrites it anyway
        value = item.get(column)
        if value is None:
            row[column] = None
            continue
        kind = _COLUMNS[column]
        ok = (
            isinstance(value, bool)
            if kind is bool
            else isinstance(value, int) and not isinstance(value, bool)
            if kind is int
            else isinstance(value, int | float) and not isinstance(value, bool)
            if kind is float
            else isinstance(value, str)
        )
        if not ok or (kind is float and not math.isfinite(value)):
            raise _ApiError(400, "22P02", f"invalid input syntax for column {column}: {value!r}")
        if kind is str and "\x00" in value:
            raise _ApiError(400, "22P05", "unsupported Unicode escape sequence")
        row[column] = float(value) if kind is float else value
    for column in _COLUMNS:
        if column not in ("synced_at", *_NULLABLE) and row.get(column) is None:
            raise _ApiError(
                400, "23502",
                f'null value in column "{column}" of relation "{table}" violates not-null constraint',
            )  # fmt: skip
    bad = [c for c in _NON_EMPTY if row[c] == ""]
    if row["path"].startswith("/"):
        bad.append("path")
    if row["version"] < 0:
        bad.append("version")
    if bad:
        raise _ApiError(
            400, "23514",
            f'new row for relation "{table}" violates check constraint "{table}_{bad[0]}_check"',
        )  # fmt: skip
    return row


def _skipped(
    candidate: dict[str, Any], existing: dict[str, Any] | None, events: list[dict[str, Any]]
) -> bool:
    """The trigger's rules: replayed op_id, an older version from the same device, or a base
    that is not the other device's stored row (compare-and-swap)."""
    if any(e["op_id"] == candidate["op_id"] for e in events):
        return True
    if (
        existing is not None
        and existing["device_id"] == candidate["device_id"]
        and candidate["version"] < existing["version"]
    ):
        return True
    if any(
        e["namespace"] == candidate["namespace"]
        and e["path"] == candidate["path"]
        and e["device_id"] == candidate["device_id"]
        and e["version"] > candidate["version"]
        for e in events
    ):
        return True
    base = candidate.get("base_sha256")
    return (
        base is not None
        and existing is not None
        and existing["device_id"] != candidate["device_id"]
        and existing["sha256"] not in (base, candidate["sha256"])
    )
