"""The `supabase` sync backend: postgrest-py over the PostgREST API of a Supabase project.

Only the table API is used (upsert, select, filters), so the client is postgrest-py alone,
with the headers supabase-py would send (the key as `apikey` and as a bearer token); the rest
of supabase-py (auth, realtime, storage, functions) is not installed.

REST cannot run DDL, so the tables come from `sql/schema.sql` pasted into the Supabase SQL
editor (or the `postgres` backend's init-schema with the database URL). The same trigger as
for the postgres backend assigns synced_at and drops replays and stale versions.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from memd.core.errors import SyncError, SyncPermanent, SyncRetryable
from memd.sync.backend import (
    BASE_COLUMN,
    DEFAULT_TABLE,
    OUTDATED_SCHEMA,
    PULL_COLUMNS,
    PUSH_COLUMNS,
    PushResult,
    StoredRow,
    SyncRow,
    check_table_name,
    classify_sqlstate,
    events_table,
    missing_extra,
    schema_path,
    sort_skipped,
)

T = TypeVar("T")

# PostgREST's own codes for "cannot reach / not ready": connection failure, pool timeout,
# schema cache loading.
_RETRYABLE_PGRST = ("PGRST000", "PGRST001", "PGRST002", "PGRST003")
_SCHEMA_PGRST = ("PGRST200", "PGRST202", "PGRST204", "PGRST205")
_KEY_HINT = "check the Supabase key (memd needs the service_role / secret key)"
_MAX_MESSAGE = 300
_MIN_SECRET = 8
_HTTP_URL = re.compile(r"https?://[^\s/]+")


def schema_hint() -> str:
    """How to create the tables for this backend."""
    return (
        f"run {schema_path()} in the Supabase SQL editor, or use the postgres backend with "
        "the project's database URL and `memd sync init-schema`"
    )


def classify_api_error(
    status: int | None, code: str | None, message: str = ""
) -> tuple[type[SyncError], str]:
    """Retryable or permanent for a failed PostgREST call, with a hint for the user.

    `status` is the HTTP status (None if unknown); `code` is APIError.code: a SQLSTATE, a
    PGRST code, or the status itself as text when the body was not JSON (a proxy's HTML page).
    """
    code = (code or "").strip()
    if len(code) == 3 and code.isdigit():
        status = status or int(code)
        code = ""
    if code.startswith("PGRST"):
        if code in _RETRYABLE_PGRST:
            return SyncRetryable, ""
        if code in _SCHEMA_PGRST:
            return SyncPermanent, f"sync schema missing or outdated: {schema_hint()}"
        if code.startswith("PGRST3"):  # JWT problems
            return SyncPermanent, _KEY_HINT
        return SyncPermanent, ""
    if code:
        return classify_sqlstate(code, schema_hint=schema_hint())
    if status is None:
        if "api key" in message.lower():
            return SyncPermanent, _KEY_HINT
        return SyncPermanent, ""
    if status in (408, 425, 429) or status >= 500:
        return SyncRetryable, ""
    if status in (401, 403):
        return SyncPermanent, _KEY_HINT
    if status == 404:
        return SyncPermanent, f"check the Supabase URL and that the table exists: {schema_hint()}"
    return SyncPermanent, ""


class SupabaseBackend:
    """Sync rows to `table` through a Supabase project's REST API.

    `timeout` bounds every HTTP request (connect and read). Thread-safe (calls are
    serialised). Raises only SyncRetryable and SyncPermanent; the key never appears in them.
    """

    name = "supabase"

    def __init__(self, url: str, key: str, table: str = DEFAULT_TABLE, timeout: float = 10) -> None:
        try:
            import httpx
            from postgrest import SyncPostgrestClient
            from postgrest.exceptions import APIError
            from postgrest.types import ReturnMethod
        except ImportError as exc:
            raise missing_extra("supabase", exc) from exc

        if not _HTTP_URL.match(url) or not key:
            problem = "the key is empty" if _HTTP_URL.match(url) else "the URL is not http(s)"
            raise SyncPermanent(
                f"invalid Supabase settings: {problem}",
                hint="the URL must look like https://<project>.supabase.co and the key be set",
            )
        self._httpx = httpx
        self._api_error = APIError
        self._representation = ReturnMethod.representation
        self._table = check_table_name(table)
        self._url = url
        self._key = key
        self._lock = threading.Lock()
        self._last_status: int | None = None
        # memd's own httpx client instead of postgrest-py's `timeout`: that option is cut to
        # whole seconds and triggers a DeprecationWarning, and the hook below keeps the HTTP
        # status, which APIError drops whenever the body is JSON (e.g. a gateway's 502/429).
        self._http = httpx.Client(
            timeout=httpx.Timeout(timeout), event_hooks={"response": [self._record_status]}
        )
        try:
            self._client = SyncPostgrestClient(
                url.rstrip("/") + "/rest/v1",
                headers={"apikey": key, "Authorization": f"Bearer {key}"},
                http_client=self._http,
                retry_enabled=False,  # the outbox retries, with backoff
            )
        except ValueError as exc:  # a URL postgrest-py cannot use
            self._http.close()
            raise SyncPermanent(
                f"invalid Supabase settings: {self._scrub(str(exc))}",
                hint="the URL must look like https://<project>.supabase.co and the key be set",
            ) from exc

    def push(self, rows: Sequence[SyncRow]) -> PushResult:
        """Upsert rows (on namespace+path). One request, hence one transaction, per batch;
        a batch touching one file twice is split into ordered requests, because one
        PostgreSQL statement cannot update a row twice. The server answers with the op_ids it
        applied; the rows it skipped are then looked up to tell refused from dropped."""
        applied: set[str] = set()
        for wave in _waves(rows):
            payload = [_payload(row) for row in wave]

            def send(payload: list[dict[str, Any]] = payload) -> Any:
                return (
                    self._client.table(self._table)
                    .upsert(payload, on_conflict="namespace,path", returning=self._representation)
                    .select("op_id")
                    .execute()
                )

            applied |= _op_ids(self._call("push", send).data)
        skipped = [row for row in rows if row.op_id not in applied]
        if not skipped:
            return PushResult(applied=frozenset(applied))
        # A second read, not atomic with the write: if the row changed again in between, the
        # worst case is a row counted as refused, which is only sent again after a pull.
        stored: dict[tuple[str, str], StoredRow] = {}
        for namespace in {row.namespace for row in skipped}:
            paths = sorted({row.path for row in skipped if row.namespace == namespace})

            def read(namespace: str = namespace, paths: list[str] = paths) -> Any:
                return (
                    self._client.table(self._table)
                    .select("path,device_id,sha256")
                    .eq("namespace", namespace)
                    .in_("path", paths)
                    .execute()
                )

            for item in _objects(self._call("push", read).data):
                stored[(namespace, str(item["path"]))] = StoredRow(
                    str(item["device_id"]), str(item["sha256"])
                )

        def replays() -> Any:
            return (
                self._client.table(events_table(self._table))
                .select("op_id")
                .in_("op_id", [row.op_id for row in skipped])
                .execute()
            )

        replayed = _op_ids(self._call("push", replays).data)
        return sort_skipped(rows, applied, stored, replayed)

    def pull(self, namespace: str, since: float, limit: int = 500) -> list[SyncRow]:
        """Rows of `namespace` with synced_at > since, in synced_at order."""

        def fetch() -> list[SyncRow]:
            response = (
                self._client.table(self._table)
                .select(",".join(PULL_COLUMNS))
                .eq("namespace", namespace)
                .gt("synced_at", repr(float(since)))
                .order("synced_at")
                .order("path")
                .limit(limit)
                .execute()
            )
            return _rows_from_data(response.data)

        return self._call("pull", fetch)

    def init_schema(self) -> None:
        """Always raises SyncPermanent: the REST API cannot create tables."""
        raise SyncPermanent(
            "the supabase backend cannot create tables over the REST API",
            hint=schema_hint(),
        )

    def check(self) -> str:
        """Read one row to prove the URL, key and table work; describe the target."""

        def probe() -> str:
            self._client.table(self._table).select(",".join(PULL_COLUMNS)).limit(1).execute()
            return f"supabase {self._url}, table {self._table}"

        def probe_base() -> None:
            self._client.table(self._table).select(BASE_COLUMN).limit(1).execute()

        description = self._call("check", probe)
        try:
            self._call("check", probe_base)
        except SyncPermanent as exc:
            # The table answered above, so a refused column means an old schema.sql.
            raise SyncPermanent(
                f"{OUTDATED_SCHEMA.format(table=self._table)}: {exc}", hint=schema_hint()
            ) from exc
        return description

    def close(self) -> None:
        """Close the HTTP connections."""
        self._http.close()

    def _record_status(self, response: Any) -> None:
        self._last_status = int(response.status_code)

    def _call(self, action: str, body: Callable[[], T]) -> T:
        httpx = self._httpx
        with self._lock:
            self._last_status = None
            try:
                return body()
            except httpx.TransportError as exc:
                detail = self._scrub(str(exc)) or "no detail"
                raise SyncRetryable(
                    f"supabase {action} failed: {type(exc).__name__}: {detail}"
                ) from exc
            except self._api_error as exc:
                raise self._translate(action, exc) from exc
            except httpx.HTTPError as exc:
                raise SyncPermanent(
                    f"supabase {action} failed: {type(exc).__name__}: {self._scrub(str(exc))}"
                ) from exc

    def _translate(self, action: str, exc: Any) -> SyncError:
        status = self._last_status
        code = str(exc.code) if exc.code else None
        message = self._scrub(str(exc.message or "").strip())[:_MAX_MESSAGE]
        kind, hint = classify_api_error(status, code, message)
        if code == str(status):
            code = None  # a non-JSON body: APIError's code is just the status again
        where = ", ".join(part for part in (f"HTTP {status}" if status else "", code or "") if part)
        return kind(f"supabase {action} failed ({where or 'no status'}): {message}", hint=hint)

    def _scrub(self, text: str) -> str:
        # Shorter "keys" are test placeholders; replacing them would garble every message.
        return text.replace(self._key, "***") if len(self._key) >= _MIN_SECRET else text


def _payload(row: SyncRow) -> dict[str, Any]:
    if not math.isfinite(row.updated_at):
        # The JSON encoder would raise ValueError; this is a bad row, not a bad network.
        raise SyncPermanent(f"row rejected: updated_at is not finite (op {row.op_id})")
    return {col: getattr(row, col) for col in PUSH_COLUMNS}


def _objects(data: Any) -> list[Mapping[str, Any]]:
    if not isinstance(data, list) or not all(isinstance(item, Mapping) for item in data):
        raise SyncPermanent(f"unexpected push response: {type(data).__name__}, not rows")
    return data


def _op_ids(data: Any) -> set[str]:
    try:
        return {str(item["op_id"]) for item in _objects(data)}
    except KeyError as exc:
        raise SyncPermanent("unexpected push response: a row without op_id") from exc


def _waves(rows: Sequence[SyncRow]) -> list[list[SyncRow]]:
    waves: list[list[SyncRow]] = []
    seen: dict[tuple[str, str], int] = {}
    for row in rows:
        key = (row.namespace, row.path)
        index = seen.get(key, -1) + 1
        seen[key] = index
        if index == len(waves):
            waves.append([])
        waves[index].append(row)
    return waves


def _rows_from_data(data: Any) -> list[SyncRow]:
    if not isinstance(data, list):
        raise SyncPermanent(f"unexpected pull response: {type(data).__name__}, not a list")
    rows: list[SyncRow] = []
    for item in data:
        if not isinstance(item, Mapping):
            raise SyncPermanent("unexpected pull response: a row is not an object")
        try:
            rows.append(
                SyncRow(
                    namespace=str(item["namespace"]),
                    path=str(item["path"]),
                    content=str(item["content"]),
                    sha256=str(item["sha256"]),
                    updated_at=float(item["updated_at"]),
                    deleted=bool(item["deleted"]),
                    device_id=str(item["device_id"]),
                    version=int(item["version"]),
                    op_id=str(item["op_id"]),
                    synced_at=float(item["synced_at"]),
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise SyncPermanent(f"unexpected pull response: bad row ({exc!r})") from exc
    return rows
