"""`memd import PATH`: a ChatGPT export, a folder of Claude Code transcripts, or one log file.

Imports are idempotent: turns are keyed by their ids, and log files go through the same
checkpointed reader as live tailing, so importing the same thing twice adds nothing.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from memd.api import messages as msg
from memd.conversations.formats import parse_chatgpt_export
from memd.conversations.ingest import WriteReport, prepare, write_turns
from memd.conversations.logs import LogIngestor, LogSource
from memd.core.errors import ParseError, SourceError
from memd.core.progress import Task

BATCH = 2000
FILES_PER_PIPELINE = 200
MAX_EXPORT_BYTES = 2 << 30


def sniff_format(path: Path) -> str:
    """`claude-code` or `jsonl` for a JSONL log, from its first records."""
    with open(path, "rb") as f:
        for _ in range(50):
            raw = f.readline()
            if not raw:
                break
            try:
                obj = json.loads(raw)
            except (ValueError, RecursionError):  # not JSON, or nested past the decoder
                continue
            if isinstance(obj, dict):
                if "sessionId" in obj or obj.get("type") in ("summary", "file-history-snapshot"):
                    return "claude-code"
                if "session_id" in obj or "messages" in obj:
                    return "jsonl"
    return "jsonl"


def import_path(
    ingestor: LogIngestor, path: Path, fmt: str = "", progress: Task | None = None
) -> msg.LogsImported | msg.ChatGPTImported:
    """Import `path` and report what was added.

    A `.json` file is read as a ChatGPT `conversations.json` export (only the visible branch
    of each conversation); a folder as Claude Code transcripts (`<folder>/*.jsonl` and
    `<folder>/*/*.jsonl`, sub-agent runs counted without their text); a `.jsonl` file by its
    format (`fmt`, or sniffed from its first records). `progress` counts the files (or turns)
    done.
    """
    path = path.expanduser().absolute()
    if not path.exists():
        raise SourceError(f"{path} does not exist")
    if path.is_dir():
        return _import_files(ingestor, _claude_files(path), "claude-code", progress)
    if path.suffix == ".json" or fmt == "chatgpt":
        return _import_chatgpt(ingestor, path, progress)
    return _import_files(ingestor, [str(path)], fmt or sniff_format(path), progress)


def _claude_files(folder: Path) -> list[str]:
    # A project folder, or the projects folder above it; sub-agent transcripts are counted for
    # their agent, never stored as text.
    files = [str(p) for p in sorted(folder.glob("*.jsonl"))]
    files += [str(p) for p in sorted(folder.glob("*/subagents/agent-*.jsonl"))]
    files += LogSource(folder, "claude-code").files()
    return files


def _import_files(
    ingestor: LogIngestor, files: list[str], fmt: str, progress: Task | None = None
) -> msg.LogsImported:
    added = lines = bad = 0
    sessions: set[str] = set()
    if progress is not None:
        progress.add_total(len(files))
    # A pipeline over many files at a time: a folder of transcripts shares writer transactions
    # (and progress moves a group of files at a time).
    for i in range(0, len(files), FILES_PER_PIPELINE):
        group = files[i : i + FILES_PER_PIPELINE]
        for rep in ingestor.ingest_files([(f, fmt) for f in group], summaries=False):
            added, lines, bad = added + rep.added, lines + rep.lines, bad + rep.bad
            sessions |= rep.report.sessions
        if progress is not None:
            progress.advance(len(group))
    ingestor.refresh_summaries(sessions)
    return msg.LogsImported(format=fmt, files=len(files), lines=lines, added=added,
                            bad_lines=bad, sessions=len(sessions))  # fmt: skip


def _import_chatgpt(
    ingestor: LogIngestor, path: Path, progress: Task | None = None
) -> msg.ChatGPTImported:
    size = path.stat().st_size
    if size > MAX_EXPORT_BYTES:
        raise SourceError(
            f"{path} is {size >> 20} MB; memd reads ChatGPT exports up to {MAX_EXPORT_BYTES >> 20} MB"
        )
    try:
        data = parse_chatgpt_export(path.read_bytes(), path=str(path))
    except ParseError as exc:
        raise SourceError(
            f"{path}: {exc}", hint="expected the conversations.json of a ChatGPT data export"
        ) from exc
    total = WriteReport()
    if progress is not None:
        progress.unit = "turns"
        progress.add_total(len(data.turns))
    for i in range(0, len(data.turns), BATCH):
        if not ingestor.enabled():
            break
        # Redacted here, summaries once at the end: the writer only writes.
        batch = prepare(data.turns[i : i + BATCH])
        total.merge(
            ingestor.store.w.run(
                functools.partial(write_turns, turns=batch, prepared=True, summaries=False)
            )
        )
        if progress is not None:
            progress.advance(len(batch))
    ingestor.refresh_summaries(total.sessions)
    if total.added or total.updated:
        ingestor.notify(total)
    return msg.ChatGPTImported(format="chatgpt", files=1, conversations=data.conversations,
                               turns=len(data.turns), added=total.added, updated=total.updated,
                               sessions=len(total.sessions), skipped=data.skipped)  # fmt: skip
