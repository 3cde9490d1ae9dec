"""The `state` table: small named values that outlive a run (device id, the LLM error latch)."""

from __future__ import annotations

from memd.db.connection import Connection


def get_state(conn: Connection, key: str, default: str = "") -> str:
    """The value stored under `key`, or `default`."""
    row = conn.execute("SELECT value FROM state WHERE key = ?", (key,)).fetchone()
    return str(row[0]) if row else default


def set_state(conn: Connection, key: str, value: str) -> None:
    """Store `value` under `key` (inside a write transaction)."""
    conn.execute(
        "INSERT INTO state(key, value) VALUES (?, ?)"
        " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def delete_state(conn: Connection, key: str) -> None:
    """Forget `key` (inside a write transaction)."""
    conn.execute("DELETE FROM state WHERE key = ?", (key,))
