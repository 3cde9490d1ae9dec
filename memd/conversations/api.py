"""Conversation memory as the daemon serves it.

Methods: `ingest` (turns an app pushes), `recall`; the conversation half of `search`
(`turn_hits`) and of `import` (`import_logs`); the conversation provider of `context`
(`provider`); the `summarize` job; log tailing and the journal, with their status.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from memd.api import messages as msg
from memd.api.methods import Feature, Host, JobSpec, Method
from memd.conversations import imports, journal, logs
from memd.conversations import recall as rc
from memd.conversations import summary_job as summaries
from memd.conversations.formats import parse_jsonl_line
from memd.conversations.ingest import summaries_due, write_turns
from memd.core.errors import InvalidParams, MemdError
from memd.db import Store
from memd.db.tables import count_rows
from memd.memory.api import MemoryFeature
from memd.memory.context import Candidate, ContextRequest

ingest_log = logging.getLogger("memd.ingest")


class Conversations:
    """Log tailing, pushed turns, the journal and recall of one engine."""

    def __init__(self, host: Host, store: Store, memory: MemoryFeature) -> None:
        s = host.settings
        self.host = host
        self.store = store
        self.memory = memory
        self.sources = logs.sources_from_settings(s.logs_claude_code, s.claude_dir, s.logs_sources)
        self.ingestor = logs.LogIngestor(
            store,
            self.sources,
            enabled=memory.ops.enabled,
            on_turns=lambda rep: self.write_journal(rep.sessions),
            on_poll=lambda: self.write_journal(None),
            poll_s=s.logs_poll_s,
        )

    def write_journal(self, sessions: Iterable[str] | None) -> None:
        st = self.host.settings
        if not st.journal_enabled:
            return
        oldest = time.time() - st.journal_max_age_days * 86400
        if sessions is None:
            sessions = journal.lagging_sessions(self.store.read(), oldest)
        if sessions:
            with self.memory.lock:
                journal.write_journal(
                    self.store, st.memory_dir / "journal", sessions, oldest=oldest
                )

    # -- compositions' parts ---------------------------------------------------------------
    def provider(self, req: ContextRequest) -> list[Candidate]:
        """`context`'s conversation tier."""
        return rc.conversation_candidates(self.store.read(), req)

    def turn_hits(self, p: msg.SearchParams) -> list[msg.SearchHit]:
        """The conversation half of `search`."""
        hits = rc.turn_hits(
            self.store.read(), p.query, p.limit,
            session_id=p.session_id, project=p.project, agent_id=p.agent_id,
        )  # fmt: skip
        return [msg.SearchHit(**h.to_dict()) for h in hits]

    def import_logs(self, p: msg.ImportParams) -> dict[str, Any]:
        """The conversation half of `import`: a ChatGPT export, transcripts, a log file."""
        if not p.path:
            raise InvalidParams("param 'path' is required")
        return imports.import_path(self.ingestor, Path(p.path), p.format)

    # -- methods ---------------------------------------------------------------------------
    def ingest(self, p: msg.IngestParams) -> msg.IngestResult:
        if p.turns is not msg.UNSET:
            records: list[Any] = p.turns
        elif p.session_id is not msg.UNSET:
            records = [msg.to_builtins(p)]
        else:
            records = []
        if not records:
            raise InvalidParams(
                'give one turn ({"session_id", "role", "content", …}) or "turns": [ … ]'
            )
        if not self.memory.ops.enabled():
            return msg.IngestResult(enabled=False, accepted=0, added=0, sessions=[])
        now = time.time()
        turns = []
        for i, rec in enumerate(records):
            if not isinstance(rec, dict):
                raise InvalidParams(f"turns[{i}] is not an object")
            # Pushed turns without a time are stamped now, which also keeps their ids distinct.
            raw = json.dumps({"ts": now, **rec} if rec.get("ts") is None else rec).encode()
            try:
                parsed = parse_jsonl_line(raw, path="", lineno=i + 1)
            except MemdError as exc:
                raise InvalidParams(f"turns[{i}]: {exc}") from exc
            turns += [dataclasses.replace(t, source="ingest", line=0) for t in parsed]
        rep = self.store.w.run(lambda c: write_turns(c, turns, now=now))
        if rep.added or rep.updated:
            self.ingestor.notify(rep)
        return msg.IngestResult(
            enabled=True, accepted=len(turns), added=rep.added, updated=rep.updated,
            sessions=sorted(rep.sessions),
        )  # fmt: skip

    def recall(self, p: msg.RecallParams) -> msg.RecallResult:
        out = rc.recall(
            self.store.read(), mode=p.mode, query=p.query, session_id=p.session_id,
            limit=p.limit, per_session=p.per_session, project=p.project, agent_id=p.agent_id,
        )  # fmt: skip
        return msg.decode_result(msg.RECALL, out)

    def status(self) -> dict[str, Any]:
        conn = self.store.read()
        return {"logs": {**self.ingestor.status(), "sessions": count_rows(conn, "sessions"),
                         "turns": count_rows(conn, "turns"),
                         "summaries_due": summaries_due(conn)}}  # fmt: skip

    def feature(self) -> Feature:
        ingest_log.debug(
            "conversation sources: %s",
            ", ".join(f"{x.root} ({x.format})" for x in self.sources) or "none",
        )
        s = self.host.settings
        return Feature(
            "conversations",
            methods=[
                Method(msg.INGEST, self.ingest, writes=True, why="waits on the writer"),
                Method(
                    msg.RECALL,
                    self.recall,
                    runs="reader",
                    why="ranks turns: ms to 100 ms on long histories",
                ),  # fmt: skip
            ],
            jobs=[
                JobSpec(
                    "summarize",
                    lambda: summaries.run_summaries(self.memory.job_context()),
                    max(60, s.summary_idle_min * 30),
                    180,
                )
            ],
            status=[self.status],
            on_start=[self.ingestor.start],
            on_stop=[self.ingestor.stop],
        )
