"""The stored vectors in memory, one matrix per kind, searched by exact cosine (numpy).

A `Snapshot` is an immutable matrix of one kind (sections with those of their items that
have vectors, or turns) with, per row, the document it ranks (a section or a turn id) and the columns a
search is scoped by (a section's file kind and owner; a turn's session, project and agent).
`VectorIndex` holds the current snapshot of each kind and swaps in a new one when the
backfill worker has written vectors or the sections changed (`refresh`, off the request
path); each swap bumps `generation`. A search reads whichever snapshot is current: no lock,
no copy. Scoping is a boolean mask over the rows, built per search (a comparison of integer
codes: ~0.1 ms over 25,000 rows, measured in `bench/semantic_speed.py`).

Imports numpy: only for the ``semantic`` extra.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from memd.db import Store
from memd.semantic import repo
from memd.semantic.fusion import Script
from memd.semantic.texts import MAX_CHARS, item_key, section_key

log = logging.getLogger("memd.semantic")
Mask = npt.NDArray[np.bool_]
KINDS = (repo.SECTION, repo.TURN)
MAX_MASKS = 64


@dataclass(frozen=True)
class Snapshot:
    """The vectors of one kind as one matrix, with what each row ranks and is scoped by."""

    kind: str
    generation: int
    matrix: npt.NDArray[np.float32]
    docs: npt.NDArray[np.int64]
    scripts: Mapping[int, Script]
    columns: Mapping[str, npt.NDArray[np.int32]] = field(default_factory=dict)
    vocab: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    unique_docs: bool = True
    build_s: float = 0.0
    # Per row, the text of the item it is the vector of ("" for a section's own vector).
    items: tuple[str, ...] = ()
    _masks: dict[Hashable, Mask] = field(default_factory=dict, repr=False, compare=False)

    @property
    def rows(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def where(self, column: str, values: Iterable[str]) -> Mask:
        """Rows whose `column` holds one of `values`."""
        codes = [self.vocab[column][v] for v in values if v in self.vocab[column]]
        return np.isin(self.columns[column], np.asarray(codes, dtype=np.int32))

    def everything(self) -> Mask:
        return np.ones(self.rows, dtype=np.bool_)

    def mask(self, key: Hashable, build: Callable[[Snapshot], Mask]) -> Mask:
        """The mask of a scope, built once per snapshot (a scope is asked for again and again:
        `context`'s topic tier, one conversation's turns)."""
        m = self._masks.get(key)
        if m is None:
            if len(self._masks) >= MAX_MASKS:
                self._masks.clear()
            m = self._masks[key] = build(self)
            m.flags.writeable = False
        return m

    def top(
        self,
        query: npt.NDArray[np.float32],
        k: int,
        mask: Mask | None = None,
        z: list[float] | None = None,
        best_items: dict[int, str] | None = None,
    ) -> tuple[list[int], list[float]]:
        """The `k` documents nearest to `query` among the rows in `mask`, best first, with
        their cosines (a document with several rows counts its best one). With a list `z`,
        also each document's z-score: how many standard deviations its cosine stands above
        the mean cosine of the rows in `mask` written in its script. With a dict
        `best_items`, each document whose best row is one of its items gets that item's text."""
        if self.rows == 0 or k <= 0:
            return [], []
        scores = self.matrix @ query
        if mask is not None:
            scores = np.where(mask, scores, -np.inf).astype(np.float32, copy=False)
        rows = self._best(scores, k)
        docs = [int(self.docs[r]) for r in rows]
        cos = [float(scores[r]) for r in rows]
        if z is not None:
            z.extend(self._z(scores, mask, docs, cos))
        if best_items is not None and self.items:
            best_items.update((d, self.items[r]) for d, r in zip(docs, rows, strict=True)
                              if self.items[r])  # fmt: skip
        return docs, cos

    def _z(
        self, scores: npt.NDArray[np.float32], mask: Mask | None, docs: list[int], cos: list[float]
    ) -> list[float]:
        stats: dict[str, tuple[float, float]] = {}
        out = []
        for d, c in zip(docs, cos, strict=True):
            script = self.scripts.get(d, "")
            if script not in stats:
                sel = self.where("script", [script])
                if mask is not None:
                    sel &= mask
                vals = scores[sel]
                stats[script] = (
                    (float(vals.mean()), float(vals.std())) if vals.size > 1 else (c, 0.0)
                )
            mu, sd = stats[script]
            out.append((c - mu) / sd if sd > 0 else 0.0)
        return out

    def _best(self, scores: npt.NDArray[np.float32], k: int) -> list[int]:
        """The rows of the `k` best documents, each its document's best row."""
        want = min(self.rows, k if self.unique_docs else 4 * k)
        part = (
            np.argpartition(-scores, want - 1)[:want] if want < self.rows else np.arange(self.rows)
        )
        order = part[np.lexsort((part, -scores[part]))]
        rows: list[int] = []
        seen: set[int] = set()
        for row in order:
            if scores[row] == -np.inf:
                break
            d = int(self.docs[row])
            if d in seen:
                continue
            seen.add(d)
            rows.append(int(row))
            if len(rows) == k:
                break
        if len(rows) < k and want < self.rows and not self.unique_docs:
            return self._best_per_doc(scores, k)
        return rows

    def _best_per_doc(self, scores: npt.NDArray[np.float32], k: int) -> list[int]:
        """`_best` over every row: each document's best row, the `k` best of those."""
        order = np.lexsort((np.arange(self.rows), -scores))
        order = order[scores[order] != -np.inf]
        _, first = np.unique(self.docs[order], return_index=True)
        best = order[first]
        ranked = best[np.lexsort((self.docs[best], -scores[best]))][:k]
        return [int(r) for r in ranked]


def _matrix(blobs: list[bytes], dim: int) -> npt.NDArray[np.float32]:
    if not blobs:
        return np.zeros((0, dim), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dim)


class _Coder:
    """Strings of one column as small integer codes."""

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {}
        self.codes: list[int] = []

    def add(self, value: str) -> None:
        self.codes.append(self.vocab.setdefault(value, len(self.vocab)))

    def array(self) -> npt.NDArray[np.int32]:
        return np.asarray(self.codes, dtype=np.int32)


def _majority_dim(dims: Iterable[int]) -> int:
    counts: dict[int, int] = {}
    for d in dims:
        counts[d] = counts.get(d, 0) + 1
    return max(counts, key=lambda d: counts[d]) if counts else 0


def build_sections(store: Store, model: str, generation: int) -> Snapshot:
    """The section matrix: each section's vector, and those of its items that have one
    (`repo.items_to_embed`); a section ranks by the best of its rows."""
    t0 = time.perf_counter()
    conn = store.read()
    sections = repo.section_keys(conn)
    vecs = repo.vectors_of(conn, repo.SECTION, model)
    item_vecs = repo.vectors_of(conn, repo.ITEM, model)
    items = repo.items_to_embed(conn, MAX_CHARS) if item_vecs else []
    dim = _majority_dim([d for _, d, _ in vecs.values()] + [d for _, d, _ in item_vecs.values()])
    where: dict[int, tuple[str, str]] = {}
    blobs: list[bytes] = []
    docs: list[int] = []
    labels: list[str] = []
    scripts: dict[int, Script] = {}
    kind, owner, script = _Coder(), _Coder(), _Coder()

    def add(doc: int, blob: bytes, place: tuple[str, str], item: str = "") -> None:
        blobs.append(blob)
        docs.append(doc)
        labels.append(item)
        kind.add(place[0])
        owner.add(place[1])
        script.add(scripts.get(doc, ""))

    for s in sections:
        where[s.id] = (s.kind, s.owner)
        got = vecs.get(section_key(s.stem, s.heading, s.sha256))
        if got is not None and got[1] == dim:
            scripts[s.id] = got[0]  # type: ignore[assignment]
            add(s.id, got[2], (s.kind, s.owner))
    for it in items:
        got = item_vecs.get(item_key(it.text))
        if got is not None and got[1] == dim and it.section_id in where:
            scripts.setdefault(it.section_id, got[0])  # type: ignore[arg-type]
            add(it.section_id, got[2], where[it.section_id], it.text)
    return Snapshot(
        repo.SECTION, generation, _matrix(blobs, dim), np.asarray(docs, dtype=np.int64), scripts,
        {"kind": kind.array(), "owner": owner.array(), "script": script.array()},
        {"kind": kind.vocab, "owner": owner.vocab, "script": script.vocab},
        unique_docs=len(set(docs)) == len(docs), build_s=time.perf_counter() - t0,
        items=tuple(labels) if any(labels) else (),
    )  # fmt: skip


def build_turns(store: Store, model: str, generation: int) -> Snapshot:
    """The turn matrix: each turn's passage vector, scoped by session, project, agent and
    source."""
    t0 = time.perf_counter()
    rows = repo.turn_index_rows(store.read(), model)
    dim = _majority_dim(r.dim for r in rows)
    rows = [r for r in rows if r.dim == dim]
    session, project, agent, source, script = _Coder(), _Coder(), _Coder(), _Coder(), _Coder()
    for r in rows:
        session.add(r.session_id)
        project.add(r.project)
        agent.add(r.agent_id)
        source.add(r.source)
        script.add(r.script)
    return Snapshot(
        repo.TURN, generation, _matrix([r.vec for r in rows], dim),
        np.asarray([r.id for r in rows], dtype=np.int64), {r.id: r.script for r in rows},  # type: ignore[misc]
        {"session": session.array(), "project": project.array(), "agent": agent.array(),
         "source": source.array(), "script": script.array()},
        {"session": session.vocab, "project": project.vocab, "agent": agent.vocab,
         "source": source.vocab, "script": script.vocab},
        build_s=time.perf_counter() - t0,
    )  # fmt: skip


class VectorIndex:
    """The current snapshot of each kind for one model; `refresh` swaps in a new one."""

    def __init__(self, store: Store, model: str) -> None:
        self.store = store
        self.model = model
        self.generation = 0
        self._snapshots: dict[str, Snapshot] = {}
        self._lock = threading.Lock()  # one build at a time; readers never wait on it

    def snapshot(self, kind: str) -> Snapshot | None:
        """The current snapshot of `kind` (None before the first build)."""
        return self._snapshots.get(kind)

    def ensure(self, kind: str) -> Snapshot:
        """The current snapshot, built now when there is none yet (the CLI without a daemon)."""
        snap = self._snapshots.get(kind)
        return snap if snap is not None else self.refresh(kind)

    def refresh(self, kind: str) -> Snapshot:
        """Build `kind`'s snapshot from the stored vectors and make it current."""
        with self._lock:
            self.generation += 1
            build = build_sections if kind == repo.SECTION else build_turns
            snap = build(self.store, self.model, self.generation)
            self._snapshots[kind] = snap
        log.debug("vector index: %s %d rows in %.3fs", kind, snap.rows, snap.build_s)
        return snap

    def memory_bytes(self) -> int:
        """Bytes held by the matrices."""
        return sum(s.matrix.nbytes for s in self._snapshots.values())
