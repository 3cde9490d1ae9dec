"""The conversation journal: `journal/YYYY-MM-DD.md`, one short entry per exchange (seed 000).

Entries are grouped under one `## <session title> · <session id>` heading per session and day,
in local time. Each entry is a list item carrying the id of its question turn in a
`<!-- memd turn=… -->` comment; an entry is known by that id and the session of the heading it
sits under (apps number their turns `q1`, `a1`, … in every session), so writing the same
exchange twice (after a crash between the file write and the database update) never
duplicates it, and two sessions with the same turn ids both get their entries. The file stays
hand-editable. `sessions.journal_upto` remembers the last turn journaled, so an exchange is
planned once.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from memd.conversations import repo
from memd.conversations.repo import lagging_sessions as lagging_sessions
from memd.core.text import META_COMMENT, short_id, shorten
from memd.db import Store
from memd.history import Cause
from memd.memory.files import MemoryFiles, Operation, TextEdit
from memd.memory.items import clean_text, neutral
from memd.memory.parse import format_meta, parse_meta

QUESTION_CHARS = 80
ANSWER_CHARS = 160
TITLE_CHARS = 60
_TRAILING_JOINERS = "\u200d\ufe0e\ufe0f"


@dataclass(frozen=True, slots=True)
class JournalTurn:
    """A stored turn as the journal planner sees it (`rowid` orders the log)."""

    rowid: int
    turn_id: str
    role: str
    text: str
    ts: float


@dataclass(frozen=True, slots=True)
class Entry:
    """One exchange as a journal line."""

    day: dt.date
    session_id: str
    title: str
    at: str
    question: str
    answer: str
    turn_id: str

    def line(self) -> str:
        body = f"{self.at} **Q:** {self.question}" if self.question else f"{self.at}"
        if self.answer:
            body += f" **A:** {self.answer}"
        # A conversation's text never becomes the line's metadata (`neutral`).
        return f"- {neutral(body)} {format_meta({'turn': self.turn_id})}"


def short(text: str, limit: int) -> str:
    """`memd.core.text.shorten` of the text on one line without control characters (a NUL byte
    would make the day file look binary), never ending inside an emoji sequence."""
    out = shorten(clean_text(text), limit)
    if out.endswith("…"):
        out = out[:-1].rstrip(_TRAILING_JOINERS) + "…"
    return out


def plan_entries(
    session_id: str, title: str, turns: Sequence[JournalTurn], *, oldest: float = 0.0
) -> tuple[list[Entry], int]:
    """PURE: the exchanges of `turns` (after the last journaled one) and the new high-water mark.

    An exchange is a user turn and the assistant turns that follow it. A question whose answer
    has not arrived yet stays unplanned (the mark stops before it); assistant turns without a
    question (a continuation of an exchange already written) are passed over. Exchanges older
    than `oldest` (epoch seconds) are passed over without an entry.
    """
    entries: list[Entry] = []
    upto = 0
    i = 0
    n = len(turns)
    while i < n:
        t = turns[i]
        if t.role != "user":
            upto = t.rowid
            i += 1
            continue
        j = i + 1
        answers: list[JournalTurn] = []
        while j < n and turns[j].role != "user":
            answers.append(turns[j])
            j += 1
        if not answers and j >= n:
            break  # the answer may still come
        if t.ts >= oldest:
            when = dt.datetime.fromtimestamp(t.ts)
            entries.append(
                Entry(
                    day=when.date(),
                    session_id=session_id,
                    title=short(title or session_id, TITLE_CHARS),
                    at=when.strftime("%H:%M"),
                    question=short(t.text, QUESTION_CHARS),
                    answer=short(" ".join(a.text for a in answers), ANSWER_CHARS),
                    turn_id=t.turn_id,
                )
            )
        upto = turns[j - 1].rowid
        i = j
    return entries, upto


def _heading_re(session_id: str) -> re.Pattern[str]:
    return re.compile(r"^##[ \t]+.*·[ \t]*" + re.escape(short_id(session_id)) + r"[ \t]*$")


_ANY_HEADING = re.compile(r"^##[ \t]+.*·[ \t]*(\S+)[ \t]*$")


def add_entries(
    files: MemoryFiles, journal_dir: Path, entries: Iterable[Entry], op: Operation
) -> int:
    """Append entries to their day files, under their session's heading; returns lines written.

    Through the door, as part of `op`: a journal folder (or day file) leading out of the memory
    roots is never written through (`PathError`, nothing written).
    """
    by_day: dict[dt.date, dict[str, list[Entry]]] = {}
    for e in entries:
        by_day.setdefault(e.day, {}).setdefault(e.session_id, []).append(e)
    written = 0
    for day, sessions in sorted(by_day.items()):
        path = journal_dir / f"{day.isoformat()}.md"
        # Through the safe writer: an editor's save of the day file is never written over.
        add = functools.partial(_add_to_day, day, sessions)
        written += files.edit(path, TextEdit(add), op).result
    return written


def _add_to_day(
    day: dt.date, sessions: dict[str, list[Entry]], current: str | None
) -> tuple[str | None, int]:
    """PURE: a day file's text with the entries it does not hold yet; and how many."""
    lines = current.split("\n") if current else []
    if not lines or lines == [""]:
        lines = [f"# {day.isoformat()}", ""]
    seen = _journaled_turns(lines)
    written = 0
    for es in sessions.values():
        new = []
        for e in es:
            key = (short_id(e.session_id), e.turn_id)
            if key not in seen:
                seen.add(key)
                new.append(e)
        if new:
            _insert(lines, new)
            written += len(new)
    if not written:
        return None, 0
    if lines[-1] != "":
        lines.append("")
    return "\n".join(lines), written


def _journaled_turns(lines: list[str]) -> set[tuple[str, str]]:
    """(short session id of the heading, turn id) of the entries already in a day file."""
    out: set[tuple[str, str]] = set()
    session = ""
    for line in lines:
        if line.startswith("#"):
            m = _ANY_HEADING.match(line)
            session = m.group(1) if m else ""
        elif "<!--" in line:
            turn = _entry_turn(line)
            if turn is not None:
                out.add((session, turn))
    return out


def _entry_turn(line: str) -> str | None:
    """The question turn id of an entry line (None for any other line)."""
    for m in META_COMMENT.finditer(line):
        turn = parse_meta(m.group(1)).get("turn")
        if turn is not None:
            return turn
    return None


def remove_entries(
    files: MemoryFiles,
    path: Path,
    session_id: str,
    turn_ids: Collection[str] | None,
    op: Operation,
) -> int:
    """Remove a session's entries from a day file: all of them, or those whose question is one
    of `turn_ids`. A session heading left with nothing under it goes too; lines written by hand
    stay. Returns the number of entries removed. Through the door, as for `add_entries`."""
    if not path.exists():
        return 0
    edit = functools.partial(_without_entries, _heading_re(session_id), turn_ids)
    return files.edit(path, TextEdit(edit), op).result


def _without_entries(
    pat: re.Pattern[str], turn_ids: Collection[str] | None, current: str | None
) -> tuple[str | None, int]:
    """PURE: a day file's text without the matching entries of one session; and how many."""
    lines = current.split("\n") if current else []
    out: list[str] = []
    removed = 0
    section: int | None = None  # where the session's heading is in `out`
    for line in lines + ["## "]:  # a sentinel closes the last section
        if line.startswith("#"):
            if section is not None and not any(x.strip() for x in out[section + 1 :]):
                del out[section:]
            section = len(out) if pat.match(line) else None
        elif section is not None and "<!--" in line:
            turn = _entry_turn(line)
            if turn is not None and (turn_ids is None or turn in turn_ids):
                removed += 1
                continue
        out.append(line)
    out.pop()  # the sentinel
    if not removed:
        return None, 0
    while len(out) > 1 and out[-1] == "" and out[-2] == "":
        out.pop()
    return "\n".join(out), removed


def _insert(lines: list[str], es: list[Entry]) -> None:
    """Put one session's new entries at the end of its section (a new section at the end)."""
    first = es[0]
    pat = _heading_re(first.session_id)
    start = next((i for i, line in enumerate(lines) if pat.match(line)), None)
    if start is None:
        while lines and lines[-1] == "":
            lines.pop()
        lines += ["", f"## {first.title} · {short_id(first.session_id)}", ""]
        lines += [e.line() for e in es]
        return
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].startswith(("# ", "## "))), len(lines)
    )
    at = end
    while at > start + 1 and not lines[at - 1].strip():
        at -= 1
    lines[at:at] = [e.line() for e in es]
    after = at + len(es)
    if after < len(lines) and lines[after].startswith("#"):
        lines.insert(after, "")


def write_journal(
    store: Store,
    files: MemoryFiles,
    journal_dir: Path,
    session_ids: Iterable[str],
    *,
    oldest: float = 0.0,
) -> int:
    """Journal the new exchanges of these sessions; returns the number of entries written.

    The files are written before the high-water mark is committed: a crash in between writes
    nothing twice, because entries already in a file are recognised by their turn id. Written
    through the door as one coalesced `journal` operation (the history records journal files
    per file and minute); on `PathError` (a journal folder leading out of the memory roots)
    nothing is written and no mark moves.
    """
    # One operation for the whole run (the door's lock held): two runs at once would plan the
    # same entries against the same marks.
    with files.operation(Cause.JOURNAL, coalesce=True) as op:
        conn = store.read()
        marks: dict[str, int] = {}
        entries: list[Entry] = []
        for sid in sorted(set(session_ids)):
            mark = repo.journal_mark(conn, sid)
            if mark is None:
                continue
            title, journaled = mark
            turns = [JournalTurn(*r) for r in repo.turns_to_journal(conn, sid, journaled, oldest)]
            es, upto = plan_entries(sid, title, turns, oldest=oldest)
            entries += es
            if upto > journaled:
                marks[sid] = upto
        written = add_entries(files, journal_dir, entries, op) if entries else 0
        if marks:
            store.w.run(lambda c: repo.set_journal_marks(c, marks))
    return written
