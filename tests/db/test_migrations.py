"""The migration list: named, numbered, in order, append-only; old indexes upgrade by name."""

from __future__ import annotations

import gzip
import pkgutil
import re
import sqlite3
from pathlib import Path

from memd.db import Store
from memd.db.connection import connect
from memd.db.migrations import MIGRATIONS, migrate, versions
from memd.memory.search import search_sections

FIXTURE = Path(__file__).parent.parent / "fixtures" / "db" / "index-4eddebe.db.gz"
# Every migration some released memd has applied, in list order. Never edit or reorder these:
# a new migration is appended to MIGRATIONS (and here once released) with the next number.
RELEASED = (
    "m001_memory_index",
    "m002_conversations",
    "m003_jobs",
    "m010_conversation_extra",
    "m020_sync_outbox",
    "m030_memory_jobs",
    "m040_items_section_index",
    "m050_turns_fts_contentless",
)
NAME = re.compile(r"m(\d{3})_[a-z0-9]+(?:_[a-z0-9]+)*")


def _schema(conn: sqlite3.Connection) -> list[tuple[str, str, str]]:
    rows = conn.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name"
    )
    return [(r[0], r[1], r[2]) for r in rows]


def _kept(conn: sqlite3.Connection) -> set[tuple[str, str, tuple[str, ...]]]:
    """Every object by type and name, a table with its columns: what a later migration may add
    to (a column at the end) but never take away."""
    out = set()
    for type_, name, _sql in _schema(conn):
        cols: tuple[str, ...] = ()
        if type_ == "table":
            cols = tuple(r[1] for r in conn.execute(f"PRAGMA table_info('{name}')"))
        out.add((type_, name, cols))
    return out


def _kept_in(before: set[tuple[str, str, tuple[str, ...]]], conn: sqlite3.Connection) -> bool:
    after = {(t, n): cols for t, n, cols in _kept(conn)}
    return all(after.get((t, n), ())[: len(cols)] == cols and (t, n) in after
               for t, n, cols in before)  # fmt: skip


def _applied(conn: sqlite3.Connection) -> list[tuple[str, float]]:
    rows = conn.execute("SELECT name, applied_at FROM _memd_migrations ORDER BY rowid")
    return [(r[0], r[1]) for r in rows]


def _fresh(path: Path) -> sqlite3.Connection:
    conn = connect(path)
    migrate(conn)
    return conn


def test_names_are_unique_numbered_and_listed_in_order() -> None:
    names = [m.__name__ for m in MIGRATIONS]
    assert len(set(names)) == len(names)
    numbers = []
    for name in names:
        m = NAME.fullmatch(name)
        assert m, f"{name}: migrations are named mNNN_what_it_does"
        numbers.append(int(m.group(1)))
    assert numbers == sorted(set(numbers)), "MIGRATIONS must list them by increasing number"
    # Every migration module is listed, in the order its folder lists them, and defines the
    # function it is named after.
    modules = sorted(info.name for info in pkgutil.iter_modules(versions.__path__))
    assert names == modules
    assert [m.__module__ for m in MIGRATIONS] == [f"{versions.__name__}.{n}" for n in modules]


def test_a_new_migration_can_only_be_appended() -> None:
    names = [m.__name__ for m in MIGRATIONS]
    assert tuple(names[: len(RELEASED)]) == RELEASED, "released migrations never change"
    last = int(RELEASED[-1][1:4])
    assert all(int(n[1:4]) > last for n in names[len(RELEASED) :])


def test_an_index_written_by_4eddebe_upgrades_without_rerunning_or_skipping(
    tmp_path: Path,
) -> None:
    db = tmp_path / "index.db"
    db.write_bytes(gzip.decompress(FIXTURE.read_bytes()))
    old = sqlite3.connect(db)
    before_applied, before_schema = _applied(old), _kept(old)
    old.close()
    # That release ran m020 before m010 (registration order), and recorded both by name.
    assert [n for n, _ in before_applied][3:5] == ["m020_sync_outbox", "m010_conversation_extra"]
    store = Store.open(db)  # migrates, as the daemon does on start
    try:
        conn = store.read()
        applied = _applied(conn)
        assert applied[: len(before_applied)] == before_applied  # nothing re-run
        had = {n for n, _ in before_applied}
        # Only the migrations that release lacked are added, in list order.
        assert [n for n, _ in applied[len(before_applied) :]] == [
            m.__name__ for m in MIGRATIONS if m.__name__ not in had
        ]
        assert _kept_in(before_schema, conn)  # nothing dropped, columns only added
        assert _schema(conn) == _schema(_fresh(tmp_path / "fresh.db"))  # nothing skipped
        hits = search_sections(conn, "vitest")
        assert [(h.path.rsplit("/", 1)[-1], h.heading) for h in hits] == [("vue.md", "Testing")]
        assert (
            conn.execute(
                "SELECT count(*) FROM turns_fts WHERE turns_fts MATCH 'pgloader'"
            ).fetchone()[0]
            == 1
        )
        assert conn.execute("SELECT count(*) FROM sync_outbox").fetchone()[0] == 4
        store.w.run(lambda c: c.execute("INSERT INTO state VALUES ('upgraded', '1')"))
    finally:
        store.close()


def test_a_database_missing_some_migrations_gets_exactly_those(tmp_path: Path) -> None:
    # A database that has m020 but not m010, as some early indexes did: only the missing ones run.
    conn = connect(tmp_path / "partial.db")
    conn.execute("CREATE TABLE _memd_migrations (name TEXT PRIMARY KEY, applied_at REAL)")
    by_name = {m.__name__: m for m in MIGRATIONS}
    for name in ("m001_memory_index", "m002_conversations", "m003_jobs", "m020_sync_outbox"):
        by_name[name](conn)
        conn.execute("INSERT INTO _memd_migrations VALUES (?, 0)", (name,))
    assert migrate(conn) == [
        "m010_conversation_extra",
        "m030_memory_jobs",
        "m040_items_section_index",
        "m050_turns_fts_contentless",
        *[m.__name__ for m in MIGRATIONS if m.__name__ not in RELEASED],
    ]
    assert _schema(conn) == _schema(_fresh(tmp_path / "fresh.db"))
