"""The archival job (daily): old journal days, expired and decayed memories move to `archive/`.

- Journal days older than `archive.journal_days` move whole to `archive/journal/`.
- A file whose front matter `expires` is past moves whole to `archive/<rel>`.
- A list item moves to `archive/<rel>` (same section, `archived=<date>` added to its metadata)
  when its `expires` is past; when it was superseded more than `archive.unused_days` ago; or
  when its importance is at most `archive.max_importance` and it has not been written, seen
  again or returned by `context`/`search` for `archive.unused_days` (`item_usage`).
- `pinned: true` (front matter) or `pinned=true` (item metadata) never moves.
- A rewrite that would drop more than `archive.max_loss` of a file's items is refused and
  reported; before any rewrite the previous file is copied to `archive/snapshots/`; every run
  appends what it did to `archive/CHANGES.md`.

Archived items stay searchable (the archive is indexed) but `context` leaves them out.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memd.core.conditions import day_of
from memd.core.errors import SourceError
from memd.core.fsio import is_regular, make_private_dir
from memd.core.models import JobOutcome, JobResult
from memd.core.text import counted
from memd.db import Connection, Store
from memd.history import Cause
from memd.history.models import RUN_TRAILER
from memd.memory import repo
from memd.memory.edit import add_item, remove_items
from memd.memory.files import MemoryFiles, Operation, TextEdit
from memd.memory.indexer import Root, scan_root
from memd.memory.jobs import JobContext
from memd.memory.parse import parse_markdown

JOB = "archive"
CHANGES = "CHANGES.md"
log = logging.getLogger(__name__)
_JOURNAL_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:[^/]*)\.md$")
_TRUE = ("true", "yes", "1", "on")


@dataclass(frozen=True, slots=True)
class ItemMove:
    """One list item leaving a file, and why."""

    line: int
    section: str
    text: str
    meta: dict[str, str]
    reason: str


@dataclass(frozen=True, slots=True)
class FilePlan:
    """What archival does to one file."""

    rel: str
    total: int  # list items in the file
    moves: tuple[ItemMove, ...] = ()
    whole_file: str = ""  # non-empty: the file moves whole, for this reason
    refused: str = ""  # non-empty: the guard stopped the rewrite


def _date(value: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(value.strip()[:10])
    except ValueError:
        return None


def _pinned(value: object) -> bool:
    return value is True or str(value).strip().lower() in _TRUE


def plan_file(
    rel: str,
    text: str,
    *,
    today: dt.date,
    used: Mapping[str, dt.date],
    unused_days: int,
    max_importance: int,
    max_loss: float,
) -> FilePlan:
    """PURE: which items of one file move to the archive (`used`: item id → last use)."""
    parsed = parse_markdown(text)
    items = [(s.heading, it) for s in parsed.sections for it in s.items]
    fm = parsed.front_matter
    if _pinned(fm.get("pinned")):
        return FilePlan(rel, len(items))
    expires = _date(str(fm.get("expires", "")))
    if expires is not None and expires < today:
        return FilePlan(rel, len(items), whole_file=f"file expired {expires.isoformat()}")
    horizon = today - dt.timedelta(days=unused_days)
    moves = []
    for heading, it in items:
        meta = it.meta
        if _pinned(meta.get("pinned", "")):
            continue
        reason = ""
        exp = _date(meta.get("expires", ""))
        sup = _date(meta.get("superseded", ""))
        if meta.get("archived"):
            continue
        if exp is not None and exp < today:
            reason = f"expired {exp.isoformat()}"
        elif sup is not None and sup < horizon:
            reason = f"superseded {sup.isoformat()}"
        elif meta.get("imp", "").isdigit() and int(meta["imp"]) <= max_importance:
            dates = [d for d in (_date(meta.get("at", "")), _date(meta.get("seen", ""))) if d]
            if it.id and it.id in used:
                dates.append(used[it.id])
            last = max(dates, default=None)
            if last is not None and last < horizon:
                reason = f"importance {meta['imp']}, unused since {last.isoformat()}"
        if reason:
            moves.append(ItemMove(it.line, heading, it.text, dict(meta), reason))
    if moves and len(moves) > max_loss * len(items):
        share = len(moves) / len(items)
        refused = (
            f"would drop {len(moves)} of {len(items)} items ({share:.0%} > {max_loss:.0%});"
            " nothing changed (archive some by hand, or pin what should stay)"
        )
        return FilePlan(rel, len(items), tuple(moves), refused=refused)
    return FilePlan(rel, len(items), tuple(moves))


def plan_journal(names: list[str], today: dt.date, keep_days: int) -> list[str]:
    """PURE: journal file names (``YYYY-MM-DD….md``) older than `keep_days`."""
    cutoff = today - dt.timedelta(days=keep_days)
    out = []
    for name in sorted(names):
        m = _JOURNAL_NAME.match(name)
        day = _date(m.group(1)) if m else None
        if day is not None and day < cutoff:
            out.append(name)
    return out


def last_used(conn: Connection) -> dict[str, dt.date]:
    """item id → the day `context` or `search` last returned it."""
    return {item: day_of(at) for item, at in repo.last_used(conn).items()}


def run_archival(ctx: JobContext) -> JobResult:
    """One run of the archival job."""
    s = ctx.settings
    now = ctx.now()
    today = day_of(now)
    stamp = dt.datetime.fromtimestamp(now).strftime("%Y%m%d-%H%M%S")
    root = ctx.memory_root
    # Every file archival writes is checked to be inside the memory roots where it is written:
    # an `archive/` (or a folder in it) linked elsewhere stops the run before it moves anything.
    inside = ctx.indexer.resolve
    files = ctx.files
    archive = inside(root / "archive")
    changes: list[str] = []
    touched: set[str] = set()
    run = time.time_ns() // 1000  # the run's id, on its change in the history too
    counts = {"journal_days": 0, "files": 0, "items": 0, "refused": 0, "snapshots": 0, "run": run}
    used = last_used(ctx.store.read())
    trailers = {RUN_TRAILER: str(run)}
    with files.operation(Cause.ARCHIVE, trailers=trailers) as change:
        jdir = root / "journal"
        names = sorted(p.name for p in jdir.iterdir() if is_regular(p)) if jdir.is_dir() else []
        for name in plan_journal(names, today, s.archive_journal_days):
            src = jdir / name
            if _pinned(parse_markdown(_read(files, src) or "").front_matter.get("pinned")):
                continue
            dest = inside(archive / "journal" / name)
            files.move(src, dest, change)
            touched.update((str(src), str(dest)))
            changes.append(
                f"- `journal/{name}` → `archive/journal/{name}` (older than {s.archive_journal_days} days)"
            )
            counts["journal_days"] += 1
        for r in ctx.indexer.roots:
            for path in sorted(_memory_files(r, root)):
                rel = os.path.relpath(path, r.path).replace(os.sep, "/")
                arel = f"projects/{r.project_slug}/{rel}" if r.project_slug else rel
                text = _read(files, Path(path), inside=r.path)
                if text is None:
                    continue
                plan = plan_file(rel, text, today=today, used=used, unused_days=s.archive_unused_days,
                                 max_importance=s.archive_max_importance, max_loss=s.archive_max_loss)  # fmt: skip
                shown = f"`{arel}`"
                if plan.whole_file:
                    dest = inside(archive / arel)
                    files.move(Path(path), dest, change)
                    touched.update((path, str(dest)))
                    changes.append(f"- {shown} → `archive/{arel}` ({plan.whole_file})")
                    counts["files"] += 1
                elif plan.refused:
                    changes.append(f"- REFUSED {shown}: {plan.refused}")
                    for mv in plan.moves:
                        changes.append(f'  - would archive "{mv.text}" ({mv.reason})')
                    counts["refused"] += 1
                elif plan.moves:
                    snap = inside(archive / "snapshots" / f"{arel}.{stamp}.bak")
                    make_private_dir(snap.parent)
                    files.create_new(snap, text, change)  # what the plan was made on
                    counts["snapshots"] += 1
                    dest = inside(archive / arel)
                    day = today.isoformat()
                    # The archive copy is written first: a crash in between duplicates, never loses.
                    for mv in plan.moves:
                        meta = {**mv.meta, "archived": day}
                        files.edit(dest, add_item(dest, mv.section or "Archived", mv.text, meta,
                                                  title=_title(text, rel)), change)  # fmt: skip
                    removed = files.edit(
                        Path(path), remove_items(Path(path), _planned(plan)), change
                    ).result
                    touched.update((path, str(dest)))
                    changes.append(f"- {shown}: {len(removed)} of {plan.total} items → `archive/{arel}`"
                                   f" (snapshot `archive/snapshots/{arel}.{stamp}.bak`)")  # fmt: skip
                    changes += [f'  - "{mv.text}" ({mv.reason})' for mv in plan.moves]
                    counts["items"] += len(removed)
        if not changes:
            changes.append("- nothing to archive")
        log_path = inside(archive / CHANGES)
        _append_changes(
            files, log_path, dt.datetime.fromtimestamp(now).strftime("%Y-%m-%d %H:%M"), changes,
            change,
        )  # fmt: skip
        touched.add(str(log_path))
        ctx.indexer.index_paths(sorted(touched))
        change.detail = f"run {run}: {counts['journal_days']} journal days, {counts['files']} files, {counts['items']} items"
    moved = counts["journal_days"] + counts["files"] + counts["items"]
    msg = (f"{counted(counts['journal_days'], 'journal day')}, {counted(counts['files'], 'file')} and"
           f" {counted(counts['items'], 'item')} archived;"
           f" {counted(counts['refused'], 'rewrite')} refused (see archive/{CHANGES})")  # fmt: skip
    if counts["refused"]:
        return JobResult(JOB, JobOutcome.SUCCESS, msg, counts)
    return JobResult(JOB, JobOutcome.SUCCESS if moved else JobOutcome.NOTHING_TO_DO, msg, counts)


def _memory_files(r: Root, memory_root: Path) -> list[str]:
    files = list(scan_root(r))
    if r.path != memory_root:
        return files
    skip = (str(memory_root / "archive") + os.sep, str(memory_root / "journal") + os.sep)
    return [p for p in files if not p.startswith(skip)]


def _title(text: str, rel: str) -> str:
    return parse_markdown(text).title or Path(rel).stem.replace("-", " ").title()


def _read(files: MemoryFiles, path: Path, inside: Path | None = None) -> str | None:
    """The text of a regular file (inside `inside`, else the memory roots), once settled; None
    if not."""
    try:
        return files.read(path, inside=[inside] if inside else None).text
    except (OSError, SourceError):
        return None


def _planned(plan: FilePlan) -> Callable[[str, dict[str, str]], bool]:
    # Pure (the edit may be applied again on a newer version): identical planned items are
    # planned together, so membership is enough.
    wanted = [(mv.text, mv.meta) for mv in plan.moves]

    def match(text: str, meta: dict[str, str]) -> bool:
        return (text, meta) in wanted

    return match


def _append_changes(
    files: MemoryFiles, path: Path, when: str, lines: list[str], op: Operation
) -> None:
    def add(current: str | None) -> tuple[str | None, None]:
        existing = current.split("\n") if current else []
        head = existing if existing and existing != [""] else ["# Archive changes", "",
                "What the archival job moved, refused or kept; newest last.", ""]  # fmt: skip
        while head and head[-1] == "":
            head.pop()
        return "\n".join([*head, "", f"## {when}", "", *lines, ""]), None

    files.edit(path, TextEdit(add), op)


# A Markdown section as the usage counts know it: its file, first and last line.
Span = tuple[str, int, int]


class UsageTracker:
    """Records which items `context` and `search` returned, for decay by disuse.

    Uses are collected in memory and written in one transaction at most every `flush_s`
    seconds: a write per request would put the single writer on every query's path. At most
    `flush_s` seconds of use statistics are lost if the daemon is killed.
    """

    def __init__(self, store: Store, now: Callable[[], float], flush_s: float = 5.0) -> None:
        self.store = store
        self.now = now
        self.flush_s = flush_s
        self._pending: dict[tuple[str, int, int], tuple[float, int]] = {}
        self._lock = threading.Lock()
        self._last_flush = now()

    def note(self, spans: Sequence[Span]) -> None:
        """Count one use of each section (file, first and last line) an answer returned."""
        if not spans:
            return
        when = self.now()
        with self._lock:
            for sp in spans:
                self._pending[sp] = (when, self._pending.get(sp, (0.0, 0))[1] + 1)
            due = when - self._last_flush >= self.flush_s
        if due:
            self.flush()

    def flush(self) -> None:
        """Write the collected uses (queued on the writer, not waited for)."""
        with self._lock:
            pending, self._pending = self._pending, {}
            self._last_flush = self.now()
        if not pending or self.store.writer is None:
            return
        groups: dict[tuple[float, int], list[tuple[str, int, int]]] = {}
        for sp, key in pending.items():
            groups.setdefault(key, []).append(sp)

        def write(c: Connection) -> int:
            return sum(repo.note_used(c, sps, when, uses) for (when, uses), sps in groups.items())

        self.store.writer.submit(write).add_done_callback(_log_failure)


def _log_failure(fut: Any) -> None:
    exc = fut.exception()
    if exc is not None:
        log.debug("recording item use failed: %r", exc)
