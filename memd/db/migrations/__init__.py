"""The schema as an append-only list of small named migrations. Never edit a released one.

Each migration is a module of `versions/` named as the function it defines, so the folder lists
them in the order they run. `MIGRATIONS` below lists them in that order, which is the order of
their numbers; a new one gets the next number, its own module, and goes at the end. A database
records the names it has applied, so one that ran them in another order (memd once ran m020
before m010; the two are independent) upgrades by running only the names it lacks. Migrations
that run several statements use `script.run_script`, which keeps them in one transaction.

The index part (files, sections, FTS) is a cache that `memd reindex --full` rebuilds; the
operational part (log offsets, outbox, job state, settings state) lives only here.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable

from memd.db.migrations.versions.m001_memory_index import m001_memory_index
from memd.db.migrations.versions.m002_conversations import m002_conversations
from memd.db.migrations.versions.m003_jobs import m003_jobs
from memd.db.migrations.versions.m010_conversation_extra import m010_conversation_extra
from memd.db.migrations.versions.m020_sync_outbox import m020_sync_outbox
from memd.db.migrations.versions.m030_memory_jobs import m030_memory_jobs
from memd.db.migrations.versions.m040_items_section_index import m040_items_section_index
from memd.db.migrations.versions.m050_turns_fts_contentless import m050_turns_fts_contentless
from memd.db.migrations.versions.m060_agents import m060_agents
from memd.db.migrations.versions.m070_conversation_repairs import m070_conversation_repairs
from memd.db.migrations.versions.m080_semantic_vectors import m080_semantic_vectors
from memd.db.migrations.versions.m085_markdown_redacted import m085_markdown_redacted
from memd.db.migrations.versions.m090_llm_runs_backend import m090_llm_runs_backend
from memd.db.migrations.versions.m095_log_files_mtime import m095_log_files_mtime
from memd.db.migrations.versions.m100_vectors_int8 import m100_vectors_int8
from memd.db.migrations.versions.m110_sections_fts_file import m110_sections_fts_file

Migration = Callable[[sqlite3.Connection], None]

MIGRATIONS: tuple[Migration, ...] = (
    m001_memory_index,
    m002_conversations,
    m003_jobs,
    m010_conversation_extra,
    m020_sync_outbox,
    m030_memory_jobs,
    m040_items_section_index,
    m050_turns_fts_contentless,
    m060_agents,
    m070_conversation_repairs,
    m080_semantic_vectors,
    m085_markdown_redacted,
    m090_llm_runs_backend,
    m095_log_files_mtime,
    m100_vectors_int8,
    m110_sections_fts_file,
)


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply every migration not yet recorded; each one and its record share a transaction."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS _memd_migrations (name TEXT PRIMARY KEY, applied_at REAL)"
    )
    done = {r[0] for r in conn.execute("SELECT name FROM _memd_migrations")}
    known = {m.__name__ for m in MIGRATIONS}
    unknown = done - known
    if unknown:
        from memd.core.errors import StoreError

        raise StoreError(
            f"the index was written by a newer memd (migrations {sorted(unknown)})",
            hint="upgrade memd, or `memd reindex --full` to rebuild the index",
        )
    applied = []
    for m in MIGRATIONS:
        if m.__name__ in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            m(conn)
            conn.execute(
                "INSERT INTO _memd_migrations(name, applied_at) VALUES (?, ?)",
                (m.__name__, time.time()),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        applied.append(m.__name__)
    return applied
