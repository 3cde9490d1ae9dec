"""Recall by meaning through a real daemon whose embeddings come from an OpenAI-compatible
endpoint (`semantic.kind = http`): a local fake server (each text's vector is a hash of it)
that can be made slow, fail, or answer vectors of the wrong length. Whatever the endpoint
does, `search` answers (by full text) and `status` says why the vectors are missing.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import planted
from tests.semantic import dictionary_cache
from tests.semantic.fake_embeddings import FakeEmbeddings, Reply
from tests.utils import DaemonProcess, wait_for

pytest.importorskip("numpy", reason="the semantic extra is not installed")

DIM = 64
TREE = {
    "topics/garden.md": "# garden\n\n## Tomatoes\n\nThe tomatoes need water every morning.\n",
    "topics/music.md": "# music\n\n## Piano\n\nPiano lessons are on Thursday at five.\n",
}
SENTENCES = """the quarterly report is due on monday
our neighbour plays the trumpet at night
a new bakery opened next to the station
the printer on the second floor is broken
we booked a cabin by the lake for august
my running shoes are worn out again
the cat knocked a glass off the table
the train to the coast leaves at seven
i started reading a novel about sailors
the heating bill was higher than last year""".splitlines()


FILLER = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima".split()


@pytest.fixture
def server() -> Iterator[FakeEmbeddings]:
    with FakeEmbeddings(dim=DIM) as s:
        yield s


@pytest.fixture
def home() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="memd-sh-", dir="/tmp"))
    dictionary_cache.seed(d)  # mapped, not parsed: as from a user's second start
    for rel, text in TREE.items():
        (d / "memory" / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / "memory" / rel).write_text(text)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def start(home: Path, server: FakeEmbeddings, model: str = "m1", **env: str) -> DaemonProcess:
    return DaemonProcess(home, MEMD_SEMANTIC_KIND="http", MEMD_SEMANTIC_URL=server.url,
                         MEMD_SEMANTIC_MODEL=model, MEMD_SEMANTIC_BATCH="8", env=env).start()  # fmt: skip


def semantic(d: DaemonProcess) -> dict[str, Any]:
    out: dict[str, Any] = d.call("status")["semantic"]
    return out


def idle(d: DaemonProcess, turns: int = 0) -> dict[str, Any] | None:
    """The status once the backfill is idle with `turns` turn vectors (it may not have seen
    turns pushed a moment ago yet: idle alone is not enough)."""
    sem = semantic(d)
    b = sem.get("backfill", {})
    done = b.get("state") == "idle" and b.get("done") and not b.get("pending")
    return sem if done and sem.get("vectors", {}).get("turn", 0) == turns else None


def ingest(d: DaemonProcess, session: str, texts: list[str]) -> None:
    turns = [{"session_id": session, "id": f"{session}-{i}", "role": "user", "content": t,
              "ts": 1_700_000_000 + i} for i, t in enumerate(texts)]  # fmt: skip
    d.call("ingest", {"turns": turns})


def vector_models(home: Path) -> dict[str, int]:
    db = sqlite3.connect(home / "data" / "index.db")
    try:
        return dict(db.execute("SELECT model, count(*) FROM vectors GROUP BY model").fetchall())
    finally:
        db.close()


def test_a_new_model_drops_the_old_vectors_and_recomputes_them(
    home: Path, server: FakeEmbeddings
) -> None:
    d = start(home, server, "m1")
    try:
        ingest(d, "s", SENTENCES[:4])
        first = wait_for(lambda: idle(d, 4), timeout=60)
    finally:
        d.stop()
    m1 = f"http:m1@{server.url}/embeddings"
    assert first["model"] == m1
    assert vector_models(home) == {m1: 2 + 4}
    d = start(home, server, "m2")
    try:
        second = wait_for(lambda: idle(d, 4), timeout=60)
        assert semantic(d)["vectors"] == {"section": 2, "turn": 4}
    finally:
        d.stop()
    m2 = f"http:m2@{server.url}/embeddings"
    assert second["model"] == m2
    assert vector_models(home) == {m2: 6}
    asked = [b for b in server.requests if b["model"] == "m2"]
    assert sum(len(b["input"]) for b in asked) == 6


def test_an_endpoint_answering_500_leaves_full_text_search_and_says_why(
    home: Path, server: FakeEmbeddings
) -> None:
    d = start(home, server)
    try:
        wait_for(lambda: idle(d), timeout=60)
        server.default = Reply(status=500)
        res = d.call("search", {"query": "tomatoes water", "scope": "memory"})
        assert [(h["heading"], h["found_by"]) for h in res["hits"]] == [("Tomatoes", ["fts"])]
        sem = semantic(d)
        assert "HTTP 500" in sem["query_error"] and sem["paused_until"] > time.time()
        ingest(d, "late", ["one more turn"])
        err = wait_for(lambda: semantic(d).get("backfill", {}).get("last_error"), timeout=60)
        assert "HTTP 500" in err and semantic(d)["backfill"]["state"] == "error"
        assert "backfill error:" in d.cli("status").stdout
        doctor = {c["name"]: c for c in json.loads(d.cli("doctor", "--json").stdout)["checks"]}
        assert doctor["semantic"]["status"] == "warn" and "HTTP 500" in doctor["semantic"]["detail"]
    finally:
        d.stop()


def test_an_endpoint_down_from_the_start_leaves_the_daemon_answering_by_full_text(
    home: Path, server: FakeEmbeddings
) -> None:
    server.default = Reply(status=500)
    d = start(home, server)
    try:
        err = wait_for(lambda: semantic(d).get("backfill", {}).get("last_error"), timeout=60)
        assert "HTTP 500" in err
        res = d.call("search", {"query": "tomatoes water", "scope": "memory"})
        assert [(h["heading"], h["found_by"]) for h in res["hits"]] == [("Tomatoes", ["fts"])]
        # With the endpoint back, the backfill catches up after its pause.
        assert semantic(d)["backfill"]["retry_at"] > time.time()
    finally:
        d.stop()


def test_a_slow_endpoint_costs_a_query_its_timeout_once_then_search_goes_on_by_full_text(
    home: Path, server: FakeEmbeddings
) -> None:
    d = start(home, server, MEMD_SEMANTIC_QUERY_TIMEOUT_S="0.3")
    try:
        wait_for(lambda: idle(d), timeout=60)
        server.default = Reply(delay=3.0)
        t = time.monotonic()
        res = d.call("search", {"query": "piano lessons", "scope": "memory"})
        first = time.monotonic() - t
        assert [(h["heading"], h["found_by"]) for h in res["hits"]] == [("Piano", ["fts"])]
        t = time.monotonic()
        d.call("search", {"query": "tomatoes", "scope": "memory"})
        # Vector search rests after the failure: the next query does not wait on the endpoint.
        assert time.monotonic() - t < first
        assert "timed out" in semantic(d)["query_error"]
    finally:
        d.stop()


def test_vectors_of_the_wrong_length_are_refused_and_search_answers_by_full_text(
    home: Path, server: FakeEmbeddings
) -> None:
    d = start(home, server)
    try:
        wait_for(lambda: idle(d), timeout=60)
        server.default = Reply(dim=DIM * 2)
        res = d.call("search", {"query": "piano lessons", "scope": "memory"})
        assert [(h["heading"], h["found_by"]) for h in res["hits"]] == [("Piano", ["fts"])]
        assert "dimension" in semantic(d)["query_error"]
        ingest(d, "late", ["one more turn"])
        err = wait_for(lambda: semantic(d).get("backfill", {}).get("last_error"), timeout=60)
        assert "dimension" in err
    finally:
        d.stop()


def test_context_adds_past_turns_and_sections_whose_vectors_stand_out(
    home: Path, server: FakeEmbeddings
) -> None:
    # With hashed vectors, a query equal to a stored passage has cosine 1 with it and about
    # 0 with everything else: it stands out of the scope; nothing else does.
    d = start(home, server)
    try:
        ingest(d, "past", SENTENCES)
        # A scope needs statistics for anything to stand out of it.
        ingest(d, "other", [f"{w} note number {i}" for i, w in enumerate(FILLER * 3)])
        wait_for(lambda: idle(d, len(SENTENCES) + len(FILLER) * 3), timeout=60)
        query = "user: the cat knocked a glass off the table\nuser: the train to the coast leaves at seven"
        ctx = d.call("context", {"query": query})
        conv = [s for s in ctx["sections"] if s["tier"] == "conversation"]
        assert conv and conv[0]["session_id"] == "past"
        assert "vector" in conv[0]["found_by"]
        # (Not naming the file: a file named in the query comes in whole, by its name.)
        ctx = d.call("context", {"query": "Piano lessons are on Thursday at five."})
        topic = [s for s in ctx["sections"] if s["source"] == "topic"]
        assert [(s["heading"], s["found_by"]) for s in topic] == [("Piano", ["fts", "vector"])]
        ctx = d.call("context", {"query": "quarterly heating novel"})
        assert not [s for s in ctx["sections"] if s.get("found_by") == ["vector"]]
    finally:
        d.stop()


def test_the_embedding_endpoint_gets_hand_written_notes_redacted(
    home: Path, server: FakeEmbeddings
) -> None:
    """Sections are embedded from the index, which holds them redacted: the endpoint (a
    service on the network) gets no secret and nothing of a `<private>` span."""
    (home / "memory" / planted.REL).write_text(planted.TEXT, encoding="utf-8")
    d = start(home, server)
    try:
        wait_for(lambda: idle(d), timeout=60)
    finally:
        d.stop()
    sent = json.dumps(server.requests)
    assert planted.leaked(sent) == [] and planted.carried(sent) == list(planted.PUBLIC)


def test_queries_reach_the_endpoint_redacted(home: Path, server: FakeEmbeddings) -> None:
    """A hook sends whole prompts as `context` queries: what reaches the endpoint is redacted
    like the index (keys, passwords, `<private>` spans), for context, search and recall."""
    d = start(home, server)
    try:
        ingest(d, "s", SENTENCES[:3])
        wait_for(lambda: idle(d, 3), timeout=60)
        before = len(server.requests)
        prompt = (
            f"deploys go out blue-green every tuesday; the key is {planted.ANTHROPIC},"
            f" aws {planted.AWS}, password={planted.PASSWORD}"
            f" <private>my therapist is {planted.THERAPIST}</private>"
        )
        for method in ("context", "search", "recall"):
            d.call(method, {"query": f"{method}: {prompt}"})
        sent = [r["input"] for r in server.requests[before:]]
    finally:
        d.stop()
    assert len(sent) == 3, sent  # one query each reached the endpoint
    assert planted.carried(json.dumps(sent)) == ["blue-green every tuesday"]
    assert planted.leaked(json.dumps(sent)) == []


def test_an_endpoint_trickling_its_answer_holds_no_query_thread(
    home: Path, server: FakeEmbeddings
) -> None:
    """Headers at once, then a byte every 0.2 s (each within the 0.5 s a single read may wait,
    so no read ever times out; the whole answer would take minutes): each request waits at
    most `semantic.query_timeout_s` for its vector and answers by full text; requests made at
    the same time (more than there are query threads) do not queue behind it."""
    d = start(home, server, MEMD_SEMANTIC_QUERY_TIMEOUT_S="0.5")
    try:
        wait_for(lambda: idle(d), timeout=60)
        server.default = Reply(drip=0.2)
        calls: list[tuple[str, dict[str, Any]]] = [
            ("search", {"query": f"piano lessons {i}", "scope": "memory"}) for i in range(4)
        ]
        calls += [("context", {"query": "piano lessons on thursday"}),
                  ("recall", {"query": "tomatoes"}), ("memories", {}), ("status", {})]  # fmt: skip
        took: dict[str, float] = {}
        answers: dict[str, Any] = {}

        def one(i: int, method: str, params: dict[str, Any]) -> None:
            t = time.monotonic()
            answers[f"{i} {method}"] = d.call(method, params)
            took[f"{i} {method}"] = time.monotonic() - t

        threads = [threading.Thread(target=one, args=(i, m, p)) for i, (m, p) in enumerate(calls)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert len(took) == len(calls), f"calls did not answer: {sorted(took)}"
        # 0.5 s each at most for the vector, then full text; the machine is shared, so the
        # bound is generous, but far below what the trickle would take (minutes).
        assert max(took.values()) < 10, took
        hits = answers["0 search"]["hits"]
        assert [(h["heading"], h["found_by"]) for h in hits] == [("Piano", ["fts"])]
        assert "timed out" in semantic(d)["query_error"]
    finally:
        d.stop()
