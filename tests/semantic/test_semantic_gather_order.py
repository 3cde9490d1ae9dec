"""`search` with recall by meaning: both rankers' full-text searches run while the query is
embedded, before the one wait for its vector (`memd.conversations.ranking.gather`).

A request waits for its query's vector at most `semantic.query_wait_ms` from when it asked; what
runs after that wait adds to the answer's time. The full-text searches need no vector: over
memory sections and over conversation turns alike they run first, and after the wait only the
vector searches and the fusion remain. Over a real index (sections and turns, vectors stored by
the backfill from a local endpoint) with a query model that takes a fixed 0.3 s, every
full-text query of the request is on the connection's trace before the vector is handed back.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    import numpy as _np
    import numpy.typing as npt

pytest.importorskip("numpy")

from memd.conversations.ingest import write_turns
from memd.conversations.ranking import search
from memd.core.models import Turn
from memd.db import Store
from memd.memory.indexer import Indexer, Root
from memd.semantic.backfill import Backfill
from memd.semantic.base import Embedder, Kind
from memd.semantic.cache import CachedEmbedder
from memd.semantic.index import VectorIndex
from memd.semantic.remote import HttpEmbedder
from memd.semantic.service import SemanticRecall
from tests.semantic.fake_embeddings import FakeEmbeddings

DELAY_S = 0.3


class SlowQueries:
    """The endpoint's query model, taking `DELAY_S` per call; notes when its vector is done."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.done_at: list[float] = []
        self.lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage") -> npt.NDArray[_np.float32]:
        out = self.inner.embed(texts, kind=kind)
        time.sleep(DELAY_S)
        with self.lock:
            self.done_at.append(time.monotonic())
        return out


@pytest.fixture
def index(tmp_path: Path) -> Iterator[tuple[Store, HttpEmbedder]]:
    mem = tmp_path / "memory"
    (mem / "topics").mkdir(parents=True)
    (mem / "topics" / "pets.md").write_text(
        "# Pets\n\n## Cat\n\n- Miso is our cat, she likes the balcony.\n\n"
        "## Dog\n\n- Rex barks at the postman.\n",
        encoding="utf-8",
    )
    store = Store.open(tmp_path / "index.db")
    Indexer(store, [Root(mem)]).reconcile()
    turns = [
        Turn("ingest", "s1", str(i), "user", text, 1_700_000_000.0 + i)
        for i, text in enumerate(
            ["Our cat Miso sleeps on the balcony.", "The dog Rex barks a lot.", "Lunch at noon."]
        )
    ]
    store.w.run(lambda c: write_turns(c, turns))
    with FakeEmbeddings(dim=16) as server:
        passages = HttpEmbedder(server.url, "m1", retries=0)
        Backfill(store, passages, VectorIndex(store, passages.model_id), batch=4).run_until_idle(60)
        yield store, HttpEmbedder(server.url, "m1", retries=0)
    store.close()


def test_both_full_text_searches_run_before_the_wait_for_the_vector(
    index: tuple[Store, HttpEmbedder],
) -> None:
    store, queries = index
    slow = SlowQueries(queries)
    vectors = VectorIndex(store, queries.model_id)
    for kind in ("section", "turn"):
        vectors.refresh(kind)
    recall = SemanticRecall()
    recall.attach(CachedEmbedder(slow), vectors, "test", wait_s=None, late_pauses=False)
    conn = store.read()
    trace: list[tuple[float, str]] = []
    conn.set_trace_callback(lambda sql: trace.append((time.monotonic(), sql)))
    try:
        hits = search(conn, "where does the cat sleep", semantic=recall)
    finally:
        conn.set_trace_callback(None)
    assert slow.done_at, "the query was embedded"
    vector_at = slow.done_at[0]
    matches = [(t, sql) for t, sql in trace if " MATCH " in sql]
    assert any("turns_fts" in sql for _, sql in matches)
    assert any("sections_fts" in sql for _, sql in matches)
    after = [sql.split("MATCH")[0][-60:] for t, sql in matches if t > vector_at]
    assert after == [], f"full-text searches after the vector came: {after}"
    # And the answer is the one the rankers give: the cat's section and turn, by both lists.
    shown = [(h.kind, h.path or h.text) for h in hits[:2]]
    assert {k for k, _ in shown} == {"section", "turn"}, shown
