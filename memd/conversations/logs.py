"""Read every assistant's conversations into the store, live, exactly once across restarts.

The sources (`memd.conversations.sources`) are read by their kind (`memd.conversations.reading`):
append-only logs from their checkpoint in `log_files` (inode, size, byte offset, line number,
hash of the first bytes) with `memd.conversations.tailer.read_new` — only complete lines, a
partial last line waits for its newline, a truncated or replaced file is read again from the
start —; documents rewritten in place whole, when they changed; databases by the rows updated
since the last read. The turns of a part and the checkpoint after it commit in one transaction,
and turns are keyed by `(session_id, turn_id)`, so a crash at any point neither loses nor
duplicates a turn. Lines that cannot be parsed are recorded in `bad_lines` with their file
and line number and the rest of the file goes on. A log that disappears is only marked
deleted: what memd learned from it stays.

Live changes come from a `Watcher` on the source folders; a slow poll catches anything the
watcher missed (and files that are written continuously, which a debounce would hold back). A
source folder that does not exist yet (Claude Code before its first run) is watched for from
its nearest existing parent, and read as soon as it appears.

The files of pushed turns (`memd.conversations.pushed`) are a source too, one memd writes
itself: not watched, but read at start and checked on every poll, so a rebuilt index gets
them back.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from memd.api import messages as msg
from memd.conversations import databases, documents, pushed, repo
from memd.conversations.ingest import WriteReport, due_sessions, refresh_summaries
from memd.conversations.reading import FileReport, Host, Pass, subagent_type
from memd.conversations.sources import FORMATS, LogSource
from memd.conversations.tailer import Checkpoint
from memd.core.watcher import Watcher
from memd.db import Store

__all__ = ["FileReport", "LogIngestor", "LogSource", "subagent_type"]

log = logging.getLogger(__name__)
CHUNK_BYTES = 1 << 20
RECENT_BAD_LINES = 10
SUMMARY_BATCH = 50


# With native watches, the periodic scan only guards against lost events.
WATCHED_RESCAN_S = 300.0


class LogIngestor:
    """Reads every configured log source into the store; `start()` keeps it up to date."""

    def __init__(
        self,
        store: Store,
        sources: list[LogSource],
        *,
        enabled: Callable[[], bool] = lambda: True,
        on_turns: Callable[[WriteReport], None] | None = None,
        on_poll: Callable[[], object] | None = None,
        poll_s: float = 5.0,
        debounce_s: float = 0.05,
        chunk_bytes: int = CHUNK_BYTES,
        own_files_lock: threading.Lock | None = None,
    ) -> None:
        self.store = store
        self.sources = sources
        self.enabled = enabled
        self.on_turns = on_turns
        self.on_poll = on_poll
        self.poll_s = poll_s
        self.debounce_s = debounce_s
        self.chunk_bytes = chunk_bytes
        self.watcher: Watcher | None = None
        self.last_scan_at = 0.0
        self._lock = threading.Lock()
        # Held while memd's own files (unwatched sources) are read: their writer holds it too.
        self.own_files_lock = own_files_lock or threading.Lock()
        self._stop = threading.Event()
        self._wake = threading.Event()  # a source folder appeared: scan now
        # Set when a folder appeared; cleared by the scan that starts after it. A scan already
        # running then listed the folder before it was there.
        self._asked = threading.Event()
        self._poller: threading.Thread | None = None
        self._last_scan = 0.0
        self.problems: dict[str, str] = {}  # path → why it cannot be read now
        self._host = Host(store, enabled, self._stop, chunk_bytes, self._agent_of, self.problems)

    # -- life cycle ------------------------------------------------------------------------
    def start(self) -> None:
        """Watch the source folders (or wait for them to appear) and poll them; the first scan
        runs in the background."""
        roots = {s.root: s.reader.recursive for s in self.sources if s.watched}
        if roots:
            self.watcher = Watcher(
                self.ingest_paths,
                accept=self._accepts,
                debounce_s=self.debounce_s,
                name="log-watcher",
            )
            for r, recursive in roots.items():
                self.watcher.watch_when_present(r, on_present=self._appeared, recursive=recursive)
            self.watcher.start()
        self._poller = threading.Thread(target=self._poll_loop, name="memd-log-poll", daemon=True)
        self._poller.start()

    def _appeared(self, root: Path) -> None:
        log.info("log folder %s appeared: watching it", root)
        self._asked.set()
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self.watcher is not None:
            self.watcher.stop()
        if self._poller is not None and self._poller.is_alive():
            self._poller.join(30)

    def _needs_scan(self, now: float) -> bool:
        """Natively watched folders only need a rare safety scan; others are polled each time.

        A folder that does not exist yet counts as watched: its appearing is watched for and
        wakes a scan (most people have one or two of the assistants memd knows, not all).
        """
        w = self.watcher
        if w is None or w.fallbacks:
            return True
        roots, waiting = w.watched_roots, set(w.waiting_for)
        watched = all(
            str(s.root) in roots or (str(s.root) in waiting and not s.root.exists())
            for s in self.sources
            if s.watched
        )
        return not watched or now - self._last_scan >= WATCHED_RESCAN_S

    def _poll_loop(self) -> None:
        while not self._stop.is_set():
            try:
                now = time.monotonic()
                if self._asked.is_set() or self._needs_scan(now):
                    self._asked.clear()
                    # Idle CPU grows with the number of transcripts scanned, so a folder the
                    # watcher already reports on is rescanned only every few minutes.
                    self.scan(quick=True, sources=[s for s in self.sources if s.watched])
                    self._last_scan = now
                self.scan_own()
                # Catch-up work waits while a log is being read: that read refreshes its own
                # sessions when it ends, and meanwhile it needs the writer (and the GIL).
                if not self._lock.locked():
                    self.refresh_due_summaries()
                    if self.on_poll is not None:
                        self.on_poll()
            except Exception:
                # A broken source must not end tailing for the others; the next poll retries.
                log.exception("log scan failed")
            self._wake.wait(self.poll_s)
            self._wake.clear()

    def refresh_due_summaries(self) -> int:
        """Rebuild the summaries still due (a bulk load cut short by a crash leaves some)."""
        done = 0
        while not self._stop.is_set() and not self._lock.locked():
            due = due_sessions(self.store.read(), SUMMARY_BATCH)
            if not due:
                break
            n = self.store.w.run(functools.partial(refresh_summaries, session_ids=due))
            if not n:
                break
            done += n
        return done

    def _accepts(self, path: str) -> bool:
        return any(s.watched and s.accepts(path) for s in self.sources)

    # -- reading ---------------------------------------------------------------------------
    def scan(
        self, *, quick: bool = False, sources: Sequence[LogSource] | None = None
    ) -> list[FileReport]:
        """Read every log of every source (or of `sources`); with `quick`, files that are as their
        checkpoint says (`_unchanged`) are not opened. Logs that disappeared are marked deleted."""
        known = self._known()
        seen: set[str] = set()
        todo: list[tuple[str, str]] = []
        for src in self.sources if sources is None else sources:
            for path in src.files():
                if self._stop.is_set():
                    return []
                seen.add(path)
                if quick and path in known and _unchanged(src.format, path, known[path]):
                    continue
                todo.append((path, src.format))
        reports = self.ingest_files(todo)
        gone = [p for p in known if p not in seen and not os.path.exists(p)]
        if gone:
            self._mark_deleted(gone)
        self.last_scan_at = time.time()
        return reports

    def scan_own(self) -> list[FileReport]:
        """Read what memd's own files hold that the index lacks (all of it after a rebuild)."""
        with self.own_files_lock:
            return self.scan(quick=True, sources=[s for s in self.sources if not s.watched])

    def ingest_paths(self, paths: list[str]) -> list[FileReport]:
        """Read the given files (the watcher's callback)."""
        files = []
        for p in paths:
            src = next((s for s in self.sources if s.watched and s.accepts(p)), None)
            if src is not None:
                files.append((src.database(p), src.format))
        return self.ingest_files(files)

    def ingest_files(
        self, files: Sequence[tuple[str, str]], *, summaries: bool = True
    ) -> list[FileReport]:
        """Read what is new in each (path, format) and store it with its checkpoint, part by part
        (`memd.conversations.reading.Pass`).

        Summaries of the sessions that grew are refreshed once, after the last part (or by the
        caller, with `summaries=False`).
        """
        with self._lock:
            run = Pass(self._host)
            try:
                # A path listed twice would be read twice: its checkpoint is only written when
                # the batch holding its first read is.
                for path, fmt in dict.fromkeys(files):
                    if self._stop.is_set():
                        break
                    run.read(path, fmt, self._checkpoint(path))
                run.flush()
            finally:
                run.close()
            for rep in run.reports:
                # Once per file, not per chunk: a bulk load would rewrite the same journal
                # pages (and have them re-indexed) once per chunk.
                if rep.report.added or rep.report.updated:
                    self.notify(rep.report)
            if summaries:
                self.refresh_summaries(s for rep in run.reports for s in rep.report.sessions)
        return run.reports

    def refresh_summaries(self, sessions: Iterable[str]) -> None:
        """Rebuild the summaries of sessions that grew, a batch per transaction."""
        ids = sorted(set(sessions))
        for i in range(0, len(ids), SUMMARY_BATCH):
            self.store.w.run(
                functools.partial(refresh_summaries, session_ids=ids[i : i + SUMMARY_BATCH])
            )

    def notify(self, wrep: WriteReport) -> None:
        """Tell `on_turns` about stored turns (the journal); its failures are logged only."""
        if self.on_turns is None:
            return
        try:
            self.on_turns(wrep)
        except Exception:
            # The journal is a by-product: failing to write it must not stop ingestion.
            log.exception("after-ingest hook failed")

    # -- state -----------------------------------------------------------------------------
    def _checkpoint(self, path: str) -> Checkpoint | None:
        return repo.checkpoint(self.store.read(), path)

    def _agent_of(self, path: str) -> str:
        return next((s.agent for s in self.sources if s.agent and s.accepts(path)), "")

    def _known(self) -> dict[str, Checkpoint]:
        return repo.tailed_files(self.store.read())

    def _mark_deleted(self, paths: list[str]) -> None:
        self.store.w.run(lambda c: repo.mark_deleted(c, paths))

    def status(self) -> msg.LogsStatus:
        """Files tailed, turns, bad lines (the most recent with file:line), the watcher."""
        conn = self.store.read()
        files = repo.log_totals(conn, exclude_format=pushed.FORMAT)
        recent = repo.recent_bad_lines(conn, RECENT_BAD_LINES)
        watcher = self.watcher.mode if self.watcher else "not watching"
        # An assistant's missing folder is said on its own line (`inventory`): not here again.
        theirs = {str(s.root) for s in self.sources if s.assistant}
        waiting = [w for w in (self.watcher.waiting_for if self.watcher else []) if w not in theirs]
        if waiting:
            watcher += "; waiting for " + ", ".join(waiting) + " to appear"
        return msg.LogsStatus(
            sources=[msg.LogSource(path=str(s.root), format=s.format,
                                   assistant=s.assistant or msg.UNSET)
                     for s in self.sources if s.watched],
            files=files.files - files.deleted, deleted_files=files.deleted,
            turns_from_logs=files.turns, bad_lines=files.bad_lines,
            recent_bad_lines=[f"{path}:{line}: {why}" for path, line, why in recent],
            problems=[f"{path}: {why}" for path, why in sorted(self.problems.items())],
            watcher=watcher, last_scan_at=self.last_scan_at or None,
        )  # fmt: skip


def _unchanged(fmt: str, path: str, cp: Checkpoint) -> bool:
    """Whether a known file is, by a stat, as its checkpoint says (nothing new to read)."""
    kind = FORMATS[fmt].kind
    if kind == "sqlite":
        return databases.unchanged(cp, path)
    try:
        st = os.stat(path)
    except OSError:
        return True  # gone meanwhile: the end of the scan marks it
    if FORMATS[fmt].sections is not None:  # read from its last section on: by stat alone
        return (st.st_ino, st.st_size, st.st_mtime_ns) == (cp.inode, cp.size, cp.mtime_ns)
    if kind == "document":
        return documents.unchanged(cp, st)
    return st.st_ino == cp.inode and st.st_size == cp.size and cp.offset == cp.size
