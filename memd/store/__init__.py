"""SQLite store: the only package that writes SQL. `Store` = one writer + read-only readers."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from memd.errors import StoreError
from memd.store.connection import check_fts5, connect
from memd.store.writer import Writer


class Store:
    """An open index: `writer` for writes (may be None when read-only), `read()` for queries."""

    def __init__(self, path: Path, writer: Writer | None) -> None:
        self.path = path
        self.writer = writer
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

    @classmethod
    def open(cls, path: Path) -> Store:
        """Open (create and migrate) the index for writing."""
        check_fts5()
        return cls(path, Writer(path))

    @classmethod
    def open_readonly(cls, path: Path) -> Store:
        """Open an existing index for queries only (CLI without a daemon)."""
        if not path.exists():
            raise StoreError(
                f"no index at {path}", hint="start the daemon once (`memd serve`) or `memd reindex`"
            )
        return cls(path, None)

    def read(self) -> sqlite3.Connection:
        """This thread's read-only connection (it can never write)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        gen = self.writer.generation if self.writer is not None else 0
        if conn is not None and getattr(self._local, "gen", 0) != gen:
            # The file was swapped by `reindex --full`: this connection still reads the old one.
            conn.close()
            with self._lock:
                if conn in self._readers:
                    self._readers.remove(conn)
            conn = None
        if conn is None:
            conn = connect(self.path, readonly=True)
            conn.execute("PRAGMA query_only = 1")
            self._local.conn = conn
            self._local.gen = gen
            with self._lock:
                self._readers.append(conn)
        return conn

    @property
    def w(self) -> Writer:
        if self.writer is None:
            raise StoreError("the index is open read-only here", hint="ask the daemon to write")
        return self.writer

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        with self._lock:
            for c in self._readers:
                c.close()
            self._readers.clear()
