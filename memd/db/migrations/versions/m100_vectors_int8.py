"""Vectors stored in one byte per dimension, and found by the hash of the text they embed.

A stored vector was `dim` little-endian float32 values; it becomes a float32 scale (the row's
largest magnitude / 127) followed by `dim` signed bytes, the row divided by its scale and
rounded: 388 bytes instead of 1,536 for the packaged model, a cosine within ~0.002 of the
float32 one (docs/retrieval.md measures what that costs in recall). Existing vectors are
converted here, in pure Python (numpy belongs to the extra; every step is rounded to float32 as
`memd.semantic.vectors.encode` does it, so both give the same bytes), and nothing is embedded
again.

`text_hash` is indexed per model: the backfill looks up whether a text it is about to embed
was embedded already (the same memory in two files, a repeated turn) and copies that vector.
"""

from __future__ import annotations

import sqlite3
import struct
import sys
from array import array

_BATCH = 500


def _int8_row(blob: bytes) -> bytes | None:
    """A float32 row in the int8 form (None when the blob is not whole float32 values)."""
    if not blob or len(blob) % 4:
        return None
    values = array("f", blob)
    if sys.byteorder == "big":  # stored little-endian
        values.byteswap()
    top = max(abs(v) for v in values)
    scale = array("f", [top / 127.0 if top > 0 else 1.0])[0]
    # A quotient of two float32 values computed in float64 and rounded to float32 is the
    # float32 quotient: `array("f")` does that rounding, `round` then halves to even like rint.
    q = [max(-127, min(127, round(x))) for x in array("f", [v / scale for v in values])]
    return struct.pack(f"<f{len(q)}b", scale, *q)


def m100_vectors_int8(conn: sqlite3.Connection) -> None:
    last = 0
    while True:
        rows = conn.execute(
            "SELECT id, vec FROM vectors WHERE id > ? ORDER BY id LIMIT ?", (last, _BATCH)
        ).fetchall()
        if not rows:
            break
        last = rows[-1][0]
        converted = [(_int8_row(vec), rid) for rid, vec in rows]
        conn.executemany("UPDATE vectors SET vec = ? WHERE id = ?",
                         [(v, rid) for v, rid in converted if v is not None])  # fmt: skip
        # A blob that was never a float32 row cannot be read either way: embedded again.
        conn.executemany("DELETE FROM vectors WHERE id = ?",
                         [(rid,) for v, rid in converted if v is None])  # fmt: skip
    conn.execute("CREATE INDEX vectors_text_hash ON vectors(model, text_hash)")
