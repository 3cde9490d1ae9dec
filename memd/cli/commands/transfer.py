"""Moving memory in and out: `import`, `export` and cloud `sync`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from memd.cli.commands import call, emit
from memd.core.text import counted

if TYPE_CHECKING:
    from memd.api.messages import MergeResult


def cmd_import(args: argparse.Namespace) -> int:
    from memd.api import messages as m

    params = m.ImportParams(
        path=str(Path(args.path).expanduser().absolute()), format=args.format or ""
    )
    # `import` answers one of three shapes (a memd export merged, logs, a ChatGPT export): as
    # JSON from the daemon, as the typed value made here without one. Read by its `format`.
    answer = m.to_builtins(call(args, m.IMPORT, params, write=True, progress=True))
    if answer["format"] == "memd-export":
        merged = msgspec.convert(answer, m.MergeResult)
        emit(args, merged, lambda: _memd_import_text(merged))
        return 0
    logs: m.LogsImported | m.ChatGPTImported
    if answer["format"] == "chatgpt":
        logs = msgspec.convert(answer, m.ChatGPTImported)
    else:
        logs = msgspec.convert(answer, m.LogsImported)
    bad = logs.bad_lines if isinstance(logs, m.LogsImported) else 0
    extra = f", {counted(bad, 'bad line')}" if bad else ""
    emit(
        args,
        logs,
        f"imported {logs.format}: {counted(logs.added, 'new turn')} in"
        f" {counted(logs.sessions, 'session')}{extra}",
    )
    return 0


def _memd_import_text(res: MergeResult) -> str:
    """The import's report: a headline whose total is the sum of the parts it names, then the
    breakdown by kind."""
    f, m = res.files, res.memories
    lines = [
        f"imported memd export v{res.version} ({res.exported_at or 'undated'}):"
        f" {res.new:,} new" + (f" ({', '.join(_new_parts(res))})" if res.new else ""),
        f"  conversations: {counted(res.added, 'new turn')}, {res.updated:,} updated,"
        f" {counted(res.new_sessions, 'new session')} of {res.sessions_in_export:,}",
        f"  files: {f.written:,} written, {f.identical:,} already there,"
        f" {len(f.kept_local):,} kept local",
        f"  memories: {m.added:,} added"
        + (f" ({m.with_files:,} with their files)" if m.with_files else "")
        + f", {m.present:,} already there",
    ]
    lines += [f"  local file kept; the imported version is in {p}" for p in f.kept_local]
    if m.workspace_skipped:
        skipped = counted(m.workspace_skipped, "memory", "memories")
        lines.append(f"  {skipped} of workspace projects not written (they live in the workspace)")
    return "\n".join(lines)


def _new_parts(res: MergeResult) -> list[str]:
    """What `new` adds up (transfer.merge counts it so): each part with its name."""
    f, m = res.files, res.memories
    parts = (
        (res.new_sessions, "session", ""),
        (res.added, "turn", ""),
        (f.written, "file", ""),
        (len(f.kept_local), "copy beside a local file", "copies beside local files"),
        (m.added - m.with_files, "memory outside those files", "memories outside those files"),
        (res.memory_hashes, "extraction record", ""),
    )  # fmt: skip
    return [counted(n, noun, plural) for n, noun, plural in parts if n]


def cmd_export(args: argparse.Namespace) -> int:
    from memd.api import messages as m

    path = str(Path(args.file).expanduser().absolute())
    params = m.ExportParams(path=path, tree=not args.no_tree, overwrite=args.overwrite)
    res = call(args, m.EXPORT, params)
    emit(args, res, f"exported {counted(res.sessions, 'session')} ({counted(res.chats, 'chat')}),"
         f" {counted(res.memories, 'memory', 'memories')} and {counted(res.files, 'file')} to"
         f" {res.path} ({counted(res.bytes, 'byte')})")  # fmt: skip
    return 0


def cmd_sync(args: argparse.Namespace) -> int:
    """`memd sync [status] | --now [--retry-parked] | init-schema`: the cloud sync queue."""
    from memd.api import messages as m
    from memd.cli import render

    if args.action == "init-schema":
        res = call(args, m.SYNC_INIT_SCHEMA, m.NoParams(), write=True)
        emit(args, res, f"{res.backend}: {'tables ready' if res.created else 'not created here'}"
             f" - {res.message}")  # fmt: skip
        return 0
    if args.now:
        now = call(args, m.SYNC_NOW, m.SyncNowParams(retry_parked=args.retry_parked), write=True)
        counts = ", ".join(f"{k} {v}" for k, v in now.counts.items() if v)
        emit(args, now, lambda: f"sync: {now.outcome} - {now.message}"
             + (f"\n({counts})" if counts else "") + "\n\n" + render.sync_text(now.status))  # fmt: skip
        return 0 if now.outcome in ("success", "nothing_to_do") else 1
    st = call(args, m.SYNC_STATUS, m.NoParams())
    emit(args, st, lambda: render.sync_text(st))
    return 0
