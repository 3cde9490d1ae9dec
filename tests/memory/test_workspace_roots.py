"""Memory folders configured before they exist (a workspace not cloned yet, an extra folder on
a disk not mounted): memd does not create them, watches for them, and indexes them the moment
they appear. A real daemon, real folders, real watchdog."""

from __future__ import annotations

import os
from pathlib import Path

from tests.utils import DaemonProcess, wait_for


def _config(home: Path, **lists: list[Path]) -> None:
    body = "".join(f"{k} = [{', '.join(repr(str(p)) for p in v)}]\n" for k, v in lists.items())
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[memory]\n" + body, encoding="utf-8")


def test_a_workspace_that_appears_after_the_start_is_watched_and_indexed(
    home: Path, tmp_path: Path
) -> None:
    cloned = tmp_path / "code" / "app"  # its parent does not exist either
    made = tmp_path / "code" / "tool"
    _config(home, workspaces=[cloned, made])
    d = DaemonProcess(home).start()
    try:
        # memd made nothing there: `git clone` into the folder still works.
        assert not (tmp_path / "code").exists()
        # A clone: the whole folder arrives at once (made elsewhere, renamed into place).
        staging = tmp_path / "staging"
        (staging / ".git").mkdir(parents=True)
        (staging / ".memd" / "memory").mkdir(parents=True)
        (staging / ".memd" / "memory" / "context.md").write_text(
            "# App\n\n## Rules\n- the gyroscope needs calibrating\n"
        )
        (tmp_path / "code").mkdir()
        os.rename(staging, cloned)
        ctx = cloned / ".memd" / "memory" / "context.md"
        wait_for(lambda: d.search_paths("gyroscope") == {str(ctx)}, 15)
        # A folder made by hand, its memory added step by step, then edited: each seen.
        (made / ".memd").mkdir(parents=True)
        (made / ".memd" / "memory").mkdir()
        notes = made / ".memd" / "memory" / "notes.md"
        notes.write_text("# Tool\n\n## Notes\n- the theodolite is on loan\n")
        wait_for(lambda: d.search_paths("theodolite") == {str(notes)}, 15)
        with open(notes, "a", encoding="utf-8") as fh:
            fh.write("- the sextant came back\n")
        wait_for(lambda: d.search_paths("sextant") == {str(notes)}, 15)
        roots = {r["path"]: r["project"] for r in d.call("status")["roots"]}
        assert roots[str(ctx.parent)] == "app" and roots[str(notes.parent)] == "tool"
    finally:
        assert d.stop() == 0


def test_an_extra_root_that_appears_after_the_start_is_watched_and_indexed(
    home: Path, tmp_path: Path
) -> None:
    extra = tmp_path / "mnt" / "notes"
    _config(home, extra_roots=[extra])
    d = DaemonProcess(home).start()
    try:
        assert not extra.exists()
        extra.mkdir(parents=True)
        (extra / "boat.md").write_text("# Boat\n\n## Gear\n- the spinnaker is torn\n")
        wait_for(lambda: d.search_paths("spinnaker") == {str(extra / "boat.md")}, 15)
    finally:
        assert d.stop() == 0
