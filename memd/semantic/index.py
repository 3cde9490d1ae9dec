"""The stored vectors in memory, one matrix per kind, searched by exact cosine (numpy).

A `Snapshot` is an immutable matrix of one kind (sections with those of their items that
have vectors, or turns) with, per row, the document it ranks (a section or a turn id) and the
columns a search is scoped by (a section's file kind and owner; a turn's session, project and
agent). Rows are kept as stored: int8 with a scale per row (`memd.semantic.vectors.encode`),
a quarter of float32's memory, and scanned in cache-sized chunks (`vectors.scores`).

`VectorIndex` holds the current snapshot of each kind and swaps in a new one when the
backfill worker has written vectors (`append`: the new rows go after the old ones, in arrays
that grow by doubling, so that a snapshot is a view of their first rows and publishing one
copies nothing) or when the documents changed (`refresh`: everything read again). Both run
off the request path; each bumps `generation`. A search reads whichever snapshot is current:
no lock, no copy. Scoping is a boolean mask over the rows, built per search (a comparison of
integer codes: ~0.1 ms over 25,000 rows, measured in `bench/semantic_speed.py`).

Imports numpy: only for the ``semantic`` extra.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from memd.db import Store
from memd.semantic import repo
from memd.semantic.fusion import Script
from memd.semantic.texts import MAX_CHARS, item_key, section_key
from memd.semantic.vectors import Quantised, decode, scores, stored_dim

log = logging.getLogger("memd.semantic")
Mask = npt.NDArray[np.bool_]
KINDS = (repo.SECTION, repo.TURN)
MAX_MASKS = 64
SECTION_COLUMNS = ("kind", "owner", "script")
TURN_COLUMNS = ("session", "project", "agent", "script")
YIELD_ROWS = 2000
"""A full build gives other threads the interpreter every this many rows: a request never
waits behind one for more than a few milliseconds (docs/retrieval.md, "The request path")."""


class Row(NamedTuple):
    """One row to add to a kind's matrix: the document it ranks, its stored vector, the values
    of the kind's scope columns (`SECTION_COLUMNS` or `TURN_COLUMNS`, script last) and, for a
    section, the text of the item it is the vector of ("" for the section's own)."""

    doc: int
    vec: bytes
    values: tuple[str, ...]
    item: str = ""


@dataclass(frozen=True)
class Snapshot:
    """The vectors of one kind as one matrix, with what each row ranks and is scoped by."""

    kind: str
    generation: int
    matrix: Quantised
    scale: npt.NDArray[np.float32]
    docs: npt.NDArray[np.int64]
    columns: Mapping[str, npt.NDArray[np.int32]] = field(default_factory=dict)
    vocab: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    unique_docs: bool = True
    build_s: float = 0.0
    # Per row, the text of the item it is the vector of ("" for a section's own vector).
    items: Sequence[str] = ()
    _masks: dict[Hashable, Mask] = field(default_factory=dict, repr=False, compare=False)
    _scripts: list[DocScripts] = field(default_factory=list, repr=False, compare=False)

    @classmethod
    def of(
        cls,
        kind: str,
        matrix: npt.ArrayLike,
        docs: Sequence[int],
        values: Sequence[tuple[str, ...]],
        names: Sequence[str],
        items: Sequence[str] = (),
    ) -> Snapshot:
        """A snapshot of float rows (tests, benchmarks): `values` per row, one per column of
        `names` (the last one "script")."""
        from memd.semantic.vectors import encode

        m = np.asarray(matrix, dtype=np.float32)
        table = _Table(kind, int(m.shape[1]), tuple(names))
        table.add([Row(d, b, v, i) for d, b, v, i in
                   zip(docs, encode(m), values, items or [""] * len(docs), strict=True)])  # fmt: skip
        return table.snapshot(1, 0.0)

    @property
    def rows(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    @property
    def nbytes(self) -> int:
        """Bytes of the rows (the arrays behind them may have room for more)."""
        return int(self.matrix.nbytes + self.scale.nbytes + self.docs.nbytes
                   + sum(c.nbytes for c in self.columns.values()))  # fmt: skip

    @property
    def scripts(self) -> DocScripts:
        """Each document's dominant script (its first row's)."""
        if not self._scripts:
            self._scripts.append(DocScripts(self))
        return self._scripts[0]

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

    def cosines(self, query: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """The cosine of `query` with every row."""
        return scores(self.matrix, self.scale, query)

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
        sc = self.cosines(query)
        if mask is not None:
            sc = np.where(mask, sc, -np.inf).astype(np.float32, copy=False)
        rows = self._best(sc, k)
        docs = [int(self.docs[r]) for r in rows]
        cos = [float(sc[r]) for r in rows]
        if z is not None:
            z.extend(self._z(sc, mask, docs, cos))
        if best_items is not None and self.items:
            best_items.update((d, self.items[r]) for d, r in zip(docs, rows, strict=True)
                              if self.items[r])  # fmt: skip
        return docs, cos

    def _z(
        self, sc: npt.NDArray[np.float32], mask: Mask | None, docs: list[int], cos: list[float]
    ) -> list[float]:
        stats: dict[str, tuple[float, float]] = {}
        out = []
        scripts = self.scripts
        for d, c in zip(docs, cos, strict=True):
            script = scripts.get(d, "")
            if script not in stats:
                sel = self.where("script", [script])
                if mask is not None:
                    sel &= mask
                vals = sc[sel]
                stats[script] = (
                    (float(vals.mean()), float(vals.std())) if vals.size > 1 else (c, 0.0)
                )
            mu, sd = stats[script]
            out.append((c - mu) / sd if sd > 0 else 0.0)
        return out

    def _best(self, sc: npt.NDArray[np.float32], k: int) -> list[int]:
        """The rows of the `k` best documents, each its document's best row. Equal cosines go
        by document id, so the order does not depend on the order the rows were stored in (the
        backfill's, which timing decides)."""
        want = min(self.rows, k if self.unique_docs else 4 * k)
        if want < self.rows:
            # Every row as good as the `want`-th: which of equal rows a partition keeps depends
            # on where they sit.
            cut = np.partition(-sc, want - 1)[want - 1]
            part = np.flatnonzero(-sc <= cut)
        else:
            part = np.arange(self.rows)
        order = part[np.lexsort((part, self.docs[part], -sc[part]))]
        rows: list[int] = []
        seen: set[int] = set()
        for row in order:
            if sc[row] == -np.inf:
                break
            d = int(self.docs[row])
            if d in seen:
                continue
            seen.add(d)
            rows.append(int(row))
            if len(rows) == k:
                break
        if len(rows) < k and want < self.rows and not self.unique_docs:
            return self._best_per_doc(sc, k)
        return rows

    def _best_per_doc(self, sc: npt.NDArray[np.float32], k: int) -> list[int]:
        """`_best` over every row: each document's best row, the `k` best of those."""
        order = np.lexsort((np.arange(self.rows), self.docs, -sc))
        order = order[sc[order] != -np.inf]
        _, first = np.unique(self.docs[order], return_index=True)
        best = order[first]
        ranked = best[np.lexsort((self.docs[best], -sc[best]))][:k]
        return [int(r) for r in ranked]


class DocScripts(Mapping[int, Script]):
    """A snapshot's documents → their dominant script, looked up in the rows (no dict of
    every document: a sorted view of the document column, built on first use)."""

    def __init__(self, snap: Snapshot) -> None:
        self._snap = snap
        self._order = np.argsort(snap.docs, kind="stable")
        self._sorted = snap.docs[self._order]
        self._names = {code: name for name, code in snap.vocab.get("script", {}).items()}

    def __getitem__(self, doc: int) -> Script:
        i = int(np.searchsorted(self._sorted, doc))
        if i >= len(self._sorted) or int(self._sorted[i]) != doc:
            raise KeyError(doc)
        code = int(self._snap.columns["script"][self._order[i]])
        return self._names.get(code, "")  # type: ignore[return-value]

    def of(self, docs: Sequence[int]) -> dict[int, Script]:
        """The scripts of those of `docs` that have rows, in one search (a request asks for
        ~100 documents, most without a vector while the backfill runs)."""
        if not docs or not len(self._sorted):
            return {}
        want = np.asarray(docs, dtype=np.int64)
        at = np.minimum(np.searchsorted(self._sorted, want), len(self._sorted) - 1)
        hit = self._sorted[at] == want
        codes = self._snap.columns["script"][self._order[at[hit]]]
        return {int(d): self._names.get(int(c), "")  # type: ignore[misc]
                for d, c in zip(want[hit], codes, strict=True)}  # fmt: skip

    def __iter__(self) -> Iterator[int]:
        return iter(int(d) for d in np.unique(self._sorted))

    def __len__(self) -> int:
        return int(np.unique(self._sorted).size)


class _Table:
    """The rows of one kind in arrays with room to grow: a snapshot views the first rows, so
    rows added later change nothing a published snapshot can see."""

    def __init__(self, kind: str, dim: int, names: tuple[str, ...]) -> None:
        self.kind = kind
        self.dim = dim
        self.names = names
        self.n = 0
        self.q = np.zeros((0, dim), dtype=np.int8)
        self.scale = np.zeros(0, dtype=np.float32)
        self.docs = np.zeros(0, dtype=np.int64)
        self.cols = {name: np.zeros(0, dtype=np.int32) for name in names}
        self.vocab: dict[str, dict[str, int]] = {name: {} for name in names}
        self.items: list[str] = []
        self.has_items = False

    def _grow(self, need: int) -> None:
        cap = max(need, 2 * self.q.shape[0], 256)

        def bigger(a: npt.NDArray[np.generic], shape: tuple[int, ...]) -> npt.NDArray[np.generic]:
            b = np.zeros(shape, dtype=a.dtype)
            b[: self.n] = a[: self.n]
            return b

        self.q = bigger(self.q, (cap, self.dim))  # type: ignore[assignment]
        self.scale = bigger(self.scale, (cap,))  # type: ignore[assignment]
        self.docs = bigger(self.docs, (cap,))  # type: ignore[assignment]
        self.cols = {k: bigger(v, (cap,)) for k, v in self.cols.items()}  # type: ignore[misc]

    def add(self, rows: Sequence[Row]) -> int:
        """Append the rows whose vectors have this table's dimension; how many were added."""
        rows = [
            r for r in rows if stored_dim(r.vec) == self.dim and len(r.values) == len(self.names)
        ]
        if not rows:
            return 0
        end = self.n + len(rows)
        if end > self.q.shape[0]:
            self._grow(end)
        q, scale = decode([r.vec for r in rows], self.dim)
        self.q[self.n : end] = q
        self.scale[self.n : end] = scale
        self.docs[self.n : end] = [r.doc for r in rows]
        for i, name in enumerate(self.names):
            voc = self.vocab[name]
            self.cols[name][self.n : end] = [voc.setdefault(r.values[i], len(voc)) for r in rows]
        self.items += [r.item for r in rows]
        self.has_items = self.has_items or any(r.item for r in rows)
        self.n = end
        return len(rows)

    def snapshot(self, generation: int, build_s: float) -> Snapshot:
        n = self.n
        docs = self.docs[:n]
        return Snapshot(
            self.kind, generation, self.q[:n], self.scale[:n], docs,
            {k: v[:n] for k, v in self.cols.items()},
            {k: dict(v) for k, v in self.vocab.items()},
            unique_docs=int(np.unique(docs).size) == n, build_s=build_s,
            items=_Prefix(self.items, n) if self.has_items else (),
        )  # fmt: skip


class _Prefix(Sequence[str]):
    """The first `n` entries of a list that only grows (a snapshot's item labels)."""

    def __init__(self, items: list[str], n: int) -> None:
        self._items = items
        self._n = n

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        if not -self._n <= i < self._n:
            raise IndexError(i)
        return self._items[i % self._n]

    def __len__(self) -> int:
        return self._n


def _majority_dim(blobs: Iterable[bytes]) -> int:
    counts: dict[int, int] = {}
    for b in blobs:
        d = stored_dim(b)
        counts[d] = counts.get(d, 0) + 1
    return max(counts, key=lambda d: counts[d]) if counts else 0


def _in_steps(rows: list[Row], table: _Table) -> None:
    """Add `rows` a few thousand at a time, letting other threads run between."""
    for i in range(0, len(rows), YIELD_ROWS):
        table.add(rows[i : i + YIELD_ROWS])
        time.sleep(0)


def build_sections(store: Store, model: str, generation: int) -> Snapshot:
    """The section matrix: each section's vector, and those of its items that have one
    (`repo.items_to_embed`); a section ranks by the best of its rows."""
    t0 = time.perf_counter()
    conn = store.read()
    sections = repo.section_keys(conn)
    vecs = repo.vectors_of(conn, repo.SECTION, model)
    item_vecs = repo.vectors_of(conn, repo.ITEM, model)
    items = repo.items_to_embed(conn, MAX_CHARS) if item_vecs else []
    dim = _majority_dim([b for _, b in vecs.values()] + [b for _, b in item_vecs.values()])
    where: dict[int, tuple[str, str, str]] = {}
    rows: list[Row] = []
    for s in sections:
        got = vecs.get(section_key(s.stem, s.heading, s.sha256))
        where[s.id] = (s.kind, s.owner, got[0] if got is not None else "")
        if got is not None:
            rows.append(Row(s.id, got[1], (s.kind, s.owner, got[0])))
    for it in items:
        got = item_vecs.get(item_key(it.text))
        place = where.get(it.section_id)
        if got is not None and place is not None:
            rows.append(Row(it.section_id, got[1], place[:2] + (place[2] or got[0],), it.text))
    table = _Table(repo.SECTION, dim, SECTION_COLUMNS)
    _in_steps(rows, table)
    return table.snapshot(generation, time.perf_counter() - t0)


def build_turns(store: Store, model: str, generation: int) -> Snapshot:
    """The turn matrix: each turn's passage vector, scoped by session, project and agent."""
    t0 = time.perf_counter()
    found = repo.turn_index_rows(store.read(), model)
    table = _Table(repo.TURN, _majority_dim(r.vec for r in found), TURN_COLUMNS)
    _in_steps([Row(r.id, r.vec, (r.session_id, r.project, r.agent_id, r.script)) for r in found],
              table)  # fmt: skip
    return table.snapshot(generation, time.perf_counter() - t0)


class VectorIndex:
    """The current snapshot of each kind for one model; `refresh` swaps in a new one built
    from the stored vectors, `append` one with rows added to the current one."""

    def __init__(self, store: Store, model: str) -> None:
        self.store = store
        self.model = model
        self.generation = 0
        self._snapshots: dict[str, Snapshot] = {}
        self._tables: dict[str, _Table] = {}
        self._lock = threading.Lock()  # one build at a time; readers never wait on it
        self.rebuilds = 0  # snapshots built from the stored vectors
        self.appends = 0  # snapshots made by adding rows to the current one

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
            self._tables.pop(kind, None)  # the next append starts from this snapshot
            self.rebuilds += 1
            self._snapshots[kind] = snap
        log.debug("vector index: %s %d rows in %.3fs", kind, snap.rows, snap.build_s)
        return snap

    def append(self, kind: str, rows: Sequence[Row]) -> Snapshot | None:
        """Add rows to `kind`'s current snapshot and make the result current (rows of another
        dimension than the snapshot's are left out). None when there is no snapshot yet."""
        with self._lock:
            snap = self._snapshots.get(kind)
            if snap is None or not rows:
                return snap
            t0 = time.perf_counter()
            table = self._tables.get(kind)
            if table is None or table.n != snap.rows:
                table = self._tables[kind] = _table_of(snap, rows)
            if not table.add(rows):
                return snap
            self.generation += 1
            self.appends += 1
            snap = self._snapshots[kind] = table.snapshot(self.generation, time.perf_counter() - t0)
        return snap

    def memory_bytes(self) -> int:
        """Bytes held by the matrices."""
        return sum(s.nbytes for s in self._snapshots.values())


def _table_of(snap: Snapshot, rows: Sequence[Row]) -> _Table:
    """A growable table holding `snap`'s rows (its dimension, or that of `rows` when empty)."""
    names = SECTION_COLUMNS if snap.kind == repo.SECTION else TURN_COLUMNS
    dim = snap.dim if snap.rows else _majority_dim(r.vec for r in rows)
    table = _Table(snap.kind, dim, names)
    if snap.rows:
        table._grow(snap.rows)
        n = snap.rows
        table.q[:n], table.scale[:n], table.docs[:n] = snap.matrix, snap.scale, snap.docs
        for name in names:
            table.cols[name][:n] = snap.columns[name]
        table.vocab = {k: dict(v) for k, v in snap.vocab.items()}
        table.items = [snap.items[i] for i in range(n)] if snap.items else [""] * n
        table.has_items = bool(snap.items)
        table.n = n
    return table
