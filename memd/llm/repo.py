"""The LLM feature's storage: requests and tokens spent per job run and backend (`llm_runs`)
and the configuration-error latch (a `state` value), so a bad key is reported once instead of
retried every interval."""

from __future__ import annotations

import datetime as dt
import sqlite3

from memd.api.messages import LLMRun
from memd.db.state import delete_state, get_state, set_state

CONFIG_ERROR_KEY = "llm.config_error"


def tokens_on(conn: sqlite3.Connection, day: dt.date, backend: str | None = None) -> int:
    """LLM tokens (input + output) spent on one day, by one backend or (None) by all."""
    sql = "SELECT coalesce(sum(input_tokens + output_tokens), 0) FROM llm_runs WHERE day = ?"
    args: tuple[str, ...] = (day.isoformat(),)
    if backend is not None:
        sql += " AND backend = ?"
        args += (backend,)
    return int(conn.execute(sql, args).fetchone()[0])


def requests_on(conn: sqlite3.Connection, day: dt.date, backend: str) -> int:
    """LLM requests one backend answered (or failed) on one day."""
    row = conn.execute(
        "SELECT coalesce(sum(requests), 0) FROM llm_runs WHERE day = ? AND backend = ?",
        (day.isoformat(), backend),
    ).fetchone()
    return int(row[0])


def last_run(conn: sqlite3.Connection, backend: str) -> LLMRun | None:
    """The latest run that spent something on `backend`: its job, start, requests, tokens."""
    row = conn.execute(
        "SELECT job, started, model, requests, input_tokens, output_tokens FROM llm_runs"
        " WHERE backend = ? ORDER BY id DESC LIMIT 1",
        (backend,),
    ).fetchone()
    if row is None:
        return None
    job, started, model, requests, inp, out = row
    return LLMRun(job=job, started=started, model=model, requests=requests, input_tokens=inp,
                  output_tokens=out)  # fmt: skip


def add_usage(
    conn: sqlite3.Connection,
    run_id: int | None,
    *,
    job: str,
    started: float,
    day: dt.date,
    backend: str,
    model: str,
    requests: int,
    input_tokens: int,
    output_tokens: int,
) -> int | None:
    """Count requests against run `run_id`, or start the run's row; returns the run's id."""
    if run_id is not None:
        cur = conn.execute(
            "UPDATE llm_runs SET requests = requests + ?, input_tokens = input_tokens + ?,"
            " output_tokens = output_tokens + ? WHERE id = ?",
            (requests, input_tokens, output_tokens, run_id),
        )
        if cur.rowcount:
            return run_id
    # The run's first request (or its row was rolled back with a failed transaction).
    cur = conn.execute(
        "INSERT INTO llm_runs(job, started, day, backend, model, requests, input_tokens,"
        " output_tokens) VALUES (?,?,?,?,?,?,?,?)",
        (job, started, day.isoformat(), backend, model, requests, input_tokens, output_tokens),
    )
    return cur.lastrowid


def config_error(conn: sqlite3.Connection) -> str:
    """The latched configuration error as stored (JSON), or ""."""
    return get_state(conn, CONFIG_ERROR_KEY, "")


def latch_config_error(conn: sqlite3.Connection, value: str) -> None:
    set_state(conn, CONFIG_ERROR_KEY, value)


def clear_config_error(conn: sqlite3.Connection) -> None:
    delete_state(conn, CONFIG_ERROR_KEY)
