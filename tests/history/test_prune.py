"""Pruning: changes older than `keep_days` fold into one root, the prune is itself a change."""

from __future__ import annotations

from pathlib import Path

from memd.core.settings import load
from memd.history import Cause, History
from tests.history.conftest import Clock, git, write

DAY = 86400.0


def _history(tree: Path, tmp_path: Path, clock: Clock, keep_days: int) -> History:
    h = History(tree, tmp_path / "h.git", clock=clock, keep_days=keep_days)
    h.flush()
    return h


def test_prune_squashes_old_changes_and_records_itself(
    tree: Path, tmp_path: Path, clock: Clock
) -> None:
    clock.now -= 40 * DAY
    h = _history(tree, tmp_path, clock, keep_days=30)
    for n in range(4):  # days -40 .. -37: to be squashed
        clock.advance(DAY)
        write(tree, "topics/old.md", f"# Old\n\n- only in the old days {n}\n")
        h.record([tree / "topics/old.md"], Cause.REMEMBER, f"old {n}")
    write(tree, "topics/old.md", "# Old\n\n- what is left\n")
    h.record([tree / "topics/old.md"], Cause.EDIT, "old final")
    clock.advance(30 * DAY)  # days -6 .. : kept
    kept_ids = []
    for n in range(3):
        clock.advance(DAY)
        write(tree, "topics/new.md", f"# New\n\n- {n}\n")
        h.record([tree / "topics/new.md"], Cause.REMEMBER, f"new {n}")
        kept_ids.append(h.log()[0].id)
    clock.now = clock.now + DAY
    before = h.log(limit=0)
    assert len(before) == 1 + 5 + 3

    result = h.prune()

    assert (result.squashed, result.kept) == (6, 3)
    after = h.log(limit=0)
    assert [c.cause for c in after] == ["prune", "remember", "remember", "remember", "baseline"]
    assert result.change is not None and after[0].id == result.change.id
    assert "6 changes before" in after[0].detail
    # The kept changes keep their ids and their content; the new root holds the tree as of the
    # last squashed change.
    assert [c.id for c in after[1:4]] == kept_ids[::-1]
    assert [c.detail for c in after[1:4]] == ["new 2", "new 1", "new 0"]
    assert git(h, "show", f"{after[-1].commit}:topics/old.md") == "# Old\n\n- what is left\n"
    assert h.show(kept_ids[0]).diffs[0].path == "topics/new.md"
    # Plain git agrees, and what only the squashed changes held is gone from the object store.
    assert len(git(h, "log", "--format=%H").split()) == 5
    objects = git(h, "cat-file", "--batch-all-objects", "--batch")
    assert "only in the old days" not in objects
    assert "what is left" in objects
    assert git(h, "fsck", "--no-dangling").strip() == ""
    # Recording goes on after a prune, and undo still works across it.
    write(tree, "topics/new.md", "# New\n\n- 2\n- 3\n")
    h.record([tree / "topics/new.md"], Cause.REMEMBER, "new 3")
    h.apply_undo(h.undo(h.log()[0].id))
    assert (tree / "topics/new.md").read_text() == "# New\n\n- 2\n"


def test_prune_with_nothing_old_changes_nothing(tree: Path, tmp_path: Path, clock: Clock) -> None:
    h = _history(tree, tmp_path, clock, keep_days=30)
    write(tree, "topics/new.md", "# New\n")
    h.record([tree / "topics/new.md"], Cause.REMEMBER, "new")
    heads = git(h, "rev-parse", "HEAD")
    loose = int(git(h, "count-objects", "-v").split()[1])
    h.gc_loose_objects = loose + 1
    assert h.prune().squashed == 0
    assert f"count: {loose}" in git(h, "count-objects", "-v").splitlines()  # not yet
    h.gc_loose_objects = loose
    result = h.prune()
    assert (result.squashed, result.change) == (0, None)
    assert git(h, "rev-parse", "HEAD") == heads
    # Nothing to squash, but the loose objects the plumbing wrote were packed.
    assert "count: 0" in git(h, "count-objects", "-v").splitlines()


def test_keep_days_zero_keeps_everything(tree: Path, tmp_path: Path, clock: Clock) -> None:
    clock.now -= 1000 * DAY
    h = _history(tree, tmp_path, clock, keep_days=0)
    write(tree, "topics/new.md", "# New\n")
    h.record([tree / "topics/new.md"], Cause.REMEMBER, "new")
    clock.now += 1000 * DAY
    assert h.prune().squashed == 0
    assert len(h.log()) == 2


def test_keep_days_is_a_setting_with_an_env_override(tmp_path: Path) -> None:
    # No settings file (a file named on purpose must exist: there is none in this home).
    assert load(env={"MEMD_HOME": str(tmp_path)}).history_keep_days == 90
    cfg = tmp_path / "config.toml"
    cfg.write_text("[history]\nkeep_days = 14\n")
    assert load(cfg, env={}).history_keep_days == 14
    assert load(cfg, env={"MEMD_HISTORY_KEEP_DAYS": "7"}).history_keep_days == 7
    h = History.from_settings(load(cfg, env={"MEMD_HOME": str(tmp_path / "home")}))
    assert h.keep_days == 14
    assert h.git_dir == tmp_path / "home" / "data" / "history.git"
    assert h.tree == tmp_path / "home" / "memory"
