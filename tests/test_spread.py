"""scripts/test's parallel step hands out a file that names `mark.spread` test by test and every
other file whole (the scheduler in tests/conftest.py)."""

from __future__ import annotations

import pytest

from tests import conftest

SETS = "tests/extraction/test_extraction_sets.py"
EDIT = "tests/memory/test_edit.py"


def _scheduler(config: pytest.Config, monkeypatch: pytest.MonkeyPatch, dist: str) -> object:
    # As `-n 3 --dist loadfile` would set them (this test may run under xdist or without it).
    monkeypatch.setattr(config.option, "dist", dist, raising=False)
    monkeypatch.setattr(config.option, "tx", ["3*popen"], raising=False)
    monkeypatch.setattr(config.option, "numprocesses", None, raising=False)
    return conftest.pytest_xdist_make_scheduler(config, None)


def test_the_extraction_sets_go_out_one_by_one_other_files_whole(
    pytestconfig: pytest.Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    sched = _scheduler(pytestconfig, monkeypatch, "loadfile")
    ids = [
        f"{SETS}::test_own_sets_floor[extraction_own.jsonl-51-7-0]",
        f"{SETS}::test_own_sets_floor[extraction_own2.jsonl-42-5-0]",
        f"{EDIT}::test_a",
        f"{EDIT}::test_b",
    ]
    assert [sched._split_scope(i) for i in ids] == [ids[0], ids[1], EDIT, EDIT]  # type: ignore[attr-defined]


def test_other_distributions_keep_xdist_own_scheduler(
    pytestconfig: pytest.Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _scheduler(pytestconfig, monkeypatch, "loadgroup") is None
