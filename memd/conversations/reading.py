"""One pass of reading logs into the store: each file by its reader's kind (`lines`, `document`,
`sqlite`), the turns of a part and its checkpoint written in one transaction.

The files are read as one pipeline: the next part — of the same file or of the next one — is read
and parsed while the writer stores the previous one (one write in flight keeps the order and bounds
memory), and the parts of small files share a transaction (a commit per transcript was most of the
writer's time on a folder of short sessions).

- `lines`: from the file's checkpoint (`memd.conversations.tailer.read_new`), chunk by chunk; a
  line that cannot be parsed is recorded in `bad_lines` with its number and the rest goes on; a
  record of a type the format does not know is recorded once per file and type.
- `document`: read whole when it changed (`memd.conversations.documents`); one that cannot be
  parsed (mid-write) is recorded as a problem and read again when it changes, or at the next scan.
- `sqlite`: the rows updated since the checkpoint, a batch at a time
  (`memd.conversations.databases`); a database that cannot be read is a problem of the pass.
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
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from memd.conversations import databases, repo
from memd.conversations.documents import read_document
from memd.conversations.formats import Record, SessionTitle, SubagentTurn, parse_claude_code_line
from memd.conversations.formats.contract import FileContext
from memd.conversations.formats.document import ParsedDocument
from memd.conversations.ingest import WriteReport, prepare, set_title, write_turns
from memd.conversations.sections import read_sections
from memd.conversations.sources import FORMATS, Reader, assistant_of_format
from memd.conversations.tailer import Checkpoint, read_new
from memd.core.errors import ParseError, SourceError, UnknownRecord
from memd.core.models import Turn
from memd.db import Connection, Store

log = logging.getLogger(__name__)


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


_UUID_KEY = rb'"uuid"\s*:\s*"%s"'


def _leaf_in(data: bytes, leaf: str) -> bool:
    return re.search(_UUID_KEY % re.escape(leaf.encode()), data) is not None


@dataclass(slots=True)
class Host:
    """What a pass needs from the ingestor that runs it."""

    store: Store
    enabled: Callable[[], bool]
    stop: threading.Event
    chunk_bytes: int
    agent_of: Callable[[str], str]  # the agent a source names for a path ("" when none)
    problems: dict[str, str]  # path → why it cannot be read now (kept by the ingestor)


Job = Callable[[Connection], WriteReport]


class Pass:
    """Reads files into the store; `close()` waits for the last write."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.reports: list[FileReport] = []
        self._pending: Future[list[tuple[FileReport, WriteReport]]] | None = None
        self._batch: list[tuple[Job, FileReport]] = []
        self._batch_bytes = 0

    # -- the pipeline ----------------------------------------------------------------------
    def _add(self, job: Job, rep: FileReport, nbytes: int) -> None:
        self._batch.append((job, rep))
        self._batch_bytes += nbytes
        if self._batch_bytes >= self.host.chunk_bytes:
            self.flush()

    def flush(self) -> None:
        if not self._batch:
            return
        jobs, self._batch, self._batch_bytes = self._batch, [], 0
        self._collect()
        self._pending = self.host.store.w.submit(lambda c: [(rep, job(c)) for job, rep in jobs])

    def close(self) -> None:
        """Wait for the write in flight (the batch not flushed is dropped: the pass stopped)."""
        self._collect()

    def _collect(self) -> None:
        if self._pending is not None:
            pending, self._pending = self._pending, None
            for rep, wrep in pending.result():
                rep.added += wrep.added
                rep.report.merge(wrep)

    # -- files ------------------------------------------------------------------------------
    def read(self, path: str, fmt: str, previous: Checkpoint | None) -> FileReport:
        """Read what is new in `path` (in format `fmt`) since `previous`."""
        rep = FileReport(path)
        self.reports.append(rep)
        reader = FORMATS[fmt]
        try:
            if reader.sections is not None:
                self._sections(path, reader, previous, rep)
            elif reader.kind == "document":
                self._document(path, reader, previous, rep)
            elif reader.kind == "sqlite":
                self._database(path, reader, previous, rep)
            else:
                self._lines(path, reader, previous, rep)
        except FileNotFoundError:
            rep.deleted = True
            self.host.store.w.run(lambda c: repo.mark_deleted(c, [path]))
        except (OSError, SourceError) as exc:  # NotRegularFile, TooLarge, an unreadable database
            log.warning("cannot read %s: %s", path, exc)
            self.host.problems[path] = str(exc)
        else:
            self.host.problems.pop(path, None)
        return rep

    def _context(self, path: str, reader: Reader) -> FileContext:
        owner = assistant_of_format(reader.format)
        return FileContext(path, owner.name if owner else "", reader.describe(path))

    def _lines(self, path: str, reader: Reader, prev: Checkpoint | None, rep: FileReport) -> None:
        ctx = self._context(path, reader) if reader.parse_line is not None else None
        while not self.host.stop.is_set():
            chunk = read_new(path, prev, self.host.chunk_bytes)
            if not chunk.lines and not chunk.restarted:
                return
            rep.restarted |= chunk.restarted
            parsed = self._parse_lines(path, reader, ctx, chunk.lines)
            if not self.host.enabled():
                # Memory is switched off: move past these lines without keeping them.
                parsed = _Parsed(bad=parsed.bad, unknown=parsed.unknown)
            self._add(functools.partial(
                _write_lines, path=path, fmt=reader.format, cp=chunk.checkpoint,
                restarted=chunk.restarted, start=0 if chunk.restarted or prev is None else prev.offset,
                parsed=dataclasses.replace(parsed, turns=prepare(parsed.turns)),
            ), rep, sum(len(raw) for _, raw in chunk.lines))  # fmt: skip
            rep.lines += len(chunk.lines)
            rep.bad += len(parsed.bad)
            prev = chunk.checkpoint
            if not chunk.lines:
                return

    def _parse_lines(
        self, path: str, reader: Reader, ctx: FileContext | None, lines: list[tuple[int, bytes]]
    ) -> _Parsed:
        out = _Parsed()
        hint = Path(path).stem
        for lineno, raw in lines:
            try:
                if ctx is not None and reader.parse_line is not None:
                    out.turns.extend(reader.parse_line(raw, ctx.at(lineno)))
                else:
                    out.add(
                        parse_claude_code_line(raw, path=path, lineno=lineno, session_hint=hint)
                    )
            except UnknownRecord as exc:
                out.unknown.setdefault(str(exc), lineno)
            except ParseError as exc:
                out.bad.append((lineno, str(exc)))
        if out.titles:
            # A leaf that appears later in the same file is found when its line is read.
            data = b"\n".join(raw for _, raw in lines)
            out.titles = [(t, _leaf_in(data, t.leaf_id)) for t, _ in out.titles]
        if agent := self.host.agent_of(path):
            out.turns = [
                t if t.agent_id else dataclasses.replace(t, agent_id=agent) for t in out.turns
            ]
        if out.runs and (kind := subagent_type(path)):
            out.runs = [dataclasses.replace(r, agent_type=kind) for r in out.runs]
        return out

    def _document(
        self, path: str, reader: Reader, prev: Checkpoint | None, rep: FileReport
    ) -> None:
        got = read_document(path, prev, reader.max_bytes)
        if got.data is None:
            if got.checkpoint != prev:  # touched, not changed: remember its new time
                self._add(functools.partial(_save, path=path, fmt=reader.format,
                                            cp=got.checkpoint), rep, 0)  # fmt: skip
            return
        assert reader.parse_document is not None
        cp, bad = got.checkpoint, []
        try:
            parsed = reader.parse_document(got.data, self._context(path, reader))
        except ParseError as exc:
            # Mid-write, or not yet complete (a part before its message): read again later.
            parsed = ParsedDocument([], [(exc.line, f"{exc}; read again when it changes")], False)
        if isinstance(parsed, ParsedDocument):
            # What the complete part held is kept; a document cut short is read again.
            turns, bad = parsed.turns, list(parsed.problems)
            if not parsed.complete:
                cp = dataclasses.replace(cp, offset=0)
        else:
            turns = parsed
        if not self.host.enabled():
            turns = []
        self._add(functools.partial(_write_document, path=path, fmt=reader.format, cp=cp,
                                    turns=prepare(turns), bad=bad), rep, len(got.data))  # fmt: skip
        rep.lines += 1
        rep.bad += len(bad)

    def _sections(
        self, path: str, reader: Reader, prev: Checkpoint | None, rep: FileReport
    ) -> None:
        """A document appended to in sections: from its last section's header on."""
        assert reader.sections is not None
        got = read_sections(path, prev, reader.max_bytes, reader.sections.starts)
        if got.data is None:
            return
        parsed = reader.sections.parse(
            got.data, self._context(path, reader), got.lines_before, got.earlier
        )
        cp = got.checkpoint if parsed.complete else dataclasses.replace(got.checkpoint, size=-1)
        turns = parsed.turns if self.host.enabled() else []
        # Problems of the part not read again stay listed (line 0: of the whole file).
        self._add(functools.partial(_write_document, path=path, fmt=reader.format, cp=cp,
                                    turns=prepare(turns), bad=list(parsed.problems),
                                    from_line=got.lines_before + 1 if got.start else 0),
                  rep, len(got.data))  # fmt: skip
        rep.lines += 1
        rep.restarted |= got.restarted
        rep.bad += len(parsed.problems)

    def _database(
        self, path: str, reader: Reader, prev: Checkpoint | None, rep: FileReport
    ) -> None:
        assert reader.read_database is not None
        while not self.host.stop.is_set() and not databases.unchanged(prev, path):
            got = reader.read_database(path, prev, databases.BATCH)
            turns = got.turns if self.host.enabled() else []
            self._add(functools.partial(_write_document, path=path, fmt=reader.format,
                                        cp=got.checkpoint, turns=prepare(turns), bad=[]),
                      rep, 64 * len(turns))  # fmt: skip
            rep.lines += len(turns)
            prev = got.checkpoint
            if not got.more:
                return


@dataclass(slots=True)
class _Parsed:
    turns: list[Turn] = field(default_factory=list)
    titles: list[tuple[SessionTitle, bool]] = field(default_factory=list)
    bad: list[tuple[int, str]] = field(default_factory=list)
    runs: list[SubagentTurn] = field(default_factory=list)
    unknown: dict[str, int] = field(default_factory=dict)  # reason → first line

    def add(self, records: list[Record]) -> None:
        """Claude Code's records: turns, titles waiting for their leaf, sub-agent runs."""
        for rec in records:
            if isinstance(rec, SessionTitle):
                self.titles.append((rec, False))
            elif isinstance(rec, SubagentTurn):
                self.runs.append(rec)
            else:
                self.turns.append(rec)


# -- writes (in the writer's transaction) ------------------------------------------------------
def _save(c: Connection, *, path: str, fmt: str, cp: Checkpoint) -> WriteReport:
    repo.save_checkpoint(c, path, fmt, cp, 0, time.time())
    return WriteReport()


def _turns(c: Connection, turns: Sequence[Turn], now: float) -> WriteReport:
    return (
        write_turns(c, turns, now=now, prepared=True, summaries=False) if turns else WriteReport()
    )


def _write_lines(
    c: Connection,
    *,
    path: str,
    fmt: str,
    cp: Checkpoint,
    restarted: bool,
    start: int,
    parsed: _Parsed,
) -> WriteReport:
    now = time.time()
    if restarted:
        repo.forget_bad_lines(c, path)
    wrep = _turns(c, parsed.turns, now)
    if parsed.runs:
        repo.add_subagent_turns(c, [(r.session_id, r.run_id, r.turn_id, r.agent_type, r.role, r.ts)
                                    for r in parsed.runs])  # fmt: skip
    if fmt == "claude-code":
        _apply_titles(c, path, start, cp, parsed.titles)
    bad = list(parsed.bad)
    if parsed.unknown:
        seen = repo.bad_reasons(c, path)
        bad += [(line, why) for why, line in parsed.unknown.items() if why not in seen]
    if bad:
        repo.add_bad_lines(c, path, bad, now)
    repo.save_checkpoint(c, path, fmt, cp, wrep.added, now)
    return wrep


def _write_document(
    c: Connection,
    *,
    path: str,
    fmt: str,
    cp: Checkpoint,
    turns: list[Turn],
    bad: list[tuple[int, str]],
    from_line: int = 0,
) -> WriteReport:
    now = time.time()
    repo.forget_bad_lines(c, path, from_line)
    wrep = _turns(c, turns, now)
    if bad:
        repo.add_bad_lines(c, path, bad, now)
    repo.save_checkpoint(c, path, fmt, cp, wrep.added, now)
    return wrep


def _apply_titles(
    c: Connection, path: str, start: int, cp: Checkpoint, titles: list[tuple[SessionTitle, bool]]
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
