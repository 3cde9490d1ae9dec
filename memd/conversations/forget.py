"""Forgetting a conversation: a session, or some of its turns, removed from everywhere memd keeps it.

That is the index (the turns, their search entries and message parts; the session's row, or its
turn count, summary and title), the files of pushed turns, and the journal. A log memd tails
belongs to the app that writes it and is not edited: instead a hash of each forgotten
(session, turn) is kept, in `<data>/conversations/forgotten` and in the index, and a turn with
such a key is never stored again, whether its log is read again after the index was rebuilt or
after the file was replaced. What the conversation goes on to say (new turns) is kept.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from memd.conversations import repo
from memd.conversations.ingest import TITLE_CHARS, forgotten_key, refresh_summary, set_title
from memd.conversations.recall import resolve_session
from memd.core.errors import NotFound
from memd.core.paths import ensure_private_dir
from memd.core.text import short_id, shorten
from memd.db import Connection


@dataclass(frozen=True, slots=True)
class ForgetPlan:
    """What forgetting will remove."""

    session_id: str
    title: str
    turn_ids: list[str]
    whole: bool  # every turn of the session: its row goes too
    questions: frozenset[str] | None  # journal entries to remove by question turn; None: all

    @property
    def keys(self) -> list[str]:
        return [forgotten_key(self.session_id, t) for t in self.turn_ids]


def plan(conn: Connection, session: str, turn_ids: Sequence[str] = ()) -> ForgetPlan:
    """What forgetting a session (no `turn_ids`) or some of its turns removes.

    `session` may be the short id the journal prints, a turn the short id `search` prints.
    NotFound for an unknown session or turn.
    """
    sid = resolve_session(conn, session)
    row = repo.session(conn, sid)
    stored = repo.turns_of(conn, sid)
    have = {t.turn_id for t in stored}
    shorts = {short_id(t): t for t in have if short_id(t) != t}
    turn_ids = [t if t in have else shorts.get(t, t) for t in turn_ids]
    if turn_ids:
        missing = [t for t in dict.fromkeys(turn_ids) if t not in have]
        if missing:
            raise NotFound(f"session {sid} has no turn {', '.join(map(repr, missing))}")
    wanted = set(turn_ids) if turn_ids else have
    targets = [t for t in stored if t.turn_id in wanted]
    whole = wanted >= have
    questions: frozenset[str] | None = None
    if not whole:
        # An entry of the journal shows a question and its answers: it goes when any of them does.
        asked, qs = "", set()
        for t in stored:
            if t.role == "user":
                asked = t.turn_id
            if t.turn_id in wanted and asked:
                qs.add(asked)
        questions = frozenset(qs)
    return ForgetPlan(sid, row.title if row else "", [t.turn_id for t in targets], whole, questions)


def apply(conn: Connection, p: ForgetPlan, *, now: float) -> int:
    """Remove the planned turns from the index and remember their keys (one transaction)."""
    repo.add_forgotten(conn, p.keys)
    removed = repo.delete_turns(conn, p.session_id, p.turn_ids)
    if p.whole:
        repo.delete_session(conn, p.session_id)
        return removed
    repo.turns_removed(conn, p.session_id, removed)
    first = repo.first_turn(conn, p.session_id)
    if first is not None and first[0] == "user":
        set_title(conn, p.session_id, shorten(first[1], TITLE_CHARS), "first")
    refresh_summary(conn, p.session_id, now=now, force=True)
    return removed


class ForgottenKeys:
    """The file of forgotten-turn keys: one hash per line, appended, flushed to disk."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def add(self, keys: Collection[str]) -> None:
        if not keys:
            return
        ensure_private_dir(self.path.parent)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            with os.fdopen(fd, "ab") as f:
                f.write("".join(f"{k}\n" for k in keys).encode())
                f.flush()
                os.fsync(f.fileno())
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, str(self.path)) from exc

    def keys(self) -> list[str]:
        try:
            text = self.path.read_text(encoding="ascii", errors="replace")
        except FileNotFoundError:
            return []
        return [k for k in (line.strip() for line in text.splitlines()) if len(k) == 32]


def journal_files(memory_dir: Path) -> list[Path]:
    """The journal's day files, archived ones included."""
    out: list[Path] = []
    for folder in (memory_dir / "journal", memory_dir / "archive" / "journal"):
        if folder.is_dir():
            out += sorted(p for p in folder.glob("*.md") if p.is_file())
    return out
