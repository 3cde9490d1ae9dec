"""The backfill worker: one low-priority thread that keeps the stored vectors in step.

It never runs on a write path. The Markdown indexer and the conversation ingest write as they
did without semantic recall; this thread notices afterwards what they wrote and embeds it:

- **sections** (and the items of sections too long to embed whole, and the memories memd
  wrote in sections holding more than one: `repo.items_to_embed`): whenever the sections
  changed (their count, largest id or the last file indexed moved), the content keys of all
  sections are compared with the stored ones (no text is read for that); missing ones are
  embedded, vectors no section has any more are deleted;
- **turns**: new turns by id; turns whose text (or whose predecessor's) changed from the
  `vector_dirty` queue the triggers fill; at start, every turn without a vector (newest
  first: recent conversations matter more). A queued turn whose passage hash is unchanged
  is not embedded again;
- **the model**: at start, vectors of any other model are dropped, so everything is
  recomputed with the configured one.

Work comes in batches of `batch` texts (one write transaction), embedded shortest first in
calls of at most `CALL_TOKENS` estimated tokens (the engine's buffers grow with the tokens of
a call); a text whose exact words were embedded before (another memory, another turn: the
`text_hash` of every vector is indexed) gets a copy of that vector, and a text that occurs
twice in a batch is embedded once. Between batches the worker re-reads the queues (live turns
go first, then sections, then the backlog of old turns) and stops promptly when asked. On
Linux the thread runs at nice 19, so a busy machine serves its other work first; with the
packaged model the embedding itself runs in a child process at nice 19
(`memd.semantic.worker`), which the worker ends when it has been idle for a minute. On
battery below `jobs.min_battery` it waits. After an embedding error it backs off (30 s
doubling to 10 min) and says why in `status`.

The in-memory matrices (`VectorIndex`) are kept here, never on a request: the rows of newly
embedded documents are appended to them after each batch (nothing is read again); when
documents changed or went (sections re-indexed, a turn edited or forgotten) the kind is
rebuilt from the stored vectors, at most every `refresh_s` and when a queue empties.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memd.api.messages import BackfillProgress
from memd.core.errors import MemdError
from memd.core.text import estimate_tokens
from memd.core.trim import give_memory_back
from memd.db import DatabaseError, Store
from memd.semantic import repo
from memd.semantic.base import Embedder
from memd.semantic.errors import EmbeddingError
from memd.semantic.texts import (
    MAX_CHARS,
    item_key,
    script_of,
    section_key,
    section_passage,
    text_hash,
    turn_passage,
)

if TYPE_CHECKING:
    from memd.semantic.index import Row, VectorIndex  # numpy: the extra

log = logging.getLogger("memd.semantic")
NICE = 19
BACKOFF_S = (30.0, 600.0)
BATTERY_CHECK_S = 60.0
CALL_TOKENS = 2048
"""Estimated tokens embedded per call at most (a text longer than that goes alone): the
engine's activation buffers take ~18 KB per token, so a call stays within ~40 MB. The packaged
model cuts a call further for its engine (`memd.semantic.packaged.CALL_TOKENS`)."""


@dataclass
class Progress:
    """What the worker is doing, for `status` (read from other threads: plain values only)."""

    model: str
    state: str = "starting"  # starting | backfilling | idle | waiting | error | stopped
    done: int = 0
    total: int = 0
    embedded: int = 0  # texts embedded since start
    reused: int = 0  # texts whose vector was copied from an identical text's
    worker_pid: int = 0  # the model's process while it runs (`memd.semantic.worker`)
    seconds: float = 0.0  # wall time spent embedding them
    rate: float = 0.0  # texts per second over the recent batches
    last_batch_at: float = 0.0
    last_error: str = ""
    error_at: float = 0.0
    waiting: str = ""
    retry_at: float = 0.0
    started_at: float = field(default_factory=time.time)

    def snapshot(self) -> BackfillProgress:
        """The figures for `status`: time left only while it can be told, the rest when set."""
        pending = max(0, self.total - self.done)
        out = BackfillProgress(state=self.state, done=self.done, total=self.total,
                               pending=pending, embedded=self.embedded, reused=self.reused,
                               rate_per_s=round(self.rate, 2))  # fmt: skip
        if pending and self.rate > 0:
            out.eta_s = round(pending / self.rate)
        if self.worker_pid:
            out.worker_pid = self.worker_pid
        if self.last_error:
            out.last_error = self.last_error
            out.error_at = self.error_at
        if self.waiting:
            out.waiting = self.waiting
        if self.retry_at:
            out.retry_at = self.retry_at
        return out


Place = tuple[int, tuple[str, ...], str]
"""Where a vector goes in the in-memory index: the document, its scope columns, the item."""


@dataclass(slots=True)
class _Task:
    kind: str
    key: str
    text: str
    script: str
    hash: str  # text_hash(text)
    places: tuple[Place, ...] = ()
    # No vector of this key is in the index: its rows can be appended (else it is rebuilt).
    fresh: bool = True


class Backfill:
    """Embeds what the index holds and the vector table lacks, in the background."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        index: VectorIndex | None = None,
        *,
        batch: int = 16,
        poll_s: float = 2.0,
        refresh_s: float = 5.0,
        defer: Callable[[], str] = lambda: "",
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.model = embedder.model_id
        self.index = index
        self.batch = max(1, batch)
        self.poll_s = poll_s
        self.refresh_s = refresh_s
        self.defer = defer
        self.progress = Progress(self.model)
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        # Queues: turns seen live (new or changed) go first, then sections and items, then
        # the backlog of turns found without a vector at start.
        self._live: deque[int] = deque()
        self._backlog: deque[int] = deque()
        self._sections: deque[tuple[str, int]] = deque()
        self._items: deque[tuple[str, str]] = deque()
        self._dirty: dict[str, int] = {}  # queued changed turns → their change count
        self._skipped: set[str] = set()  # section keys with nothing to embed
        # Of the queued sections and items: the sections each one's vector goes to, with
        # their file's kind and owner, and the script of each section embedded so far.
        self._section_places: dict[str, list[tuple[int, str, str]]] = {}
        self._item_places: dict[str, list[int]] = {}
        self._where: dict[int, tuple[str, str]] = {}
        self._section_script: dict[int, str] = {}
        self._worked = False
        self._turn_mark = 0
        self._section_sig: tuple[int, int, float] | None = None
        self._data_version: int | None = None
        self._stale: set[str] = set()  # index kinds to rebuild
        self._refreshed_at = 0.0
        self._totals = {repo.SECTION: 0, repo.ITEM: 0, repo.TURN: 0}
        self._battery_at = 0.0
        self._failures = 0
        self._begun = False

    # -- life cycle ------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="memd-semantic", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Ask the worker to stop after its current batch and wait for it."""
        self._stop.set()
        self._wake.set()
        close = getattr(self.embedder, "close", None)
        if close is not None:
            close()  # a batch under way fails at once: the thread sees the stop
        if self._thread is not None:
            self._thread.join(timeout)

    def wake(self) -> None:
        """Look for work now rather than at the next poll."""
        self._wake.set()

    def _run(self) -> None:
        _lower_priority()
        try:
            while not self._stop.is_set():
                if self._wait_for_conditions():
                    continue
                try:
                    if not self._begun:
                        self.begin()
                    worked = self.step()
                except EmbeddingError as exc:
                    if self._stop.is_set():
                        break  # stopping ended the model's process under the batch
                    self._fail(exc)
                    continue
                except (MemdError, DatabaseError) as exc:
                    log.error("semantic backfill: %s", exc)
                    self._fail(exc)
                    continue
                if not worked:
                    self._rest()
                    self._wake.wait(self.poll_s)
                    self._wake.clear()
        except Exception:  # a bug here must not take the daemon down: log it and stop
            log.exception("semantic backfill stopped")
            self.progress.state = "error"
        else:
            self.progress.state = "stopped"

    def _rest(self) -> None:
        """Nothing to do: give memory back once, and end the model's process when it has been
        idle long enough (`WorkerEmbedder.idle`)."""
        self.progress.state = "idle"
        if self._worked:
            self._worked = False
            _release_memory()
        idle = getattr(self.embedder, "idle", None)
        if idle is not None:
            idle()
        self.progress.worker_pid = getattr(self.embedder, "pid", None) or 0

    def _wait_for_conditions(self) -> bool:
        now = time.time()
        if self.progress.retry_at > now:
            self._stop.wait(min(self.progress.retry_at - now, 5.0))
            return True
        if now - self._battery_at >= BATTERY_CHECK_S or self.progress.waiting:
            self._battery_at = now
            why = self.defer()
            if why:
                self.progress.waiting = why
                self.progress.state = "waiting"
                self._stop.wait(BATTERY_CHECK_S)
                return True
            self.progress.waiting = ""
        return False

    def _fail(self, exc: Exception) -> None:
        self._failures += 1
        wait = min(BACKOFF_S[1], BACKOFF_S[0] * 2 ** (self._failures - 1))
        self.progress.state = "error"
        self.progress.last_error = str(exc)
        self.progress.error_at = time.time()
        self.progress.retry_at = time.time() + wait
        self._begun = False  # what was taken off the queues is found again by `begin`
        log.warning("semantic backfill: %s (next try in %.0f s)", exc, wait)

    # -- one round -------------------------------------------------------------------------
    def begin(self) -> None:
        """Drop other models' vectors and queue every turn without a vector (newest first);
        sections and changed turns are looked at by the next `step`."""
        dropped = self.store.w.run(lambda c: repo.drop_other_models(c, self.model))
        if dropped:
            log.info("semantic: dropped %d vectors of another model; recomputing with %s",
                     dropped, self.model)  # fmt: skip
        conn = self.store.read()
        last = repo.last_turn_id(conn)
        self._backlog = deque(reversed(repo.turns_without_vectors(conn, self.model, last)))
        self._turn_mark = last
        self._totals[repo.TURN] = repo.turn_count(conn)
        self._live.clear()
        self._sections.clear()
        self._items.clear()
        self._dirty.clear()
        self._data_version = None
        self._section_sig = None
        self._stale.update((repo.SECTION, repo.TURN))
        self._begun = True

    def step(self, max_batches: int = 8) -> bool:
        """Look for changes, then embed up to `max_batches` batches; False when idle."""
        self._look()
        worked = False
        for _ in range(max_batches):
            if self._stop.is_set():
                break
            tasks = self._next_batch()
            if not tasks:
                break
            self._embed_and_store(tasks)
            self._update_progress()
            worked = True
        self._update_progress()
        if not self._sections and not self._items and self._section_script:
            # What placed the queued sections' and items' vectors: not needed until the next plan.
            self._section_script, self._where, self._item_places = {}, {}, {}
        pending = bool(self._live or self._sections or self._items or self._backlog)
        if self._stale and (not pending or time.monotonic() - self._refreshed_at >= self.refresh_s):
            self._refresh()
        if worked:
            self._failures = 0
            self.progress.retry_at = 0.0
            self.progress.state = "backfilling" if pending else "idle"
        return worked

    def run_until_idle(self, timeout: float = 600.0) -> None:
        """Work in this thread until nothing is left (tests, benchmarks)."""
        end = time.monotonic() + timeout
        if not self._begun:
            self.begin()
        while self.step() and time.monotonic() < end:
            pass
        self._refresh()

    def _look(self) -> None:
        conn = self.store.read()
        version = repo.data_version(conn)
        if version == self._data_version:
            return
        self._data_version = version
        last = repo.last_turn_id(conn)
        added = repo.turn_ids_between(conn, self._turn_mark, last) if last > self._turn_mark else []
        self._live.extend(added)
        self._turn_mark = max(self._turn_mark, last)
        count = repo.turn_count(conn)
        if count < self._totals[repo.TURN] + len(added):
            # Turns were deleted (forgotten): their vectors went with them, the matrix follows.
            self._stale.add(repo.TURN)
        self._totals[repo.TURN] = count
        dirty = {k: n for k, n in repo.dirty(conn, repo.TURN).items() if k not in self._dirty}
        if dirty:
            self._dirty.update(dirty)
            self._live.extendleft(int(k) for k in dirty)
        sig = repo.section_signature(conn)
        if sig != self._section_sig:
            self._section_sig = sig
            self._plan_sections()

    def _plan_sections(self) -> None:
        conn = self.store.read()
        rows = repo.section_keys(conn)
        stored = repo.keys(conn, repo.SECTION, self.model)
        want: dict[str, int] = {}
        places: dict[str, list[tuple[int, str, str]]] = {}
        where: dict[int, tuple[str, str]] = {}
        for r in rows:
            key = section_key(r.stem, r.heading, r.sha256)
            want.setdefault(key, r.id)
            where[r.id] = (r.kind, r.owner)
            if key not in stored:
                places.setdefault(key, []).append((r.id, r.kind, r.owner))
        self._sections = deque((k, sid) for k, sid in want.items()
                               if k not in stored and k not in self._skipped)  # fmt: skip
        self._section_places = places
        items = repo.items_to_embed(conn, MAX_CHARS)
        item_want = {item_key(it.text): it.text for it in items if it.text.strip()}
        stored_items = repo.keys(conn, repo.ITEM, self.model)
        self._items = deque((k, t) for k, t in item_want.items() if k not in stored_items)
        self._item_places = {}
        for it in items:
            k = item_key(it.text)
            if k in item_want and k not in stored_items:
                self._item_places.setdefault(k, []).append(it.section_id)
        self._where = {sid: where[sid] for ids in self._item_places.values() for sid in ids
                       if sid in where}  # fmt: skip
        gone = [k for k in stored if k not in want]
        gone_items = [k for k in stored_items if k not in item_want]
        if gone or gone_items:

            def forget(c: Any) -> None:
                repo.delete(c, repo.SECTION, self.model, gone)
                repo.delete(c, repo.ITEM, self.model, gone_items)

            self.store.w.run(forget)
        self._totals[repo.SECTION] = len(set(want) - self._skipped)
        self._totals[repo.ITEM] = len(item_want)
        self._stale.add(repo.SECTION)

    # -- batches ---------------------------------------------------------------------------
    def _next_batch(self) -> list[_Task]:
        tasks: list[_Task] = []
        while len(tasks) < self.batch:
            if self._live:
                tasks += self._turn_tasks(self._live, self.batch - len(tasks), recheck=True)
            elif self._sections:
                tasks += self._section_tasks(self.batch - len(tasks))
            elif self._items:
                while self._items and len(tasks) < self.batch:
                    tasks.append(self._item_task(*self._items.popleft()))
            elif self._backlog:
                tasks += self._turn_tasks(self._backlog, self.batch - len(tasks), recheck=False)
            else:
                break
        return tasks

    def _section_tasks(self, n: int) -> list[_Task]:
        picked = [self._sections.popleft() for _ in range(min(n, len(self._sections)))]
        texts = {s.id: s for s in repo.section_texts(self.store.read(), [sid for _, sid in picked])}
        out = []
        for key, sid in picked:
            s = texts.get(sid)
            if s is None:
                continue  # re-indexed meanwhile: the next look queues it again by its new id
            passage = section_passage(s.stem, s.heading, s.text)
            if not passage:
                self._skipped.add(key)
                self._totals[repo.SECTION] -= 1
                continue
            script = script_of(s.text)
            places = self._section_places.pop(key, None)
            for doc, _, _ in places or ():
                self._section_script[doc] = script
            out.append(_Task(repo.SECTION, key, passage, script, text_hash(passage),
                             tuple((doc, (kind, owner, script), "") for doc, kind, owner in places or ()),
                             fresh=places is not None))  # fmt: skip
        return out

    def _item_task(self, key: str, text: str) -> _Task:
        script = script_of(text)
        places = []
        for sid in self._item_places.pop(key, []):
            if sid in self._where:
                values = (*self._where[sid], self._section_script.get(sid, script))
                places.append((sid, values, text))
        return _Task(repo.ITEM, key, text, script, text_hash(text), tuple(places))

    def _turn_tasks(self, queue: deque[int], n: int, *, recheck: bool) -> list[_Task]:
        ids = [queue.popleft() for _ in range(min(n, len(queue)))]
        conn = self.store.read()
        rows = repo.turn_passages(conn, ids)
        found = {r.id for r in rows}
        gone = [str(i) for i in ids if i not in found]
        known = (
            repo.hashes_of(conn, repo.TURN, self.model, [str(i) for i in ids]) if recheck else {}
        )
        out = []
        for r in rows:
            passage = turn_passage(r.label, r.text, r.prev_label, r.prev_text)
            h = text_hash(passage)
            if known.get(str(r.id)) == h:
                self._done_dirty([str(r.id)])
                continue
            script = script_of(r.text)
            place = (r.id, (r.session_id, r.project, r.agent_id, script), "")
            out.append(_Task(repo.TURN, str(r.id), passage, script, h, (place,),
                             fresh=str(r.id) not in known))  # fmt: skip
        if gone:
            self.store.w.run(lambda c: repo.delete(c, repo.TURN, self.model, gone))
            self._done_dirty(gone)
        return out

    def _done_dirty(self, keys: list[str]) -> None:
        done = [(k, self._dirty.pop(k)) for k in keys if k in self._dirty]
        if done:
            self.store.w.run(lambda c: repo.clear_dirty(c, repo.TURN, done))

    def _embed_and_store(self, tasks: list[_Task]) -> None:
        from memd.semantic.vectors import encode  # numpy: an embedder means the extra

        t0 = time.perf_counter()
        have = repo.vectors_by_hash(self.store.read(), self.model, [t.hash for t in tasks])
        texts = sorted({t.text for t in tasks if t.hash not in have}, key=len)
        blobs: dict[str, bytes] = {}
        dim = 0
        for call in _calls(texts):
            matrix = self.embedder.embed(call, kind="passage")
            dim = int(matrix.shape[1])
            blobs.update(zip(call, encode(matrix), strict=True))
        dt = time.perf_counter() - t0
        by_kind: dict[str, list[repo.VectorRow]] = {}
        rows: dict[str, list[Row]] = {}
        for t in tasks:
            d, vec = (dim, blobs[t.text]) if t.text in blobs else have[t.hash]
            by_kind.setdefault(t.kind, []).append(repo.VectorRow(t.key, t.hash, t.script, d, vec))
            kind = repo.SECTION if t.kind == repo.ITEM else t.kind
            if t.fresh:
                rows.setdefault(kind, []).extend(_rows(t, vec))
            else:
                self._stale.add(kind)
        dirty = [(t.key, self._dirty.pop(t.key)) for t in tasks
                 if t.kind == repo.TURN and t.key in self._dirty]  # fmt: skip

        def write(c: Any) -> None:
            for kind, vrows in by_kind.items():
                repo.put(c, kind, self.model, vrows)
            if dirty:
                repo.clear_dirty(c, repo.TURN, dirty)

        self.store.w.run(write)
        if self.index is not None:
            for kind, add in rows.items():
                self.index.append(kind, add)
        p = self.progress
        p.embedded += len(texts)
        p.reused += len(tasks) - len(texts)
        p.seconds += dt
        now = time.time()
        inst = len(tasks) / dt if dt > 0 else 0.0
        p.rate = inst if p.rate == 0 else 0.8 * p.rate + 0.2 * inst
        p.last_batch_at = now
        p.state = "backfilling"
        p.worker_pid = getattr(self.embedder, "pid", None) or 0
        self._worked = True

    def _update_progress(self) -> None:
        pending = len(self._live) + len(self._sections) + len(self._items) + len(self._backlog)
        total = sum(self._totals.values())
        self.progress.total = total
        self.progress.done = max(0, total - pending)

    def _refresh(self) -> None:
        if self.index is not None:
            for kind in sorted(self._stale):
                self.index.refresh(kind)
        self._stale.clear()
        self._refreshed_at = time.monotonic()


def _calls(texts: list[str]) -> list[list[str]]:
    """`texts` (shortest first) in calls of at most `CALL_TOKENS` estimated tokens each."""
    calls: list[list[str]] = []
    used = CALL_TOKENS
    for text in texts:
        n = estimate_tokens(text)
        if used + n > CALL_TOKENS:
            calls.append([])
            used = 0
        calls[-1].append(text)
        used += n
    return calls


def _rows(t: _Task, vec: bytes) -> list[Row]:
    from memd.semantic.index import Row  # numpy: an embedder means the extra

    return [Row(doc, vec, values, item) for doc, values, item in t.places]


def _release_memory() -> None:
    """Give what the batches freed back to the system once the work is done: glibc keeps
    what a thread freed in that thread's arena (docs/retrieval.md)."""
    give_memory_back(collect=False)


def _lower_priority() -> None:
    """Nice 19 for this thread (Linux threads have their own nice value; elsewhere it would
    apply to the whole process, so nothing is changed there)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)
