"""Memory commands: `context`, `search`, `remember`, `forget`, `memories`, `enable`/`disable`."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, cast

from memd.cli.commands import call, emit, settings_for
from memd.cli.commands.conversations import forget_conversation
from memd.core.errors import MemdError

# `memd memories` shows this many items unless told otherwise.
MEMORIES_PAGE = 100


def _project_here(args: argparse.Namespace) -> str:
    """`--project` resolved where the command runs, or by default the folder it runs in when
    that is a project memd accepts (nothing, quietly, when it is not). A person runs this
    command: the folder they are in, or name, is trusted wherever it is (`trust_folder`)."""
    from memd.api.client import project_param
    from memd.core.paths import caller_project

    if args.project:
        return project_param(args.project)
    s = settings_for(args)
    private = [s.memory_dir, s.paths.data_dir, s.db_path.parent]
    return caller_project(
        os.getcwd(), workspaces=s.memory_workspaces, private=private, trusted=True
    )


def cmd_search(args: argparse.Namespace) -> int:
    from memd.api import messages as m
    from memd.cli.render import search_text

    scope = "conversations" if args.conversations else args.scope
    params = m.SearchParams(
        query=args.query, limit=args.limit, scope=cast(Any, scope), source=args.source
    )
    res = call(args, m.SEARCH, params)
    emit(args, res, lambda: search_text(res.hits))
    return 0


def cmd_context(args: argparse.Namespace) -> int:
    from memd.api import messages as m

    params = m.ContextParams(
        query=args.query or "",
        budget_tokens=m.UNSET if args.budget_tokens is None else args.budget_tokens,
        agent_id=args.agent_id or "",
        project=_project_here(args),
        session_id=args.session_id or "",
        trust_folder=True,  # a person's shell: see _project_here
        source=args.source,
    )
    res = call(args, m.CONTEXT, params)

    def text() -> str:
        if not res.enabled:
            return "(memory is disabled)"
        from memd.core.text import counted

        tail = f"\n\n[{res.tokens:,}/{res.budget:,} tokens, {counted(len(res.sections), 'section')}"
        tail += f", {len(res.dropped):,} dropped]" if res.dropped else "]"
        return (res.text or "(no memory to inject)") + tail

    emit(args, res, text)
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
        trust_folder=True,  # the folder a person is in, or names, from their own shell
    )
    res = call(args, m.REMEMBER, params, write=True)
    emit(args, res, f"remembered {res.id} in {res.path}:{res.line}")
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    from memd.api import messages as m

    if args.session_id or args.turn_ids:
        return forget_conversation(args)
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
            emit(args, res, f"nothing matches {target!r}")
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
    emit(
        args,
        res,
        "\n".join(f"forgot {r.id}: {r.text}" for r in res.removed) or "nothing removed",
    )
    return 0


def cmd_memories(args: argparse.Namespace) -> int:
    """`memd memories`: the items in effect, a page at a time (`--limit`, `--offset`)."""
    from memd.api import messages as m
    from memd.cli import render
    from memd.core.text import item_dates

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
            dates = item_dates(it.meta)
            out.append(f"  {it.id}  {it.text}{mark}" + (f"  ({dates})" if dates else ""))
        shown_to = res.offset + len(res.items)
        if res.offset or shown_to < res.total:
            out.append(f"\n{res.offset + 1}-{shown_to} of {res.total} memories"
                       + (f"; next page: memd memories --offset {shown_to}"
                          f"{f' --limit {limit}' if limit != MEMORIES_PAGE else ''}"
                          " (--limit 0 shows all)" if shown_to < res.total else ""))  # fmt: skip
        return "\n".join(out + agents)

    emit(args, res, text)
    return 0


def cmd_switch(args: argparse.Namespace) -> int:
    from memd.api import messages as m

    on = args.command == "enable"
    res = call(args, m.SET_ENABLED, m.SetEnabledParams(enabled=on), write=True)
    emit(args, res, f"memory is {'on' if res.enabled else 'off'}")
    return 0
