"""Conversation memory as the daemon serves it.

Methods: `ingest` (turns an app pushes), `recall`, `forget_conversation`; `search` (memory
and turns on one page, `ranking`) and the conversation half of `import` (`import_logs`); the
conversation provider of `context` (`provider`); the `summarize` job; log tailing and the
journal, with their status.

A pushed turn is written to the files of pushed turns (`memd.conversations.pushed`) before it
is stored and the push is answered, so a rebuilt index gets it back; at start the daemon reads
what those files hold that the index lacks.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from memd.api import messages as msg
from memd.api.methods import Feature, Host, JobSpec, Method
from memd.conversations import (
    forget,
    imports,
    inventory,
    journal,
    logs,
    pushed,
    ranking,
    repo,
    sources,
)
from memd.conversations import recall as rc
from memd.conversations import summary_job as summaries
from memd.conversations.aider_folders import AiderFolders
from memd.conversations.formats.aider import AIDER_SOURCE
from memd.conversations.ingest import (
    WriteReport,
    forgotten_key,
    summaries_due,
    write_turns,
)
from memd.conversations.repo import TurnScope
from memd.core.errors import InvalidParams, PathError
from memd.core.models import Hit, Turn
from memd.core.settings import Settings
from memd.db import Connection, Store
from memd.db.tables import count_rows
from memd.history import Cause
from memd.llm.choice import own_claude_projects
from memd.memory.api import MemoryFeature
from memd.memory.context import Candidate, ContextRequest
from memd.semantic.service import SemanticRecall

ingest_log = logging.getLogger("memd.ingest")


def summary_interval_s(s: Settings) -> float:
    """How often the summary job looks for idle sessions: a few times per idle period."""
    return max(60, s.summary_idle_min * 30)


class Conversations:
    """Log tailing, pushed turns, the journal and recall of one engine."""

    def __init__(
        self,
        host: Host,
        store: Store,
        memory: MemoryFeature,
        semantic: SemanticRecall | None = None,
    ) -> None:
        s = host.settings
        self.host = host
        self.store = store
        self.memory = memory
        self.semantic = semantic  # recall by meaning, fused into `search` and `recall`
        self.configured = sources.configured(s.value, skip=own_claude_projects(s))
        self.sources = list(self.configured.sources)
        data = s.paths.data_dir / "conversations"
        self.pushed = pushed.PushedFiles(data / "pushed")
        self.pushed_source = sources.LogSource(self.pushed.folder, pushed.FORMAT, watched=False)
        self.forgotten = forget.ForgottenKeys(data / "forgotten")
        # Appends to the files of pushed turns, their rewrites and their reading, one at a time.
        self._push_lock = threading.Lock()
        self.ingestor = self._ingestor(self.sources, s.logs_poll_s)
        # Held while an import reads through the ingestor, and while a reload swaps it: a new
        # set of log sources never cuts an import short.
        self._swap = threading.Lock()
        self._started = False
        self._journal_refused = ""  # why the journal folder was last refused (logged once)
        # Aider's histories in the folders conversations were held in, found as they appear.
        self.aider = AiderFolders(
            store,
            lambda: bool(self.host.settings.logs_aider),
            lambda: float(self.host.settings.logs_aider_folders_s),
        )

    def _ingestor(self, tailed: list[sources.LogSource], poll_s: float) -> logs.LogIngestor:
        return logs.LogIngestor(
            self.store,
            [*tailed, self.pushed_source],
            enabled=self.memory.ops.enabled,
            on_turns=lambda rep: self.write_journal(rep.sessions),
            on_poll=self._polled,
            poll_s=poll_s,
            own_files_lock=self._push_lock,
        )

    def start(self) -> None:
        # Under the swap lock: a reload arriving while the tailers start would otherwise swap
        # in its ingestor (not started: not `_started` yet) while this starts the old one, and
        # the new sources would never be read until a restart.
        with self._swap:
            self.ingestor.start()
            self._started = True

    def stop(self) -> None:
        self._started = False
        self.ingestor.stop()  # an import reading through it stops at its next chunk
        with self._swap:  # and a reload that swapped it meanwhile leaves nothing running
            self.ingestor.stop()

    def _polled(self) -> None:
        self.write_journal(None)
        if self.aider.due():
            found = self.aider.find(s.root for s in self.sources if s.format == AIDER_SOURCE)
            if found:
                # The ingestor is swapped for one that also reads them; not from its own poll
                # thread, which the swap stops.
                threading.Thread(target=self._add_sources, args=(found,), daemon=True).start()

    def _add_sources(self, found: list[sources.LogSource]) -> None:
        with self._swap:
            if not self._started:
                return
            old, self.sources = self.ingestor, [*self.sources, *found]
            self.ingestor = self._ingestor(self.sources, old.poll_s)
            old.stop()
            self.ingestor.start()
        ingest_log.info("Aider histories found in %s", ", ".join(str(s.root) for s in found))

    def reload(self, new: Settings) -> None:
        """New log sources or poll interval: tail with them from now on (checkpoints carry
        over, so nothing is read twice); a new idle time reschedules the summary job."""
        self.host.reschedule("summarize", summary_interval_s(new))
        configured = sources.configured(new.value, skip=own_claude_projects(new))
        tailed = list(configured.sources)
        self.configured = configured
        if tailed == self.sources and new.logs_poll_s == self.ingestor.poll_s:
            return
        with self._swap:
            old, self.sources = self.ingestor, tailed
            self.ingestor = self._ingestor(tailed, new.logs_poll_s)
            if self._started:
                old.stop()
                self.ingestor.start()
        ingest_log.info(
            "log sources now: %s (poll every %g s)",
            ", ".join(f"{x.root} ({x.format})" for x in tailed) or "none",
            new.logs_poll_s,
        )

    def write_journal(self, sessions: Iterable[str] | None) -> None:
        st = self.host.settings
        if not st.journal_enabled:
            return
        oldest = time.time() - st.journal_max_age_days * 86400
        if sessions is None:
            sessions = journal.lagging_sessions(self.store.read(), oldest)
        if sessions:
            # The history records journal writes per file and minute, not one change each.
            try:
                journal.write_journal(self.store, self.memory.files, st.memory_dir / "journal",
                                      sessions, oldest=oldest)  # fmt: skip
            except PathError as exc:
                # A journal folder linked out of the memory tree: never written through. The
                # entries wait (nothing is marked journaled) until the link is gone.
                if str(exc) != self._journal_refused:
                    ingest_log.warning("journal not written: %s", exc)
                self._journal_refused = str(exc)
            else:
                self._journal_refused = ""

    # -- compositions' parts ---------------------------------------------------------------
    def provider(self, req: ContextRequest) -> list[Candidate]:
        """`context`'s conversation tier."""
        return rc.conversation_candidates(self.store.read(), req)

    def search(self, p: msg.SearchParams) -> list[Hit]:
        """`search`: memory sections and conversation turns on one page (`ranking`)."""
        turns = TurnScope(p.session_id, p.project, p.agent_id, p.source)
        return ranking.search(self.store.read(), p.query, limit=p.limit, scope=p.scope,
                              turns=turns, semantic=self.semantic)  # fmt: skip

    def import_logs(self, p: msg.ImportParams) -> msg.LogsImported | msg.ChatGPTImported:
        """The conversation half of `import`: a ChatGPT export, transcripts, a log file."""
        if not p.path:
            raise InvalidParams("param 'path' is required")
        path = Path(p.path)
        with self._swap, self.host.progress.task(f"importing {path.name}") as task:
            return imports.import_path(self.ingestor, path, p.format, task)

    # -- methods ---------------------------------------------------------------------------
    def ingest(self, p: msg.IngestParams) -> msg.IngestResult:
        if p.turns is not msg.UNSET:
            records: list[Any] = p.turns
        elif p.session_id is not msg.UNSET:
            one = msg.to_builtins(p)
            one.pop("request_id", None)
            records = [one]
        else:
            records = []
        if not records:
            raise InvalidParams(
                'give one turn ({"session_id", "role", "content", …}) or "turns": [ … ]'
            )
        if not self.memory.ops.enabled():
            return msg.IngestResult(enabled=False, accepted=0, added=0, sessions=[])
        now = time.time()
        request = p.request_id if isinstance(p.request_id, str) else ""
        turns = pushed.turns_of_request(self.store.read(), records, request, now)
        rep = self.push(turns, now)
        if rep.added or rep.updated:
            self.ingestor.notify(rep)
        return msg.IngestResult(
            enabled=True, accepted=len(turns), added=rep.added, updated=rep.updated,
            sessions=sorted(rep.sessions),
        )  # fmt: skip

    def push(self, turns: Sequence[Turn], now: float) -> WriteReport:
        """Write new or changed turns to today's file of pushed turns (flushed to disk), then
        store them as that file's lines read back, so that reading the file again after the
        index is lost gives the very same turns."""
        with self._push_lock:
            conn = self.store.read()
            keys = [(t.session_id, t.turn_id) for t in turns]
            stored = repo.existing_texts(conn, keys)
            fresh = [t for t in turns if stored.get((t.session_id, t.turn_id)) != t.text]
            if fresh and repo.any_forgotten(conn):
                gone = repo.forgotten_among(conn, [forgotten_key(*k) for k in keys])
                fresh = [t for t in fresh if forgotten_key(t.session_id, t.turn_id) not in gone]
            if not fresh:
                return WriteReport()
            lines = [pushed.encode(t) for t in fresh]
            app = self.pushed.append(lines, now)
            path, cp = str(app.path), app.checkpoint
            read_back = [
                t
                for i, raw in enumerate(lines)
                for t in pushed.parse_line(raw[:-1], path=path, lineno=app.first_line + i)
            ]

            def write(c: Connection) -> WriteReport:
                rep = write_turns(c, read_back, now=now, prepared=True)
                before = repo.checkpoint(c, path)
                # The file's checkpoint moves on only when it stood where this append began;
                # otherwise the next scan of the file reads what lies between.
                if (before is None and app.start == 0) or (
                    before is not None and before.inode == cp.inode and before.offset == app.start
                ):
                    repo.save_checkpoint(c, path, pushed.FORMAT, cp, rep.added, now)
                return rep

            return self.store.w.run(write)

    def forget_conversation(self, p: msg.ForgetConversationParams) -> msg.ForgetConversationResult:
        if not p.session_id:
            raise InvalidParams("param 'session_id' is required")
        plan = forget.plan(self.store.read(), p.session_id, p.turn_ids)
        out = msg.ForgetConversationResult(
            session_id=plan.session_id, title=plan.title, turn_ids=plan.turn_ids,
            whole_session=plan.whole, removed=False,
        )  # fmt: skip
        if not p.confirm:
            return out
        # The keys first: whatever happens next, no reading of a log brings the turns back.
        self.forgotten.add(plan.keys)
        # Also when the index has them from a log: the same turn may have been pushed as well.
        with self._push_lock:
            self.pushed.remove({(plan.session_id, t) for t in plan.turn_ids})
        now = time.time()
        self.store.w.run(lambda c: forget.apply(c, plan, now=now))
        changed: list[str] = []
        files = self.memory.files
        detail = f"conversation {plan.session_id}: its journal entries"
        with files.operation(Cause.FORGET, detail) as op:
            for day in forget.journal_files(self.host.settings.memory_dir):
                try:
                    n = journal.remove_entries(files, day, plan.session_id, plan.questions, op)
                except PathError as exc:  # a journal linked out of the tree is not memd's
                    ingest_log.warning("journal entries not removed: %s", exc)
                    continue
                if n:
                    out.journal_entries += n
                    changed.append(str(day))
        if changed:
            self.memory.indexer.index_paths(changed)
        ingest_log.info("forgot %d turns of session %s", len(plan.turn_ids), plan.session_id)
        out.removed = True
        return out

    # -- start -----------------------------------------------------------------------------
    def catch_up(self) -> None:
        """Before the socket opens: the forgotten keys, then the pushed turns the index lacks
        (all of them after the index was lost or rebuilt)."""
        keys = self.forgotten.keys()
        if keys:
            self.store.w.run(lambda c: repo.add_forgotten(c, keys))
        reports = self.ingestor.scan_own()
        added = sum(r.added for r in reports)
        if added:
            ingest_log.info("read %d pushed turns back from %s", added, self.pushed.folder)

    def recall(self, p: msg.RecallParams) -> msg.RecallResult:
        return rc.recall(
            self.store.read(), mode=p.mode, query=p.query, session_id=p.session_id,
            limit=p.limit, per_session=p.per_session, project=p.project, agent_id=p.agent_id,
            semantic=self.semantic, source=p.source,
        )  # fmt: skip

    def status_into(self, out: msg.StatusResult) -> None:
        """The logs part of `status`: the ingestor's, the index's sessions and turns, and
        every assistant as memd sees it."""
        conn = self.store.read()
        logs = self.ingestor.status()
        logs.sessions = count_rows(conn, "sessions")
        logs.turns = count_rows(conn, "turns")
        logs.summaries_due = summaries_due(conn)
        logs.assistants = inventory.assistants(
            conn, self.configured.choices, self.ingestor.problems
        )
        out.logs = logs

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
                Method(
                    msg.FORGET_CONVERSATION,
                    self.forget_conversation,
                    writes=True,
                    why="rewrites files and waits on the writer",
                ),  # fmt: skip
            ],
            jobs=[
                JobSpec(
                    "summarize",
                    lambda: summaries.run_summaries(self.memory.job_context()),
                    summary_interval_s(s),
                    180,
                )
            ],
            status_into=[self.status_into],
            startup=[self.catch_up],
            on_start=[self.start],
            on_stop=[self.stop],
            on_reload=[self.reload],
        )
