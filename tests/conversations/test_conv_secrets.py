"""Secrets never leave memd unredacted: not from a turn's `name` or `project`, not when a token is
split over two content parts, not from hand-written Markdown (inline or in a `<private>` block).

Each path that sends data out is checked against what left the process: the requests the fake
Anthropic API received (extraction, session summaries), the rows of a real PostgreSQL sync
table, the requests the fake PostgREST received (Supabase sync), and the export file.
"""

from __future__ import annotations

import json
import random
import string
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memd.app import Engine
from memd.conversations.summary_job import run_summaries
from memd.core.models import JobOutcome
from memd.core.settings import load
from memd.db import Store
from memd.extraction.job import run_extraction
from memd.memory.tree import create_tree
from tests.fakes.anthropic_server import FakeAnthropic, json_reply
from tests.fakes.postgrest_server import FakePostgrest
from tests.jobenv import Env
from tests.pgserver import PgServer
from tests.utils import DaemonProcess, wait_for

_rng = random.Random(20261123)


def _chars(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


# Assembled at run time from random characters: no real-looking key in the repository.
ANTHROPIC = "sk-" + "ant-" + "api03-" + _chars(93) + "AA"
GITHUB = "gh" + "p_" + _chars(36)
AWS = "AK" + "IA" + _chars(16, string.ascii_uppercase + "234567")
PASSWORD = _chars(14)
PIN = "pin " + _chars(10, string.digits)  # only hidden by the <private> block around it
SUPABASE_KEY = "sb_secret_" + _chars(30)


def fragments() -> dict[str, str]:
    """Pieces that must never appear, by name: each secret, and each half of the split ones."""
    out = {"anthropic key": ANTHROPIC, "github token": GITHUB, "aws key": AWS,
           "password": PASSWORD, "private pin": PIN}  # fmt: skip
    for name, s in (("anthropic key", ANTHROPIC), ("github token", GITHUB)):
        half = len(s) // 2
        out[f"{name}, end of 1st half"] = s[:half][-12:]
        out[f"{name}, start of 2nd half"] = s[half:][:12]
    return out


def leaked(data: str | bytes) -> list[str]:
    """The names of the fragments found in `data` (names only: a failure shows no secret)."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return [name for name, f in fragments().items() if f in text]


def split_turns(session: str, ts: float | None = None) -> list[dict[str, Any]]:
    """Turns whose content arrays split a token in two, with secrets in `name` and `project`."""
    a, g = len(ANTHROPIC) // 2, len(GITHUB) // 2
    turns: list[dict[str, Any]] = [
        {"session_id": session, "id": "u1", "role": "user", "name": f"token={GITHUB}",
         "project": f"/srv/{AWS}/app",
         "content": [{"type": "text", "text": f"I moved the deploy to Frankfurt, key {ANTHROPIC[:a]}"},
                     {"type": "text", "text": f"{ANTHROPIC[a:]} is the new one"}]},
        {"session_id": session, "id": "a1", "role": "assistant",
         "content": [{"type": "text", "text": f"Noted the Frankfurt deploy. Rotate {GITHUB[:g]}"},
                     {"type": "text", "text": f"{GITHUB[g:]} too, and use ruff for linting."}]},
        {"session_id": session, "id": "u2", "role": "user",
         "content": "Thanks. We also settled on Postgres 16 for the billing service."},
        {"session_id": session, "id": "a2", "role": "assistant",
         "content": "Postgres 16 it is for billing; I will write the migration plan."},
    ]  # fmt: skip
    if ts is not None:
        for i, t in enumerate(turns):
            t["ts"] = ts + i
    return turns


HAND_WRITTEN = f"""# Notes

## Accounts

- my Anthropic key is {ANTHROPIC}
- the build bot uses {GITHUB}
- staging db password = {PASSWORD}

<private>

- bank {PIN}

</private>

- aws {AWS}
"""


def ingest(engine: Engine, session: str, ts: float | None = None) -> None:
    engine.handle("ingest", {"turns": split_turns(session, ts)})


# -- stored and exported --------------------------------------------------------------------------
def test_stored_and_exported_turns_hold_no_secret(home: Path, tmp_path: Path) -> None:
    claude = home / "claude" / "-srv-app"
    claude.mkdir(parents=True)
    d = DaemonProcess(
        home, MEMD_LOGS_CLAUDE_DIR=str(home / "claude"), MEMD_LOGS_POLL_S="0.3"
    ).start()
    try:
        d.call("ingest", {"turns": split_turns("pushed-1")})
        sid = str(uuid.uuid4())
        half = len(ANTHROPIC) // 2
        record = {"parentUuid": None, "isSidechain": False, "type": "user", "sessionId": sid, "uuid": "cu1",
                  "timestamp": "2026-07-06T12:00:00.000Z", "cwd": "/srv/app",
                  "message": {"role": "user", "content": [
                      {"type": "text", "text": f"the old key was {ANTHROPIC[:half]}"},
                      {"type": "text", "text": f"{ANTHROPIC[half:]}, now revoked"}]}}  # fmt: skip
        (claude / f"{sid}.jsonl").write_text(json.dumps(record) + "\n")
        wait_for(lambda: d.call("status")["logs"]["turns_from_logs"] == 1)
        answers = [
            d.call("recall", {"session_id": "pushed-1"}),
            d.call("recall", {"session_id": sid}),
            d.call("search", {"query": "Frankfurt deploy", "scope": "conversations"}),
        ]
        assert leaked(json.dumps(answers)) == []
        out = tmp_path / "export.json"
        assert d.cli("export", str(out), "--no-tree").returncode == 0
        assert leaked(out.read_bytes()) == []
        assert "Frankfurt" in out.read_text()
    finally:
        d.stop()


# -- the LLM --------------------------------------------------------------------------------------
@pytest.fixture
def online(env: Env, server: FakeAnthropic) -> Env:
    env.online(server)
    (env.memory / "_core" / "notes.md").write_text(HAND_WRITTEN)
    env.engine.indexer.reconcile()
    return env


def test_extraction_sends_no_secret_to_the_llm(online: Env, server: FakeAnthropic) -> None:
    ingest(online.engine, "llm-1", online.clock() - 60)
    server.enqueue(json_reply({"memories": []}), json_reply({"memories": []}))
    res = run_extraction(online.ctx())
    assert res.outcome is JobOutcome.SUCCESS, res
    assert server.requests
    for r in server.requests:
        assert leaked(r.raw) == []
    prompt = server.requests[0].body["messages"][0]["content"]
    assert "Frankfurt" in prompt and "staging db password" in prompt  # the rest still goes


def test_session_summaries_send_no_secret_to_the_llm(online: Env, server: FakeAnthropic) -> None:
    ingest(online.engine, "llm-2", online.clock() - 60)
    online.clock.advance(minutes=online.settings.summary_idle_min + 5)
    server.enqueue(json_reply({"title": "Frankfurt deploy", "summary": "Moved the deploy."}))
    res = run_summaries(online.ctx())
    assert res.outcome is JobOutcome.SUCCESS and res.counts["summarized"] == 1, res
    for r in server.requests:
        assert leaked(r.raw) == []
    assert "Frankfurt" in server.requests[0].body["messages"][0]["content"]


# -- the cloud ------------------------------------------------------------------------------------
class Device:
    """One memd home syncing to a backend, driven in-process."""

    def __init__(self, home: Path, **settings: Any) -> None:
        self.settings = load(env={"MEMD_HOME": str(home)},
                             overrides={"sync.push_delay_s": 0.0, "sync.user_id": "alice",
                                        "sync.summaries": True, **settings})  # fmt: skip
        create_tree(self.settings.memory_dir)
        self.store = Store.open(self.settings.db_path)
        self.engine = Engine(self.settings, self.store)
        (self.settings.memory_dir / "_core" / "notes.md").write_text(HAND_WRITTEN)
        self.engine.indexer.reconcile()

    def sync(self) -> dict[str, Any]:
        res: dict[str, Any] = self.engine.handle("sync_now", {})
        return res

    def close(self) -> None:
        for f in self.engine.features:
            if f.name == "sync":
                for stop in f.on_stop:
                    stop()
        self.store.close()


@pytest.fixture
def pg_table(pg: PgServer) -> Iterator[tuple[str, str]]:
    from memd.sync.postgres import PostgresBackend

    pg.start()
    dsn = pg.create_database(f"secrets_{uuid.uuid4().hex[:8]}")
    table = f"t_{uuid.uuid4().hex[:10]}"
    backend = PostgresBackend(dsn, table)
    backend.init_schema()
    backend.close()
    yield dsn, table


@pytest.mark.postgres
def test_sync_to_postgres_sends_no_secret(tmp_path: Path, pg_table: tuple[str, str]) -> None:
    import psycopg

    dsn, table = pg_table
    dev = Device(
        tmp_path / "a", **{"sync.backend": "postgres", "sync.dsn": dsn, "sync.table": table}
    )
    try:
        ingest(dev.engine, "cloud-1")
        res = dev.sync()
        assert res["outcome"] == "success", res
        with psycopg.connect(dsn, autocommit=True) as conn, conn.cursor() as cur:
            cur.execute(f'select path, content from "{table}"')
            rows = cur.fetchall()
            cur.execute(f'select * from "{table}_events"')
            events = cur.fetchall()
        paths = [r[0] for r in rows]
        assert "_core/notes.md" in paths and any(p.startswith("_sessions/") for p in paths)
        assert leaked(json.dumps([rows, [list(map(str, e)) for e in events]])) == []
        content: dict[str, str] = dict(rows)
        notes = content["_core/notes.md"]
        assert "staging db password" in notes and "[REDACTED:" in notes
    finally:
        dev.close()


def test_sync_to_supabase_sends_no_secret(tmp_path: Path) -> None:
    with FakePostgrest(api_key=SUPABASE_KEY) as server:
        dev = Device(tmp_path / "b", **{"sync.backend": "supabase", "sync.url": server.url,
                                        "sync.key": SUPABASE_KEY})  # fmt: skip
        try:
            ingest(dev.engine, "cloud-2")
            res = dev.sync()
            assert res["outcome"] == "success", res
            pushed = [r for r in server.requests if r.method == "POST"]
            assert pushed
            for r in server.requests:
                assert leaked(json.dumps([r.path, r.query, r.body])) == []
            assert any(row["path"].startswith("_sessions/") for row in server.rows())
        finally:
            dev.close()
