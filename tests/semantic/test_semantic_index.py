"""`Snapshot.top`: a document with several rows (a section and its memories) counts its best
row, and names the item that row is."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from memd.semantic.index import Snapshot


def row(cos: float) -> list[float]:
    """A unit vector whose cosine with the query (the first axis) is `cos`."""
    return [cos, float(np.sqrt(1 - cos * cos)), 0.0, 0.0]


def snapshot(rows: list[tuple[int, float, str]]) -> Snapshot:
    matrix = np.asarray([row(c) for _, c, _ in rows], dtype=np.float32)
    return Snapshot.of("section", matrix, [d for d, _, _ in rows],
                       [("topic", "", "latin")] * len(rows), ("kind", "owner", "script"),
                       items=[label for _, _, label in rows])  # fmt: skip


QUERY = np.asarray([1.0, 0.0, 0.0, 0.0], dtype=np.float32)


def test_a_section_ranks_by_its_best_row_and_names_that_memory() -> None:
    snap = snapshot([(1, 0.30, ""), (1, 0.90, "the cat is called Miso"), (1, 0.20, "dentist"),
                     (2, 0.50, ""), (3, 0.95, "")])  # fmt: skip
    items: dict[int, str] = {}
    docs, cos = snap.top(QUERY, 3, best_items=items)
    assert docs == [3, 1, 2]
    assert cos == pytest.approx([0.95, 0.90, 0.50], abs=0.01)
    # Section 3's best row is its own vector: no item is named for it.
    assert items == {1: "the cat is called Miso"}


def test_many_rows_of_one_section_do_not_hide_the_next_section() -> None:
    # Ten memories of section 1 are nearer than anything else: the 4k rows looked at first
    # hold no second section, and every row is ranked per section instead.
    rows = [(1, 0.80 + i / 100, f"memory {i}") for i in range(10)]
    snap = snapshot([*rows, (2, 0.50, ""), (3, 0.10, "")])
    items: dict[int, str] = {}
    docs, cos = snap.top(QUERY, 2, best_items=items)
    assert docs == [1, 2]
    assert cos == pytest.approx([0.89, 0.50], abs=0.01)
    assert items == {1: "memory 9"}
    # A mask leaves out rows, never a section's best row for another's.
    mask = np.ones(snap.rows, dtype=np.bool_)
    mask[9] = False
    items.clear()
    assert snap.top(QUERY, 1, mask, best_items=items)[0] == [1]
    assert items == {1: "memory 8"}


@pytest.mark.parametrize("unique", [True, False])
def test_equal_cosines_rank_the_same_whatever_order_the_rows_were_stored_in(unique: bool) -> None:
    # Two turns with the same passage have the same vector. The backfill stores rows in the
    # order it embedded them (live turns first, then the backlog newest first: timing decides),
    # so a tie must not be broken by the row's place: the same query gives the same ranking.
    rows = [(d, c, "") for d, c in ((7, 0.9), (3, 0.6), (5, 0.6), (9, 0.6), (4, 0.2), (8, 0.1))]
    orders = [rows, rows[::-1], [rows[2], rows[4], rows[0], rows[3], rows[1], rows[5]]]
    got = set()
    for stored in orders:
        snap = dataclasses.replace(snapshot(stored), unique_docs=unique)
        got.add(tuple(snap.top(QUERY, 3)[0]))
    assert got == {(7, 3, 5)}


def test_scripts_of_many_documents_in_one_search_match_one_by_one() -> None:
    """`DocScripts.of` (one search for a request's ~100 documents) answers as the lookups one
    document at a time: a document's first row's script, nothing for one without a row."""
    rng = np.random.default_rng(7)
    docs = [int(d) for d in rng.integers(1, 400, 300)]  # repeats: sections with item rows
    scripts = [("cjk", "latin", "other", "")[int(i)] for i in rng.integers(0, 4, 300)]
    snap = Snapshot.of("section", rng.normal(size=(300, 8)), docs,
                       [("topic", "", s) for s in scripts], ("kind", "owner", "script"))  # fmt: skip
    one_by_one = {d: snap.scripts[d] for d in range(500) if d in snap.scripts}
    assert snap.scripts.of(list(range(500))) == one_by_one
    assert one_by_one[docs[0]] == scripts[0]
    assert snap.scripts.of([]) == {} and snap.scripts.of([10_000]) == {}
