"""m100_vectors_int8: an index whose vectors were stored as float32 upgrades in place. Every
vector becomes the int8 form the backfill writes now (the same bytes `vectors.encode` gives),
nothing is embedded again, and the index ranks with the converted rows as it did before."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memd.db import Store
from memd.db.connection import connect
from memd.db.migrations import MIGRATIONS, migrate
from memd.semantic import repo
from memd.semantic.index import build_turns
from memd.semantic.vectors import encode, normalise, stored_dim

MODEL = "m"


def old_index(path: Path, vectors: np.ndarray) -> None:
    """An index as memd wrote it before m100: float32 turn vectors, one per turn."""
    conn = connect(path)
    conn.execute("CREATE TABLE _memd_migrations (name TEXT PRIMARY KEY, applied_at REAL)")
    for m in MIGRATIONS[: [m.__name__ for m in MIGRATIONS].index("m100_vectors_int8")]:
        conn.execute("BEGIN")
        m(conn)
        conn.execute("INSERT INTO _memd_migrations VALUES (?, 0)", (m.__name__,))
        conn.execute("COMMIT")
    for i, v in enumerate(vectors, start=1):
        conn.execute(
            "INSERT INTO turns(id, session_id, turn_id, role, text, ts, source)"
            " VALUES (?, 's', ?, 'user', ?, 1.0, 'ingest')",
            (i, f"t{i}", f"turn {i}"),
        )
        conn.execute(
            "INSERT INTO vectors(kind, key, model, text_hash, script, dim, vec, at)"
            " VALUES ('turn', ?, ?, ?, 'latin', ?, ?, 0)",
            (str(i), MODEL, f"h{i}", len(v), v.astype("<f4").tobytes()),
        )
    # A blob that is not float32 values at all (never written by memd, but a cache must
    # survive it): it goes, and the backfill embeds that turn again.
    conn.execute(
        "INSERT INTO vectors(kind, key, model, text_hash, script, dim, vec, at)"
        " VALUES ('section', 'odd', ?, 'x', '', 3, x'010203', 0)",
        (MODEL,),
    )
    conn.close()


def test_float32_vectors_are_converted_and_rank_as_before(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    vectors = normalise(rng.normal(size=(40, 24)).astype(np.float32))
    path = tmp_path / "index.db"
    old_index(path, vectors)
    conn = connect(path)
    assert "m100_vectors_int8" in migrate(conn)
    blobs = dict(conn.execute("SELECT key, vec FROM vectors WHERE kind = 'turn'").fetchall())
    assert conn.execute("SELECT count(*) FROM vectors WHERE kind = 'section'").fetchone()[0] == 0
    conn.close()
    # Exactly what the backfill writes for the same vectors.
    assert [blobs[str(i)] for i in range(1, 41)] == encode(vectors)
    assert {stored_dim(b) for b in blobs.values()} == {24}
    store = Store.open(path)
    try:
        assert repo.counts(store.read(), MODEL) == {"turn": 40}
        snap = build_turns(store, MODEL, 1)
        for i in (0, 17, 39):
            docs, cos = snap.top(vectors[i], 3)
            exact = vectors @ vectors[i]
            assert docs[0] == i + 1 and abs(cos[0] - 1.0) < 0.01
            assert [d - 1 for d in docs] == list(np.argsort(-exact)[:3])
            assert np.allclose(cos, np.sort(exact)[::-1][:3], atol=0.01)
    finally:
        store.close()
