"""The schema as an append-only list of small named migrations. Never edit a released one.

`MIGRATIONS` below lists them in the order they run, which is the order of their numbers; a new
one gets the next number and goes at the end. A database records the names it has applied, so
one that ran them in another order (memd once ran m020 before m010; the two are independent)
upgrades by running only the names it lacks.

The index part (files, sections, FTS) is a cache that `memd reindex --full` rebuilds; the
operational part (log offsets, outbox, job state, settings state) lives only here.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable

Migration = Callable[[sqlite3.Connection], None]


def run_script(conn: sqlite3.Connection, sql: str) -> None:
    """Run several statements inside the caller's transaction.

    `executescript` would COMMIT first, which breaks "a migration and its record share one
    transaction", so statements are split with `sqlite3.complete_statement` (trigger bodies too).
    """
    buf = ""
    for line in sql.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                conn.execute(buf)
            buf = ""
    if buf.strip():
        conn.execute(buf)


def m001_memory_index(conn: sqlite3.Connection) -> None:
    run_script(
        conn,
        """
        CREATE TABLE files (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            root TEXT NOT NULL,
            rel TEXT NOT NULL,
            kind TEXT NOT NULL,
            owner TEXT NOT NULL DEFAULT '',
            stem TEXT NOT NULL DEFAULT '',
            title TEXT NOT NULL DEFAULT '',
            front_matter TEXT NOT NULL DEFAULT '{}',
            pinned INTEGER NOT NULL DEFAULT 0,
            expires TEXT,
            mtime_ns INTEGER NOT NULL DEFAULT 0,
            size INTEGER NOT NULL DEFAULT 0,
            sha256 TEXT NOT NULL DEFAULT '',
            indexed_at REAL NOT NULL DEFAULT 0
        );
        CREATE INDEX files_root ON files(root);
        CREATE INDEX files_kind ON files(kind, owner);
        CREATE INDEX files_stem ON files(stem, kind);
        CREATE TABLE sections (
            id INTEGER PRIMARY KEY,
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            ordinal INTEGER NOT NULL,
            heading TEXT NOT NULL,
            level INTEGER NOT NULL,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            text TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            tokens INTEGER NOT NULL
        );
        CREATE INDEX sections_file ON sections(file_id, ordinal);
        CREATE VIRTUAL TABLE sections_fts USING fts5(
            heading, body, tokenize = 'porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER sections_ai AFTER INSERT ON sections BEGIN
            INSERT INTO sections_fts(rowid, heading, body)
            VALUES (new.id, memd_index_text(new.heading), memd_index_text(new.text));
        END;
        CREATE TRIGGER sections_ad AFTER DELETE ON sections BEGIN
            DELETE FROM sections_fts WHERE rowid = old.id;
        END;
        CREATE TABLE items (
            id INTEGER PRIMARY KEY,
            section_id INTEGER NOT NULL REFERENCES sections(id) ON DELETE CASCADE,
            file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
            item_id TEXT NOT NULL,
            line INTEGER NOT NULL,
            text TEXT NOT NULL,
            meta TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX items_item_id ON items(item_id);
        CREATE INDEX items_file ON items(file_id);
        CREATE TABLE problems (
            path TEXT PRIMARY KEY,
            reason TEXT NOT NULL,
            seen_at REAL NOT NULL
        );
        CREATE TABLE state (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        """,
    )


def m002_conversations(conn: sqlite3.Connection) -> None:
    # Conversations are memory, not cache: a log deleted by its app (Claude Code keeps 30 days)
    # must never delete what memd learned from it, so these rows are only rebuilt from logs
    # that still exist and are never dropped by `reindex --full`.
    run_script(
        conn,
        """
        CREATE TABLE sessions (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL UNIQUE,
            source TEXT NOT NULL,
            source_path TEXT NOT NULL DEFAULT '',
            title TEXT NOT NULL DEFAULT '',
            title_source TEXT NOT NULL DEFAULT '',
            agent_id TEXT NOT NULL DEFAULT '',
            project TEXT NOT NULL DEFAULT '',
            started_at REAL NOT NULL DEFAULT 0,
            updated_at REAL NOT NULL DEFAULT 0,
            turn_count INTEGER NOT NULL DEFAULT 0,
            summary TEXT NOT NULL DEFAULT '',
            summary_kind TEXT NOT NULL DEFAULT '',
            summary_at REAL NOT NULL DEFAULT 0,
            summary_upto INTEGER NOT NULL DEFAULT 0,
            extracted_upto INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX sessions_updated ON sessions(updated_at);
        CREATE TABLE turns (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            turn_id TEXT NOT NULL,
            role TEXT NOT NULL,
            text TEXT NOT NULL,
            ts REAL NOT NULL,
            source TEXT NOT NULL DEFAULT '',
            source_path TEXT NOT NULL DEFAULT '',
            line INTEGER NOT NULL DEFAULT 0,
            agent_id TEXT NOT NULL DEFAULT '',
            project TEXT NOT NULL DEFAULT '',
            UNIQUE (session_id, turn_id)
        );
        CREATE INDEX turns_session ON turns(session_id, ts);
        CREATE TABLE turn_parts (
            part_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            turn_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            text TEXT NOT NULL,
            PRIMARY KEY (session_id, part_id)
        );
        CREATE VIRTUAL TABLE turns_fts USING fts5(
            text, tokenize = 'porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER turns_ai AFTER INSERT ON turns BEGIN
            INSERT INTO turns_fts(rowid, text) VALUES (new.id, memd_index_text(new.text));
        END;
        CREATE TRIGGER turns_ad AFTER DELETE ON turns BEGIN
            DELETE FROM turns_fts WHERE rowid = old.id;
        END;
        CREATE TRIGGER turns_au AFTER UPDATE OF text ON turns BEGIN
            DELETE FROM turns_fts WHERE rowid = old.id;
            INSERT INTO turns_fts(rowid, text) VALUES (new.id, memd_index_text(new.text));
        END;
        CREATE TABLE log_files (
            path TEXT PRIMARY KEY,
            format TEXT NOT NULL,
            inode INTEGER NOT NULL DEFAULT 0,
            size INTEGER NOT NULL DEFAULT 0,
            offset INTEGER NOT NULL DEFAULT 0,
            lineno INTEGER NOT NULL DEFAULT 0,
            head TEXT NOT NULL DEFAULT '',
            turns INTEGER NOT NULL DEFAULT 0,
            bad_lines INTEGER NOT NULL DEFAULT 0,
            updated_at REAL NOT NULL DEFAULT 0,
            deleted INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE bad_lines (
            path TEXT NOT NULL,
            line INTEGER NOT NULL,
            reason TEXT NOT NULL,
            seen_at REAL NOT NULL,
            PRIMARY KEY (path, line)
        );
        """,
    )


def m003_jobs(conn: sqlite3.Connection) -> None:
    run_script(
        conn,
        """
        CREATE TABLE jobs (
            name TEXT PRIMARY KEY,
            last_started REAL NOT NULL DEFAULT 0,
            last_finished REAL NOT NULL DEFAULT 0,
            outcome TEXT NOT NULL DEFAULT '',
            message TEXT NOT NULL DEFAULT '',
            counts TEXT NOT NULL DEFAULT '{}',
            last_success REAL NOT NULL DEFAULT 0,
            runs INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE job_runs (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            started REAL NOT NULL,
            finished REAL NOT NULL,
            outcome TEXT NOT NULL,
            message TEXT NOT NULL DEFAULT '',
            counts TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX job_runs_name ON job_runs(name, started);
        """,
    )


def m010_conversation_extra(conn: sqlite3.Connection) -> None:
    # journal_upto: the last turn (rowid) written to journal/, so an exchange is journaled once.
    # speaker: who said a turn when the log names people; searchable with the text, so the
    # insert/update triggers are replaced. FTS5 flushes its pending terms at every statement
    # inside a trigger (one segment per row, ~5x slower), so a batch writer sets the
    # 'turns_fts_deferred' state key and indexes its rows with one INSERT … SELECT instead.
    # pending_titles: Claude Code `summary` records wait here until their leafUuid is seen in
    # the same file (summaries of other sessions can be written into a transcript).
    run_script(
        conn,
        """
        ALTER TABLE sessions ADD COLUMN journal_upto INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE turns ADD COLUMN speaker TEXT NOT NULL DEFAULT '';
        DROP TRIGGER turns_ai;
        DROP TRIGGER turns_au;
        CREATE TRIGGER turns_ai AFTER INSERT ON turns
        WHEN NOT EXISTS (SELECT 1 FROM state WHERE key = 'turns_fts_deferred') BEGIN
            INSERT INTO turns_fts(rowid, text) VALUES (new.id, memd_index_text(
                CASE WHEN new.speaker = '' THEN new.text ELSE new.speaker || ': ' || new.text END));
        END;
        CREATE TRIGGER turns_au AFTER UPDATE OF text, speaker ON turns BEGIN
            DELETE FROM turns_fts WHERE rowid = old.id;
            INSERT INTO turns_fts(rowid, text) VALUES (new.id, memd_index_text(
                CASE WHEN new.speaker = '' THEN new.text ELSE new.speaker || ': ' || new.text END));
        END;
        CREATE TABLE pending_titles (
            path TEXT NOT NULL,
            leaf_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            title TEXT NOT NULL,
            line INTEGER NOT NULL,
            PRIMARY KEY (path, leaf_id)
        );
        """,
    )


def m020_sync_outbox(conn: sqlite3.Connection) -> None:
    # Operational state, never rebuilt: the queue of changes waiting for the cloud (one row per
    # file and target: newer changes replace queued ones), what each file looked like when it
    # was last in step with the cloud, pull cursors and errors per target, and conflicts.
    run_script(
        conn,
        """
        CREATE TABLE sync_outbox (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            target TEXT NOT NULL,
            path TEXT NOT NULL,
            op_id TEXT NOT NULL UNIQUE,
            version INTEGER NOT NULL,
            deleted INTEGER NOT NULL DEFAULT 0,
            content TEXT NOT NULL DEFAULT '',
            sha256 TEXT NOT NULL,
            local_sha TEXT NOT NULL DEFAULT '',
            updated_at REAL NOT NULL,
            enqueued_at REAL NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_at REAL NOT NULL DEFAULT 0,
            last_error TEXT NOT NULL DEFAULT '',
            last_attempt_at REAL NOT NULL DEFAULT 0,
            parked_at REAL NOT NULL DEFAULT 0,
            parked_config TEXT NOT NULL DEFAULT '',
            UNIQUE (target, path)
        );
        CREATE INDEX sync_outbox_due ON sync_outbox(target, parked_at, next_at, seq);
        CREATE TABLE sync_files (
            target TEXT NOT NULL,
            path TEXT NOT NULL,
            version INTEGER NOT NULL DEFAULT 0,
            base_sha TEXT NOT NULL DEFAULT '',
            incoming_sha TEXT NOT NULL DEFAULT '',
            remote_device TEXT NOT NULL DEFAULT '',
            remote_sha TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (target, path)
        );
        CREATE TABLE sync_targets (
            target TEXT PRIMARY KEY,
            backend TEXT NOT NULL,
            pull_cursor REAL NOT NULL DEFAULT 0,
            summaries_cursor REAL NOT NULL DEFAULT 0,
            last_attempt_at REAL NOT NULL DEFAULT 0,
            last_success_at REAL NOT NULL DEFAULT 0,
            last_error TEXT NOT NULL DEFAULT '',
            last_error_at REAL NOT NULL DEFAULT 0,
            last_push_at REAL NOT NULL DEFAULT 0,
            last_pull_at REAL NOT NULL DEFAULT 0,
            failures INTEGER NOT NULL DEFAULT 0,
            retry_at REAL NOT NULL DEFAULT 0,
            pushed INTEGER NOT NULL DEFAULT 0,
            pulled INTEGER NOT NULL DEFAULT 0,
            conflicts INTEGER NOT NULL DEFAULT 0,
            refused_config TEXT NOT NULL DEFAULT ''
        );
        CREATE TABLE sync_conflicts (
            id INTEGER PRIMARY KEY,
            target TEXT NOT NULL,
            path TEXT NOT NULL,
            kind TEXT NOT NULL,
            copy_path TEXT NOT NULL DEFAULT '',
            remote_device TEXT NOT NULL DEFAULT '',
            remote_version INTEGER NOT NULL DEFAULT 0,
            at REAL NOT NULL
        );
        CREATE INDEX sync_conflicts_target ON sync_conflicts(target, id);
        """,
    )


def m030_memory_jobs(conn: sqlite3.Connection) -> None:
    # memory_hashes: every memory the extraction job ever wrote, so a line deleted or edited by
    # hand is never written again. llm_runs: tokens spent per job run (daily budget, cost report).
    # llm_summaries: how far the summary job got per session. item_usage: when `context` or
    # `search` last returned an item (decay in the archival job).
    run_script(
        conn,
        """
        CREATE TABLE memory_hashes (
            scope TEXT NOT NULL,
            hash TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            content TEXT NOT NULL,
            path TEXT NOT NULL DEFAULT '',
            session_id TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL,
            PRIMARY KEY (scope, hash)
        );
        CREATE INDEX memory_hashes_id ON memory_hashes(memory_id);
        CREATE TABLE llm_runs (
            id INTEGER PRIMARY KEY,
            job TEXT NOT NULL,
            started REAL NOT NULL,
            day TEXT NOT NULL,
            model TEXT NOT NULL DEFAULT '',
            requests INTEGER NOT NULL DEFAULT 0,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX llm_runs_day ON llm_runs(day);
        CREATE TABLE llm_summaries (
            session_id TEXT PRIMARY KEY,
            upto INTEGER NOT NULL,
            at REAL NOT NULL,
            outcome TEXT NOT NULL
        );
        CREATE TABLE item_usage (
            item_id TEXT PRIMARY KEY,
            last_used REAL NOT NULL,
            uses INTEGER NOT NULL DEFAULT 0
        );
        """,
    )


def m040_items_section_index(conn: sqlite3.Connection) -> None:
    # Without it every cascading section delete scans the whole items table (16 ms per file).
    conn.execute("CREATE INDEX IF NOT EXISTS items_section ON items(section_id)")


def m050_turns_fts_contentless(conn: sqlite3.Connection) -> None:
    # The turns' text is kept in `turns`; the FTS table kept a second copy of it (a third of
    # the index file, and a sixth of the ingest time). Contentless, FTS5 keeps only the index,
    # and a row is removed with the 'delete' command and the exact text it was indexed with,
    # which the triggers recompute from the row being deleted or updated.
    indexed = "memd_index_text(CASE WHEN {0}.speaker = '' THEN {0}.text ELSE {0}.speaker || ': ' || {0}.text END)"
    run_script(
        conn,
        f"""
        DROP TRIGGER turns_ai;
        DROP TRIGGER turns_ad;
        DROP TRIGGER turns_au;
        DROP TABLE turns_fts;
        CREATE VIRTUAL TABLE turns_fts USING fts5(
            text, content = '', tokenize = 'porter unicode61 remove_diacritics 2'
        );
        INSERT INTO turns_fts(rowid, text) SELECT id, {indexed.format("turns")} FROM turns;
        CREATE TRIGGER turns_ai AFTER INSERT ON turns
        WHEN NOT EXISTS (SELECT 1 FROM state WHERE key = 'turns_fts_deferred') BEGIN
            INSERT INTO turns_fts(rowid, text) VALUES (new.id, {indexed.format("new")});
        END;
        CREATE TRIGGER turns_ad AFTER DELETE ON turns BEGIN
            INSERT INTO turns_fts(turns_fts, rowid, text) VALUES ('delete', old.id, {indexed.format("old")});
        END;
        CREATE TRIGGER turns_au AFTER UPDATE OF text, speaker ON turns BEGIN
            INSERT INTO turns_fts(turns_fts, rowid, text) VALUES ('delete', old.id, {indexed.format("old")});
            INSERT INTO turns_fts(rowid, text) VALUES (new.id, {indexed.format("new")});
        END;
        """,
    )


def m060_agents(conn: sqlite3.Connection) -> None:
    # Agents and their relationship with the user. session_signals: what the user's turns said
    # about the assistant's work (thanks, frustration, ...), written by the extraction job with
    # its cursor. subagent_turns: the turns of Claude Code sub-agent runs, without their text
    # (their "user" turns are the main agent's prompts, not the user's words), one row per turn
    # so that a transcript read again counts nothing twice; subagent_runs: the same per run,
    # kept in step in the same transaction, for reads that must stay cheap. relationship_sessions:
    # per session with an agent, how far this device extracted it (with the extraction cursor)
    # and how far its signals were applied to the agent's trust (never twice; sessions that came
    # in an import were extracted elsewhere and are not applied again here).
    # agent_state: per agent, the latest session whose mood is shown (the agent's cursor) and
    # the trust and familiarity last written to its file.
    # Claude Code sessions read before turns named their agent belong to agent `claude-code`.
    run_script(
        conn,
        """
        CREATE TABLE session_signals (
            session_id TEXT NOT NULL,
            turn_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            strength REAL NOT NULL,
            evidence TEXT NOT NULL DEFAULT '',
            source TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (session_id, turn_id, kind)
        );
        CREATE TABLE subagent_turns (
            session_id TEXT NOT NULL,
            run_id TEXT NOT NULL,
            turn_id TEXT NOT NULL,
            agent_type TEXT NOT NULL DEFAULT '',
            role TEXT NOT NULL,
            ts REAL NOT NULL,
            PRIMARY KEY (session_id, run_id, turn_id)
        );
        CREATE TABLE subagent_runs (
            session_id TEXT NOT NULL,
            run_id TEXT NOT NULL,
            agent_type TEXT NOT NULL DEFAULT '',
            turns INTEGER NOT NULL,
            first_ts REAL NOT NULL,
            last_ts REAL NOT NULL,
            PRIMARY KEY (session_id, run_id)
        );
        CREATE INDEX subagent_runs_type ON subagent_runs(agent_type);
        CREATE TABLE relationship_sessions (
            session_id TEXT PRIMARY KEY,
            agent_id TEXT NOT NULL,
            extracted INTEGER NOT NULL DEFAULT 0,
            upto INTEGER NOT NULL DEFAULT 0,
            step INTEGER NOT NULL DEFAULT 0,
            at REAL NOT NULL DEFAULT 0
        );
        CREATE TABLE agent_state (
            agent_id TEXT PRIMARY KEY,
            mood_at REAL NOT NULL DEFAULT 0,
            trust INTEGER,
            familiarity INTEGER,
            written_at REAL NOT NULL DEFAULT 0
        );
        CREATE INDEX sessions_agent ON sessions(agent_id, updated_at);
        UPDATE sessions SET agent_id = 'claude-code' WHERE source = 'claude-code' AND agent_id = '';
        UPDATE turns SET agent_id = 'claude-code' WHERE source = 'claude-code' AND agent_id = '';
        """,
    )


_MAX_TS = 253402300799  # 9999-12-31T23:59:59Z


def _ts_by_magnitude(col: str) -> str:
    """A stored time read as seconds: in range as it is, else as ms, µs or ns, else 0."""
    cases = " ".join(
        f"WHEN {col} >= 0 AND {col} < {limit} AND {col} / {per} <= {_MAX_TS} THEN {col} / {per}"
        for limit, per in (("1e14", "1e3"), ("1e17", "1e6"), ("1e20", "1e9"))
    )
    return f"CASE WHEN {col} BETWEEN 0 AND {_MAX_TS} THEN {col} {cases} ELSE 0 END"


def m070_conversation_repairs(conn: sqlite3.Connection) -> None:
    # Turns forgotten on purpose, by a hash of (session id, turn id): a log read again (a
    # rebuilt index, a replaced transcript) must not bring them back.
    conn.execute("CREATE TABLE IF NOT EXISTS forgotten_turns (key TEXT PRIMARY KEY) WITHOUT ROWID")
    # Older versions read epoch numbers as seconds or ms only: a time sent in µs or ns was
    # stored as a year no date function can show, and broke every reader of its session.
    bad = f"NOT ({{0}} BETWEEN 0 AND {_MAX_TS})"
    conn.execute(f"UPDATE turns SET ts = {_ts_by_magnitude('ts')} WHERE {bad.format('ts')}")
    for col, agg in (("started_at", "min"), ("updated_at", "max")):
        conn.execute(
            f"UPDATE sessions SET {col} = coalesce((SELECT {agg}(t.ts) FROM turns t"
            f" WHERE t.session_id = sessions.session_id AND t.ts > 0), {_ts_by_magnitude(col)})"
            f" WHERE {bad.format(col)}"
        )
    # Names, projects and agent ids were stored as given, secrets included.
    from memd.core.redact import redact

    for table, cols in (("turns", ("speaker", "project", "agent_id")),
                        ("sessions", ("project", "agent_id"))):  # fmt: skip
        for col in cols:
            values = [r[0] for r in conn.execute(f"SELECT DISTINCT {col} FROM {table}") if r[0]]
            changed = [(redact(v), v) for v in values if redact(v) != v]
            conn.executemany(f"UPDATE {table} SET {col} = ? WHERE {col} = ?", changed)


def m080_semantic_vectors(conn: sqlite3.Connection) -> None:
    # Embeddings for recall by meaning (memd/semantic), computed in the background and never
    # on a write path. `key` is a section's or an item's content key (the hash of what was
    # embedded: a file edit that gives sections new ids keeps their vectors) or a turn's id;
    # `text_hash` is the hash of the text the vector was computed from, `script` that text's
    # dominant script. A turn's vector depends on the turn before it too: the triggers below
    # queue a changed turn and its successor in `vector_dirty` for the backfill worker (only
    # an UPDATE pays for it; inserts are found by id); `seq` counts the changes, so the worker
    # clears an entry only if no change came in while it was embedding the text it had read.
    # A turn deleted (forgotten) takes its vector with it, and its successor's, whose passage
    # held part of its text, at once: the worker embeds the successor again.
    run_script(
        conn,
        """
        CREATE TABLE vectors (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,
            key TEXT NOT NULL,
            model TEXT NOT NULL,
            text_hash TEXT NOT NULL,
            script TEXT NOT NULL DEFAULT '',
            dim INTEGER NOT NULL,
            vec BLOB NOT NULL,
            at REAL NOT NULL,
            UNIQUE (kind, model, key)
        );
        CREATE TABLE vector_dirty (
            kind TEXT NOT NULL,
            key TEXT NOT NULL,
            seq INTEGER NOT NULL DEFAULT 1,
            PRIMARY KEY (kind, key)
        );
        CREATE TRIGGER turns_vector_au AFTER UPDATE OF text, speaker ON turns BEGIN
            INSERT INTO vector_dirty(kind, key) VALUES ('turn', CAST(new.id AS TEXT))
                ON CONFLICT(kind, key) DO UPDATE SET seq = seq + 1;
            INSERT INTO vector_dirty(kind, key)
                SELECT 'turn', CAST(min(id) AS TEXT) FROM turns
                WHERE session_id = new.session_id AND id > new.id HAVING min(id) IS NOT NULL
                ON CONFLICT(kind, key) DO UPDATE SET seq = seq + 1;
        END;
        CREATE TRIGGER turns_vector_ad AFTER DELETE ON turns BEGIN
            DELETE FROM vectors WHERE kind = 'turn' AND key IN (CAST(old.id AS TEXT),
                (SELECT CAST(min(id) AS TEXT) FROM turns
                 WHERE session_id = old.session_id AND id > old.id));
            INSERT INTO vector_dirty(kind, key)
                SELECT 'turn', CAST(min(id) AS TEXT) FROM turns
                WHERE session_id = old.session_id AND id > old.id HAVING min(id) IS NOT NULL
                ON CONFLICT(kind, key) DO UPDATE SET seq = seq + 1;
        END;
        """,
    )


def m085_markdown_redacted(conn: sqlite3.Connection) -> None:
    # The Markdown index now holds files redacted, `<private>` spans left out. Files indexed
    # before that which hold either lose their sections and items here (nothing of them is
    # served meanwhile) and are read again by the next reconcile (their sha and mtime reset).
    from memd.core.redact import redact

    def shows_more(value: str) -> bool:
        return "<private" in value.lower() or redact(value) != value

    stale = {
        file_id
        for sql in (
            "SELECT id, title || char(10) || front_matter FROM files",
            "SELECT file_id, heading || char(10) || text FROM sections",
        )
        for file_id, value in conn.execute(sql)
        if shows_more(value)
    }
    if not stale:
        return
    # Deleted rows are overwritten, not only unlinked, and the full-text index is merged so
    # no segment keeps the old terms.
    was = conn.execute("PRAGMA secure_delete").fetchone()[0]
    conn.execute("PRAGMA secure_delete = ON")
    try:
        for file_id in sorted(stale):
            conn.execute("DELETE FROM sections WHERE file_id = ?", (file_id,))
            conn.execute(
                "UPDATE files SET title = '', front_matter = '{}', mtime_ns = 0, sha256 = ''"
                " WHERE id = ?",
                (file_id,),
            )
        conn.execute("INSERT INTO sections_fts(sections_fts) VALUES ('optimize')")
    finally:
        conn.execute(f"PRAGMA secure_delete = {int(was)}")


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
