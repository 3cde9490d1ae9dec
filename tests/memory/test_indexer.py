from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from memd.app import Engine
from memd.core.settings import load
from memd.db import Store
from memd.memory import repo as docs
from memd.memory.indexer import Indexer, Root, plan_reconcile
from memd.memory.search import search_sections


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    (root / "topics").mkdir(parents=True)
    (root / "topics" / "perf.md").write_text(
        "# Perf\n\n## 计划\n我想优化记忆系统的性能\n\n## En\nWe are optimizing the indexer.\n"
    )
    (root / "topics" / "vue.md").write_text("# Vue\n\n## Components\n- 组件 should be small\n")
    return root


def _indexer(tmp_path: Path, root: Path) -> tuple[Store, Indexer]:
    store = Store.open(tmp_path / "index.db")
    return store, Indexer(store, [Root(root)], max_file_bytes=1 << 20)


def test_cjk_words_and_english_stems_are_found(tmp_path: Path, tree: Path) -> None:
    store, ix = _indexer(tmp_path, tree)
    ix.reconcile()
    conn = store.read()
    hits = search_sections(conn, "记忆")
    assert [h.heading for h in hits] == ["计划"] and "记忆" in hits[0].snippet
    assert [h.heading for h in search_sections(conn, "性能")] == ["计划"]
    assert [h.heading for h in search_sections(conn, "组件")] == ["Components"]
    assert search_sections(conn, "记性") == []  # not a substring of the text: no false bigram match
    assert [h.heading for h in search_sections(conn, "optimize")] == ["En"]  # porter: optimizing
    assert search_sections(conn, "vue component")[0].path.endswith("vue.md")
    h = search_sections(conn, "optimize")[0]
    assert (h.start_line, h.end_line) == (6, 8) and h.score > 0
    store.close()


def test_unchanged_files_are_not_reindexed(tmp_path: Path, tree: Path) -> None:
    store, ix = _indexer(tmp_path, tree)
    assert ix.reconcile().indexed == 2
    assert ix.reconcile().indexed == 0  # nothing touched: not even read
    os.utime(tree / "topics" / "vue.md", ns=(1, 1))  # mtime changed, content not
    rep = ix.reconcile()
    assert (rep.indexed, rep.unchanged) == (0, 1)
    (tree / "topics" / "vue.md").write_text("# Vue\n\n## Components\n- changed\n")
    rep = ix.reconcile()
    assert rep.indexed == 1 and search_sections(store.read(), "changed")
    (tree / "topics" / "vue.md").unlink()
    assert ix.reconcile().deleted == 1
    store.close()


def test_a_whole_file_is_opened_once_to_be_indexed(
    tmp_path: Path, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Opening is most of the cost of reading a small file: a cold index of 10,000 files opened
    # each one twice (once to check it, once to read it).
    for f in tree.rglob("*.md"):
        os.utime(f, (1e9, 1e9))  # saved long ago: nothing to wait for
    store, ix = _indexer(tmp_path, tree)
    opened: list[str] = []
    real_open = os.open

    def counting_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if str(path).endswith(".md"):
            opened.append(os.path.basename(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting_open)
    assert ix.reconcile().indexed == 2
    monkeypatch.undo()
    assert sorted(opened) == ["perf.md", "vue.md"]
    assert [h.heading for h in search_sections(store.read(), "记忆")] == ["计划"]
    store.close()


def test_bad_files_are_reported_and_never_stop_the_rest(tmp_path: Path, tree: Path) -> None:
    bad = tree / "bad"
    bad.mkdir()
    (bad / "latin1.md").write_bytes("# Café\ncaf\xe9 au lait\n".encode("latin-1"))
    (bad / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00binary")
    with open(bad / "huge.md", "wb") as fh:
        fh.write(b"# Huge\n" + b"x" * (50 << 20))
    (bad / "fm.md").write_text(
        "---\ntags: [oops\n---\n# FM\n\n## Still here\nsearchable-broken-fm\n"
    )
    store = Store.open(tmp_path / "index.db")
    ix = Indexer(store, [Root(tree)], max_file_bytes=10 << 20)
    rep = ix.reconcile()
    assert rep.indexed == 3  # two good files + the broken-front-matter file (indexed as text)
    probs = {Path(p.path).name: p.reason for p in docs.problems(store.read())}
    assert "invalid UTF-8 at byte" in probs["latin1.md"]
    assert "binary" in probs["binary.md"]
    assert "too large: 50.0 MB" in probs["huge.md"]
    assert "broken front matter" in probs["fm.md"]
    assert search_sections(store.read(), "searchable-broken-fm")
    assert search_sections(store.read(), "记忆")
    (bad / "latin1.md").write_text("# Café\nfixed now\n")
    ix.reconcile()
    names = {Path(p.path).name for p in docs.problems(store.read())}
    assert "latin1.md" not in names
    store.close()


def test_plan_reconcile_is_pure() -> None:
    disk = {"a": (1, 10), "b": (2, 20), "c": (3, 30)}
    known = {"a": (1, 10, "h"), "b": (9, 20, "h"), "d": (1, 1, "h")}
    assert plan_reconcile(disk, known) == (["b", "c"], ["d"])


def test_full_rebuild_swaps_atomically_and_keeps_state(
    tmp_path: Path, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMD_HOME", str(tmp_path / "h"))
    s = load(overrides={"memory.root": str(tree)})
    store = Store.open(s.db_path)
    eng = Engine(s, store)
    eng.indexer.reconcile()
    eng.ops.set_enabled(False)
    reader = store.read()
    before = reader.execute("SELECT count(*) FROM sections").fetchone()[0]
    rep = eng.handle("reindex", {"full": True})
    assert rep["full"] and rep["indexed"] == 2
    conn = store.read()  # a fresh reader on the swapped file
    assert conn is not reader
    assert conn.execute("SELECT count(*) FROM sections").fetchone()[0] == before
    assert eng.ops.enabled() is False  # operational state survived the rebuild
    assert search_sections(conn, "记忆")
    assert not Path(str(s.db_path) + ".rebuild").exists()
    store.w.run(lambda c: docs.set_state(c, "after", "swap"))  # the writer works on the new file
    assert docs.get_state(store.read(), "after") == "swap"
    store.close()


def test_files_of_a_folder_that_is_no_longer_a_root_do_not_stay_as_they_were(
    tmp_path: Path, tree: Path
) -> None:
    """A project's folder is a root once memd writes memory there, and not after a restart
    until the project is used again; a memory folder moved or an extra folder taken out is
    not memory any more. Their files stayed in the index as they were: a memory deleted from
    the project while memd was down was still found by every search."""
    project = tmp_path / "shop" / ".memd" / "memory"
    project.mkdir(parents=True)
    (project / "context.md").write_text("# Shop\n\n## Deploy\n- the shop deploys with kamal\n")
    (project / "notes.md").write_text("# Shop\n\n## Notes\n- invoices go out on fridays\n")
    store = Store.open(tmp_path / "index.db")
    Indexer(store, [Root(tree), Root(project, "shop")]).reconcile()
    assert search_sections(store.read(), "kamal") and search_sections(store.read(), "invoices")
    # memd restarts (the project is not used yet); meanwhile the person deleted one memory
    # file and changed the other.
    (project / "context.md").unlink()
    (project / "notes.md").write_text("# Shop\n\n## Notes\n- invoices go out on mondays\n")
    rep = Indexer(store, [Root(tree)]).reconcile()
    conn = store.read()
    assert search_sections(conn, "kamal") == [] and rep.deleted == 1
    assert [h.path for h in search_sections(conn, "mondays")] == [str(project / "notes.md")]
    assert search_sections(conn, "fridays") == []
    assert search_sections(conn, "optimizing")  # the memory folder's own files are kept
    # The memory folder moved elsewhere: what was in the old one is no longer found; the
    # project's file is (its folder is still the project's).
    moved = tmp_path / "memory2"
    moved.mkdir()
    Indexer(store, [Root(moved)]).reconcile()
    conn = store.read()
    assert search_sections(conn, "optimizing") == [] and search_sections(conn, "mondays")
    store.close()
