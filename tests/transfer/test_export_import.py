"""`memd export` from one MEMD_HOME, `memd import` into an empty one: the same answers.

Two real daemons on two homes; conversations pushed through the `ingest` socket method,
memories through `remember`, the offline extraction job and hand-written Markdown. A third
home without a daemon takes the damaged files and the `--no-tree` export.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from memd.conversations.ingest import write_turns
from memd.db import Store
from memd.memory.indexer import Indexer, Root
from memd.transfer import export, merge
from tests.conversations.helpers import rows, turn
from tests.utils import DaemonProcess

PROFILE = """# User Profile

## Basic Info

- Name: Lin, a backend developer
- Lives in Berlin

## Background

Writes Go and Python at work; learning Rust at night.
"""

RUST = """# Rust

## Learning

- Reading the async book, chapter 4
- Tokio for the side project <!-- memd id=m_rust0001 type=knowledge imp=6 src=manual at=2026-01-05 -->

## Questions

Lifetimes in trait objects still confuse me.
"""


def _sessions(now: float) -> list[dict[str, Any]]:
    t0 = now - 3 * 3600
    turns = [
        (
            "vue-chat",
            "q1",
            "user",
            "Should I pick Vue or React for the dashboard?",
            {"title": "Dashboard framework"},
        ),
        ("vue-chat", "a1", "assistant", "Vue 3 with Pinia fits a small team well.", {}),
        ("tokyo", "q1", "user", "我下个月去东京旅行，帮我规划一下行程", {}),
        ("vue-chat", "q2", "user", "And for state management, Pinia or Vuex?", {}),
        ("tokyo", "a1", "assistant", "第一天去浅草寺，第二天去秋叶原。", {}),
        ("vue-chat", "a2", "assistant", "Pinia: Vuex is in maintenance mode now.", {}),
        (
            "db",
            "q1",
            "user",
            "I prefer PostgreSQL over MySQL for new projects.",
            {"agent_id": "coder"},
        ),
        (
            "db",
            "a1",
            "assistant",
            "Noted, PostgreSQL it is for the billing service.",
            {"agent_id": "coder"},
        ),
        ("db", "q2", "user", "I always use pytest for testing Python code.", {"agent_id": "coder"}),
        (
            "db",
            "a2",
            "assistant",
            "pytest with fixtures, then. Shall I set up the database fixture?",
            {"agent_id": "coder"},
        ),
    ]
    return [{"session_id": s, "id": i, "role": r, "content": c, "ts": t0 + n * 60, **kw}
            for n, (s, i, r, c, kw) in enumerate(turns)]  # fmt: skip


def _ok(proc: subprocess.CompletedProcess[str]) -> Any:
    assert proc.returncode == 0, (
        f"exit {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr}"
    )
    return json.loads(proc.stdout)


def _norm(d: DaemonProcess | Path, data: Any) -> Any:
    """The JSON with the home folder (absolute paths, which legitimately differ) replaced."""
    home = d.home if isinstance(d, DaemonProcess) else d
    return json.loads(json.dumps(data, ensure_ascii=False).replace(str(home), "<home>"))


def _answers(d: DaemonProcess) -> dict[str, Any]:
    return {
        "memories": _norm(d, _ok(d.cli("memories", "--all", "--json"))),
        "sessions": _norm(d, _ok(d.cli("recall", "--mode", "sessions", "--json"))),
        "topic": _norm(d, _ok(d.cli("recall", "Pinia", "state", "--json"))),
        "topic_zh": _norm(d, _ok(d.cli("recall", "东京", "--json"))),
        "search": _norm(d, _ok(d.cli("search", "PostgreSQL", "--limit", "20", "--json"))),
        "search_md": _norm(d, _ok(d.cli("search", "Rust tokio", "--json"))),
    }


def _tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.md"))
    }


def _counts(d: DaemonProcess) -> tuple[int, int, int, int]:
    st = d.call("status")
    return (
        st["logs"]["sessions"],
        st["logs"]["turns"],
        st["index"]["files"],
        len(d.call("memories", {"all": True})["items"]),
    )


@pytest.fixture
def homes() -> Iterator[Path]:
    """A short folder for the homes (AF_UNIX socket paths must stay under ~100 bytes)."""
    with tempfile.TemporaryDirectory(prefix="memd-x-", dir="/tmp") as d:
        yield Path(d)


@pytest.fixture
def source(homes: Path) -> Iterator[DaemonProcess]:
    home = homes / "a"
    (home / "memory" / "_core").mkdir(parents=True)
    (home / "memory" / "topics").mkdir()
    (home / "memory" / "_core" / "profile.md").write_text(PROFILE, encoding="utf-8")
    (home / "memory" / "topics" / "rust.md").write_text(RUST, encoding="utf-8")
    d = DaemonProcess(home).start()
    yield d
    if d.proc and d.proc.poll() is None:
        d.stop()


def test_export_then_import_into_an_empty_home_answers_the_same(
    source: DaemonProcess, homes: Path, tmp_path: Path
) -> None:
    a = source
    res = a.call("ingest", {"turns": _sessions(time.time())})
    assert res["added"] == 10 and res["sessions"] == ["db", "tokyo", "vue-chat"]
    _ok(a.cli("remember", "Prefers dark mode in every editor", "--type", "preference", "--json"))
    _ok(a.cli("remember", "Answers in short bullet points", "--agent", "coder", "--json"))
    _ok(a.cli("remember", "Renew the passport before the Tokyo trip", "--type", "task", "--json"))
    extracted = _ok(a.cli("extract", "--now", "--json"))
    assert extracted["outcome"] == "success" and extracted["counts"]["added"] >= 1, extracted
    before = _answers(a)
    assert before["topic"]["sessions"][0]["session_id"] == "vue-chat"
    assert before["topic_zh"]["sessions"][0]["session_id"] == "tokyo"
    assert any(h["kind"] == "turn" for h in before["search"]["hits"])
    assert any(h.get("kind") == "section" for h in before["search"]["hits"])

    out = tmp_path / "out" / "memd-export.json"
    out.parent.mkdir()
    rep = _ok(a.cli("export", str(out), "--json"))
    assert rep["sessions"] == 3 and rep["chats"] == 10 and rep["files"] >= 5, rep
    assert out.stat().st_mode & 0o777 == 0o600
    assert not [p for p in out.parent.iterdir() if p != out], "the temp file was left behind"
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert (doc["format"], doc["version"]) == ("memd-export", 1)
    dt.datetime.fromisoformat(doc["exported_at"])
    vue = next(s for s in doc["sessions"] if s["session_id"] == "vue-chat")
    assert [c["turn_id"] for c in vue["chats"]] == ["q1", "a1", "q2", "a2"]
    assert vue["title"] == "Dashboard framework" and vue["summary"] and vue["extracted_upto"] == 4
    assert {"turn_id", "role", "text", "ts", "source_path", "line"} <= set(vue["chats"][0])
    ids = {m["id"] for m in doc["memories"]}
    assert "m_rust0001" in ids and {m["id"] for m in before["memories"]["items"]} == ids
    tree = {f["path"]: f for f in doc["tree"]}
    profile = (a.memory / "_core" / "profile.md").read_text(encoding="utf-8")
    # The person's profile, with whatever the extraction added to its sections.
    assert tree["_core/profile.md"]["content"] == profile
    mine = [line for line in PROFILE.split("\n") if line]
    assert [line for line in profile.split("\n") if line in mine] == mine
    assert tree["topics/rust.md"]["sha256"] == hashlib.sha256(RUST.encode()).hexdigest()
    assert any(p.startswith("journal/") for p in tree)

    b = DaemonProcess(homes / "b").start()
    try:
        first = _ok(b.cli("import", str(out), "--json"))
        assert (
            first["format"] == "memd-export" and first["new_sessions"] == 3 and first["added"] == 10
        )
        # The new home's first-start templates give way to the imported files: no conflict copies.
        assert first["files"]["kept_local"] == [] and first["files"]["written"] >= 5
        assert first["files"]["written"] + first["files"]["identical"] == len(doc["tree"])
        # Every memory is new here: it came inside the imported files (nothing was here before).
        assert first["memories"]["added"] == first["memories"]["with_files"] == len(ids)
        assert first["memories"]["present"] == 0 and first["new"] > 0
        assert _answers(b) == before
        # Extraction had covered every turn at home; it is not redone here.
        assert _ok(b.cli("extract", "--now", "--json"))["outcome"] == "nothing_to_do"

        counts, files = _counts(b), _tree(b.memory)
        again = _ok(b.cli("import", str(out), "--json"))
        assert (
            again["new"] == 0 and again["added"] == again["updated"] == again["new_sessions"] == 0
        )
        assert again["files"]["written"] == 0 and again["files"]["identical"] == len(doc["tree"])
        assert again["memories"]["added"] == 0 and again["memory_hashes"] == 0
        assert again["memories"]["present"] == len(ids)
        text = b.cli("import", str(out)).stdout
        assert "): 0 new\n" in text and f"\n  memories: 0 added, {len(ids)} already there" in text
        assert _counts(b) == counts and _tree(b.memory) == files
        assert _answers(b) == before

        # A file changed here is kept; the imported version goes beside it, once.
        rust = b.memory / "topics" / "rust.md"
        rust.write_text(RUST + "\n## Local\n\n- Edited on the second machine\n", encoding="utf-8")
        third = _ok(b.cli("import", str(out), "--json"))
        copy = f"topics/rust.imported-{dt.date.today().isoformat()}.md"
        assert third["files"]["kept_local"] == [copy] and third["new"] == 1
        assert "Edited on the second machine" in rust.read_text(encoding="utf-8")
        assert (b.memory / copy).read_text(encoding="utf-8") == RUST
        fourth = _ok(b.cli("import", str(out), "--json"))
        assert fourth["files"]["kept_local"] == [] and fourth["new"] == 0
        assert sorted(p.name for p in rust.parent.iterdir() if p.name.startswith("rust")) == [
            "rust.imported-" + dt.date.today().isoformat() + ".md", "rust.md"]  # fmt: skip
    finally:
        b.stop()

    # A damaged export is refused as a whole, in a home without a daemon.
    c = homes / "c"
    c.mkdir()
    runner = DaemonProcess(c)
    raw = out.read_bytes()
    cut = tmp_path / "cut.json"
    cut.write_bytes(raw[: len(raw) * 2 // 3])
    bad = runner.cli("import", str(cut))
    assert (
        bad.returncode == 1
        and "truncated or damaged" in bad.stderr
        and "nothing was imported" in bad.stderr
    )
    broken = json.loads(raw)
    del broken["sessions"][-1]["chats"][-1]["turn_id"]
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(broken), encoding="utf-8")
    bad = runner.cli("import", str(wrong))
    assert (
        bad.returncode == 1
        and f"sessions[2].chats[{len(broken['sessions'][-1]['chats']) - 1}]: missing 'turn_id'"
        in bad.stderr
    )
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({**broken, "version": 2}), encoding="utf-8")
    assert "newer memd" in runner.cli("import", str(newer)).stderr
    assert _ok(runner.cli("recall", "--mode", "sessions", "--json"))["sessions"] == []
    assert not (c / "memory").exists() or not list((c / "memory").rglob("*.md"))

    # Without the tree, the memories alone are put back in their files and sections.
    lean = tmp_path / "lean.json"
    _ok(a.cli("export", str(lean), "--no-tree", "--json"))
    assert json.loads(lean.read_text(encoding="utf-8"))["tree"] == []
    res = _ok(runner.cli("import", str(lean), "--json"))
    assert res["memories"]["added"] == len(before["memories"]["items"]) and res["new_sessions"] == 3

    def key(items: list[dict[str, Any]]) -> list[tuple[str, ...]]:
        return sorted(
            (i["id"], i["text"], i["type"], i["scope"], i["rel"], json.dumps(i["meta"]))
            for i in items
        )

    assert key(_ok(runner.cli("memories", "--all", "--json"))["items"]) == key(
        before["memories"]["items"]
    )
    assert _norm(c, _ok(runner.cli("recall", "--mode", "sessions", "--json"))) == before["sessions"]
    assert _ok(runner.cli("import", str(lean), "--format", "memd", "--json"))["new"] == 0
    # Without a daemon the export reads the index directly.
    offline = _ok(runner.cli("export", str(tmp_path / "offline.json"), "--json"))
    assert (offline["sessions"], offline["chats"]) == (3, 10) and offline["files"] >= 1


T0 = 1_750_000_000.0


def _export_import(src: Store, dst: Store, tmp_path: Path) -> dict[str, Any]:
    out = tmp_path / "x.json"
    export.write_export(src, out, memory_root=tmp_path / "src-memory", tree=False, overwrite=True)
    root = tmp_path / "dst-memory"
    res = merge.apply_export(
        export.read_export(out), store=dst, indexer=Indexer(dst, [Root(root)]), memory_root=root,
        today=dt.date(2026, 4, 27), now=T0 + 100,
    )  # fmt: skip
    return msgspec.to_builtins(res)  # type: ignore[no-any-return]


def test_a_session_known_on_both_sides_gets_the_missing_chats_and_keeps_split_messages(
    tmp_path: Path,
) -> None:
    src, dst = Store.open(tmp_path / "src.db"), Store.open(tmp_path / "dst.db")
    try:
        src.w.run(lambda c: write_turns(c, [
            turn("s1", "q1", "user", "How do I profile a slow Django view?", T0, session_title="Django profiling"),
            turn("s1", "m1", "assistant", "Start with django-silk.", T0 + 1, part_id="p-a", line=3),
            turn("s1", "m1", "assistant", "Then py-spy for the hot loop.", T0 + 2, part_id="p-b", line=4),
            turn("s1", "q2", "user", "Does py-spy need root?", T0 + 3),
        ]))  # fmt: skip
        dst.w.run(
            lambda c: write_turns(
                c, [turn("s1", "q1", "user", "How do I profile a slow Django view?", T0)]
            )
        )
        assert rows(dst, "SELECT title_source FROM sessions") == [("first",)]

        res = _export_import(src, dst, tmp_path)
        assert (res["new_sessions"], res["added"], res["updated"], res["sessions"]) == (0, 2, 0, 1)
        assert rows(dst, "SELECT turn_id, text FROM turns ORDER BY id") == rows(
            src, "SELECT turn_id, text FROM turns ORDER BY id")  # fmt: skip
        assert rows(dst, "SELECT part_id, seq, text FROM turn_parts ORDER BY seq") == [
            ("p-a", 3, "Start with django-silk."), ("p-b", 4, "Then py-spy for the hot loop.")]  # fmt: skip
        # The log's title outranks the one made from the first question; the summary covers 3 turns.
        assert rows(dst, "SELECT title, title_source, turn_count, summary_upto FROM sessions") == [
            ("Django profiling", "log", 3, 3)]  # fmt: skip
        # A re-read of the same log on this side changes nothing: the parts are already known.
        again = dst.w.run(lambda c: write_turns(c, [
            turn("s1", "m1", "assistant", "Start with django-silk.", T0 + 1, part_id="p-a", line=3)]))  # fmt: skip
        assert (again.added, again.updated) == (0, 0)
        assert _export_import(src, dst, tmp_path)["new"] == 0
    finally:
        src.close()
        dst.close()
