"""A section is found by its file's name: the file's title and path words are a column of the
sections' full-text index (`m110_sections_fts_file`), weighted below a body match.

A project's notes rarely say the project's name: it is in their file's title ("# Project
Kestrel") and path (`projects/kestrel/context.md`). Real SQLite, real files, the indexer."""

from __future__ import annotations

import gzip
import sqlite3
from pathlib import Path

import pytest

from memd.conversations import ranking
from memd.core.text import file_words
from memd.db import Store
from memd.db.migrations import MIGRATIONS
from memd.memory.indexer import Indexer, Root
from memd.memory.search import search_sections

FIXTURE = Path(__file__).parent.parent / "fixtures" / "db" / "index-aca16cc.db.gz"
KESTREL = (
    "# Project Kestrel\n\n## Deploys\n"
    "- Staging deploys from main on every merge; production from signed tags only\n\n"
    "## Decisions\n- Postgres 16 with logical replication to the reporting replica\n"
)
BIRDS = "# Birds\n\n## Seen\n- A kestrel hovering over the field behind the office\n"


def _index(tmp_path: Path, files: dict[str, str], *roots: Root) -> Store:
    root = tmp_path / "memory"
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    store = Store.open(tmp_path / "index.db")
    Indexer(store, [Root(root), *roots], max_file_bytes=1 << 20).reconcile()
    return store


def _found(store: Store, query: str) -> list[tuple[str, str]]:
    return [(h.path.rsplit("/memory/", 1)[-1], h.heading)
            for h in search_sections(store.read(), query)]  # fmt: skip


def test_file_words_are_the_title_and_the_path_without_repeats() -> None:
    assert file_words("Project Kestrel", "projects/kestrel/context.md") == (
        "Project Kestrel projects context"
    )
    assert file_words("做饭", "topics/cooking.md") == "做饭 topics cooking"
    # A project's own folder: its slug is the owner, not in the path.
    assert file_words("Notes", "notes.md", "tidewater-api") == "Notes tidewater-api"
    assert file_words("", ".memd/plan") == ".memd plan"


def test_a_query_naming_a_project_finds_its_notes(tmp_path: Path) -> None:
    store = _index(tmp_path, {"projects/kestrel/context.md": KESTREL,
                              "topics/go.md": "# Go\n\n## Style\n- gofmt and golangci-lint\n"})  # fmt: skip
    try:
        assert sorted(_found(store, "kestrel")) == [
            ("projects/kestrel/context.md", "Decisions"),
            ("projects/kestrel/context.md", "Deploys"),
        ]
        # Every word: the project's name by its file, the rest by the section.
        assert _found(store, "kestrel deploys")[0] == ("projects/kestrel/context.md", "Deploys")
        # `search`'s one page counts the file's name as the section's words.
        hits = ranking.search(store.read(), "kestrel", scope="memory")
        assert {h.heading for h in hits} == {"Deploys", "Decisions"}
        assert all(h.score > 0 for h in hits)
    finally:
        store.close()


def test_a_project_folder_is_found_by_its_slug(tmp_path: Path) -> None:
    folder = tmp_path / "src" / "kestrel" / ".memd"
    folder.mkdir(parents=True)
    (folder / "notes.md").write_text("# Notes\n\n## Deploys\n- Fly.io, two regions\n")
    store = _index(tmp_path, {}, Root(folder, "kestrel"))
    try:
        assert _found(store, "kestrel") == [(str(folder / "notes.md"), "Deploys")]
    finally:
        store.close()


def test_a_body_saying_the_name_ranks_above_a_file_named_so(tmp_path: Path) -> None:
    store = _index(tmp_path, {"projects/kestrel/context.md": KESTREL, "topics/birds.md": BIRDS})
    try:
        found = _found(store, "kestrel")
        assert found[0] == ("topics/birds.md", "Seen"), found
        assert len(found) == 3
        hits = ranking.search(store.read(), "kestrel", scope="memory")
        assert (hits[0].path.rsplit("/", 1)[-1], hits[0].heading) == ("birds.md", "Seen")
    finally:
        store.close()


def test_a_renamed_title_is_what_the_sections_are_found_by(tmp_path: Path) -> None:
    store = _index(tmp_path, {"projects/kestrel/context.md": KESTREL})
    try:
        store.w.run(lambda c: c.execute("UPDATE files SET title = 'Project Osprey'"))
        assert len(_found(store, "osprey")) == 2
        assert len(_found(store, "kestrel")) == 2  # its path still says it
        store.w.run(lambda c: c.execute(
            "UPDATE files SET rel = 'projects/osprey/context.md', owner = 'osprey'"))  # fmt: skip
        assert _found(store, "kestrel") == []
    finally:
        store.close()


def test_an_index_written_by_aca16cc_upgrades_and_finds_a_project_by_name(
    tmp_path: Path,
) -> None:
    db = tmp_path / "index.db"
    db.write_bytes(gzip.decompress(FIXTURE.read_bytes()))
    old = sqlite3.connect(db)
    had = {r[0] for r in old.execute("SELECT name FROM _memd_migrations")}
    sections = old.execute("SELECT id, file_id, heading, text FROM sections ORDER BY id").fetchall()
    # What the old index found: the bird, never the project's notes.
    old_hits = old.execute(
        "SELECT rowid FROM sections_fts WHERE sections_fts MATCH 'kestrel'"
    ).fetchall()
    old.close()
    assert len(old_hits) == 1
    store = Store.open(db)  # migrates, as the daemon does on start
    try:
        conn = store.read()
        ran = [r[0] for r in conn.execute("SELECT name FROM _memd_migrations ORDER BY rowid")]
        assert ran[len(had) :] == [m.__name__ for m in MIGRATIONS if m.__name__ not in had]
        assert "m110_sections_fts_file" in ran
        # The sections are kept as they were (their ids too: vectors and usage point at them).
        now = conn.execute("SELECT id, file_id, heading, text FROM sections ORDER BY id")
        assert [tuple(r) for r in now] == sections
        store.w.run(lambda c: c.execute("INSERT INTO sections_fts(sections_fts) VALUES ('integrity-check')"))  # fmt: skip
        found = _found(store, "kestrel")
        assert found[0] == ("topics/birds.md", "Seen")
        assert sorted(found[1:]) == [
            ("projects/kestrel/context.md", "Decisions"),
            ("projects/kestrel/context.md", "Deploys"),
        ]
        # A section indexed after the upgrade gets its file's words as well.
        store.w.run(lambda c: c.execute(
            "INSERT INTO sections(file_id, ordinal, heading, level, start_line, end_line, text,"
            " sha256, tokens) SELECT id, 9, 'Costs', 2, 20, 21, '- 40 USD a month', '', 5"
            " FROM files WHERE rel = 'projects/kestrel/context.md'"))  # fmt: skip
        assert ("projects/kestrel/context.md", "Costs") in _found(store, "kestrel")
    finally:
        store.close()


@pytest.mark.parametrize("title", ["Project Kestrel", ""])
def test_a_file_rewritten_keeps_one_row_per_section(tmp_path: Path, title: str) -> None:
    """Reindexing a file replaces its sections' full-text rows, never adds to them."""
    text = KESTREL if title else KESTREL.split("\n", 2)[2]
    store = _index(tmp_path, {"projects/kestrel/context.md": text})
    try:
        path = tmp_path / "memory" / "projects" / "kestrel" / "context.md"
        path.write_text(text + "\n## Costs\n- 40 USD a month\n", encoding="utf-8")
        Indexer(store, [Root(tmp_path / "memory")], max_file_bytes=1 << 20).reconcile()
        conn = store.read()
        n_fts = conn.execute("SELECT count(*) FROM sections_fts").fetchone()[0]
        n_sections = conn.execute("SELECT count(*) FROM sections").fetchone()[0]
        assert n_fts == n_sections == 3
        assert len(_found(store, "kestrel")) == 3
    finally:
        store.close()
