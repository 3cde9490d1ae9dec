"""The Markdown memory feature as the daemon serves it.

Methods: `context` (given the conversation providers by the composition root), `remember`,
`forget`, `memories`, `set_enabled`; the
`archive` job; the index the daemon's `reindex` rebuilds; the watcher and periodic reconcile
of the tree; and the usage-counting middleware that archival's decay by disuse reads.
"""

from __future__ import annotations

import logging
import os
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from msgspec import UnsetType

from memd.api import messages as msg
from memd.api.methods import Call, Feature, Host, JobSpec, Method, Middleware, Periodic, Runs
from memd.core.errors import EditConflict, UndoConflict
from memd.core.models import Hit
from memd.core.progress import Task
from memd.core.settings import Settings
from memd.core.watcher import Watcher
from memd.db import Store
from memd.history import Cause, History, UndoPlan
from memd.memory import archival
from memd.memory import repo as docs
from memd.memory.context import ContextRequest, ConversationProvider, build_context
from memd.memory.edit import ItemChange
from memd.memory.files import MemoryFiles
from memd.memory.indexer import Indexer, IndexReport, Root
from memd.memory.jobs import JobContext
from memd.memory.ops import MemoryOps, Project, resolve_project
from memd.memory.tree import create_tree, is_memory_file, slugify
from memd.semantic.service import SemanticRecall

log = logging.getLogger("memd")
CACHE_TABLES = ("files", "sections", "items", "problems")
HISTORY_OPEN_S = 60.0
REQUEST_IDS = 1000  # remember answers kept for retries that carry the same request id


def user_roots(settings: Settings) -> list[Root]:
    """The user tier's memory folder, the extra folders of user memory and the configured
    workspaces' `.memd/memory/` folders: everywhere memd reads and writes memory."""
    roots = [Root(settings.memory_dir)]
    roots += [Root(Path(p).expanduser()) for p in settings.memory_extra_roots]
    for ws in settings.memory_workspaces:
        folder = Path(ws).expanduser()
        # A workspace not there yet is that folder, not whatever repository holds its parent.
        p = resolve_project(str(folder)) if folder.is_dir() else _future(folder)
        if p.memory_dir is not None:
            roots.append(Root(p.memory_dir, p.slug))
    return roots


def _future(folder: Path) -> Project:
    return Project(slugify(folder.name), Path(os.path.realpath(folder)))


def report_result(r: IndexReport) -> msg.ReindexResult:
    return msg.ReindexResult(
        indexed=r.indexed,
        unchanged=r.unchanged,
        deleted=r.deleted,
        problems=r.problems,
        bytes=r.bytes,
        seconds=round(r.seconds, 4),
    )


class MarkdownIndex:
    """The Markdown tree's index, as the daemon's `reindex` sees it."""

    cache_tables = CACHE_TABLES

    def __init__(self, indexer: Indexer) -> None:
        self.indexer = indexer

    def reconcile(self, progress: Task | None = None) -> msg.ReindexResult:
        return report_result(self.indexer.reconcile(progress))

    def build(self, store: Store, progress: Task | None = None) -> msg.ReindexResult:
        fresh = Indexer(store, self.indexer.roots, max_file_bytes=self.indexer.max_file_bytes,
                        files=self.indexer.files)  # fmt: skip
        return report_result(fresh.reconcile(progress))


class MemoryFeature:
    """The memory tree of one engine: index, operations, the edit lock, usage counts."""

    def __init__(
        self,
        host: Host,
        store: Store,
        history: History | None = None,
        semantic: SemanticRecall | None = None,
    ) -> None:
        s = host.settings
        self.host = host
        self.store = store
        self.history = history
        self.semantic = semantic  # recall by meaning, fused into `search` and `context`
        roots = user_roots(s)
        self.indexer = Indexer(store, roots, max_file_bytes=int(s.index_max_file_mb * (1 << 20)))
        # The one door for every read-modify-write of a memory file (memory.files), with the
        # history every operation through it is recorded in; the indexer reads through it.
        self.files = MemoryFiles(
            self.indexer.root_paths,
            history,
            indexed_size=self._indexed_size,
            guard_state=s.write_guard_path,
        )
        self.indexer.files = self.files
        self._workspaces = roots[1:]  # the configured ones besides the memory folder
        self.ops = MemoryOps(
            store,
            self.indexer,
            s.memory_dir,
            enabled_default=s.memory_enabled_default,
            on_new_root=self._root_added,
            workspaces=lambda: self.host.settings.memory_workspaces,
            private=[s.paths.data_dir, s.db_path.parent, s.paths.state_dir, s.paths.runtime_dir],
            files=self.files,
        )
        # Markdown edits are read-modify-write of a whole file: two at once on the same file
        # lose one of them. Every operation of the door holds this lock (one at a time).
        self.lock = self.files.lock
        self.usage = archival.UsageTracker(store, time.time)
        self.watcher: Watcher | None = None
        self.index = MarkdownIndex(self.indexer)
        self._answers: OrderedDict[str, msg.RememberResult] = OrderedDict()

    def job_context(self) -> JobContext:
        """What a memory job needs, with the settings in force now."""
        return JobContext(self.host.settings, self.store, self.indexer, self.ops)

    def _root_added(self, root: Root) -> None:
        if self.watcher is not None:
            self.watcher.watch(root.path)

    def _watch_root(self, watcher: Watcher, root: Root) -> None:
        """Watch a root; one that is not there yet (a workspace not cloned, an extra folder on
        a disk not mounted) is never created by memd: it is watched, and indexed, once it
        appears. The memory folder itself memd creates."""
        if root.path == self.indexer.roots[0].path:
            watcher.watch(root.path)
        else:
            watcher.watch_when_present(root.path, on_present=self._root_appeared)

    def _root_appeared(self, path: Path) -> None:
        rep = self.indexer.index_paths([str(path)])
        log.info("memory folder %s appeared: %d files indexed", path, rep.indexed)

    # -- methods ---------------------------------------------------------------------------
    def context(
        self, p: msg.ContextParams, providers: Sequence[ConversationProvider]
    ) -> msg.ContextResult:
        s = self.host.settings
        budget = s.context_budget_tokens if p.budget_tokens is msg.UNSET else p.budget_tokens
        if not self.ops.enabled():
            return msg.ContextResult(
                enabled=False,
                text="",
                tokens=0,
                budget=budget,
                sections=[],
                dropped=[],
                quotas=msg.TierQuotas(user=0, project=0, conversation=0),
            )
        slug = self.ops.project(p.project, trusted=p.trust_folder).slug if p.project else ""
        req = ContextRequest(
            query=p.query,
            budget_tokens=budget,
            agent_id=p.agent_id,
            project=slug,
            session_id=p.session_id,
            shares=(s.context_user_tokens, s.context_project_tokens, s.context_conversation_tokens),
            relevant_only=p.relevant_only,
            semantic=self.semantic,
            source=p.source,
        )
        out = build_context(self.store.read(), req, providers)
        out.project = slug
        return out

    def remember(self, p: msg.RememberParams) -> msg.RememberResult:
        with self.lock:
            if p.request_id and p.request_id in self._answers:
                return self._answers[p.request_id]  # a retry: the first answer, nothing new
            res = self.ops.remember(
                p.text, scope=p.scope, project=p.project, agent_id=p.agent_id, type_=p.type,
                trusted=p.trust_folder,
            )  # fmt: skip
            if p.request_id:
                self._answers[p.request_id] = res
                while len(self._answers) > REQUEST_IDS:
                    self._answers.popitem(last=False)
        return res

    def edit_item(self, p: msg.EditItemParams) -> msg.EditItemResult:
        def given(v: Any) -> Any:
            return None if v is msg.UNSET else v

        move = p.move_to if isinstance(p.move_to, msg.MoveTo) else None
        change = ItemChange(
            expect_text=given(p.expect_text),
            text=given(p.text),
            importance=given(p.importance),
            pinned=given(p.pinned),
            expires=given(p.expires),
            move_to=(move.path, move.section) if move else None,
        )
        with self.lock:
            return self.ops.edit_item(p.id, change)

    def apply_undo(self, plan: UndoPlan) -> list[str]:
        """Write an undo's files through the door, each only while it holds the text the plan
        was made on (else `UndoConflict`, that file not written); one `undo` change. Returns the
        tree-relative paths written."""
        done: list[str] = []
        with self.files.operation(Cause.UNDO, plan.detail, trailers=plan.trailers) as op:
            for f in plan.files:
                try:
                    self.files.write_if(f.path, f.expected, f.new, op)
                except EditConflict as exc:
                    raise UndoConflict(
                        f"{f.rel} changed after the undo was planned; nothing was written to it",
                        hint="run the undo again",
                    ) from exc
                done.append(f.rel)
        return done

    def forget(self, p: msg.ForgetParams) -> msg.ForgetResult:
        with self.lock:
            return self.ops.forget(id=p.id, query=p.query, confirm=p.confirm)

    def memories(self, p: msg.MemoriesParams) -> msg.MemoriesResult:
        items = self.ops.memories(p.scope, include_superseded=p.all)
        # Paged here, not in the client: a tree of 100,000 items is not sent to show 50.
        end = p.offset + p.limit if p.limit else None
        return msg.MemoriesResult(
            enabled=self.ops.enabled(), items=items[p.offset : end], total=len(items),
            offset=p.offset,
        )  # fmt: skip

    def set_enabled(self, p: msg.SetEnabledParams) -> msg.SetEnabledResult:
        return msg.SetEnabledResult(enabled=self.ops.set_enabled(p.enabled))

    # -- usage counting --------------------------------------------------------------------
    def count_usage(self, method: str, params: msg.Params, call_next: Call) -> msg.Result:
        """Middleware: note the sections an answer returned, for archival's decay by disuse."""
        result: msg.Result = call_next(params)
        if self.store.writer is not None:
            found: Sequence[msg.ContextSection | Hit] = ()
            if isinstance(result, msg.ContextResult):
                found = result.sections
            elif isinstance(result, msg.SearchResult):
                found = result.hits
            self.usage.note([sp for s in found if (sp := _span(s)) is not None])
        return result

    def usage_middleware(self) -> Middleware:
        return Middleware("usage", frozenset({"context", "search"}), self.count_usage)

    # -- status and life cycle -------------------------------------------------------------
    def status_into(self, out: msg.StatusResult) -> None:
        """The memory part of `status`: on or off, the roots, the index and its freshness, the
        watcher and the files with a problem."""
        conn = self.store.read()
        w = self.watcher
        last_event = w.last_event_at if w else 0.0
        last_indexed = self.indexer.last_indexed_at
        # Behind only while an event is not handled yet: one handled that changed nothing to
        # index (a file saved unchanged) moves no index time but is caught up with.
        behind = last_event > last_indexed and not (w and w.handled_at >= last_event)
        out.enabled = self.ops.enabled()
        out.memory_root = str(self.host.settings.memory_dir)
        out.roots = [msg.RootStatus(path=str(r.path), project=r.project_slug)
                     for r in self.indexer.roots]  # fmt: skip
        n = docs.counts(conn)
        out.index = msg.IndexStatus(
            path=str(self.store.path), files=n["files"], sections=n["sections"], items=n["items"],
            problems=n["problems"], last_change_at=last_event or None,
            last_indexed_at=last_indexed or None,
            # Freshness: a change seen by the watcher but not yet applied shows as lag.
            lag_s=round(last_event - last_indexed, 3) if behind else 0.0,
            pending_writes=self.store.writer.pending() if self.store.writer else 0,
        )  # fmt: skip
        out.watcher = msg.WatcherStatus(mode=w.mode if w else "not running")
        out.problems = docs.problems(conn)

    def prepare_tree(self) -> None:
        s = self.host.settings
        if create_tree(s.memory_dir):
            log.info("created the memory tree in %s", s.memory_dir)

    def rejoin_projects(self) -> None:
        """The project folders memd indexed before this start are roots again before the
        watcher starts: a note a person adds there is found at once, not only once the project
        is used. One memd no longer accepts stays out (`Indexer._unrooted` keeps its files in
        line with the disk)."""
        back = [key for key, slug in docs.indexed_roots(self.store.read())
                if slug and self.ops.rejoin(key, slug)]  # fmt: skip
        if back:
            log.info("project memory folders watched again: %d", len(back))

    def catch_up(self) -> None:
        with self.host.progress.task("indexing memory files") as task:
            rep = self.indexer.reconcile(task)
        log.info(
            "index ready: %d indexed, %d unchanged, %d deleted, %d problems in %.2fs",
            rep.indexed, rep.unchanged, rep.deleted, rep.problems, rep.seconds,
        )  # fmt: skip

    def start_history(self) -> None:
        if self.history is not None:
            self.history.start()
            # The first start records the tree as it is: memd's own writes come after that.
            if not self.history.wait(HISTORY_OPEN_S):
                log.warning("history: still opening after %ss; recording goes on", HISTORY_OPEN_S)

    def close_history(self) -> None:
        if self.history is not None:
            self.history.close()

    def on_paths(self, paths: list[str]) -> None:
        """The watcher saw these paths change: memd's own changes an editor wrote an older copy
        over are applied again, the history notes a hand edit, and the index catches up."""
        for p in paths:
            self.files.saved_by_someone(Path(p))
            if self.history is not None:
                self.history.note_hand_edit(p)
        self.indexer.index_paths(paths)

    def _indexed_size(self, path: str) -> int | None:
        row = docs.manifest_of(self.store.read(), [path]).get(path)
        return None if row is None else row[1]

    def start_watching(self) -> None:
        s = self.host.settings
        self.files.watching(True)  # the watcher reports what editors write over memd's changes
        # Armed before the first scan, handing nothing on until `apply_watched` (after it).
        watcher = Watcher(
            self.on_paths,
            accept=_accept_markdown,
            debounce_s=s.index_debounce_ms / 1000,
            name="memory-watcher",
            held=True,
        )
        for r in self.indexer.roots:
            self._watch_root(watcher, r)
        watcher.start()
        self.watcher = watcher
        self.files.resume()  # an editor's older copy saved while memd was down

    def apply_watched(self) -> None:
        """After the first scan: what changed while it ran is read now, and changes from here on
        as they come."""
        if self.watcher is not None:
            self.watcher.release()

    def stop_watching(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
            self.files.watching(False)

    def reload(self, new: Settings) -> None:
        # Parts built from settings at start read them again here; the rest read
        # host.settings on every use.
        self.indexer.max_file_bytes = int(new.index_max_file_mb * (1 << 20))
        self.ops.enabled_default = new.memory_enabled_default
        if self.watcher is not None:
            self.watcher.debounce_s = new.index_debounce_ms / 1000
        self._reload_workspaces(user_roots(new)[1:])

    def _reload_workspaces(self, wanted: list[Root]) -> None:
        """Watch and index workspaces added to `memory.workspaces`; stop indexing removed ones.

        A removed workspace's files stay in the index as they are on disk, as a project's
        folder does after a restart (`Indexer.reconcile`); its folder watch lasts until then
        (events from it no longer belong to any root and are ignored).
        """
        added = [r for r in wanted if r not in self._workspaces]
        gone = [r for r in self._workspaces if r not in wanted]
        self._workspaces = list(wanted)
        if gone:
            self.indexer.roots = [r for r in self.indexer.roots if r not in gone]
        for root in added:
            self.indexer.add_root(root)
            if self.watcher is not None:
                self._watch_root(self.watcher, root)
            rep = self.indexer.index_paths([str(root.path)])
            log.info("workspace %s added: %d files indexed", root.path, rep.indexed)

    def reconcile_now(self) -> None:
        rep = self.indexer.reconcile()
        if rep.indexed or rep.deleted:
            log.info("reconcile: %d indexed, %d deleted", rep.indexed, rep.deleted)
        if self.history is not None:
            self.history.catch_up()  # edits the watcher missed

    def feature(self, providers: Sequence[ConversationProvider] = ()) -> Feature:
        """The memory feature; `providers` add conversation memory to `context`."""

        def context(p: msg.ContextParams) -> msg.ContextResult:
            return self.context(p, providers)

        return Feature(
            "memory",
            methods=[
                Method(
                    msg.CONTEXT,
                    context,
                    runs=_context_runs,
                    why="ranks ~1,000 FTS matches: p50 2-3 ms; a project may index a folder",
                ),
                Method(
                    msg.REMEMBER,
                    self.remember,
                    writes=True,
                    why="edits a file, waits on the writer",
                ),
                Method(
                    msg.FORGET, self.forget, writes=True, why="edits files, waits on the writer"
                ),
                Method(
                    msg.MEMORIES,
                    self.memories,
                    runs="reader",
                    why="lists every item: ms to 100s of ms",
                ),
                Method(msg.SET_ENABLED, self.set_enabled, writes=True, why="waits on the writer"),
                Method(
                    msg.EDIT_ITEM,
                    self.edit_item,
                    writes=True,
                    why="edits files, waits on the writer",
                ),
            ],  # fmt: skip
            jobs=[
                JobSpec("archive", lambda: archival.run_archival(self.job_context()), 86400, 600)
            ],
            status_into=[self.status_into],
            # The history records from before the watcher starts until after it stopped. The
            # watcher is armed before the first scan, so a file written while the scan runs (in
            # a folder already walked) is read after it, not at the next reconcile.
            startup=[
                self.prepare_tree,
                self.rejoin_projects,
                self.start_history,
                self.start_watching,
                self.catch_up,
                self.apply_watched,
            ],
            on_stop=[self.close_history, self.stop_watching, self.usage.flush],
            on_reload=[self.reload],
            periodic=[
                Periodic(
                    "reconcile",
                    lambda: max(5, self.host.settings.index_reconcile_s),
                    self.reconcile_now,
                )
            ],
        )


def _context_runs(p: msg.ContextParams) -> Runs:
    # A `context` naming a project may first have to index that project's folder (waiting
    # on the writer): it goes to the worker pool, not to the query threads.
    return "pool" if p.project else "reader"


def _span(s: msg.ContextSection | Hit) -> archival.Span | None:
    """The lines of a Markdown section a context section or a hit shows (None for a turn, a
    conversation or a session summary: the usage tracker counts sections of files only)."""
    if (s.kind or "section") != "section":  # unset on a Markdown context section
        return None
    if not s.path or isinstance(s.start_line, UnsetType) or isinstance(s.end_line, UnsetType):
        return None
    return (s.path, s.start_line, s.end_line)


def _accept_markdown(path: str) -> bool:
    # Memory files only. Every change inside a folder also raises a "modified" event for the
    # folder: letting it through would rescan the whole folder on each edit. Folders created,
    # moved or deleted are marked by the watcher whatever this says.
    return is_memory_file(os.path.basename(path))
