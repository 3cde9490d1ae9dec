"""Read-only socket methods the memory page needs and the daemon did not have.

`job_runs` lists the recorded runs of the scheduled jobs (the `job_runs` table the engine writes
after every run), so a person can see what each extraction, summary and archival run did, not
only the last one. Register with ``engine.handlers.update(handlers(engine.store.read))``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from memd.core.errors import InvalidParams
from memd.db import Connection

MAX_RUNS = 200  # the engine keeps at most 200 runs per job


def job_runs(conn: Connection, params: dict[str, Any]) -> dict[str, Any]:
    """Recorded job runs, newest first.

    Params: `name` (a job name; default every job), `limit` (1-200, default 50).
    Result: ``{"runs": [{"id", "job", "started", "finished", "seconds", "outcome", "message",
    "counts"}]}`` with times in epoch seconds and `counts` as the job reported them.
    """
    name = params.get("name", "")
    if name is None:
        name = ""
    if not isinstance(name, str):
        raise InvalidParams("param 'name' must be a string")
    limit = params.get("limit", 50)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_RUNS:
        raise InvalidParams(f"param 'limit' must be an integer between 1 and {MAX_RUNS}")
    where, args = ("WHERE name = ?", (name, limit)) if name else ("", (limit,))
    rows = conn.execute(
        "SELECT id, name, started, finished, outcome, message, counts FROM job_runs"
        f" {where} ORDER BY started DESC, id DESC LIMIT ?",
        args,
    ).fetchall()
    return {
        "runs": [
            {
                "id": r[0],
                "job": r[1],
                "started": r[2],
                "finished": r[3],
                "seconds": round(max(0.0, r[3] - r[2]), 3),
                "outcome": r[4],
                "message": r[5],
                "counts": _counts(r[6]),
            }
            for r in rows
        ]
    }


def _counts(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def handlers(
    read: Callable[[], Connection],
) -> dict[str, Callable[[dict[str, Any]], Any]]:
    """The socket methods of this module, bound to a reader (`Store.read`)."""
    return {"job_runs": lambda params: job_runs(read(), params)}
