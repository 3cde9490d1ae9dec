"""Conversation commands: `recall`, `ingest`, and `forget --session` (a conversation everywhere)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from memd.cli.commands import call, emit
from memd.core.errors import MemdError
from memd.core.text import counted


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
        source=args.source,
    )
    res = call(args, m.RECALL, params)
    emit(args, res, res.text)
    return 0


def cmd_ingest(args: argparse.Namespace) -> int:
    """`memd ingest`: turns as JSON lines on stdin (the generic JSONL shape), sent in batches."""
    from memd.api import messages as m

    records: list[Any] = []
    for n, line in enumerate(sys.stdin, 1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except (ValueError, RecursionError) as exc:  # malformed, 5,000 digits, too deep
                raise MemdError(f"stdin line {n} is not JSON: {exc}",
                                hint='one turn per line: {"session_id": "…", "role": "user", "content": "…"}') from exc  # fmt: skip
    totals = {"accepted": 0, "added": 0, "updated": 0}
    sessions: set[str] = set()
    for i in range(0, len(records), 500):
        res = call(args, m.INGEST, m.IngestParams(turns=records[i : i + 500]), write=True)
        if not res.enabled:
            emit(args, res, "memory is off: nothing was stored")
            return 1
        totals["accepted"] += res.accepted
        totals["added"] += res.added
        totals["updated"] += res.updated if res.updated is not m.UNSET else 0
        sessions.update(res.sessions)
    data = {**totals, "sessions": sorted(sessions)}
    emit(
        args,
        data,
        f"{counted(totals['added'], 'turn')} added, {totals['updated']:,} updated in"
        f" {counted(len(sessions), 'session')}",
    )
    return 0


def forget_conversation(args: argparse.Namespace) -> int:
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
        print(f"  {what}: {counted(len(plan.turn_ids), 'turn')}", file=sys.stderr)
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
    emit(
        args,
        res,
        f"forgot {what}: {counted(len(res.turn_ids), 'turn')},"
        f" {counted(res.journal_entries, 'journal entry', 'journal entries')}",
    )
    return 0
