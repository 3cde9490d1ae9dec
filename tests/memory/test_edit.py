from __future__ import annotations

from pathlib import Path

from memd.memory.parse import parse_markdown
from memd.memory.tree import classify, create_tree, is_memory_file
from tests.doors import append_item, remove_items, update_items


def test_append_into_existing_section_keeps_the_rest(tmp_path: Path) -> None:
    p = tmp_path / "prefs.md"
    original = (
        "---\ntype: x\n---\n# Prefs\n\n## Testing\n- jest\n\n## Other\nhand-written *text*   \n"
    )
    p.write_text(original)
    item = append_item(p, "Testing", "always   use vitest", {"id": "m_1", "type": "preference"})
    text = p.read_text()
    assert "- always use vitest <!-- memd id=m_1 type=preference -->" in text
    assert item.line == 8
    assert "hand-written *text*   \n" in text  # untouched bytes elsewhere
    sec = [s for s in parse_markdown(text).sections if s.heading == "Testing"][0]
    assert [i.text for i in sec.items] == ["jest", "always use vitest"]


def test_append_creates_file_and_section(tmp_path: Path) -> None:
    p = tmp_path / "new" / "notes.md"
    append_item(p, "Notes", "first", {"id": "m_1"}, title="Notes")
    append_item(p, "Later", "second", {})
    parsed = parse_markdown(p.read_text())
    assert parsed.title == "Notes"
    assert [s.heading for s in parsed.sections] == ["Notes", "Later"]


def test_remove_and_update(tmp_path: Path) -> None:
    p = tmp_path / "a.md"
    p.write_text("# A\n\n## S\n- keep\n- drop me <!-- memd id=m_2 -->\n- also keep\n")
    gone = remove_items(p, lambda t, m: m.get("id") == "m_2")
    assert [g.text for g in gone] == ["drop me"]
    assert p.read_text() == "# A\n\n## S\n- keep\n- also keep\n"
    assert remove_items(p, lambda t, m: False) == []
    update_items(p, lambda t, m: t == "keep", lambda t, m: (t, {**m, "superseded": "2026-11-21"}))
    assert "- keep <!-- memd superseded=2026-11-21 -->" in p.read_text()


def test_tree_templates_and_kinds(tmp_path: Path) -> None:
    created = create_tree(tmp_path)
    assert (tmp_path / "_core" / "profile.md").exists() and (tmp_path / "archive").is_dir()
    assert created and create_tree(tmp_path) == []  # idempotent, never overwrites
    assert classify("_core/profile.md")[0].value == "core"
    assert classify("agents/bob/relationship.md") == (classify("agents/bob/x.md")[0], "bob")
    assert classify("projects/app/context.md")[1] == "app"
    assert classify("x.md", project_tier=True)[0].value == "project"
    for ok in ("topics/vue.md", "journal/2026-11-21.md", "a/b/c.markdown"):
        assert is_memory_file(ok), ok
    for bad in (".hidden.md", "topics/.note.md.swp", "note.md~", "topics/x.txt", "4913", "README.md",
                "topics/#x.md#", "x.md___jb_tmp___", ".git/x.md"):  # fmt: skip
        assert not is_memory_file(bad), bad


def test_concurrent_appends_lose_nothing(tmp_path: Path) -> None:
    import threading

    p = tmp_path / "notes.md"
    threads = [
        threading.Thread(target=lambda i=i: append_item(p, "Notes", f"item {i}", {"id": f"m_{i}"}))
        for i in range(40)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    items = parse_markdown(p.read_text()).sections[-1].items
    assert sorted(int(i.text.split()[1]) for i in items) == list(range(40))
    assert not [f for f in tmp_path.iterdir() if f.name.endswith(".memd-tmp")]


def test_append_finds_the_section_outside_code_blocks(tmp_path: Path) -> None:
    p = tmp_path / "prefs.md"
    # The `~~~` lines inside the ``` block neither open nor close a fence.
    p.write_text("# Prefs\n\n```md\n~~~\n## Testing\n~~~\n```\n\n## Testing\n- jest\n")
    item = append_item(p, "Testing", "vitest", {"id": "m_1"})
    lines = p.read_text().split("\n")
    assert item.line == 11 and lines[10] == "- vitest <!-- memd id=m_1 -->"
    assert lines[2:7] == ["```md", "~~~", "## Testing", "~~~", "```"]
    sec = parse_markdown(p.read_text()).sections[-1]
    assert sec.heading == "Testing" and [i.text for i in sec.items] == ["jest", "vitest"]


def test_append_under_a_setext_heading_and_before_the_next_one(tmp_path: Path) -> None:
    p = tmp_path / "prefs.md"
    # Without the blank line it adds, `Tools` would continue the new item's paragraph.
    p.write_text("Prefs\n=====\n\nTesting\n-------\nTools\n-----\n- vim\n")
    append_item(p, "Testing", "vitest", {})
    assert p.read_text() == "Prefs\n=====\n\nTesting\n-------\n- vitest\n\nTools\n-----\n- vim\n"
    assert [s.heading for s in parse_markdown(p.read_text()).sections] == ["Testing", "Tools"]


def test_append_after_an_html_block_leaves_a_blank_line(tmp_path: Path) -> None:
    p = tmp_path / "notes.md"
    p.write_text("# N\n\n## Notes\n<details>\nold notes\n")
    item = append_item(p, "Notes", "new", {"id": "m_1"})
    assert p.read_text() == "# N\n\n## Notes\n<details>\nold notes\n\n- new <!-- memd id=m_1 -->\n"
    assert item.line == 7
    assert [i.text for i in parse_markdown(p.read_text()).sections[-1].items] == ["new"]


def test_append_into_an_unclosed_fence_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    import pytest

    from memd.core.errors import SourceError

    p = tmp_path / "notes.md"
    original = "# N\n\n## Notes\n- a\n\n```sh\n## not a heading\nnpm test\n"
    p.write_text(original)
    for section in ("Notes", "Elsewhere"):
        with pytest.raises(SourceError, match="never closed") as exc:
            append_item(p, section, "new", {"id": "m_1"})
        assert "close the code fence" in exc.value.hint
        assert p.read_text() == original


def test_remove_and_update_leave_code_blocks_alone(tmp_path: Path) -> None:
    p = tmp_path / "a.md"
    text = (
        "# A\n\n## S\n```md\n- use vitest\n~~~\n```\n- use vitest\n\nProse.\n\n    - use vitest\n"
    )
    p.write_text(text)
    assert [g.line for g in remove_items(p, lambda t, m: t == "use vitest")] == [8]
    assert p.read_text() == text.replace("```\n- use vitest\n", "```\n")
    p.write_text(text)
    update_items(p, lambda t, m: t == "use vitest", lambda t, m: (t, {"imp": "9"}))
    assert p.read_text() == text.replace(
        "```\n- use vitest\n", "```\n- use vitest <!-- memd imp=9 -->\n"
    )


def test_update_keeps_the_marker_and_the_task_box(tmp_path: Path) -> None:
    p = tmp_path / "tasks.md"
    p.write_text(
        "# T\n\n## Open\n1. first <!-- memd id=m_1 -->\n  * [x] done <!-- memd id=m_2 -->\n"
    )
    update_items(p, lambda t, m: True, lambda t, m: (t, {**m, "seen": "2026-11-23"}))
    assert p.read_text() == (
        "# T\n\n## Open\n1. first <!-- memd id=m_1 seen=2026-11-23 -->\n"
        "  * [x] done <!-- memd id=m_2 seen=2026-11-23 -->\n"
    )
