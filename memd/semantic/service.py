"""What memory and conversations ask of recall by meaning, on the request path.

`SemanticRecall` plans a query (`memd.semantic.recipe.plan`: the query as typed, its bridge
into the other language, its vector), ranks the stored vectors of a scope by cosine, and
fuses the rankings (`memd.semantic.recipe.fuse`). Until it is `ready` (the extra missing,
semantic recall off, the model still loading) `plan` returns None and callers keep their
full-text path exactly as it was.

Failures never fail a request: a query that cannot be embedded (an HTTP endpoint that is
slow, down or answers vectors of the wrong length) ranks by full text alone, the reason is
kept for `status`, and vector search pauses for `PAUSE_S` so the next requests do not wait
on the same timeout. With `wait_s`, queries are embedded on the embedding thread only and a
request waits at most `wait_s` for its vector, counted from when it asked: however the model
or the endpoint stalls, no query thread is held longer. A vector later than that is a failure
of an endpoint on the network (it pauses vector search); from the packaged model on a busy
machine it is only late (`late_pauses` False): the request answers by full text, as typed
and bridged, and the vector, finished on the embedding thread, waits in the query cache for
the next time the query is asked.

This module imports neither numpy nor the model; `memd.semantic.index` (numpy) is imported
by whoever builds the index.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from memd.api.messages import IndexUpdates, QueryCache, SemanticStatus, VectorIndexFigures
from memd.semantic.base import Embedder
from memd.semantic.bridge import Dictionary
from memd.semantic.errors import EmbeddingError
from memd.semantic.fusion import ListFusion, Ranked, Script, dominant_script
from memd.semantic.recipe import (
    DEPTH,
    FTS_BRIDGED,
    VECTOR,
    Plan,
    Weights,
    bridge_too_far,
    close_enough,
    common_too_far,
    fuse,
    plan,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from memd.semantic.index import Snapshot, VectorIndex

log = logging.getLogger("memd.semantic")
K = TypeVar("K", int, str)
MAX_INFLIGHT = 64
PAUSE_S = 30.0
"""Vector search rests this long after a query could not be embedded."""
CLOSE_Z = 4.0
"""A turn or section found by its vector alone joins `context` only when its cosine stands at
least this many standard deviations above the mean cosine of the scope's documents in its
script, and only in the query's script. multilingual-e5-small's cosines are not calibrated
(unrelated texts of one language score 0.75-0.85, Chinese ones higher than English ones), a
z-score within the scope is: on LoCoMo, 234 of 760 questions get such a turn from their own
conversation, and 4% of them from another conversation (docs/retrieval.md)."""


@dataclass(slots=True)
class _Asked:
    """A query vector being computed on the embedding thread: since when, and whether a
    request already gave up waiting for it."""

    future: Future[Any]
    at: float
    late: bool = False


@dataclass(frozen=True, slots=True)
class VectorHits:
    """A vector ranking of one scope: document ids best first, with their cosines."""

    docs: list[int]
    cosines: list[float]
    scripts: Mapping[int, Script]
    z: list[float] = dataclasses.field(default_factory=list)
    # A section whose best vector is one of its items' (a memory in a section of many):
    # that item's text, which is what the query came close to.
    items: Mapping[int, str] = dataclasses.field(default_factory=dict)

    def ranked(self) -> Ranked[int]:
        return Ranked(self.docs, self.cosines)


NO_HITS = VectorHits([], [], {})


class SemanticRecall:
    """Query planning, vector rankings and fusion; ready once the embedder and index are set."""

    def __init__(self, reason: str = "not started") -> None:
        self.embedder: Embedder | None = None
        self.index: VectorIndex | None = None
        self.dictionary: Dictionary | None = None
        self.reason = reason
        self.last_error = ""
        self.error_at = 0.0
        self.errors = 0
        self.paused_until = 0.0
        # The longest a request waits for its query vector (None: until it is there), and
        # whether a vector later than that pauses vector search (`attach`).
        self.wait_s: float | None = None
        self.late_pauses = True
        self.late = 0  # vectors a request gave up waiting for, without pausing
        self.starter: Callable[[], None] | None = None  # builds everything on first use
        # Without a daemon (the CLI reading the index) nobody builds the matrices in the
        # background: the first search builds the one it needs.
        self.standalone = False
        self._start_lock = threading.Lock()
        self._inflight: dict[str, _Asked] = {}
        self._inflight_lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    # -- state -----------------------------------------------------------------------------
    def attach(
        self,
        embedder: Embedder,
        index: VectorIndex,
        reason: str,
        *,
        wait_s: float | None = None,
        late_pauses: bool = True,
    ) -> None:
        """Make recall by meaning available with this query embedder and index; `wait_s`: the
        longest a request waits for its query vector, from when it asked; `late_pauses`:
        whether a later vector is a failure that pauses vector search for `PAUSE_S`."""
        self.index = index
        self.reason = reason
        self.wait_s = wait_s
        self.late_pauses = late_pauses
        self.embedder = embedder

    @property
    def ready(self) -> bool:
        return self.embedder is not None and self.index is not None

    def _start(self) -> None:
        if self.starter is None or self.ready:
            return
        with self._start_lock:
            starter, self.starter = self.starter, None
            if starter is not None:
                starter()

    def status(self) -> SemanticStatus:
        """The query side's part of `status`."""
        out = SemanticStatus(on=self.ready, reason=self.reason)
        out.dictionary = "loaded" if self.dictionary is not None else "not loaded"
        cache = self.embedder
        if cache is not None and hasattr(cache, "hits"):
            out.query_cache = QueryCache(hits=cache.hits, misses=getattr(cache, "misses", 0))
        if self.late:
            out.query_late = self.late
        if self.index is not None:
            out.index = {
                kind: VectorIndexFigures(
                    rows=s.rows,
                    generation=s.generation,
                    build_s=round(s.build_s, 3),
                    mb=round(s.nbytes / (1 << 20), 1),
                )  # fmt: skip
                for kind in ("section", "turn")
                if (s := self.index.snapshot(kind)) is not None
            }
            out.index_updates = IndexUpdates(
                rebuilds=self.index.rebuilds, appends=self.index.appends
            )
        if self.last_error:
            out.query_error = self.last_error
            out.query_error_at = self.error_at
            out.query_errors = self.errors
            if self.paused_until > time.time():
                out.paused_until = self.paused_until
        return out

    # -- the request path ------------------------------------------------------------------
    def plan(self, query: str) -> Plan | None:
        """The rankings to run for `query`, or None when recall by meaning is not available."""
        self._start()
        if not self.ready or not query.strip():
            return None
        return plan(query, self.dictionary)

    def prefetch(self, p: Plan) -> None:
        """Start embedding the query in the background (it runs while full-text search does:
        the engine releases the GIL). One thread embeds for every request: the model runs
        one call at a time anyway, and its thread pool is kept warm."""
        emb = self.embedder
        if emb is None or time.time() < self.paused_until:
            return
        if self._in_cache(p.embed):
            return  # `query_vector` reads it on the caller's thread: no hand-off, no wait
        with self._inflight_lock:
            if p.embed in self._inflight:
                return
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="memd-embed-query")
            if len(self._inflight) >= MAX_INFLIGHT:
                # Vectors nobody came for (the request needed none): the cache holds them.
                for text in [t for t, a in self._inflight.items() if a.future.done()]:
                    del self._inflight[text]
            fut = self._pool.submit(lambda: emb.embed([p.embed], kind="query")[0])
            self._inflight[p.embed] = _Asked(fut, time.monotonic())

    def query_vector(self, p: Plan) -> npt.NDArray[np.float32] | None:
        """The query's vector (cached), or None when it cannot be had now (reason kept)."""
        emb = self.embedder
        if emb is None or time.time() < self.paused_until:
            return None
        # A vector in the cache is read on this thread, even while the call that stored it has
        # not returned yet (its future not done): waiting for that future would answer late.
        in_cache = self._in_cache(p.embed)
        with self._inflight_lock:
            asked = None if in_cache else self._inflight.get(p.embed)
        if asked is None and not in_cache and self.wait_s is not None:
            self.prefetch(p)  # on the embedding thread, waited for below at most `wait_s`
            with self._inflight_lock:
                asked = self._inflight.get(p.embed)
            if asked is None and not self._in_cache(p.embed):
                return None  # paused meanwhile: never embedded on this thread
        try:
            if asked is not None:
                return self._wait(p, asked)
            vec: npt.NDArray[np.float32] = emb.embed([p.embed], kind="query")[0]
        except EmbeddingError as exc:
            self._failed(f"embedding the query failed: {exc}")
            return None
        return vec

    def _wait(self, p: Plan, asked: _Asked) -> npt.NDArray[np.float32] | None:
        left = None if self.wait_s is None else max(0.0, asked.at + self.wait_s - time.monotonic())
        try:
            vec: npt.NDArray[np.float32] = asked.future.result(left)
            return vec
        except FutureTimeout:
            if self.embedder is not None and self._in_cache(p.embed):
                # Stored while we waited, its call not returned yet: the cache answers.
                cache_hit: npt.NDArray[np.float32] = self.embedder.embed([p.embed], kind="query")[0]
                return cache_hit
            if not self.late_pauses:
                # Left to finish on the embedding thread: the query cache keeps the vector
                # for the next time this query is asked.
                self.late += not asked.late
                asked.late = True
                return None
            asked.future.cancel()  # not started yet: it never will be
            self._failed(f"timed out: the query was not embedded within {self.wait_s:g}s")
            return None
        finally:
            if asked.future.done():  # its vector is in the cache (or it failed): ask afresh
                with self._inflight_lock:
                    if self._inflight.get(p.embed) is asked:
                        del self._inflight[p.embed]

    def _in_cache(self, text: str) -> bool:
        """Whether the query cache in front of the model (when there is one) holds `text`'s
        vector."""
        has = getattr(self.embedder, "has", None)
        return has is not None and bool(has(text))

    def _failed(self, why: str) -> None:
        self.last_error = why
        self.error_at = time.time()
        self.errors += 1
        self.paused_until = time.time() + PAUSE_S
        log.warning("semantic: %s; full-text search only for %.0f s", why, PAUSE_S)

    def _search(
        self,
        kind: str,
        p: Plan,
        k: int,
        scope: tuple[Any, ...],
        mask_of: Callable[[Snapshot], Any],
        z: bool,
    ) -> VectorHits:
        if self.index is None:
            return NO_HITS
        snap = self.index.snapshot(kind)
        if snap is None and self.standalone:
            snap = self.index.ensure(kind)
        if snap is None or snap.rows == 0:
            return NO_HITS
        vec = self.query_vector(p)
        if vec is None:
            return NO_HITS
        if vec.shape != (snap.dim,):
            self._failed(
                f"the query vector has {vec.shape[-1]} dimensions, the stored ones {snap.dim}"
            )
            return NO_HITS
        mask = snap.mask(scope, mask_of) if scope else None
        zs: list[float] | None = [] if z else None
        items: dict[int, str] = {}
        docs, cos = snap.top(vec, k, mask, zs, items)
        return VectorHits(docs, cos, snap.scripts, zs or [], items)

    def sections(
        self,
        p: Plan,
        *,
        kinds: Sequence[str] = (),
        exclude_kinds: Sequence[str] = (),
        owner: str | None = None,
        agent_id: str | None = None,
        k: int = DEPTH,
        z: bool = False,
    ) -> VectorHits:
        """Sections nearest to the query, among those of `kinds` (all when empty), not of
        `exclude_kinds`, of `owner` when given; with `agent_id`, agent files only of that
        agent. With `z`, each hit's z-score too (`is_close`)."""

        def mask(s: Snapshot) -> Any:
            m = s.where("kind", kinds) if kinds else s.everything()
            if exclude_kinds:
                m &= ~s.where("kind", exclude_kinds)
            if owner is not None:
                m &= s.where("owner", [owner])
            if agent_id is not None:
                m &= ~s.where("kind", ["agent"]) | s.where("owner", [agent_id])
            return m

        scoped = bool(kinds or exclude_kinds) or owner is not None or agent_id is not None
        scope = (tuple(kinds), tuple(exclude_kinds), owner, agent_id) if scoped else ()
        return self._search("section", p, k, scope, mask, z)

    def turns(
        self,
        p: Plan,
        *,
        session_id: str = "",
        project: str = "",
        agent_id: str = "",
        exclude_session: str = "",
        k: int = DEPTH,
        z: bool = False,
        source: str = "",
    ) -> VectorHits:
        """Turns nearest to the query, with the same filters as full-text turn search."""
        wanted = (("session", session_id), ("project", project), ("agent", agent_id),
                  ("source", source))  # fmt: skip

        def mask(s: Snapshot) -> Any:
            m = s.everything()
            for col, val in wanted:
                if val:
                    m &= s.where(col, [val])
            if exclude_session:
                m &= ~s.where("session", [exclude_session])
            return m

        scope = (session_id, project, agent_id, exclude_session, source)
        return self._search("turn", p, k, scope if any(scope) else (), mask, z)

    @staticmethod
    def is_close(p: Plan, z: float | None, script: Script) -> bool:
        """Whether a document found by its vector alone (with this z-score and script) is
        close enough in meaning to the query to be put into a context block (`CLOSE_Z`)."""
        return z is not None and z >= CLOSE_Z and script == p.script

    @staticmethod
    def kept(
        p: Plan,
        found_by: Sequence[str],
        cosine: float | None,
        script: Script,
        supported: bool = False,
        common: bool = False,
    ) -> bool:
        """Whether a hit of `search` or `recall` is shown: one the query as typed found always,
        one found through its bridge alone unless its cosine is known and below
        `memd.semantic.recipe.BRIDGED_ONLY_SD` (`bridge_too_far`), one found by its vector
        alone when its cosine reaches the calibrated floor for the query's script and its own
        (`memd.semantic.recipe.close_enough`; a lower one when full text found its session or
        file: `supported`). With `common` (full text found this query's documents only by
        common words: `memd.semantic.recipe.all_on_common`) one full text found only when its
        cosine, where known, reaches `memd.semantic.recipe.COMMON_SD` (`common_too_far`).
        `cosine` may be an upper bound: the last cosine of the vector list, for a document the
        list did not reach."""
        if common and cosine is not None and common_too_far(p.script, script, cosine):
            return False
        if any(name not in (VECTOR, FTS_BRIDGED) for name in found_by):
            return True
        if FTS_BRIDGED in found_by:
            return cosine is None or not bridge_too_far(p.script, script, cosine)
        return cosine is not None and close_enough(p.script, script, cosine, supported)

    @staticmethod
    def scripts(found: VectorHits, texts: Mapping[K, str], keys: Iterable[K]) -> dict[K, Script]:
        """The dominant script of every document in the lists: stored with its vector, else
        read from its text."""
        keys = list(keys)
        many = getattr(found.scripts, "of", None)  # a snapshot's: one search for all of them
        ints = [int(k) for k in keys if isinstance(k, int)]
        stored: Mapping[int, Script | None] = (
            many(ints) if many is not None else {k: found.scripts.get(k) for k in ints}
        )
        out: dict[K, Script] = {}
        for key in keys:
            s = stored.get(int(key)) if isinstance(key, int) else None
            out[key] = s if s is not None else dominant_script(texts.get(key, ""))
        return out

    @staticmethod
    def fuse(
        p: Plan,
        lists: Mapping[str, Ranked[K]],
        scripts: Mapping[K, Script],
        limit: int | None,
        weights: Weights | None = None,
        text_of: Callable[[K], str] | None = None,
    ) -> ListFusion[K]:
        """The recipe's fusion of the lists (`memd.semantic.recipe.fuse`)."""
        return fuse(p, lists, scripts, limit=limit, weights=weights, text_of=text_of)


def monotone(scores: Sequence[float]) -> list[float]:
    """Scores made non-increasing down the list, so a list whose order is not by score alone
    (all-terms matches first) keeps its order when its scores are normalised."""
    out: list[float] = []
    for s in scores:
        out.append(min(s, out[-1]) if out else s)
    return out
