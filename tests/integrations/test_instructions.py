"""memd's block in an assistant's instructions file: only the block changes, the user's text is
kept byte for byte, broken markers leave the file alone, and the daemon keeps it current."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memd.core.errors import ConfigError
from memd.core.text import estimate_tokens
from memd.integrations import instructions as ins
from memd.integrations.instructions import END, Keeper, Target, Targets

USER_TEXT = "# My rules\n\nUse tabs.\r\nNever push on fridays.  \n"


def text(path: Path) -> str:
    return path.read_bytes().decode()


def block(text: str = "likes tea") -> str:
    return ins.body("codex", text)


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
    targets.add(Target("codex", str(good)))
    targets.add(Target("gemini", str(bad)))
    memory = {"text": "likes tea"}
    keeper = Keeper(targets, lambda assistant: f"{memory['text']} ({assistant})")
    assert keeper.refresh() == 1
    assert "likes tea (codex)" in text(good) and text(good).startswith(USER_TEXT)
    assert keeper.refresh() == 0  # nothing changed: nothing written
    memory["text"] = "likes coffee"
    assert keeper.refresh() == 1 and "likes coffee" in text(good)
    st = {t["assistant"]: t for t in keeper.status()["instructions"]}
    assert st["codex"]["problem"] == "" and st["codex"]["written_at"]
    assert "markers are broken" in st["gemini"]["problem"]
    assert text(bad) == "<!-- memd:begin x -->\n"
    targets.drop(str(bad))
    assert [t.assistant for t in targets.load()] == ["codex"]
