"""Tail assistants' conversation logs into the store, exactly once across restarts.

Each log file is read from its checkpoint in `log_files` (inode, size, byte offset, line
number, hash of the first bytes) with `memd.conversations.tailer.read_new`: only complete lines,
a partial last line waits for its newline, a truncated or replaced file is read again from
the start. The turns of a chunk and the checkpoint after it commit in one transaction, and
turns are keyed by `(session_id, turn_id)`, so a crash at any point neither loses nor
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

import dataclasses
import functools
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memd.conversations import pushed, repo
from memd.conversations.formats import (
    CLAUDE_CODE_AGENT,
    SessionTitle,
    SubagentTurn,
    parse_claude_code_line,
    parse_jsonl_line,
)
from memd.conversations.ingest import (
    WriteReport,
    due_sessions,
    prepare,
    refresh_summaries,
    set_title,
    write_turns,
)
from memd.conversations.tailer import Checkpoint, read_new
from memd.core.errors import ConfigError, ParseError
from memd.core.fsio import NotRegularFile
from memd.core.models import Turn
from memd.core.watcher import Watcher
from memd.db import Connection, Store

log = logging.getLogger(__name__)
FORMATS = ("claude-code", "jsonl", "openai")
CHUNK_BYTES = 1 << 20
RECENT_BAD_LINES = 10
SUMMARY_BATCH = 50


# With native watches, the periodic scan only guards against lost events.
WATCHED_RESCAN_S = 300.0


@dataclass(frozen=True, slots=True)
class LogSource:
    """A folder (or one file) of logs in one format; `agent` names the agent of turns that
    name none.

    Claude Code keeps one transcript per session in `<projects>/<project>/<session>.jsonl`;
    its subagent transcripts (`<project>/agent-*.jsonl`, `<project>/<session>/subagents/
    agent-*.jsonl`) only hold sidechain records, which are not what the user and the assistant
    said: they are read to count each run for its sub-agent, never turned into sessions or
    stored as text.
    """

    root: Path
    format: str
    agent: str = ""
    watched: bool = True  # False for memd's own files, which it reads when it wrote them
    # Claude Code project folders never read: those of the folder memd runs Claude Code in.
    skip: frozenset[str] = frozenset()

    def accepts(self, path: str) -> bool:
        """Whether `path` is a log of this source."""
        if not path.endswith(".jsonl"):
            return False
        root = str(self.root)
        if path != root and not path.startswith(root.rstrip(os.sep) + os.sep):
            return False
        if self.format == "claude-code":
            parts = Path(os.path.relpath(path, root)).parts
            if parts[0] in self.skip:
                return False
            subagent = len(parts) == 4 and parts[2] == "subagents" and parts[3].startswith("agent-")
            return len(parts) == 2 or subagent
        if self.format == pushed.FORMAT:
            return os.path.dirname(path) == root
        return True

    def files(self) -> list[str]:
        """The log files there now."""
        if self.root.is_file():
            return [str(self.root)] if self.accepts(str(self.root)) else []
        if not self.root.is_dir():
            return []
        patterns = {
            "claude-code": ("*/*.jsonl", "*/*/subagents/*.jsonl"),
            pushed.FORMAT: ("*.jsonl",),
        }.get(self.format, ("**/*.jsonl",))
        found = (str(f) for pattern in patterns for f in self.root.glob(pattern))
        # Only regular files (a link to one is fine): a FIFO named *.jsonl would block a read.
        return sorted(p for p in found if self.accepts(p) and os.path.isfile(p))


def subagent_type(path: str) -> str:
    """The kind of agent a Claude Code sub-agent transcript is by its `.meta.json` (`agentType`,
    e.g. "Explore"), or "" when the file has none."""
    if not os.path.basename(path).startswith("agent-"):
        return ""
    try:
        with open(path.removesuffix(".jsonl") + ".meta.json", "rb") as f:
            meta = json.loads(f.read(1 << 16))
    except (OSError, ValueError, RecursionError):
        return ""
    kind = meta.get("agentType") if isinstance(meta, dict) else None
    return kind.strip() if isinstance(kind, str) else ""


def sources_from_settings(
    claude_code: bool,
    claude_dir: Path,
    extra: Iterable[dict[str, Any]],
    skip: Iterable[str] = (),
) -> list[LogSource]:
    """The configured log sources (Claude Code's folder whether it exists yet or not); `skip`
    names Claude Code project folders that are never read."""
    out = []
    if claude_code:
        out.append(LogSource(claude_dir, "claude-code", CLAUDE_CODE_AGENT, skip=frozenset(skip)))
    for i, entry in enumerate(extra):
        path, fmt = entry.get("path"), entry.get("format", "jsonl")
        if not isinstance(path, str) or not path:
            raise ConfigError(
                f"logs.sources[{i}] needs a path",
                hint='logs.sources = [{path = "...", format = "jsonl"}]',
            )
        if fmt not in FORMATS:
            raise ConfigError(
                f"logs.sources[{i}]: unknown format {fmt!r}", hint=f"formats: {', '.join(FORMATS)}"
            )
        agent = entry.get("agent", "")
        if not isinstance(agent, str):
            raise ConfigError(f"logs.sources[{i}]: agent must be a string")
        out.append(LogSource(Path(path).expanduser(), fmt, agent))
    return out


@dataclass(slots=True)
class FileReport:
    """What reading one file did."""

    path: str
    lines: int = 0
    added: int = 0
    bad: int = 0
    restarted: bool = False
    deleted: bool = False
    report: WriteReport = field(default_factory=WriteReport)


_UUID_KEY = rb'"uuid"\s*:\s*"%s"'


def _leaf_in(data: bytes, leaf: str) -> bool:
    return re.search(_UUID_KEY % re.escape(leaf.encode()), data) is not None


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
        self._poller: threading.Thread | None = None
        self._last_scan = 0.0

    # -- life cycle ------------------------------------------------------------------------
    def start(self) -> None:
        """Watch the source folders (or wait for them to appear) and poll them; the first scan
        runs in the background."""
        roots = [s.root for s in self.sources if s.watched]
        if roots:
            self.watcher = Watcher(
                self.ingest_paths,
                accept=self._accepts,
                debounce_s=self.debounce_s,
                name="log-watcher",
            )
            for r in roots:
                self.watcher.watch_when_present(r, on_present=self._appeared)
            self.watcher.start()
        self._poller = threading.Thread(target=self._poll_loop, name="memd-log-poll", daemon=True)
        self._poller.start()

    def _appeared(self, root: Path) -> None:
        log.info("log folder %s appeared: watching it", root)
        self._last_scan = 0.0
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self.watcher is not None:
            self.watcher.stop()
        if self._poller is not None and self._poller.is_alive():
            self._poller.join(30)

    def _needs_scan(self, now: float) -> bool:
        """Natively watched folders only need a rare safety scan; others are polled each time."""
        w = self.watcher
        watched = (
            w is not None
            and not w.fallbacks
            and all(str(src.root) in w.watched_roots for src in self.sources if src.watched)
        )
        return not watched or now - self._last_scan >= WATCHED_RESCAN_S

    def _poll_loop(self) -> None:
        while not self._stop.is_set():
            try:
                now = time.monotonic()
                if self._needs_scan(now):
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
        """Read every log of every source (or of `sources`); with `quick`, files whose size
        matches their checkpoint are not opened. Logs that disappeared are marked deleted."""
        known = self._known()
        seen: set[str] = set()
        todo: list[tuple[str, str]] = []
        for src in self.sources if sources is None else sources:
            for path in src.files():
                if self._stop.is_set():
                    return []
                seen.add(path)
                if quick and path in known:
                    try:
                        st = os.stat(path)
                    except OSError:
                        continue
                    inode, size, offset = known[path]
                    if st.st_ino == inode and st.st_size == size and offset == size:
                        continue
                todo.append((path, src.format))
        reports = self.ingest_files(todo)
        gone = [p for p, (_, _, _) in known.items() if p not in seen and not os.path.exists(p)]
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
                files.append((p, src.format))
        return self.ingest_files(files)

    def ingest_files(
        self, files: Sequence[tuple[str, str]], *, summaries: bool = True
    ) -> list[FileReport]:
        """Read what is new in each (path, format) and store it with its checkpoint, chunk by chunk.

        Summaries of the sessions that grew are refreshed once, after the last chunk (or by
        the caller, with `summaries=False`). The files are read as one pipeline: the next chunk — of the same file or of the next one — is parsed while the writer
        stores the previous one (one write in flight keeps the order and bounds memory), so
        a folder of small transcripts is not read and written strictly in turn.
        """
        reports: list[FileReport] = []
        pending: Future[list[tuple[FileReport, WriteReport]]] | None = None
        # Chunks of small files share a transaction: a commit per transcript was most of the
        # writer's time on a folder of short sessions.
        batch: list[tuple[functools.partial[WriteReport], FileReport]] = []
        batch_bytes = 0

        def flush() -> None:
            nonlocal pending, batch, batch_bytes
            if not batch:
                return
            jobs, batch, batch_bytes = batch, [], 0
            if pending is not None:
                self._written(pending.result())
            pending = self.store.w.submit(lambda c: [(rep, write(c)) for write, rep in jobs])

        with self._lock:
            try:
                # A path listed twice would be read twice: its checkpoint is only written when
                # the batch holding its first read is.
                for path, fmt in dict.fromkeys(files):
                    if self._stop.is_set():
                        break
                    rep = FileReport(path)
                    reports.append(rep)
                    prev = self._checkpoint(path)
                    while not self._stop.is_set():
                        try:
                            chunk = read_new(path, prev, self.chunk_bytes)
                        except FileNotFoundError:
                            rep.deleted = True
                            self._mark_deleted([path])
                            break
                        except (OSError, NotRegularFile) as exc:
                            log.warning("cannot read %s: %s", path, exc)
                            break
                        if not chunk.lines and not chunk.restarted:
                            break
                        rep.restarted |= chunk.restarted
                        turns, titles, bad, runs = self._parse(path, fmt, chunk.lines)
                        if not self.enabled():
                            # Memory is switched off: move past these lines without keeping them.
                            turns, titles, runs = [], [], []
                        batch.append((functools.partial(
                            self._write, path=path, fmt=fmt, cp=chunk.checkpoint, restarted=chunk.restarted,
                            start=0 if chunk.restarted or prev is None else prev.offset,
                            turns=prepare(turns), titles=titles, bad=bad, runs=runs,
                        ), rep))  # fmt: skip
                        batch_bytes += sum(len(raw) for _, raw in chunk.lines)
                        if batch_bytes >= self.chunk_bytes:
                            flush()
                        rep.lines += len(chunk.lines)
                        rep.bad += len(bad)
                        prev = chunk.checkpoint
                        if not chunk.lines:
                            break
                flush()
            finally:
                if pending is not None:
                    self._written(pending.result())
            for rep in reports:
                # Once per file, not per chunk: a bulk load would rewrite the same journal
                # pages (and have them re-indexed) once per chunk.
                if rep.report.added or rep.report.updated:
                    self.notify(rep.report)
            if summaries:
                self.refresh_summaries(s for rep in reports for s in rep.report.sessions)
        return reports

    def refresh_summaries(self, sessions: Iterable[str]) -> None:
        """Rebuild the summaries of sessions that grew, a batch per transaction."""
        ids = sorted(set(sessions))
        for i in range(0, len(ids), SUMMARY_BATCH):
            self.store.w.run(
                functools.partial(refresh_summaries, session_ids=ids[i : i + SUMMARY_BATCH])
            )

    def _written(self, results: list[tuple[FileReport, WriteReport]]) -> None:
        for rep, wrep in results:
            rep.added += wrep.added
            rep.report.merge(wrep)

    def notify(self, wrep: WriteReport) -> None:
        """Tell `on_turns` about stored turns (the journal); its failures are logged only."""
        if self.on_turns is None:
            return
        try:
            self.on_turns(wrep)
        except Exception:
            # The journal is a by-product: failing to write it must not stop ingestion.
            log.exception("after-ingest hook failed")

    def _parse(
        self, path: str, fmt: str, lines: list[tuple[int, bytes]]
    ) -> tuple[
        list[Turn], list[tuple[SessionTitle, bool]], list[tuple[int, str]], list[SubagentTurn]
    ]:
        turns: list[Turn] = []
        titles: list[tuple[SessionTitle, bool]] = []
        bad: list[tuple[int, str]] = []
        runs: list[SubagentTurn] = []
        hint = Path(path).stem
        for lineno, raw in lines:
            try:
                if fmt == pushed.FORMAT:
                    turns.extend(pushed.parse_line(raw, path=path, lineno=lineno))
                elif fmt == "claude-code":
                    for rec in parse_claude_code_line(
                        raw, path=path, lineno=lineno, session_hint=hint
                    ):
                        if isinstance(rec, SessionTitle):
                            titles.append((rec, False))
                        elif isinstance(rec, SubagentTurn):
                            runs.append(rec)
                        else:
                            turns.append(rec)
                else:
                    turns.extend(parse_jsonl_line(raw, path=path, lineno=lineno))
            except ParseError as exc:
                bad.append((lineno, str(exc)))
        if titles:
            # A leaf that appears later in the same file is found when its line is read.
            data = b"\n".join(raw for _, raw in lines)
            titles = [(t, _leaf_in(data, t.leaf_id)) for t, _ in titles]
        agent = next((s.agent for s in self.sources if s.agent and s.accepts(path)), "")
        if agent:
            turns = [t if t.agent_id else dataclasses.replace(t, agent_id=agent) for t in turns]
        if runs and (kind := subagent_type(path)):
            runs = [dataclasses.replace(r, agent_type=kind) for r in runs]
        return turns, titles, bad, runs

    def _write(
        self,
        c: Connection,
        *,
        path: str,
        fmt: str,
        cp: Checkpoint,
        restarted: bool,
        start: int,
        turns: list[Turn],
        titles: list[tuple[SessionTitle, bool]],
        bad: list[tuple[int, str]],
        runs: Sequence[SubagentTurn] = (),
    ) -> WriteReport:
        now = time.time()
        if restarted:
            repo.forget_bad_lines(c, path)
        wrep = (
            write_turns(c, turns, now=now, prepared=True, summaries=False)
            if turns
            else WriteReport()
        )
        if runs:
            repo.add_subagent_turns(
                c, [(r.session_id, r.run_id, r.turn_id, r.agent_type, r.role, r.ts) for r in runs]
            )
        if fmt == "claude-code":
            self._apply_titles(c, path, start, cp, titles)
        if bad:
            repo.add_bad_lines(c, path, bad, now)
        repo.save_checkpoint(c, path, fmt, cp, wrep.added, now)
        return wrep

    def _apply_titles(
        self,
        c: Connection,
        path: str,
        start: int,
        cp: Checkpoint,
        titles: list[tuple[SessionTitle, bool]],
    ) -> None:
        """Titles whose leaf is in this file are applied; the others wait for their leaf."""
        pending = repo.pending_titles(c, path)
        resolved: list[tuple[str, str]] = []
        for t, found in titles:
            if not found and start > 0:
                # The leaf may be in the part of the file read before (summaries are rare).
                with open(path, "rb") as f:
                    found = _leaf_in(f.read(start), t.leaf_id)
            if found:
                resolved.append((t.session_id, t.title))
                pending.pop(t.leaf_id, None)
                repo.drop_pending_title(c, path, t.leaf_id)
            else:
                repo.add_pending_title(c, path, t.leaf_id, t.session_id, t.title, t.line)
        if pending and cp.offset > start:
            with open(path, "rb") as f:
                f.seek(start)
                data = f.read(cp.offset - start)
            for leaf, (sid, title, _line) in pending.items():
                if _leaf_in(data, leaf):
                    resolved.append((sid, title))
                    repo.drop_pending_title(c, path, leaf)
        for sid, title in resolved:
            set_title(c, sid, title, "summary")

    # -- state -----------------------------------------------------------------------------
    def _checkpoint(self, path: str) -> Checkpoint | None:
        return repo.checkpoint(self.store.read(), path)

    def _known(self) -> dict[str, tuple[int, int, int]]:
        return repo.tailed_files(self.store.read())

    def _mark_deleted(self, paths: list[str]) -> None:
        self.store.w.run(lambda c: repo.mark_deleted(c, paths))

    def status(self) -> dict[str, Any]:
        """Files tailed, turns, sessions, bad lines (the most recent with file:line)."""
        conn = self.store.read()
        files = repo.log_totals(conn, exclude_format=pushed.FORMAT)
        recent = repo.recent_bad_lines(conn, RECENT_BAD_LINES)
        watcher = self.watcher.mode if self.watcher else "not watching"
        if self.watcher and (waiting := self.watcher.waiting_for):
            watcher += "; waiting for " + ", ".join(waiting) + " to appear"
        return {
            "sources": [
                {"path": str(s.root), "format": s.format} for s in self.sources if s.watched
            ],
            "files": files.files - files.deleted,
            "deleted_files": files.deleted,
            "turns_from_logs": files.turns,
            "bad_lines": files.bad_lines,
            "recent_bad_lines": [f"{path}:{line}: {why}" for path, line, why in recent],
            "watcher": watcher,
            "last_scan_at": self.last_scan_at or None,
        }
