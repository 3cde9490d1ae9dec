"""The daemon's SQL: job outcomes, and carrying operational state into a rebuilt index."""

from __future__ import annotations

import json
import logging
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from memd.api.messages import JobRun
from memd.core.models import JobOutcome, JobResult

RUNS_KEPT = 200  # job_runs rows kept per job
log = logging.getLogger("memd")


def record_job(c: sqlite3.Connection, res: JobResult, started: float, finished: float) -> None:
    """Store a job's outcome: its row in `jobs` and one more line of its history."""
    counts = json.dumps(res.counts)
    ok = res.outcome in (JobOutcome.SUCCESS, JobOutcome.NOTHING_TO_DO)
    c.execute(
        "INSERT INTO jobs(name, last_started, last_finished, outcome, message, counts, last_success, runs)"
        " VALUES (?,?,?,?,?,?,?,1) ON CONFLICT(name) DO UPDATE SET last_started = excluded.last_started,"
        " last_finished = excluded.last_finished, outcome = excluded.outcome, message = excluded.message,"
        " counts = excluded.counts, runs = jobs.runs + 1,"
        " last_success = CASE WHEN excluded.last_success > 0 THEN excluded.last_success ELSE jobs.last_success END",
        (res.job, started, finished, res.outcome.value, res.message, counts, finished if ok else 0),
    )
    c.execute(
        "INSERT INTO job_runs(name, started, finished, outcome, message, counts) VALUES (?,?,?,?,?,?)",
        (res.job, started, finished, res.outcome.value, res.message, counts),
    )
    c.execute(
        "DELETE FROM job_runs WHERE name = ? AND id NOT IN"
        " (SELECT id FROM job_runs WHERE name = ? ORDER BY id DESC LIMIT ?)",
        (res.job, res.job, RUNS_KEPT),
    )


def job_runs(conn: sqlite3.Connection, name: str = "", limit: int = 50) -> list[JobRun]:
    """Recorded runs, newest first: every job's, or the job `name`'s (as `job_runs` answers)."""
    where, args = ("WHERE name = ?", (name, limit)) if name else ("", (limit,))
    rows = conn.execute(
        "SELECT id, name, started, finished, outcome, message, counts FROM job_runs"
        f" {where} ORDER BY started DESC, id DESC LIMIT ?",
        args,
    ).fetchall()
    return [
        JobRun(
            id=r[0],
            job=r[1],
            started=r[2],
            finished=r[3],
            seconds=round(max(0.0, r[3] - r[2]), 3),
            outcome=r[4],
            message=r[5],
            counts=_counts(r[6]),
        )  # fmt: skip
        for r in rows
    ]


def _counts(raw: str | None) -> dict[str, int]:
    """A run's counts as `record_job` stored them (a job's counts are whole numbers)."""
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return {}
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(v, int)}


@dataclass(frozen=True, slots=True)
class JobRow:
    """A job's row of `jobs`: its last outcome, and how many runs it had."""

    outcome: str
    message: str
    last_finished: float
    last_success: float
    runs: int
    counts: dict[str, int]


def touch_header(c: sqlite3.Connection) -> None:
    """Rewrite the file's header page unchanged: the smallest write that proves there is room."""
    version = int(c.execute("PRAGMA user_version").fetchone()[0])
    c.execute(f"PRAGMA user_version = {version}")


def job_rows(conn: sqlite3.Connection) -> dict[str, JobRow]:
    """Every job's last outcome, by name."""
    return {
        r[0]: JobRow(r[1] or "", r[2] or "", r[3] or 0.0, r[4] or 0.0, r[5] or 0, _counts(r[6]))
        for r in conn.execute(
            "SELECT name, outcome, message, last_finished, last_success, runs, counts FROM jobs"
        )
    }


def copy_state(conn: sqlite3.Connection, fresh: Path, cache_tables: tuple[str, ...]) -> None:
    """Copy every table that is not a rebuildable cache from `conn` into the index at `fresh`.

    Switch state, log offsets, outbox, jobs and conversations are not rebuilt from files, so a
    full rebuild carries them over; `cache_tables` and the FTS tables (with their shadow
    tables) are what the rebuild made afresh.
    """
    conn.execute("ATTACH DATABASE ? AS fresh", (str(fresh),))
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            virtual = [
                r[0]
                for r in conn.execute(
                    "SELECT name FROM main.sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'"
                )
            ]
            tables = [
                r[0]
                for r in conn.execute(
                    "SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                    " AND name != '_memd_migrations' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%'"
                )
            ]
        except sqlite3.DatabaseError as exc:
            log.error(
                "rebuild: the old index's schema cannot be read (%s): no state carried over", exc
            )
            tables, virtual = [], []
        for t in tables:
            if t in cache_tables or any(t.startswith(v + "_") for v in virtual):
                continue
            try:
                conn.execute(f'DELETE FROM fresh."{t}"')
                conn.execute(f'INSERT INTO fresh."{t}" SELECT * FROM main."{t}"')
            except sqlite3.DatabaseError as exc:
                # A damaged table: the fresh index keeps what the rebuild made of it.
                log.error(
                    "rebuild: table %s of the old index cannot be read (%s): not carried over",
                    t,
                    exc,
                )
        conn.execute("COMMIT")
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.execute("DETACH DATABASE fresh")
