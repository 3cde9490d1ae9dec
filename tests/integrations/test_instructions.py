"""memd's block in an assistant's instructions file: only the block changes, the user's text is
kept byte for byte, broken markers leave the file alone, and the daemon keeps it current —
never within seconds of the file's last change, the recent conversations at most every few
minutes. (Editors racing the daemon's writes: test_instructions_race.py.)"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from memd.api import messages as m
from memd.core.errors import ConfigError
from memd.core.text import estimate_tokens
from memd.integrations import instructions as ins
from memd.integrations.instructions import END, Keeper, Target, Targets

USER_TEXT = "# My rules\n\nUse tabs.\r\nNever push on fridays.  \n"


def text(path: Path) -> str:
    return path.read_bytes().decode()


def block(text: str = "likes tea") -> str:
    return ins.body("codex", text)


def age(path: Path, seconds: float) -> None:
    """Make the file's last change `seconds` old."""
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_a_block_is_added_after_the_users_text_and_replaced_in_place() -> None:
    first = ins.apply_block(USER_TEXT, block("likes tea"))
    assert first.startswith(USER_TEXT) and first.endswith(END + "\n")
    assert "likes tea" in first
    second = ins.apply_block(first, block("likes coffee"))
    assert second.startswith(USER_TEXT) and "likes coffee" in second and "likes tea" not in second
    # The user writes below the block later: kept where it is.
    third = ins.apply_block(second + "\nMore of mine.\n", block("likes water"))
    assert third.startswith(USER_TEXT) and third.endswith("\nMore of mine.\n")
    assert ins.remove_block(third) == USER_TEXT + "\n\nMore of mine.\n"
    assert ins.remove_block(ins.apply_block(USER_TEXT, block())) == USER_TEXT
    assert ins.apply_block(None, block()) == block()
    assert ins.remove_block(block()) == ""


@pytest.mark.parametrize(
    "broken",
    [
        "mine\n<!-- memd:begin x -->\nold\n",  # a begin without its end
        "mine\n<!-- memd:end -->\n",
        "<!-- memd:end -->\n<!-- memd:begin x -->\n",
        "<!-- memd:begin a -->\n<!-- memd:end -->\n<!-- memd:begin b -->\n<!-- memd:end -->\n",
    ],
)
def test_broken_markers_leave_the_file_alone(tmp_path: Path, broken: str) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_text(broken)
    with pytest.raises(ConfigError, match="markers are broken"):
        ins.write(Target("codex", str(path)), block())
    assert path.read_text() == broken


def test_write_keeps_the_mode_writes_through_a_link_and_only_when_changed(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "AGENTS.md"
    real.parent.mkdir()
    real.write_text(USER_TEXT)
    os.chmod(real, 0o640)
    link = tmp_path / "AGENTS.md"
    link.symlink_to(real)
    t = Target("codex", str(link))
    assert ins.write(t, block()) is True
    assert link.is_symlink() and text(real).startswith(USER_TEXT)
    assert oct(real.stat().st_mode & 0o777) == "0o640"
    mtime = real.stat().st_mtime_ns
    assert ins.write(t, block()) is False and real.stat().st_mtime_ns == mtime
    assert ins.remove(t) is True and text(real) == USER_TEXT


def test_a_file_memd_owns_in_a_folder_of_instructions(tmp_path: Path) -> None:
    t = Target("cline", str(tmp_path / "rules" / "memd.md"), "file")
    assert ins.write(t, block()) is True
    assert text(tmp_path / "rules" / "memd.md") == block()
    # A rule file that must start with its front matter (Continue's rules) keeps it first.
    rule = Target(
        "continue", str(tmp_path / "rules" / "memd-rule.md"), "file", "---\nname: memd\n---\n"
    )
    targets = Targets(tmp_path / "t.json")
    targets.add(rule)
    assert targets.load() == [rule]
    assert ins.write(rule, block()) and text(Path(rule.path)) == rule.head + block()
    assert ins.remove(t) is True and not (tmp_path / "rules" / "memd.md").exists()


def test_compose_keeps_within_the_budget() -> None:
    recent = "## Kiwi diet — 2026-09-21\n(session s1, 2 turns, OpenCode)\nSummary: worms"
    out = ins.compose("## Core\n- likes tea", recent, 1000)
    assert "likes tea" in out and "Recent conversations" in out and "OpenCode" in out
    long = ins.compose("x " * 20_000, recent, 200)
    assert estimate_tokens(long) <= 210
    assert ins.compose("", "Nothing recalled.", 100) == ""


def test_the_keeper_refreshes_targets_and_reports_problems(tmp_path: Path) -> None:
    targets = Targets(tmp_path / "state" / "instructions.json")
    good = tmp_path / "AGENTS.md"
    good.write_text(USER_TEXT)
    bad = tmp_path / "GEMINI.md"
    bad.write_text("<!-- memd:begin x -->\n")
    age(good, 3600)
    age(bad, 3600)
    targets.add(Target("codex", str(good)))
    targets.add(Target("gemini", str(bad)))
    memory = {"text": "likes tea"}
    keeper = Keeper(targets, lambda assistant: f"{memory['text']} ({assistant})")
    assert keeper.refresh() == 1
    assert "likes tea (codex)" in text(good) and text(good).startswith(USER_TEXT)
    age(good, 3600)
    assert keeper.refresh() == 0  # nothing changed: nothing written
    memory["text"] = "likes coffee"
    assert keeper.refresh() == 1 and "likes coffee" in text(good)
    out = m.StatusResult(version="", daemon=m.DaemonStatus(), socket="")
    keeper.status_into(out)
    assert isinstance(out.instructions, list)
    st = {t.assistant: t for t in out.instructions}
    assert st["codex"].problem == "" and st["codex"].written_at
    assert "markers are broken" in st["gemini"].problem
    assert text(bad) == "<!-- memd:begin x -->\n"
    targets.drop(str(bad))
    assert [t.assistant for t in targets.load()] == ["codex"]


def test_the_keeper_writes_memory_at_once_and_recent_conversations_every_few_minutes(
    tmp_path: Path,
) -> None:
    """A dotfile kept under git must not change every few seconds: the recent conversations
    alone are written once the file is RECENT_EVERY_S old, a changed memory at once — but never
    within QUIET_S of the file's last change (a person editing it)."""
    targets = Targets(tmp_path / "instructions.json")
    path = tmp_path / "AGENTS.md"
    path.write_text(USER_TEXT)
    age(path, 3600)
    targets.add(Target("codex", str(path)))
    now = {"memory": "- likes tea", "recent": "## Kiwi diet\n(session s1, 2 turns, Codex CLI)"}
    keeper = Keeper(targets, lambda a: ins.compose(now["memory"], now["recent"], 1000))
    assert keeper.refresh() == 1 and "(session s1, 2 turns" in text(path)
    # A new turn in a conversation: the recent part changed, the memory did not.
    now["recent"] = "## Kiwi diet\n(session s1, 3 turns, Codex CLI)"
    age(path, ins.QUIET_S + 30)
    assert keeper.refresh() == 0 and "(session s1, 2 turns" in text(path)
    age(path, ins.RECENT_EVERY_S + 1)
    assert keeper.refresh() == 1 and "(session s1, 3 turns" in text(path)
    # The memory changed, a moment after the person saved the file: left until it is quiet.
    now["memory"] = "- likes coffee"
    with open(path, "a", encoding="utf-8") as f:
        f.write("\nA line of mine.\n")
    assert keeper.refresh() == 0 and "likes coffee" not in text(path)
    age(path, ins.QUIET_S + 1)
    assert keeper.refresh() == 1
    assert "likes coffee" in text(path) and text(path).endswith("\nA line of mine.\n")
    # The memory changed a moment after memd's own write: the same quiet time first.
    now["memory"] = "- likes water"
    assert keeper.refresh() == 0
    age(path, ins.QUIET_S + 1)
    assert keeper.refresh() == 1 and "likes water" in text(path)
    # A file that is gone gets the block again at once (nothing of the person's to wait for).
    path.unlink()
    assert keeper.refresh() == 1 and "likes water" in text(path)


def test_a_file_that_is_not_utf8_keeps_its_bytes(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    mine = b"caf\xe9 latin-1 notes\n"
    path.write_bytes(mine)
    assert ins.write(Target("codex", str(path)), block()) is True
    assert path.read_bytes().startswith(mine) and b"likes tea" in path.read_bytes()
