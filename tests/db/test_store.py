from __future__ import annotations

import sqlite3
import threading
import weakref
from collections.abc import Callable
from pathlib import Path

import pytest

from memd.core.errors import StoreError
from memd.db import Store
from memd.db.migrations import MIGRATIONS, migrate
from memd.memory.search import search_sections
from tests.utils import wait_for


def test_migrations_apply_once_and_refuse_a_newer_schema(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "x.db", isolation_level=None)
    conn.create_function("memd_index_text", 1, lambda s: s)
    conn.create_function("memd_file_text", 3, lambda *words: " ".join(words))
    assert migrate(conn) == [m.__name__ for m in MIGRATIONS]
    assert migrate(conn) == []
    conn.execute("INSERT INTO _memd_migrations VALUES ('m999_future', 0)")
    with pytest.raises(StoreError, match="newer memd"):
        migrate(conn)


def test_writer_returns_results_propagates_errors_and_rolls_back(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "i.db")
    try:
        store.w.run(lambda c: c.execute("INSERT INTO state VALUES ('a', '1')"))

        def boom(c: sqlite3.Connection) -> None:
            c.execute("INSERT INTO state VALUES ('b', '2')")
            raise ValueError("nope")

        with pytest.raises(ValueError, match="nope"):
            store.w.run(boom)
        rows = store.read().execute("SELECT key FROM state ORDER BY key").fetchall()
        assert [r[0] for r in rows] == ["a"]  # b was rolled back
        with pytest.raises(sqlite3.OperationalError):  # readers cannot write
            store.read().execute("INSERT INTO state VALUES ('c', '3')")
    finally:
        store.close()


def test_the_writer_keeps_nothing_of_a_write_once_it_is_done(tmp_path: Path) -> None:
    # The indexer's write closes over a batch of parsed files: kept until the next write, it
    # would sit in the daemon's memory for as long as nothing else is written.
    class Batch:
        pass

    store = Store.open(tmp_path / "i.db")
    try:
        held = [Batch()]
        gone = weakref.ref(held[0])

        def write(c: sqlite3.Connection) -> Batch:
            c.execute("INSERT INTO state VALUES ('a', '1')")
            return held[0]

        assert store.w.run(write) is gone()
        held.clear()
        wait_for(lambda: gone() is None)
    finally:
        store.close()


def insert_state(key: str) -> Callable[[sqlite3.Connection], sqlite3.Cursor]:
    return lambda c: c.execute("INSERT INTO state VALUES (?, 'v')", (key,))


def test_close_drains_queued_writes(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "i.db")
    futs = [store.w.submit(insert_state(f"k{i}")) for i in range(500)]
    store.close()
    assert all(f.done() and f.exception() is None for f in futs)
    ro = Store.open_readonly(tmp_path / "i.db")
    assert ro.read().execute("SELECT count(*) FROM state").fetchone()[0] == 500
    ro.close()


def test_readers_in_threads_each_get_their_own_connection(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "i.db")
    seen = []
    ts = [threading.Thread(target=lambda: seen.append(id(store.read()))) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert len(set(seen)) == 4
    store.close()


def test_only_the_hot_thread_reader_gets_the_large_cache(tmp_path: Path) -> None:
    from memd.db.connection import HOT_READER_CACHE_KIB, READER_CACHE_KIB

    store = Store.open(tmp_path / "i.db")
    try:
        store.read()  # opened before the thread is marked: resized in place
        store.make_hot_reader()
        sizes = [store.read().execute("PRAGMA cache_size").fetchone()[0]]
        t = threading.Thread(
            target=lambda: sizes.append(store.read().execute("PRAGMA cache_size").fetchone()[0])
        )
        t.start()
        t.join()
        assert sizes == [-HOT_READER_CACHE_KIB, -READER_CACHE_KIB]
    finally:
        store.close()


def test_missing_index_read_only_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no index"):
        Store.open_readonly(tmp_path / "none.db")


def test_search_sql_is_injection_safe(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "i.db")
    for q in ['"', "NOT", "a OR", "x*", "col:foo", "(", "'; DROP TABLE files; --"]:
        assert search_sections(store.read(), q) == []
    store.close()


def test_turn_search_index_follows_inserts_updates_and_deletes_after_the_contentless_migration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index made before m050 keeps its turns searchable; afterwards the triggers remove
    exactly what was indexed (speaker prefix, CJK bigrams), leaving no stale terms behind."""
    from memd.db import migrations
    from memd.db.connection import connect

    db = tmp_path / "i.db"
    conn = connect(db)
    before = [m for m in MIGRATIONS if m.__name__ != "m050_turns_fts_contentless"]
    monkeypatch.setattr(migrations, "MIGRATIONS", before)
    migrate(conn)
    add = "INSERT INTO turns(session_id, turn_id, role, text, ts, speaker) VALUES (?,?,?,?,0,?)"
    conn.execute(add, ("s", "old", "user", "an older note about pandas", ""))
    monkeypatch.setattr(migrations, "MIGRATIONS", MIGRATIONS)
    assert migrate(conn) == ["m050_turns_fts_contentless"]

    def found(term: str) -> list[str]:
        return [r[0] for r in conn.execute(
            "SELECT t.turn_id FROM turns_fts JOIN turns t ON t.id = turns_fts.rowid WHERE turns_fts MATCH ?"
            " ORDER BY t.turn_id", (term,))]  # fmt: skip

    assert found("pandas") == ["old"]
    conn.execute(add, ("s", "zh", "user", "我想优化记忆系统的性能", "Caroline"))
    assert found('"记忆"') == ["zh"] and found("caroline") == ["zh"]
    conn.execute("UPDATE turns SET text = 'now about polars', speaker = 'Mel' WHERE turn_id = 'zh'")
    assert found('"记忆"') == [] and found("caroline") == [] and found("polars mel") == ["zh"]
    conn.execute("DELETE FROM turns")
    assert found("polars") == [] and found("pandas") == [] and found("mel") == []
    conn.execute("INSERT INTO turns_fts(turns_fts) VALUES ('integrity-check')")
    conn.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, turns_fts, 'row')")
    assert conn.execute("SELECT term FROM temp.vocab").fetchall() == []  # no term left behind
    conn.close()
