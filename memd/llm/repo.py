"""The LLM feature's storage: tokens spent per job run (`llm_runs`) and the configuration-error
latch (a `state` value), so a bad key is reported once instead of retried every interval."""

from __future__ import annotations

import datetime as dt
import sqlite3

from memd.db.state import delete_state, get_state, set_state

CONFIG_ERROR_KEY = "llm.config_error"


def tokens_on(conn: sqlite3.Connection, day: dt.date) -> int:
    """LLM tokens (input + output) spent by all jobs on one day."""
    row = conn.execute(
        "SELECT coalesce(sum(input_tokens + output_tokens), 0) FROM llm_runs WHERE day = ?",
        (day.isoformat(),),
    ).fetchone()
    return int(row[0])


def add_usage(
    conn: sqlite3.Connection,
    run_id: int | None,
    *,
    job: str,
    started: float,
    day: dt.date,
    model: str,
    input_tokens: int,
    output_tokens: int,
) -> int | None:
    """Count one request against run `run_id`, or start the run's row; returns the run's id."""
    if run_id is not None:
        cur = conn.execute(
            "UPDATE llm_runs SET requests = requests + 1, input_tokens = input_tokens + ?,"
            " output_tokens = output_tokens + ? WHERE id = ?",
            (input_tokens, output_tokens, run_id),
        )
        if cur.rowcount:
            return run_id
    # The run's first request (or its row was rolled back with a failed transaction).
    cur = conn.execute(
        "INSERT INTO llm_runs(job, started, day, model, requests, input_tokens, output_tokens)"
        " VALUES (?,?,?,?,1,?,?)",
        (job, started, day.isoformat(), model, input_tokens, output_tokens),
    )
    return cur.lastrowid


def config_error(conn: sqlite3.Connection) -> str:
    """The latched configuration error as stored (JSON), or ""."""
    return get_state(conn, CONFIG_ERROR_KEY, "")


def latch_config_error(conn: sqlite3.Connection, value: str) -> None:
    set_state(conn, CONFIG_ERROR_KEY, value)


def clear_config_error(conn: sqlite3.Connection) -> None:
    delete_state(conn, CONFIG_ERROR_KEY)
