"""Each LLM run records its backend (anthropic, claude-code, openai): budgets are per backend."""

from __future__ import annotations

import sqlite3

from memd.db.migrations.script import run_script


def m090_llm_runs_backend(conn: sqlite3.Connection) -> None:
    # Every run before this one went to the Anthropic API, the only backend there was.
    run_script(
        conn,
        """
        ALTER TABLE llm_runs ADD COLUMN backend TEXT NOT NULL DEFAULT '';
        UPDATE llm_runs SET backend = 'anthropic';
        CREATE INDEX llm_runs_day_backend ON llm_runs(day, backend);
        """,
    )
