"""SQLite connections: PRAGMAs, read-only readers, the functions the schema's triggers call.

Only `memd.db` and the features' repositories import `sqlite3`; everything else names a
connection, a row or a database error through the aliases below.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from memd.core.errors import StoreError
from memd.core.fsio import PRIVATE_FILE, make_private_dir, tighten
from memd.core.text import file_words, index_text

Connection: TypeAlias = sqlite3.Connection
Row: TypeAlias = sqlite3.Row
DatabaseError = sqlite3.DatabaseError

BUSY_TIMEOUT_MS = 5000


def _register(conn: sqlite3.Connection) -> None:
    conn.create_function("memd_index_text", 1, lambda s: index_text(s or ""), deterministic=True)
    conn.create_function(
        "memd_file_text",
        3,
        lambda title, rel, owner: index_text(file_words(title or "", rel or "", owner or "")),
        deterministic=True,
    )


READER_CACHE_KIB = 2000
HOT_READER_CACHE_KIB = 8000
WRITER_CACHE_KIB = 16000


def connect(
    path: Path, *, readonly: bool = False, cache_kib: int | None = None
) -> sqlite3.Connection:
    """Open the index. Writers get WAL mode; readers are opened ``mode=ro`` and cannot write."""
    try:
        if readonly:
            conn = sqlite3.connect(
                f"file:{path}?mode=ro", uri=True, check_same_thread=False, isolation_level=None
            )
        else:
            _private_index_file(path)
            conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        if not readonly:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if mode.lower() != "wal":
                raise StoreError(f"{path}: cannot switch the index to WAL mode (got {mode})")
            conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA temp_store = MEMORY")
        # Every server thread has its own reader: a small cache each keeps RSS flat under load.
        if cache_kib is None:
            cache_kib = READER_CACHE_KIB if readonly else WRITER_CACHE_KIB
        conn.execute(f"PRAGMA cache_size = {-cache_kib}")
    except sqlite3.DatabaseError as exc:
        raise StoreError(
            f"cannot open the index {path}: {exc}",
            hint="the index is a cache: `memd reindex --full` rebuilds it from your files",
        ) from exc
    conn.row_factory = sqlite3.Row
    _register(conn)
    return conn


def _private_index_file(path: Path) -> None:
    """The index holds every conversation: create it 0600 (SQLite gives its -wal and -shm files
    the database's mode) in a 0700 folder, and take other users' bits off an older one."""
    make_private_dir(path.parent)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))
    except FileExistsError:
        pass
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")):
        tighten(p, PRIVATE_FILE)


def check_fts5() -> None:
    """Fail clearly when this Python's SQLite lacks FTS5."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
    except sqlite3.OperationalError as exc:
        raise StoreError(
            f"this Python's SQLite {sqlite3.sqlite_version} has no FTS5: {exc}",
            hint="install a Python built with a current SQLite (python.org, Homebrew, distro)",
        ) from exc
    finally:
        conn.close()


@contextmanager
def snapshot(conn: Connection) -> Iterator[Connection]:
    """One read transaction around the block: every query in it sees the same index state.

    Inside a transaction already (a writer's), the block simply joins it.
    """
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN")
    try:
        yield conn
    finally:
        if own:
            conn.execute("COMMIT")


def has_table(conn: Connection, name: str) -> bool:
    """Whether the index has a table (or another schema object) called `name`."""
    return (
        conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None
    )


def quick_check(conn: Connection) -> str:
    """SQLite's `quick_check` verdict on the file: "ok", or what is damaged."""
    return str(conn.execute("PRAGMA quick_check").fetchone()[0])


def _probe(conn: Connection, sql: str) -> str:
    try:
        conn.execute(sql)
    except sqlite3.Error as exc:
        return str(exc)
    return ""


@dataclass(frozen=True, slots=True)
class SqliteFeatures:
    """This Python's SQLite: its version, whether it was compiled with FTS5, and why creating
    an FTS5 table (porter tokenizer) and a trigram one failed ("" when it worked)."""

    version: str
    compile_fts5: bool
    fts5_error: str
    trigram_error: str


def sqlite_features() -> SqliteFeatures:
    """What this Python's SQLite offers: version, compile options and real FTS5 probes."""
    conn = sqlite3.connect(":memory:")
    try:
        options = [r[0] for r in conn.execute("PRAGMA compile_options")]
        fts5_error = _probe(
            conn, "CREATE VIRTUAL TABLE a USING fts5(x, tokenize='porter unicode61')"
        )
        trigram_error = _probe(conn, "CREATE VIRTUAL TABLE b USING fts5(x, tokenize='trigram')")
    finally:
        conn.close()
    return SqliteFeatures(
        version=sqlite3.sqlite_version,
        compile_fts5="ENABLE_FTS5" in options,
        fts5_error=fts5_error,
        trigram_error=trigram_error,
    )
