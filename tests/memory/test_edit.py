from __future__ import annotations

from pathlib import Path

from memd.memory.edit import append_item, remove_items, update_items
from memd.memory.parse import parse_markdown
from memd.memory.tree import classify, create_tree, is_memory_file


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
