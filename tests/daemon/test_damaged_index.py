"""A damaged index is moved aside and rebuilt from the files, on start and on `reindex --full`."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

from tests.utils import DaemonProcess, wait_for


def damage(db: Path) -> None:
    """Overwrite the middle half of the file with noise (the header page is left intact)."""
    size = db.stat().st_size
    rng = random.Random(7)
    with open(db, "r+b") as f:
        f.seek(max(4096, size // 4))
        f.write(bytes(rng.getrandbits(8) for _ in range(size // 2)))
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)


def seeded(home: Path) -> DaemonProcess:
    d = DaemonProcess(home).start()
    topics = d.memory / "topics"
    for i in range(40):
        (topics / f"t{i}.md").write_text(
            f"# T{i}\n\n## Part\n- zebra{i} facts " + "w " * 400 + "\n"
        )
    wait_for(lambda: len(d.search_paths("zebra39")) == 1, 10)
    assert d.stop() == 0
    return d


def test_a_damaged_index_is_rebuilt_on_start(home: Path) -> None:
    d = seeded(home)
    db = home / "index.db" if (home / "index.db").exists() else next(home.rglob("index.db"))
    damage(db)
    d.start()
    try:
        assert d.search_paths("zebra7") == {str(d.memory / "topics" / "t7.md")}
        st = d.call("status")
        rec = st["recovered"]
        assert "damaged" in rec["reason"] or "malformed" in rec["reason"]
        moved = Path(rec["moved_to"])
        assert moved.exists() and moved.name.startswith("index.db.corrupt-")
        log = d.log.read_text()
        assert "moved aside" in log and str(moved) in log
        out = d.cli("status")
        assert "damaged" in out.stdout and str(moved) in out.stdout
    finally:
        d.stop()


def test_reindex_full_rebuilds_a_damaged_index(home: Path) -> None:
    d = seeded(home)
    db = next(home.rglob("index.db"))
    damage(db)
    r = d.cli("reindex", "--full", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["indexed"] >= 40
    assert "Traceback" not in r.stderr
    assert any(p.name.startswith("index.db.corrupt-") for p in db.parent.iterdir())
    r = d.cli("search", "zebra12", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["hits"][0]["path"].endswith("t12.md")
    assert os.path.getsize(db) > 0
