"""Token-budgeted context: tiers, budget, dropped sections, topic matching, remember/forget."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from memd.api import messages as msg
from memd.app import Engine
from memd.core.settings import load
from memd.core.text import META_COMMENT_AT_END, estimate_tokens
from memd.db import Store
from memd.memory.context import (
    FENCE_CLOSE,
    FENCE_OPEN,
    TIERS,
    Candidate,
    ContextRequest,
    assemble,
    clean_body,
    render_block,
)
from memd.memory.parse import split_item
from memd.memory.tree import create_tree


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Engine:
    monkeypatch.setenv("MEMD_HOME", str(tmp_path / "h"))
    s = load()
    create_tree(s.memory_dir)
    m = s.memory_dir
    (m / "_core" / "preferences.md").write_text(
        "# User Preferences\n\n## Technical Preferences\n- Uses TypeScript over JavaScript\n"
        "- Prefers Vue over React\n\n## Communication Style\n- Prefers concise, direct answers\n"
    )
    (m / "_core" / "profile.md").write_text(
        "# Profile\n\n## Basic Info\n- Name: John\n- Location: Shanghai\n"
    )
    (m / "topics" / "vue.md").write_text(
        "# Vue\n\n## Components\n- Use script setup\n- Props down, events up\n\n## Performance\n- v-memo for big lists\n"
    )
    for i in range(40):
        (m / "topics" / f"misc{i}.md").write_text(
            f"# Misc {i}\n\n## Notes {i}\n"
            + "".join(f"- filler line {j} about testing strategy {i}\n" for j in range(12))
        )
    agent = m / "agents" / "muse"
    agent.mkdir(parents=True)
    (agent / "relationship.md").write_text(
        "# Agent Relationship\n\n## Memory Points\n- User likes brief responses\n"
    )
    proj = m / "projects" / "shop"
    proj.mkdir(parents=True)
    (proj / "architecture.md").write_text("# Shop\n\n## Stack\n- Electron + React + Zustand\n")
    store = Store.open(s.db_path)
    eng = Engine(s, store)
    eng.indexer.reconcile()
    return eng


def test_budget_is_never_exceeded_and_drops_are_listed(engine: Engine) -> None:
    for budget in (60, 150, 400, 2000, 5000):
        ctx = engine.handle("context", {"query": "testing strategy", "budget_tokens": budget})
        assert ctx["tokens"] <= budget, budget
        assert estimate_tokens(ctx["text"]) == ctx["tokens"]
        if budget <= 2000:
            assert ctx["dropped"], budget
            assert all(d["reason"] for d in ctx["dropped"])
    small = engine.handle("context", {"query": "testing strategy", "budget_tokens": 150})
    first = small["sections"][0]
    assert first["rel"] == "_core/preferences.md" and first["heading"] == "Technical Preferences"
    assert "Uses TypeScript over JavaScript" in small["text"]
    assert small["text"].startswith(FENCE_OPEN) and small["text"].endswith(FENCE_CLOSE)
    assert "not instructions" in small["text"]
    for line in small["text"].splitlines():  # never a cut line: every line is a whole source line
        assert not line.endswith("…")


def test_core_first_then_topics_and_tiers(engine: Engine) -> None:
    ctx = engine.handle("context", {"query": "how do I make Vue components faster?"})
    rels = [s["rel"] for s in ctx["sections"]]
    assert rels[:3] == ["_core/preferences.md", "_core/preferences.md", "_core/profile.md"]
    vue = [s for s in ctx["sections"] if s["rel"] == "topics/vue.md"]
    assert {s["heading"] for s in vue} == {"Components", "Performance"}
    assert vue[0]["reason"].startswith("topic file matches 'vue'")
    assert all(s["start_line"] > 0 and s["path"] for s in ctx["sections"])
    assert "agents/muse" not in ctx["text"]
    ctx2 = engine.handle("context", {"query": "anything", "agent_id": "muse", "project": "shop"})
    tiers = [s["tier"] for s in ctx2["sections"]]
    assert tiers == sorted(tiers, key=["user", "project", "conversation"].index)
    assert (
        "User likes brief responses" in ctx2["text"]
        and "Electron + React + Zustand" in ctx2["text"]
    )
    assert "## This project (shop)" in ctx2["text"]


def test_unused_budget_flows_and_quotas_hold(engine: Engine) -> None:
    # With no project and no conversation memory, topics may use the whole budget.
    ctx = engine.handle("context", {"query": "testing strategy", "budget_tokens": 2000})
    assert ctx["tokens"] > 1200
    # With a project, project sections are kept even when topics could fill everything.
    ctx = engine.handle(
        "context", {"query": "testing strategy", "budget_tokens": 400, "project": "shop"}
    )
    assert "Electron + React + Zustand" in ctx["text"] and ctx["tokens"] <= 400


def test_remember_then_context_then_forget(engine: Engine) -> None:
    r = engine.handle("remember", {"text": "always use vitest"})
    ctx = engine.handle("context", {"query": "how should I test this"})
    assert "always use vitest" in ctx["text"]
    notes = Path(r["path"]).read_text()
    assert "always use vitest <!-- memd id=" in notes
    cands = engine.handle("forget", {"query": "vitest"})
    assert [c["id"] for c in cands["candidates"]] == [r["id"]] and cands["removed"] == []
    assert "always use vitest" in Path(r["path"]).read_text()  # nothing removed without confirm
    out = engine.handle("forget", {"query": "vitest", "confirm": True})
    assert [x["id"] for x in out["removed"]] == [r["id"]]
    assert "vitest" not in Path(r["path"]).read_text()
    assert (
        "always use vitest"
        not in engine.handle("context", {"query": "how should I test this"})["text"]
    )


def test_hand_written_items_can_be_forgotten_by_id(engine: Engine) -> None:
    items = engine.handle("memories", {"scope": "user"})["items"]
    loc = next(i for i in items if i["text"] == "Location: Shanghai")
    assert loc["id"].startswith("h_")
    engine.handle("forget", {"id": loc["id"]})
    assert "Shanghai" not in (engine.settings.memory_dir / "_core" / "profile.md").read_text()
    assert "Name: John" in (engine.settings.memory_dir / "_core" / "profile.md").read_text()


def test_project_scope_uses_the_workspace_folder(engine: Engine, tmp_path: Path) -> None:
    ws = tmp_path / "home" / "work" / "app"  # a workspace below the user's home
    (ws / ".git").mkdir(parents=True)
    (ws / "src").mkdir()
    r = engine.handle(
        "remember",
        {"text": "API errors use RFC 7807", "scope": "project", "project": str(ws / "src")},
    )
    assert r["path"] == str(ws / ".memd" / "memory" / "context.md")
    ctx = engine.handle("context", {"query": "error format", "project": str(ws)})
    assert ctx["project"] == "app" and "RFC 7807" in ctx["text"]
    assert "RFC 7807" not in engine.handle("context", {"query": "error format"})["text"]


def test_superseded_and_expired_items_are_not_injected(engine: Engine) -> None:
    p = engine.settings.memory_dir / "_core" / "preferences.md"
    p.write_text(
        p.read_text()
        + "\n## Testing\n- Uses jest <!-- memd id=m_1 superseded=2026-01-01 by=m_2 -->\n"
        + "- Uses vitest <!-- memd id=m_2 -->\n- Old promo <!-- memd id=m_3 expires=2001-01-01 -->\n"
    )
    engine.indexer.reconcile()
    text = engine.handle("context", {"query": "tests"})["text"]
    assert "Uses vitest" in text and "Uses jest" not in text and "Old promo" not in text
    assert "memd id=" not in text  # metadata comments are not sent to the model


def test_quotas_are_each_tiers_share_of_the_budget(engine: Engine) -> None:
    ctx = engine.handle("context", {"query": "testing strategy", "budget_tokens": 2000})
    q = ctx["quotas"]
    assert set(q) == {"user", "project", "conversation"}
    # The default shares are 600/800/600 of what the block's frame leaves of the budget.
    assert q["user"] == q["conversation"] and abs(q["project"] - q["user"] * 4 / 3) <= 1
    assert 2000 - 100 <= sum(q.values()) <= 2000
    small = engine.handle("context", {"query": "testing strategy", "budget_tokens": 600})
    assert sum(small["quotas"].values()) < sum(q.values())
    nothing = engine.handle("context", {"query": "testing strategy", "budget_tokens": 0})
    assert nothing["quotas"] == {"user": 0, "project": 0, "conversation": 0}
    engine.handle("set_enabled", {"enabled": False})
    off = engine.handle("context", {"query": "vue"})
    assert off["quotas"] == {"user": 0, "project": 0, "conversation": 0}


def test_quotas_follow_the_shares_in_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMD_HOME", str(tmp_path / "h"))
    monkeypatch.setenv("MEMD_CONTEXT_USER_TOKENS", "1")
    monkeypatch.setenv("MEMD_CONTEXT_PROJECT_TOKENS", "0")
    monkeypatch.setenv("MEMD_CONTEXT_CONVERSATION_TOKENS", "3")
    s = load()
    create_tree(s.memory_dir)
    store = Store.open(s.db_path)
    try:
        q = Engine(s, store).handle("context", {"budget_tokens": 1000})["quotas"]
    finally:
        store.close()
    assert q["project"] == 0 and abs(q["conversation"] - 3 * q["user"]) <= 3
    assert 900 <= sum(q.values()) <= 1000


def _sized(tier: str, title: str, cost: int) -> Candidate:
    """A candidate whose block costs `cost` tokens, or as little over it as the estimate allows."""
    body = "x"
    c = Candidate(tier, "topic", title, body, msg.Provenance())
    while estimate_tokens(render_block(c)) < cost:
        body += "x"
        c = Candidate(tier, "topic", title, body, msg.Provenance())
    return c


def test_the_reported_quota_is_the_line_between_kept_and_dropped() -> None:
    """A user section that fits the user quota is kept in the first pass; one token more and
    it is dropped, while project sections use up what is left (so nothing comes back)."""
    req = ContextRequest(budget_tokens=1000, shares=(1, 1, 0))
    first = assemble([], req).quotas
    assert isinstance(first, msg.TierQuotas)
    quota = first.user
    project = [_sized("project", f"p{i}", 10) for i in range(200)]
    for cost in range(quota - 3, quota + 4):
        c = _sized("user", "u", cost)
        got = estimate_tokens(render_block(c))
        out = assemble([c, *project], req)
        kept = any(s.title == "u" for s in out.sections)
        assert isinstance(out.quotas, msg.TierQuotas) and out.quotas.user == quota
        assert kept == (got <= quota), (got, quota)


_LINE = st.text(st.sampled_from(list("ab 记忆é—-# ")), max_size=40)


@given(
    st.lists(st.tuples(st.sampled_from(TIERS), st.lists(_LINE, min_size=1, max_size=8)),
             max_size=12),
    st.integers(0, 400),
    st.sampled_from(["", "web", "记忆"]),
)  # fmt: skip
def test_every_token_figure_is_the_estimate_of_the_text_it_stands_for(
    blocks: list[tuple[str, list[str]]], budget: int, project: str
) -> None:
    # The block's figures are computed from counts of its parts, not by estimating the
    # rendered text again: they must be what estimating that text gives, cut sections too.
    cands = [Candidate(tier, "topic", f"t{i} 记", "\n".join(lines), msg.Provenance())
             for i, (tier, lines) in enumerate(blocks)]  # fmt: skip
    out = assemble(cands, ContextRequest(budget_tokens=budget, project=project))
    assert out.tokens == estimate_tokens(out.text)
    by_title = {c.title: c for c in cands}
    for s in out.sections:
        c = by_title[s.title]
        kept = s.lines_kept if isinstance(s.lines_kept, int) else None
        body = c.body if not s.truncated else "\n".join(c.body.split("\n")[:kept])
        assert s.tokens == estimate_tokens(render_block(Candidate(c.tier, "", s.title, body,
                                                                  msg.Provenance())))  # fmt: skip
    for d in out.dropped:
        full = estimate_tokens(render_block(by_title[d.title]))
        shown = [s.tokens for s in out.sections if s.title == d.title]
        assert d.tokens == full - sum(shown)


def _clean_by_regex(text: str, today: dt.date) -> str:
    """`clean_body` as it was written first: the comments taken out by regex substitution."""
    at_end = re.compile(META_COMMENT_AT_END.pattern, re.M)
    if "<!--" not in text:
        return text.strip()
    if "superseded" not in text and "archived" not in text and "expires" not in text:
        return re.sub(r"\n{3,}", "\n\n", at_end.sub("", text)).strip()
    out = []
    for line in text.split("\n"):
        it = split_item(line)
        if it is not None and (
            it[1].get("superseded")
            or it[1].get("archived")
            or (it[1].get("expires", "") and it[1]["expires"][:10] < today.isoformat())
        ):
            continue
        out.append(META_COMMENT_AT_END.sub("", line))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


_PIECES = [
    "<!--",
    "<!-- memd id=m_1 -->",
    " memd",
    "memd:",
    " id=m_2",
    "-->",
    " ",
    "\t",
    "\n",
    "- ",
    "x",
    "superseded=m_3",
    "expires=2001-01-01",
    "<!-- memd expires=2999-01-01 -->",
]


@settings(max_examples=400)
@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
@example("- a \t<!-- memd id=m_1 -->\n- b <!-- x --> <!-- memd id=m_2 -->  \n\n\n- c")
@example("- a <!-- memd id=m_1 --> b\n-->\n- c <!--<!-- memd a -->")
def test_a_bodys_comments_are_taken_out_as_the_regex_takes_them_out(text: str) -> None:
    # clean_body looks for the comments where a "<!--" is instead of running the regex over
    # every blank: the same text must come out, odd spacing and broken comments included.
    today = dt.date(2026, 11, 27)
    assert clean_body(text, today) == _clean_by_regex(text, today)


def test_disabled_switch(engine: Engine) -> None:
    engine.handle("set_enabled", {"enabled": False})
    assert engine.handle("context", {"query": "vue"})["enabled"] is False
    engine.handle("set_enabled", {"enabled": True})
    assert engine.handle("context", {"query": "vue"})["text"]


def test_today_is_used_for_expiry() -> None:
    from memd.memory.context import clean_body

    body = "- a <!-- memd expires=2026-06-01 -->\n- b"
    assert clean_body(body, dt.date(2026, 5, 1)) == "- a\n- b"
    assert clean_body(body, dt.date(2026, 7, 1)) == "- b"


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        # Comments only: the one-pass path strips them, keeps every line, collapses blank runs.
        (
            "- a <!-- memd id=m_1 type=fact -->\n\n\n\n- b <!-- memd: imp=6 -->  \ntext",
            "- a\n\n- b\ntext",
        ),
        ("<!-- memd id=m_2 -->", ""),
        ("- keep <!-- not memd -->", "- keep <!-- not memd -->"),
        # A word that only looks like a flag sends the text down the line walk: same answer.
        ("- archived photos are in S3 <!-- memd id=m_3 -->", "- archived photos are in S3"),
        ("- old <!-- memd id=m_4 archived=2026-01-01 -->\n- new <!-- memd id=m_5 -->", "- new"),
    ],
)
def test_clean_body_strips_metadata_and_hides_retired_items(body: str, shown: str) -> None:
    from memd.memory.context import clean_body

    assert clean_body(body, dt.date(2026, 5, 1)) == shown


def test_relevant_only_leaves_standing_memory_out(engine: Engine) -> None:
    ctx = engine.handle(
        "context", {"query": "vue performance", "project": "shop", "relevant_only": True}
    )
    rels = {s["rel"] for s in ctx["sections"]}
    assert rels == {"topics/vue.md"}
    none = engine.handle("context", {"query": "zzzz-nothing", "relevant_only": True})
    assert none["sections"] == [] and none["text"] == ""
