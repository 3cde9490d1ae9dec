"""Recall by meaning as the daemon runs it: the embedders, the vector index, the backfill.

The composition root builds one `SemanticFeature` and hands its `recall` (a
`memd.semantic.service.SemanticRecall`) to memory and conversations, which fuse its rankings
into `search`, `recall` and `context`. In the daemon, everything heavy happens after the
socket is open, in one background thread: the model is loaded, the stored vectors are read
into the index, the dictionary for bridging Chinese and English is loaded, then the backfill
worker starts. Requests that come earlier are answered by full text alone, as without the
extra. Without a daemon (the CLI reading the index), the first query builds what it needs.

`semantic.kind = "auto"` (the default) turns recall by meaning on when the ``semantic`` extra
is installed: installing it is the opt-in. Without it nothing here imports numpy or the
model, and `search`, `recall` and `context` run exactly their full-text path.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sys
import threading
import time

from memd.api.messages import SemanticStatus, StatusResult
from memd.api.methods import Feature, Host
from memd.core.conditions import defer_reason, probe_system
from memd.core.settings import Settings
from memd.core.trim import give_memory_back
from memd.db import DatabaseError, Store
from memd.semantic import repo
from memd.semantic.backfill import Backfill
from memd.semantic.base import Embedder
from memd.semantic.errors import ExtraNotInstalled
from memd.semantic.factory import Availability, build_embedder
from memd.semantic.service import SemanticRecall

log = logging.getLogger("memd.semantic")
QUERY_CACHE = 512


def prepare_process() -> None:
    """Thread settings numpy's BLAS and the model's OpenMP read once, when first loaded: one
    BLAS thread (a 25,000-row cosine search is fastest on one, and the daemon's query threads
    run several at once) and OpenMP threads that sleep rather than spin between calls."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    if "numpy" in sys.modules:
        log.debug("semantic: numpy was imported before its thread settings were made")


def build(s: Settings, *, query: bool) -> Availability:
    """The embedder the settings ask for: for queries (cached, no retry, and over HTTP done
    within `semantic.query_timeout_s` in all: a request falls back to full text rather than
    wait) or for the backfill (patient)."""
    prepare_process()
    return build_embedder(
        s.semantic_kind,
        model=s.semantic_model,
        url=s.semantic_url,
        api_key_env=s.semantic_api_key_env,
        threads=s.semantic_threads,
        dim=s.semantic_dim,
        timeout_s=s.semantic_query_timeout_s if query else s.semantic_timeout_s,
        retries=0 if query else 3,
        deadline_s=s.semantic_query_timeout_s if query else 0.0,
        query_prefix=s.semantic_query_prefix,
        passage_prefix=s.semantic_passage_prefix,
        cache_size=QUERY_CACHE,
    )


def battery_defer(min_battery: int) -> str:
    """Why the backfill should wait: on battery below `min_battery` percent. (Unlike the LLM
    jobs it does not wait for a busy machine: it runs at the lowest priority already.)"""
    state = probe_system()
    return defer_reason(dataclasses.replace(state, load_1m=0.0), min_battery)


def query_wait(s: Settings, *, standalone: bool) -> tuple[float | None, bool]:
    """How long a request waits for its query's vector (None: until it is there), and whether a
    later one is a failure that pauses vector search (`SemanticRecall.attach`).

    From an endpoint on the network a vector later than `semantic.query_timeout_s` is a
    failure. From the packaged model (~20 ms of CPU for a short query, ~90 ms for 64 tokens,
    more on a busy machine) one later than `semantic.query_wait_ms` is only late: the answer
    goes out by full text and the vector serves the next ask. Without a daemon (one CLI call,
    whose model has just loaded) the answer waits for it.
    """
    if s.semantic_kind == "http":
        return s.semantic_query_timeout_s, True
    ms = s.semantic_query_wait_ms
    return (ms / 1000 if ms and not standalone else None), False


class SemanticFeature:
    """The embedders, the in-memory vector index and the backfill worker of one engine."""

    def __init__(self, host: Host, store: Store) -> None:
        self.host = host
        self.store = store
        self.recall = SemanticRecall()
        self.recall.starter = self._start_standalone
        self.recall.standalone = True
        self.backfill: Backfill | None = None
        self.model = ""
        self.dictionary_state = "not loaded"
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()

    # -- starting --------------------------------------------------------------------------
    def _attach(self, query: Availability) -> bool:
        if query.embedder is None:
            self.recall.reason = query.reason
            return False
        from memd.semantic.index import VectorIndex  # numpy: the extra is there

        self.model = query.embedder.model_id
        s = self.host.settings
        wait, pauses = query_wait(s, standalone=self.recall.standalone)
        self.recall.attach(query.embedder, VectorIndex(self.store, self.model), query.reason,
                           wait_s=wait, late_pauses=pauses)  # fmt: skip
        return True

    def _load_dictionary(self) -> None:
        from memd.semantic.bridge import Dictionary

        self.dictionary_state = "loading"
        t0 = time.perf_counter()
        try:
            self.recall.dictionary = Dictionary.load(self.host.settings.paths.cache_dir)
        except ExtraNotInstalled as exc:
            self.dictionary_state = f"not installed ({exc})"
            return
        # On a first start, parsing CC-CEDICT made ~50 MB of objects that packing it left
        # free: give them back (glibc keeps what a thread freed in that thread's arena).
        give_memory_back()
        self.dictionary_state = (
            f"{self.recall.dictionary.origin} in {time.perf_counter() - t0:.2f} s"
        )

    def _start_standalone(self) -> None:
        """Without a daemon: the query embedder, the index (built on first search) and the
        dictionary, now, on the caller's thread."""
        if self._attach(build(self.host.settings, query=True)):
            self._load_dictionary()

    def daemon_mode(self) -> None:
        """In the daemon nothing heavy runs on a request: the background start does it."""
        self.recall.starter = None
        self.recall.standalone = False
        self.recall.reason = "starting"

    def start(self) -> None:
        """Load the model, the index and the dictionary, then start the backfill (in a thread)."""
        self._thread = threading.Thread(target=self._start, name="memd-semantic-start",
                                        daemon=True)  # fmt: skip
        self._thread.start()

    def _start(self) -> None:
        s = self.host.settings
        try:
            if not self._attach(build(s, query=True)):
                log.info("semantic recall off: %s", self.recall.reason)
                return
            passages = self._passage_embedder()
            if passages is None or self._stopping.is_set():
                return
            index = self.recall.index
            assert index is not None
            for kind in ("section", "turn"):
                index.refresh(kind)
            self._load_dictionary()
            if self._stopping.is_set():
                return
            self.backfill = Backfill(self.store, passages, index, batch=s.semantic_batch,
                                     defer=lambda: battery_defer(self.host.settings.jobs_min_battery))  # fmt: skip
            self.backfill.start()
            log.info("semantic recall %s; dictionary %s", self.recall.reason, self.dictionary_state)
        except Exception as exc:  # recall by meaning is optional: the daemon serves on without it
            self.recall.embedder = None
            self.recall.reason = f"could not start: {exc}"
            log.exception("semantic recall could not start")

    def _passage_embedder(self) -> Embedder | None:
        """The backfill's embedder: the packaged model in a process of its own
        (`memd.semantic.worker`), or the configured endpoint."""
        from memd.semantic.packaged import PackagedEmbedder

        s = self.host.settings
        if isinstance(getattr(self.recall.embedder, "inner", None), PackagedEmbedder):
            from memd.semantic.worker import WorkerEmbedder

            return WorkerEmbedder(threads=s.semantic_threads)
        return build(s, query=False).embedder

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(30)
        if self.backfill is not None:
            self.backfill.stop()

    # -- status ----------------------------------------------------------------------------
    def status(self) -> SemanticStatus:
        """Recall by meaning's part of `status`: the query side's, then the kind and model,
        the vectors stored per kind and the backfill's progress."""
        out = self.recall.status()
        out.kind = self.host.settings.semantic_kind
        out.dictionary = self.dictionary_state
        if self.model:
            out.model = self.model
            try:
                out.vectors = repo.counts(self.store.read(), self.model)
            except DatabaseError:
                pass
        if self.backfill is not None:
            out.backfill = self.backfill.progress.snapshot()
        return out

    def status_into(self, out: StatusResult) -> None:
        out.semantic = self.status()

    def feature(self) -> Feature:
        return Feature(
            "semantic",
            status_into=[self.status_into],
            startup=[self.daemon_mode],
            on_start=[self.start],
            on_stop=[self.stop],
        )
