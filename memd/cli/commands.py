"""The `memd` command: a thin shell over the library and the socket client.

Each command parses its arguments, calls one client or library function, renders the result
(plain text, or `--json`), and turns memd errors into a message with a hint.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from memd import __version__
from memd.core.errors import DaemonNotRunning, DaemonStarting, MemdError

if TYPE_CHECKING:
    from memd.api.messages import Params, Signature

Command = Callable[[argparse.Namespace], int]
# `memd memories` shows this many items unless told otherwise.
MEMORIES_PAGE = 100
P = TypeVar("P", bound="Params")
R = TypeVar("R")


def _settings(args: argparse.Namespace) -> Any:
    from memd.core import settings

    overrides = {"log.level": args.log_level} if getattr(args, "log_level", None) else None
    return settings.load(Path(args.config) if args.config else None, overrides=overrides)


def _out(args: argparse.Namespace, data: Any, text: str | Callable[[], str]) -> None:
    if getattr(args, "json", False):
        from memd.api.messages import to_builtins

        print(json.dumps(to_builtins(data), ensure_ascii=False, indent=2, default=str))
    else:
        print(text() if callable(text) else text)


def call(
    args: argparse.Namespace,
    sig: Signature[P, R],
    params: P,
    *,
    write: bool = False,
    progress: bool = False,
) -> R:
    """Ask the daemon; without one, answer from the index directly (and say so on stderr).

    A daemon still building its first index is waited for by writes, and read around by
    queries, like a missing one. With `progress`, long work shows a bar on a terminal.
    """
    from memd.cli.progress import daemon_progress, run_with_progress

    s = _settings(args)
    show = progress and not args.json and sys.stderr.isatty()
    why = f"no daemon on {s.socket_path}"
    try:
        return run_with_progress(
            lambda: _ask_daemon(args, s, sig, params, write=write),
            daemon_progress(s.socket_path),
            enabled=show,
        )
    except DaemonStarting as exc:
        why = str(exc)
    except DaemonNotRunning:
        pass
    if not write:
        from memd.cli.offline import answer_offline

        result, note = answer_offline(s, sig, params)
        print(f"memd: {why}; answering from the index: {note}", file=sys.stderr)
        return result
    return _write_directly(s, sig, params, show=show)


def _ask_daemon(
    args: argparse.Namespace, s: Any, sig: Signature[P, R], params: P, *, write: bool
) -> R:
    """The daemon's answer; a write waits (up to `--timeout`) for a daemon still starting."""
    import time

    from memd.api import client

    deadline = time.monotonic() + args.timeout
    told = False
    while True:
        try:
            return client.request(s.socket_path, sig, params, timeout=args.timeout)
        except DaemonStarting:
            if not write or time.monotonic() > deadline:
                raise
            if not told:
                print("memd: the daemon is starting; waiting for it", file=sys.stderr)
                told = True
            time.sleep(0.5)


def _write_directly(s: Any, sig: Signature[P, R], params: P, *, show: bool) -> R:
    from memd.app import Engine
    from memd.cli.progress import run_with_progress
    from memd.db import recovery

    print(f"memd: no daemon on {s.socket_path}; writing directly", file=sys.stderr)
    store, recovered = recovery.open_store(s.db_path)
    if recovered is not None:
        print(f"memd: the index was damaged: moved aside to {recovered.moved_to};"
              " rebuilding it from your files", file=sys.stderr)  # fmt: skip
    try:
        engine = Engine(s, store)
        engine.recovered = recovered
        written: R = run_with_progress(
            lambda: engine.call(sig, params), engine.progress.snapshot, enabled=show
        )
        return written
    finally:
        store.close()


# -- commands ------------------------------------------------------------------------------
def cmd_serve(args: argparse.Namespace) -> int:
    from memd import app

    s = _settings(args)
    app.setup_logging(s.log_level)
    overrides = {"log.level": args.log_level} if args.log_level else None
    return app.daemon(
        s, config_file=Path(args.config) if args.config else None, overrides=overrides
    ).run()


def cmd_status(args: argparse.Namespace) -> int:
    from memd.api import messages as m
    from memd.cli import render

    st = call(args, m.STATUS, m.NoParams())
    _out(args, st, lambda: render.status_text(st))
    return 0


def _when(ts: Any) -> str:
    from memd.cli.render import when

    return when(ts)


def cmd_search(args: argparse.Namespace) -> int:
    from memd.api import messages as m

    scope = "conversations" if args.conversations else args.scope
    params = m.SearchParams(query=args.query, limit=args.limit, scope=cast(Any, scope))
    res = call(args, m.SEARCH, params)

    def text() -> str:
        if not res.hits:
            return "no matches"
        out = []
        for h in res.hits:
            where = f"{h.path}:{h.start_line}-{h.end_line}"
            if h.kind == "turn":
                where = (f"[{_when(h.ts)}] {h.session_title or h.session_id}"
                         f" ({h.path or 'session ' + h.session_id}#{h.turn_id})")  # fmt: skip
            found = f"  [{', '.join(h.found_by)}]" if isinstance(h.found_by, list) else ""
            out.append(f"{h.score:7.3f}  {where}  § {h.heading}{found}\n         {h.snippet}")
        return "\n".join(out)

    _out(args, res, text)
    return 0


def _project_here(args: argparse.Namespace) -> str:
    """`--project` resolved where the command runs, or by default the folder it runs in when
    that is a project memd accepts (nothing, quietly, when it is not)."""
    from memd.api.client import project_param
    from memd.core.paths import caller_project

    if args.project:
        return project_param(args.project)
    s = _settings(args)
    private = [s.memory_dir, s.paths.data_dir, s.db_path.parent]
    return caller_project(os.getcwd(), workspaces=s.memory_workspaces, private=private)


def cmd_context(args: argparse.Namespace) -> int:
    from memd.api import messages as m

    params = m.ContextParams(
        query=args.query or "",
        budget_tokens=args.budget,
        agent_id=args.agent_id or "",
        project=_project_here(args),
        session_id=args.session_id or "",
    )
    res = call(args, m.CONTEXT, params)

    def text() -> str:
        if not res.enabled:
            return "(memory is disabled)"
        tail = f"\n\n[{res.tokens}/{res.budget} tokens, {len(res.sections)} sections"
        tail += f", {len(res.dropped)} dropped]" if res.dropped else "]"
        return (res.text or "(no memory to inject)") + tail

    _out(args, res, text)
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    from memd.api import messages as m
    from memd.api.client import project_param

    params = m.RecallParams(
        query=" ".join(args.query),
        limit=args.limit,
        mode=args.mode or "",
        session_id=args.session_id or "",
        project=project_param(args.project or ""),
        agent_id=args.agent_id or "",
    )
    res = call(args, m.RECALL, params)
    _out(args, res, res.text)
    return 0


def cmd_ingest(args: argparse.Namespace) -> int:
    """`memd ingest`: turns as JSON lines on stdin (the generic JSONL shape), sent in batches."""
    from memd.api import messages as m

    records: list[Any] = []
    for n, line in enumerate(sys.stdin, 1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise MemdError(f"stdin line {n} is not JSON: {exc}",
                                hint='one turn per line: {"session_id": "…", "role": "user", "content": "…"}') from exc  # fmt: skip
    totals = {"accepted": 0, "added": 0, "updated": 0}
    sessions: set[str] = set()
    for i in range(0, len(records), 500):
        res = call(args, m.INGEST, m.IngestParams(turns=records[i : i + 500]), write=True)
        if not res.enabled:
            _out(args, res, "memory is off: nothing was stored")
            return 1
        totals["accepted"] += res.accepted
        totals["added"] += res.added
        totals["updated"] += res.updated if res.updated is not m.UNSET else 0
        sessions.update(res.sessions)
    data = {**totals, "sessions": sorted(sessions)}
    _out(
        args,
        data,
        f"{totals['added']} turns added, {totals['updated']} updated in {len(sessions)} sessions",
    )
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from memd.api import messages as m

    params = m.ImportParams(
        path=str(Path(args.path).expanduser().absolute()), format=args.format or ""
    )
    res = call(args, m.IMPORT, params, write=True, progress=True)
    if res["format"] == "memd-export":
        _out(args, res, lambda: _memd_import_text(res))
        return 0
    extra = f", {res['bad_lines']} bad lines" if res.get("bad_lines") else ""
    _out(
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
    _out(args, res, f"exported {res.sessions} sessions ({res.chats} chats), {res.memories} memories and"
         f" {res.files} files to {res.path} ({res.bytes} bytes)")  # fmt: skip
    return 0


def cmd_remember(args: argparse.Namespace) -> int:
    from memd.api import messages as m
    from memd.api.client import project_param

    scope = "project" if args.project_flag else ("agent" if args.agent_id else "user")
    params = m.RememberParams(
        text=" ".join(args.text),
        scope=cast(Any, scope),
        project=project_param(args.project or ".") if scope == "project" else "",
        agent_id=args.agent_id or "",
        type=args.type or "",
    )
    res = call(args, m.REMEMBER, params, write=True)
    _out(args, res, f"remembered {res.id} in {res.path}:{res.line}")
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    from memd.api import messages as m

    if args.session_id or args.turn_ids:
        return _forget_conversation(args)
    if not args.what:
        raise MemdError(
            "say what to forget", hint="memd forget TEXT|ID, or memd forget --session ID"
        )
    target = " ".join(args.what)
    by_id = target.startswith(("m_", "h_")) and " " not in target
    if by_id:
        res = call(args, m.FORGET, m.ForgetParams(id=target), write=True)
    else:
        res = call(args, m.FORGET, m.ForgetParams(query=target), write=True)
        cands = res.candidates
        if not cands:
            _out(args, res, f"nothing matches {target!r}")
            return 1
        if not args.yes:
            for c in cands:
                print(f"  {c.id}  {c.text}  ({c.path}:{c.line})", file=sys.stderr)
            if not sys.stdin.isatty():
                print(
                    "memd: add --yes to remove these (no terminal to confirm on)", file=sys.stderr
                )
                return 1
            answer = input(f"Forget {len(cands)} item(s)? [y/N] ").strip().lower()
            if answer not in ("y", "yes"):
                print("nothing removed", file=sys.stderr)
                return 1
        res = call(args, m.FORGET, m.ForgetParams(query=target, confirm=True), write=True)
    _out(
        args,
        res,
        "\n".join(f"forgot {r.id}: {r.text}" for r in res.removed) or "nothing removed",
    )
    return 0


def _forget_conversation(args: argparse.Namespace) -> int:
    """`memd forget --session ID [--turn ID …]`: a session, or some of its turns, everywhere."""
    from memd.api import messages as m

    if not args.session_id or args.what:
        raise MemdError("--session names the conversation; give nothing else to forget with it",
                        hint="memd forget --session ID [--turn TURN_ID …] [--yes]")  # fmt: skip
    params = m.ForgetConversationParams(session_id=args.session_id, turn_ids=args.turn_ids or [])
    plan = call(args, m.FORGET_CONVERSATION, params)
    what = f"session {plan.session_id}" + (f" ({plan.title})" if plan.title else "")
    if not plan.whole_session:
        what += f": turns {', '.join(plan.turn_ids)}"
    if not args.yes:
        print(f"  {what}: {len(plan.turn_ids)} turns", file=sys.stderr)
        if not sys.stdin.isatty():
            print("memd: add --yes to forget them (no terminal to confirm on)", file=sys.stderr)
            return 1
        if input("Forget them everywhere memd keeps them? [y/N] ").strip().lower() not in (
            "y",
            "yes",
        ):
            print("nothing removed", file=sys.stderr)
            return 1
    params = m.ForgetConversationParams(
        session_id=plan.session_id, turn_ids=plan.turn_ids if not plan.whole_session else [],
        confirm=True,
    )  # fmt: skip
    res = call(args, m.FORGET_CONVERSATION, params, write=True)
    _out(
        args,
        res,
        f"forgot {what}: {len(res.turn_ids)} turns, {res.journal_entries} journal entries",
    )
    return 0


def cmd_memories(args: argparse.Namespace) -> int:
    """`memd memories`: the items in effect, a page at a time (`--limit`, `--offset`)."""
    from memd.api import messages as m
    from memd.cli import render

    # Text shows a page unless asked for more; --json gives everything unless asked for less.
    limit = args.limit if args.limit is not None else (0 if args.json else MEMORIES_PAGE)
    params = m.MemoriesParams(scope=args.scope or "", all=args.all, limit=limit, offset=args.offset)
    res = call(args, m.MEMORIES, params)

    def text() -> str:
        agents = render.agents_lines(render.part(res.agents, []))
        if not res.items:
            return "\n".join(
                ["no memories yet" if not res.total else f"no memories past {res.offset}", *agents]
            )
        out, cur = [], ""
        for it in res.items:
            if it.rel != cur:
                cur = it.rel
                out.append(f"{it.scope}: {it.path}")
            mark = " (superseded)" if it.meta.get("superseded") else ""
            out.append(f"  {it.id}  {it.text}{mark}")
        shown_to = res.offset + len(res.items)
        if res.offset or shown_to < res.total:
            out.append(f"\n{res.offset + 1}-{shown_to} of {res.total} memories"
                       + (f"; next page: memd memories --offset {shown_to}"
                          f"{f' --limit {limit}' if limit != MEMORIES_PAGE else ''}"
                          " (--limit 0 shows all)" if shown_to < res.total else ""))  # fmt: skip
        return "\n".join(out + agents)

    _out(args, res, text)
    return 0


def _change_line(c: Any) -> str:
    files = ", ".join(f"{f.status} {f.path}" for f in c.files)
    run = f" (run {c.run})" if c.run else ""
    return f"{c.id}  {_when(c.at)}  {c.cause:<9}  {c.summary}{run}" + (
        f"\n    {files}" if files else ""
    )


def cmd_history(args: argparse.Namespace) -> int:
    from memd.api import messages as m

    path = args.path or ""
    if path and os.path.exists(path):
        path = os.path.abspath(path)  # a path from here; otherwise relative to the memory tree
    params = m.HistoryParams(path=path, since=args.since or "", limit=args.limit)
    res = call(args, m.HISTORY, params)
    _out(args, res, lambda: "\n".join(_change_line(c) for c in res.changes) or "no changes")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from memd.api import messages as m

    res = call(args, m.SHOW_CHANGE, m.ShowChangeParams(change=args.change))

    def text() -> str:
        c = res.change
        head = [
            _change_line(c),
            f"    by {c.author}" + (f"; undoes {c.undoes}" if c.undoes else ""),
        ]
        return "\n".join([*head, "", *(d.diff.rstrip("\n") for d in res.diffs)])

    _out(args, res, text)
    return 0


def cmd_undo(args: argparse.Namespace) -> int:
    from memd.api import messages as m

    if bool(args.change) == bool(args.run):
        print("memd: give a CHANGE (from `memd history`) or --run RUN", file=sys.stderr)
        return 2
    params = m.UndoParams(change=args.change or "", run=args.run or "", dry_run=args.dry_run)
    res = call(args, m.UNDO, params, write=True)

    def text() -> str:
        what = ", ".join(f"{c.id} ({c.summary})" for c in res.changes)
        verb = "would undo" if res.dry_run else "undid"
        files = [
            f"  {'would ' if res.dry_run else ''}"
            f"{'delete' if f.delete else 'create' if f.create else 'rewrite'} {f.rel}"
            for f in res.files
        ]
        return "\n".join([f"{verb} {what}", *files, *(f"note: {w}" for w in res.warnings)])

    _out(args, res, text)
    return 0


def cmd_switch(args: argparse.Namespace) -> int:
    from memd.api import messages as m

    on = args.command == "enable"
    res = call(args, m.SET_ENABLED, m.SetEnabledParams(enabled=on), write=True)
    _out(args, res, f"memory is {'on' if res.enabled else 'off'}")
    return 0


def cmd_reindex(args: argparse.Namespace) -> int:
    from memd.api import messages as m

    res = call(args, m.REINDEX, m.ReindexParams(full=args.full), write=True, progress=True)
    _out(
        args,
        res,
        f"{'rebuilt' if res.full else 'reconciled'}: {res.indexed} indexed, {res.unchanged} unchanged,"
        f" {res.deleted} deleted, {res.problems} problems in {res.seconds}s",
    )
    return 0


def cmd_config(args: argparse.Namespace) -> int:
    """`memd config`: the settings in force as TOML (paste-able); `--json` adds the table."""
    from memd.core import settings

    s = _settings(args)
    file = settings.config_path(Path(args.config) if args.config else None)
    rows = settings.describe()
    for r in rows:
        r["value"] = s.value(r["key"])
        if r["key"] in settings.SECRETS and r["value"]:
            r["value"] = "(set)"
    _out(args, {"file": str(file), "settings": rows}, lambda: settings.to_toml(s, file).rstrip())
    return 0


def cmd_job(args: argparse.Namespace) -> int:
    """`memd extract|archive|summarize [--now]`: run the job now, or show what it did last.

    Exits 1 when a run asked for did not do its work: it failed, must be retried, was refused
    for configuration or ran out of its token budget.
    """
    import time

    from memd.api import messages as m
    from memd.cli import render

    if not args.now:
        job = call(args, m.STATUS, m.NoParams()).jobs.get(args.job_name)
        _out(args, job, lambda: render.job_text(args.job_name, job, time.time()))
        return 0
    res = call(args, m.RUN_JOB, m.RunJobParams(name=args.job_name), write=True)
    counts = ", ".join(f"{k} {v}" for k, v in res.counts.items())
    _out(args, res, f"{res.job}: {res.outcome}{' - ' + res.message if res.message else ''}"
         + (f" ({counts})" if counts else ""))  # fmt: skip
    return 0 if res.outcome in ("success", "nothing_to_do") else 1


def cmd_sync(args: argparse.Namespace) -> int:
    """`memd sync [status] | --now [--retry-parked] | init-schema`: the cloud sync queue."""
    from memd.api import messages as m
    from memd.cli import render

    if args.action == "init-schema":
        res = call(args, m.SYNC_INIT_SCHEMA, m.NoParams(), write=True)
        _out(args, res, f"{res['backend']}: {'tables ready' if res['created'] else 'not created here'}"
             f" - {res['message']}")  # fmt: skip
        return 0
    if args.now:
        now = call(args, m.SYNC_NOW, m.SyncNowParams(retry_parked=args.retry_parked), write=True)
        counts = ", ".join(f"{k} {v}" for k, v in now.counts.items() if v)
        _out(args, now, lambda: f"sync: {now.outcome} - {now.message}"
             + (f"\n({counts})" if counts else "") + "\n\n" + render.sync_text(now.status))  # fmt: skip
        return 0 if now.outcome in ("success", "nothing_to_do") else 1
    st = call(args, m.SYNC_STATUS, m.NoParams())
    _out(args, st, lambda: render.sync_text(st))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from memd.cli.demo import run_demo

    return run_demo(home=Path(args.home) if args.home else None, serve=args.serve)


def cmd_service(args: argparse.Namespace) -> int:
    """`memd service install|uninstall|status`: the per-user systemd/launchd service."""
    from memd.cli import service as install

    s = _settings(args)
    if args.action == "status":
        st = install.service_status(s)

        def status_text() -> str:
            active = ", ".join(f"{k} {v}" for k, v in (st["active"] or {}).items()) or "unknown"
            files = "\n".join(
                f"  {p} {'(present)' if ok else '(missing)'}" for p, ok in st["files"].items()
            )
            lines = [f"{st['manager'] or 'no service manager'}: installed {'yes' if st['installed'] else 'no'};"
                     f" state {active}", files, f"socket {st['socket']}"]  # fmt: skip
            return "\n".join(lines + ([st["detail"]] if st["detail"] else []))

        _out(args, st, status_text)
        return 0
    if args.action == "install":
        plan = install.plan_install(s, pass_env=args.env or ())
    else:
        plan = install.plan_uninstall(s)
    if args.dry_run:
        _out(
            args,
            {"dry_run": True, **plan.as_dict()},
            lambda: plan.describe() + "\n(dry run: nothing changed)",
        )
        return 0
    res = install.apply(plan)
    data = {
        **plan.as_dict(),
        "written": [str(p) for p in res.written],
        "removed": [str(p) for p in res.removed],
        "commands": [
            {"run": list(c.argv), "returncode": c.returncode, "stderr": c.stderr.strip()}
            for c in res.commands
        ],  # fmt: skip
    }

    def text() -> str:
        lines = [f"wrote {p}" for p in res.written] + [f"removed {p}" for p in res.removed]
        for c in res.commands:
            mark = "ok" if c.ok else f"failed ({c.returncode}, ignored): {c.stderr.strip()}"
            lines.append(f"ran {' '.join(c.argv)}: {mark}")
        return "\n".join(lines + [f"note: {n}" for n in plan.notes])

    _out(args, data, text)
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    """`memd doctor`: every check with its verdict and a fix; exit 1 when something failed."""
    from memd.cli import doctor

    overrides = {"log.level": args.log_level} if args.log_level else None
    s, config = doctor.load_settings(Path(args.config) if args.config else None, overrides)
    checks = [config]
    if s is not None:
        checks += doctor.run_checks(s, timeout=min(args.timeout, 5.0))
    _out(args, doctor.as_dict(checks), lambda: doctor.render(checks))
    return doctor.exit_code(checks)


# -- parser --------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", help="settings file (default: the platform config dir)")
    common.add_argument("--json", action="store_true", help="print JSON")
    common.add_argument("--timeout", type=float, default=30.0, help="socket timeout in seconds")
    common.add_argument("--log-level", help="DEBUG, INFO, WARNING or ERROR")
    p = argparse.ArgumentParser(prog="memd", description="A local memory daemon for AI assistants.")
    p.add_argument("--version", action="version", version=f"memd {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, fn: Command, help: str) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, parents=[common], help=help, description=help)
        sp.set_defaults(func=fn)
        return sp

    add("serve", cmd_serve, "run the daemon in the foreground")
    add("status", cmd_status, "daemon, index, watcher and problem files")
    sp = add("search", cmd_search, "full-text search over memory (then past conversations)")
    sp.add_argument("query")
    sp.add_argument("--limit", type=int, default=10, help="hits per kind: sections, then turns")
    sp.add_argument("--scope", choices=["all", "memory", "conversations"], default="all")
    sp.add_argument("--conversations", action="store_true", help="past conversations only")
    sp = add(
        "recall",
        cmd_recall,
        "recall past conversations: sessions, a topic, one session, within one",
    )
    sp.add_argument("query", nargs="*")
    sp.add_argument("--mode", choices=["sessions", "topic", "session", "within"],
                    help="default: from the arguments (query → topic, --session → session/within)")  # fmt: skip
    sp.add_argument("--session", dest="session_id")
    sp.add_argument("--project")
    sp.add_argument("--agent", dest="agent_id")
    sp.add_argument("--limit", type=int, default=20)
    add("ingest", cmd_ingest, "store conversation turns given as JSON lines on stdin")
    sp = add(
        "import",
        cmd_import,
        "import a memd export, a ChatGPT export, a Claude Code transcript folder or a log file",
    )
    sp.add_argument("path")
    sp.add_argument("--format", choices=["memd", "chatgpt", "claude-code", "jsonl", "openai"])
    sp.set_defaults(timeout=600.0)
    sp = add(
        "export",
        cmd_export,
        "write sessions with their chats, memories and the Markdown tree to one JSON file",
    )
    sp.add_argument("file")
    sp.add_argument(
        "--no-tree", action="store_true", help="leave the Markdown files out (memories are kept)"
    )
    sp.add_argument("--overwrite", action="store_true", help="replace FILE if it exists")
    sp.set_defaults(timeout=600.0)
    sp = add("context", cmd_context, "the memory block an assistant should get now")
    sp.add_argument("query", nargs="?", default="")
    sp.add_argument("--budget", type=int, default=2000, help="token budget (default 2000)")
    sp.add_argument(
        "--project",
        help="workspace path or project slug (default: the workspace of the current folder)",
    )
    sp.add_argument("--agent", dest="agent_id")
    sp.add_argument("--session", dest="session_id")
    sp = add("remember", cmd_remember, "save a memory (user scope unless --project/--agent)")
    sp.add_argument("text", nargs="+")
    sp.add_argument(
        "--project", dest="project_flag", action="store_true", help="this workspace's memory"
    )
    sp.add_argument("--project-path", dest="project", help="workspace (default: current folder)")
    sp.add_argument("--agent", dest="agent_id")
    sp.add_argument(
        "--type", help="personal, preference, skill, project, task, decision, knowledge"
    )
    sp = add("forget", cmd_forget, "remove memories by id or matching text, or a conversation")
    sp.add_argument("what", nargs="*")
    sp.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    sp.add_argument(
        "--session",
        dest="session_id",
        help="forget this conversation (its id or the journal's short id) everywhere",
    )
    sp.add_argument("--turn", dest="turn_ids", action="append",
                    help="with --session: only this turn (repeatable)")  # fmt: skip
    sp = add("memories", cmd_memories, "list the memories in effect")
    sp.add_argument("--scope", choices=["user", "project", "agent"])
    sp.add_argument("--all", action="store_true", help="include superseded items")
    sp.add_argument("--limit", type=int, help=f"items to show (default {MEMORIES_PAGE}; with"
                    " --json all; 0: all)")  # fmt: skip
    sp.add_argument("--offset", type=int, default=0, help="skip this many first (the next page)")
    sp = add("history", cmd_history, "changes of the memory tree, newest first (PATH: a file)")
    sp.add_argument("path", nargs="?", help="a file or folder (here, or in the memory tree)")
    sp.add_argument("--since", help='e.g. 2026-11-01, or "2 days ago"')
    sp.add_argument("--limit", type=int, default=50)
    sp = add("show", cmd_show, "one change of the memory tree, with its diff")
    sp.add_argument("change", help="a change id from `memd history`")
    sp = add("undo", cmd_undo, "reverse a change (or every change of a job run) as a new change")
    sp.add_argument("change", nargs="?", help="a change id from `memd history`")
    sp.add_argument("--run", help="undo all a job run wrote (its id: `run` in the job's counts)")
    sp.add_argument("--dry-run", action="store_true", help="say what would change; write nothing")
    add("enable", cmd_switch, "turn memory on")
    add("disable", cmd_switch, "turn memory off (context is empty, nothing is written)")
    sp = add("reindex", cmd_reindex, "catch up with the files, or rebuild the index")
    sp.add_argument(
        "--full", action="store_true", help="rebuild into a new database and swap it in"
    )
    for job, help in (
        ("extract", "extract facts and preferences from new conversation turns"),
        ("summarize", "summarise idle sessions"),
        ("archive", "move old journal days and expired/decayed memories to archive/"),
    ):
        sp = add(job, cmd_job, help + " (--now runs it; without, shows its state)")
        sp.add_argument("--now", action="store_true", help="run it now and print what it did")
        sp.set_defaults(job_name=job)
    sp = add("sync", cmd_sync, "cloud sync: queue status, run now, create the cloud tables")
    sp.add_argument("action", nargs="?", choices=["status", "init-schema"], default="status")
    sp.add_argument("--now", action="store_true", help="pull, then push everything queued, now")
    sp.add_argument(
        "--retry-parked", action="store_true", help="with --now: retry parked operations"
    )
    add("config", cmd_config, "every setting with its value, env override and help")
    sub.add_parser("hook", help="Claude Code hooks: hook session-start|user-prompt (stdin JSON)")
    sub.add_parser("mcp", help="stdio MCP server forwarding to the daemon")
    sub.add_parser("integrate", help="integrate claude-code [--dry-run] [--remove]")
    sub.add_parser("ui", help="open the memory page in a browser [--no-browser] [--port N]")
    sp = add(
        "service",
        cmd_service,
        "install, remove or inspect memd as a user service (systemd/launchd)",
    )
    sp.add_argument("action", choices=["install", "uninstall", "status"])
    sp.add_argument("--dry-run", action="store_true", help="print what would be written and run")
    sp.add_argument("--env", action="append", metavar="NAME",
                    help="install: copy this variable (e.g. ANTHROPIC_API_KEY) from this shell into"
                         " the service's environment file, readable only by you")  # fmt: skip
    add(
        "doctor",
        cmd_doctor,
        "check SQLite, folders, limits, daemon, service, keys, cloud and index",
    )
    sp = add("demo", cmd_demo, "start a daemon on a throwaway home and show what it does")
    sp.add_argument("--home", help="use this MEMD_HOME instead of a temp folder")
    sp.add_argument("--serve", action="store_true", help="keep the daemon running afterwards")
    return p


# Commands with their own argument parsing, dispatched before argparse so hooks start fast.
DELEGATED = {
    "hook": "memd.integrations.hooks",
    "mcp": "memd.integrations.mcp_server",
    "integrate": "memd.integrations.claude_code",
    "ui": "memd.ui.run",
}


def _delegate(argv: list[str]) -> int:
    import importlib

    cmd, rest = argv[0], argv[1:]
    if cmd == "integrate":
        if not rest or rest[0] != "claude-code":
            print("usage: memd integrate claude-code [--dry-run] [--remove]", file=sys.stderr)
            return 2
        rest = rest[1:]
    module = importlib.import_module(DELEGATED[cmd])
    if cmd in ("hook", "mcp"):
        # They sit below the composition root: without a daemon they answer through the CLI's
        # read-only engine (loaded only then).
        from memd.cli.offline import answer_offline

        return int(module.main(rest, offline=answer_offline))
    return int(module.main(rest))


def main(argv: list[str] | None = None) -> int:
    # Everything memd creates (index, memory files, exports, snapshots, the history repository)
    # is the user's alone unless it says otherwise; files it replaces keep their own mode.
    os.umask(0o077)
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in DELEGATED:
        return _delegate(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args))
    except MemdError as exc:
        print(f"memd: {exc}", file=sys.stderr)
        if exc.hint:
            print(f"hint: {exc.hint}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
