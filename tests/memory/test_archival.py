"""The archival job on a generated tree with a fake clock: journal days, expiry, decay, pinning,
the 25% guard, snapshots and the audit log; and the item-use tracking that feeds decay."""

from __future__ import annotations

import datetime as dt
import functools
import subprocess
from pathlib import Path

import pytest

from memd.core.models import JobOutcome
from memd.memory.archival import plan_file, plan_journal, run_archival
from memd.memory.parse import split_item
from memd.memory.repo import note_used
from tests.jobenv import Env


def ago(env: Env, days: int) -> str:
    return (env.clock.date() - dt.timedelta(days=days)).isoformat()


def item(text: str, **meta: str) -> str:
    body = " ".join(f"{k}={v}" for k, v in meta.items())
    return f"- {text} <!-- memd {body} -->" if meta else f"- {text}"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def texts(path: Path) -> list[str]:
    return [
        it[0]
        for line in path.read_text().split("\n")
        if (it := split_item(line)) is not None and it[0]
    ]


@pytest.fixture
def tree(env: Env, tmp_path: Path) -> dict[str, Path]:
    m = env.memory
    for n in range(40):
        day = ago(env, n)
        fm = "---\npinned: true\n---\n" if n == 35 else ""
        write(
            m / "journal" / f"{day}.md", f"{fm}# {day}\n\n## 10:00 chat\n- talked about day {n}\n"
        )
    rust = [
        item("Old expired fact", id="m_exp", imp="5", at=ago(env, 20), expires=ago(env, 1)),
        item("Low importance stale", id="m_stale", imp="2", at=ago(env, 100)),
        item("Low importance but used", id="m_used", imp="2", at=ago(env, 100)),
        item("Important old", id="m_imp", imp="8", at=ago(env, 100)),
        item("Pinned low", id="m_pin", imp="1", at=ago(env, 200), pinned="true"),
        item("Fresh low", id="m_fresh", imp="2", at=ago(env, 10)),
        item("Seen again lately", id="m_seen", imp="2", at=ago(env, 200), seen=ago(env, 5)),
        item(
            "Superseded long ago",
            id="m_sup",
            imp="6",
            at=ago(env, 200),
            superseded=ago(env, 120),
            by="m_imp",
        ),
        item("A plain hand-written note"),
        item("Another hand note"),
        item("Third hand note"),
        item("Fourth hand note"),
    ]
    paths = {
        "rust": write(
            m / "topics" / "rust.md",
            "# Rust\n\n## Notes\n"
            + "\n".join(rust[:6])
            + "\n\n## More\n"
            + "\n".join(rust[6:])
            + "\n",
        ),  # fmt: skip
        "go": write(
            m / "topics" / "go.md",
            "# Go\n\n## Notes\n"
            + "\n".join(
                [
                    item("Go fact one", id="m_g1", imp="5", at=ago(env, 30), expires=ago(env, 2)),
                    item("Go fact two", id="m_g2", imp="5", at=ago(env, 30), expires=ago(env, 2)),
                    item("Go fact three"),
                    item("Go fact four"),
                ]
            )
            + "\n",
        ),  # fmt: skip
        "pinned": write(
            m / "topics" / "pinned.md",
            "---\npinned: true\n---\n# Pinned\n\n"
            + item("Expired but pinned", id="m_p1", imp="1", at=ago(env, 300), expires=ago(env, 9))
            + "\n",
        ),  # fmt: skip
        "old": write(
            m / "topics" / "old-file.md",
            f"---\nexpires: {ago(env, 3)}\n---\n# Old\n\n- whole file goes\n",
        ),
    }
    ws = tmp_path / "home" / "shop"  # a workspace below the user's home
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    paths["ws"] = write(ws / ".memd" / "memory" / "context.md", "# Shop\n\n## Context\n" + "\n".join([
        item("Shop sprint ends soon", id="m_w1", imp="4", at=ago(env, 20), expires=ago(env, 1)),
        item("Shop uses Postgres"), item("Shop deploys on Fridays"), item("Shop has a staging env")]) + "\n")  # fmt: skip
    env.engine.ops.project(str(ws))
    env.engine.indexer.reconcile()
    # `context` returned the "used" item five days ago.
    used_at = env.clock() - 5 * 86400
    env.engine.store.w.run(lambda c: note_used(c, [(str(paths["rust"]), 6, 6)], used_at))
    return paths


def test_archival_on_a_generated_tree(env: Env, tree: dict[str, Path]) -> None:
    m = env.memory
    originals = {k: p.read_text() for k, p in tree.items()}
    res = run_archival(env.ctx())
    assert res.outcome is JobOutcome.SUCCESS, res
    counts = dict(res.counts)
    assert counts.pop("run") > 0  # the run's id, also on its change in the history
    assert counts == {"journal_days": 8, "files": 1, "items": 4, "refused": 1, "snapshots": 2}
    today = env.clock.day()
    stamp = dt.datetime.fromtimestamp(env.clock()).strftime("%Y%m%d-%H%M%S")

    # Journal: days older than 30 move whole; the pinned day stays.
    moved = sorted(p.name for p in (m / "archive" / "journal").iterdir())
    assert moved == sorted(f"{ago(env, n)}.md" for n in range(31, 40) if n != 35)
    assert (m / "journal" / f"{ago(env, 35)}.md").exists() and (
        m / "journal" / f"{ago(env, 30)}.md"
    ).exists()

    # rust.md: expired, decayed and long-superseded items move; everything else stays, in order.
    assert texts(tree["rust"]) == ["Low importance but used", "Important old", "Pinned low", "Fresh low",
                                   "Seen again lately", "A plain hand-written note", "Another hand note",
                                   "Third hand note", "Fourth hand note"]  # fmt: skip
    arch = (m / "archive" / "topics" / "rust.md").read_text()
    for text, section in (
        ("Old expired fact", "Notes"),
        ("Low importance stale", "Notes"),
        ("Superseded long ago", "More"),
    ):
        line = next(x for x in arch.split("\n") if text in x)
        assert f"archived={today}" in line and arch.index(f"## {section}") < arch.index(line)
    assert "id=m_exp" in arch and "expires=" in arch and "by=m_imp" in arch
    assert (m / "archive" / "snapshots" / f"topics/rust.md.{stamp}.bak").read_text() == originals[
        "rust"
    ]

    # The 25% guard: go.md would lose 2 of 4 items.
    assert tree["go"].read_text() == originals["go"]
    assert not (m / "archive" / "topics" / "go.md").exists()
    assert not list((m / "archive" / "snapshots" / "topics").glob("go.md*"))
    # Pinned files never move; an expired file moves whole; project memory archives under projects/.
    assert tree["pinned"].read_text() == originals["pinned"]
    assert (
        not tree["old"].exists()
        and (m / "archive" / "topics" / "old-file.md").read_text() == originals["old"]
    )
    assert texts(tree["ws"]) == [
        "Shop uses Postgres",
        "Shop deploys on Fridays",
        "Shop has a staging env",
    ]
    assert (
        "Shop sprint ends soon" in (m / "archive" / "projects" / "shop" / "context.md").read_text()
    )

    log = (m / "archive" / "CHANGES.md").read_text()
    when = dt.datetime.fromtimestamp(env.clock()).strftime("%Y-%m-%d %H:%M")
    assert log.startswith("# Archive changes") and f"## {when}" in log
    assert f"`journal/{ago(env, 31)}.md` → `archive/journal/{ago(env, 31)}.md`" in log
    assert "- REFUSED `topics/go.md`: would drop 2 of 4 items (50% > 25%)" in log
    assert f'"Old expired fact" (expired {ago(env, 1)})' in log
    assert f'"Low importance stale" (importance 2, unused since {ago(env, 100)})' in log
    assert (
        "`topics/rust.md`: 3 of 12 items" in log
        and f"snapshot `archive/snapshots/topics/rust.md.{stamp}.bak`" in log
    )
    assert "`topics/old-file.md` → `archive/topics/old-file.md`" in log

    # Archived items stay searchable but context leaves them out.
    hits = env.engine.handle("search", {"query": "Old expired fact"})["hits"]
    assert any(h["path"].endswith("archive/topics/rust.md") for h in hits)
    ctx = env.engine.handle("context", {"query": "rust expired fact"})["text"]
    assert "Important old" in ctx and "Old expired fact" not in ctx

    # The next run changes nothing more, reports the refusal again and says so in the log.
    env.clock.advance(minutes=5)
    res = run_archival(env.ctx())
    assert res.counts["items"] == 0 and res.counts["refused"] == 1
    assert (m / "archive" / "CHANGES.md").read_text().count("REFUSED `topics/go.md`") == 2


def test_a_quiet_run_still_writes_the_audit_log(env: Env) -> None:
    res = run_archival(env.ctx())
    assert res.outcome is JobOutcome.NOTHING_TO_DO
    assert "- nothing to archive" in (env.memory / "archive" / "CHANGES.md").read_text()


def test_context_and_search_record_item_use(env: Env) -> None:
    write(env.memory / "topics" / "tea.md", "# Tea\n\n## Likes\n" + item("User likes green tea", id="m_tea", imp="2",
          at="2025-01-01") + "\n" + item("User dislikes milk in tea", id="m_milk", imp="2", at="2025-01-01") + "\n")  # fmt: skip
    env.engine.indexer.reconcile()
    env.engine.handle("search", {"query": "green tea"})
    env.engine.handle("context", {"query": "tea"})
    for stop in env.engine.on_stop:  # uses are batched; shutdown flushes them
        stop()
    env.engine.store.w.run(lambda c: None)  # the flush is queued behind the answer: wait for it
    rows = dict(env.engine.store.read().execute("SELECT item_id, uses FROM item_usage").fetchall())
    assert rows == {"m_tea": 2, "m_milk": 2}


@pytest.mark.parametrize(
    ("meta", "moves"),
    [
        ({"imp": "3", "at": "2025-01-01"}, True),  # at the importance limit, 90+ days old
        ({"imp": "4", "at": "2025-01-01"}, False),  # above it
        ({"imp": "3"}, False),  # no date: age unknown, kept
        ({"imp": "3", "at": "2025-01-01", "pinned": "true"}, False),
        ({"imp": "9", "at": "2025-01-01", "expires": "2026-02-01"}, True),
        ({"imp": "9", "expires": "2026-12-01"}, False),
        ({"imp": "3", "at": "2025-01-01", "archived": "2025-06-01"}, False),
    ],
)
def test_plan_file_decisions(meta: dict[str, str], moves: bool) -> None:
    body = (
        "# T\n\n## S\n"
        + item("target", id="m_t", **meta)
        + "\n"
        + "".join(item(f"filler {i}") + "\n" for i in range(9))
    )
    plan = plan_file(
        "topics/t.md",
        body,
        today=dt.date(2026, 3, 2),
        used={},
        unused_days=90,
        max_importance=3,
        max_loss=0.25,
    )
    assert bool(plan.moves) is moves and not plan.refused and plan.total == 10


def test_plan_file_use_keeps_an_item_alive() -> None:
    body = (
        "# T\n\n## S\n"
        + item("target", id="m_t", imp="1", at="2025-01-01")
        + "\n"
        + item("a")
        + "\n"
        + item("b")
        + "\n"
        + item("c")
        + "\n"
    )
    plan = functools.partial(
        plan_file, today=dt.date(2026, 3, 2), unused_days=90, max_importance=3, max_loss=0.25
    )
    assert plan("t.md", body, used={}).moves
    assert not plan("t.md", body, used={"m_t": dt.date(2026, 2, 1)}).moves


def test_plan_journal() -> None:
    names = ["2026-01-30.md", "2026-01-31.md", "2026-02-01.md", "notes.md", "2026-01-15-extra.md"]
    assert plan_journal(names, dt.date(2026, 3, 2), 30) == ["2026-01-15-extra.md", "2026-01-30.md"]
