"""Moving memory in and out: `import`, `export` and cloud `sync`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from memd.cli.commands import call, emit


def cmd_import(args: argparse.Namespace) -> int:
    from memd.api import messages as m

    params = m.ImportParams(
        path=str(Path(args.path).expanduser().absolute()), format=args.format or ""
    )
    res = call(args, m.IMPORT, params, write=True, progress=True)
    if res["format"] == "memd-export":
        emit(args, res, lambda: _memd_import_text(res))
        return 0
    extra = f", {res['bad_lines']} bad lines" if res.get("bad_lines") else ""
    emit(
        args,
        res,
        f"imported {res['format']}: {res['added']} new turns in {res['sessions']} sessions{extra}",
    )
    return 0


def _memd_import_text(res: dict[str, Any]) -> str:
    f, m = res["files"], res["memories"]
    lines = [
        f"imported memd export v{res['version']} ({res['exported_at'] or 'undated'}): {res['new']} new",
        f"  conversations: {res['added']} new turns, {res['updated']} updated, {res['new_sessions']} new"
        f" sessions of {res['sessions_in_export']}",
        f"  files: {f['written']} written, {f['identical']} already there, {len(f['kept_local'])} kept local",
        f"  memories: {m['added']} added"
        + (f" ({m['with_files']} with their files)" if m.get("with_files") else "")
        + f", {m['present']} already there",
    ]
    lines += [f"  local file kept; the imported version is in {p}" for p in f["kept_local"]]
    if m["workspace_skipped"]:
        lines.append(
            f"  {m['workspace_skipped']} workspace project memories not written (they live in the workspace)"
        )
    return "\n".join(lines)


def cmd_export(args: argparse.Namespace) -> int:
    from memd.api import messages as m

    path = str(Path(args.file).expanduser().absolute())
    params = m.ExportParams(path=path, tree=not args.no_tree, overwrite=args.overwrite)
    res = call(args, m.EXPORT, params)
    emit(args, res, f"exported {res.sessions} sessions ({res.chats} chats), {res.memories} memories and"
         f" {res.files} files to {res.path} ({res.bytes} bytes)")  # fmt: skip
    return 0


def cmd_sync(args: argparse.Namespace) -> int:
    """`memd sync [status] | --now [--retry-parked] | init-schema`: the cloud sync queue."""
    from memd.api import messages as m
    from memd.cli import render

    if args.action == "init-schema":
        res = call(args, m.SYNC_INIT_SCHEMA, m.NoParams(), write=True)
        emit(args, res, f"{res['backend']}: {'tables ready' if res['created'] else 'not created here'}"
             f" - {res['message']}")  # fmt: skip
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
