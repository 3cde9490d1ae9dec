"""The progress registry: tasks appear while their work runs, with rate and time left."""

from __future__ import annotations

import pytest

from memd.core.errors import DaemonStopping
from memd.core.progress import Progress


def test_a_task_reports_done_total_rate_and_eta_while_open() -> None:
    now = [100.0]
    p = Progress(clock=lambda: now[0])
    with p.task("indexing memory files") as t:
        t.add_total(300)
        t.advance(100)
        now[0] = 102.0
        (snap,) = p.snapshot()
        assert (snap.what, snap.unit, snap.done, snap.total) == (
            "indexing memory files", "files", 100, 300,
        )  # fmt: skip
        assert snap.rate == 50.0 and snap.eta_s == 4.0 and snap.elapsed_s == 2.0
        with p.task("importing x.json", unit="") as inner:
            assert [s.what for s in p.snapshot()] == [
                "indexing memory files",
                "importing x.json",
            ]
            assert p.snapshot()[1].eta_s is None and inner.total == 0
    assert p.snapshot() == []


def test_after_a_stop_long_work_ends_at_its_next_report() -> None:
    p = Progress()
    with p.task("indexing memory files") as t:
        t.add_total(10)
        t.advance(4)
        p.stop()
        with pytest.raises(DaemonStopping, match="indexing memory files ended at 4 files"):
            t.advance()
    assert p.snapshot() == []  # the task is closed on the way out
    with pytest.raises(DaemonStopping), p.task("rebuilding the index") as later:
        later.add_total(1)  # work opened after the stop ends at its first report too
