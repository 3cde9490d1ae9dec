"""Every assistant's files read live through the one ingestor: appended lines, documents rewritten
in place (and caught mid-write), databases another program keeps writing, folders that appear after
memd started; problems named in `status`, nothing lost."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memd.conversations import inventory, sources
from memd.conversations.logs import LogIngestor
from memd.conversations.sources import LogSource, Where
from memd.core.settings import SettingValue, load
from memd.db import Store
from tests.assistants import (
    T0,
    OpenCodeDb,
    Said,
    codex_path,
    codex_rollout,
    codex_tools,
    codex_turn,
    gemini_chat_path,
    gemini_document,
    gemini_header,
    gemini_message,
    gemini_project,
    jsonl,
    opencode_storage,
)
from tests.conversations.helpers import rows
from tests.utils import wait_for


def configured(home: Path, **settings: SettingValue) -> sources.Configured:
    s = load(env={"MEMD_HOME": str(home / "memd")}, overrides=settings, use_file=False)
    return sources.configured(s.value, Where(home, {}))


@pytest.fixture
def user(tmp_path: Path) -> Path:
    (tmp_path / "u").mkdir()
    return tmp_path / "u"


@pytest.fixture
def ingestor(store: Store, user: Path) -> Iterator[LogIngestor]:
    ing = LogIngestor(store, list(configured(user).sources), poll_s=60, debounce_s=0.02)
    yield ing
    ing.stop()


def texts(store: Store, source: str) -> list[str]:
    return [
        r[0] for r in rows(store, "SELECT text FROM turns WHERE source = ? ORDER BY ts, id", source)
    ]


def test_registry_defaults_and_settings(user: Path) -> None:
    got = {(s.assistant, s.format, s.root) for s in configured(user).sources}
    assert {
        ("codex", "codex", user / ".codex" / "sessions"),
        ("codex", "codex", user / ".codex" / "archived_sessions"),
        ("gemini", "gemini", user / ".gemini" / "tmp"),
        ("gemini", "gemini-chat", user / ".gemini" / "tmp"),
        ("opencode", "opencode-db", user / ".local" / "share" / "opencode"),
        ("claude-code", "claude-code", user / ".claude" / "projects"),
    } <= got
    where = Where(user, {"CODEX_HOME": "/srv/codex", "GEMINI_CLI_HOME": "/srv/g",
                         "XDG_DATA_HOME": "/srv/data"})  # fmt: skip
    s = load(env={"MEMD_HOME": str(user / "m")}, use_file=False)
    roots = {(x.format, x.root) for x in sources.configured(s.value, where).sources}
    assert {("codex", Path("/srv/codex/sessions")), ("gemini-chat", Path("/srv/g/.gemini/tmp")),
            ("opencode-db", Path("/srv/data/opencode"))} <= roots  # fmt: skip
    # Off, or a folder of your own; Claude Code keeps its own settings' names.
    chosen: dict[str, SettingValue] = {"logs.codex": False, "logs.gemini_dir": str(user / "g"),
                                       "logs.claude_code": False}  # fmt: skip
    picked = configured(user, **chosen)
    names = {s.assistant for s in picked.sources}
    assert "codex" not in names and "claude-code" not in names
    assert {s.root for s in picked.sources if s.assistant == "gemini"} == {user / "g" / "tmp"}


def test_codex_live_append_and_a_folder_that_appears_after_start(
    ingestor: LogIngestor, store: Store, user: Path
) -> None:
    ingestor.start()  # ~/.codex does not exist yet
    wait_for(lambda: ingestor.watcher is not None and ingestor.watcher.waiting_for, 10)
    path, session = codex_rollout(user / ".codex", [Said("user", "port the cli to rust")])
    wait_for(lambda: texts(store, "codex") == ["port the cli to rust"], 30)
    with open(path, "a", encoding="utf-8") as f:
        f.write(jsonl(codex_turn(Said("assistant", "Start with the parser.", T0 + 9))))
    wait_for(
        lambda: texts(store, "codex") == ["port the cli to rust", "Start with the parser."], 30
    )
    # A half-written line waits for its newline.
    line = jsonl(codex_turn(Said("user", "and the tests?", T0 + 20)))
    with open(path, "a", encoding="utf-8") as f:
        f.write(line[:40])
        f.flush()
        ingestor.ingest_paths([str(path)])
        assert "and the tests?" not in texts(store, "codex")
        f.write(line[40:])
    wait_for(lambda: "and the tests?" in texts(store, "codex"), 30)
    [(sid, project, agent)] = rows(
        store, "SELECT DISTINCT session_id, project, agent_id FROM turns"
    )
    assert (sid, project, agent) == (session, "/home/u/proj", "codex")


def test_codex_unknown_records_and_bad_lines_are_problems_nothing_lost(
    ingestor: LogIngestor, store: Store, user: Path
) -> None:
    path, _ = codex_rollout(user / ".codex", [Said("user", "first question")])
    with open(path, "a", encoding="utf-8") as f:
        for n in range(3):  # a newer Codex's record type, many times
            f.write(json.dumps({"timestamp": "2026-11-27T00:00:00Z", "type": "hologram",
                                "payload": {"n": n}}) + "\n")  # fmt: skip
        f.write('{"timestamp":"2026-11-27T00:00:00Z","type":"response_it\n')  # truncated line
        f.write(jsonl(codex_tools(T0 + 4, output="x" * 5_000_000)))  # a huge tool output
        f.write(jsonl(codex_turn(Said("assistant", "an answer after the damage", T0 + 5))))
        f.write(jsonl(codex_turn(Said("assistant", "x" * 300_000, T0 + 6))))  # a huge message
    ingestor.scan()
    assert texts(store, "codex")[:2] == ["first question", "an answer after the damage"]
    reasons = [r[0] for r in rows(store, "SELECT reason FROM bad_lines ORDER BY line")]
    assert sum("unknown record type 'hologram'" in r for r in reasons) == 1  # once per file
    assert sum("not valid JSON" in r for r in reasons) == 1
    # The same file read again (a rewrite shorter than before restarts it): still once each.
    path.write_text(path.read_text().splitlines(keepends=True)[0])
    ingestor.scan()
    assert len(texts(store, "codex")) == 3  # what was read stays


def test_gemini_jsonl_message_appended_again_last_copy_wins(
    ingestor: LogIngestor, store: Store, user: Path
) -> None:
    folder = gemini_project(user / ".gemini", "/home/u/site")
    path = gemini_chat_path(folder, "0199aaaa-0000-7000-8000-000000000000")
    msg = gemini_message(Said("assistant", "Partial answ"), "g1")
    path.write_text(
        jsonl([gemini_header("S1"), gemini_message(Said("user", "fix the grid"), "u1"), msg])
    )
    ingestor.scan()
    assert texts(store, "gemini") == ["fix the grid", "Partial answ"]
    with open(path, "a", encoding="utf-8") as f:
        f.write(jsonl([{**msg, "content": "Partial answer, now complete."}, {"$rewindTo": "u1"},
                       {"$branch": {"at": "u1"}}, {"$branch": {"at": "g1"}}]))  # fmt: skip
    ingestor.scan()
    assert texts(store, "gemini") == ["fix the grid", "Partial answer, now complete."]
    assert rows(store, "SELECT count(*) FROM turns")[0][0] == 2
    # A record of a newer Gemini CLI: named once, the rest read.
    [why] = [b for b in ingestor.status().recent_bad_lines if "$branch" in b]
    assert "a newer Gemini CLI" in why


def test_gemini_document_rewritten_in_place_and_caught_mid_write(
    ingestor: LogIngestor, store: Store, user: Path
) -> None:
    folder = gemini_project(user / ".gemini", "/home/u/api")
    path = gemini_chat_path(folder, "0199cccc-0000-7000-8000-000000000000", "json")
    first = [gemini_message(Said("user", "rename the endpoint"), "m1")]
    path.write_text(gemini_document("S2", first))
    ingestor.scan(quick=True)
    assert texts(store, "gemini") == ["rename the endpoint"]
    # Rewritten in place, longer (the CLI writes the whole document again).
    more = [*first, gemini_message(Said("assistant", "Renamed to /v2/items.", T0 + 1), "m2")]
    path.write_text(gemini_document("S2", more))
    ingestor.scan(quick=True)
    assert texts(store, "gemini") == ["rename the endpoint", "Renamed to /v2/items."]
    # The same size, one word changed: seen by its time, the turn updated.
    inode = path.stat().st_ino
    with open(path, "r+", encoding="utf-8") as f:
        body = f.read().replace("/v2/items", "/v3/items")
        f.seek(0)
        f.write(body)
    assert path.stat().st_ino == inode
    ingestor.scan(quick=True)
    assert texts(store, "gemini") == ["rename the endpoint", "Renamed to /v3/items."]
    # Caught mid-write: not valid JSON yet. A problem in status, nothing lost, read again later.
    with open(path, "w", encoding="utf-8") as f:
        f.write(gemini_document("S2", more)[:50])
    ingestor.scan(quick=True)
    assert texts(store, "gemini") == ["rename the endpoint", "Renamed to /v3/items."]
    st = ingestor.status()
    assert any(path.name in b and "read again when it changes" in b for b in st.recent_bad_lines)
    done = [*more, gemini_message(Said("user", "thanks", T0 + 2), "m3")]
    path.write_text(gemini_document("S2", done))
    ingestor.scan(quick=True)
    assert texts(store, "gemini")[-1] == "thanks"
    assert ingestor.status().recent_bad_lines == []
    # Rewritten shorter (the CLI dropped messages): what memd kept stays.
    path.write_text(gemini_document("S2", first))
    ingestor.scan(quick=True)
    assert len(texts(store, "gemini")) == 3


def test_a_document_only_touched_is_not_parsed_again(
    ingestor: LogIngestor, store: Store, user: Path
) -> None:
    folder = gemini_project(user / ".gemini", "/home/u/api")
    path = gemini_chat_path(folder, "0199dddd-0000-7000-8000-000000000000", "json")
    path.write_text(gemini_document("S3", [gemini_message(Said("user", "hello"), "m1")]))
    [rep] = ingestor.scan(quick=True)
    assert rep.lines == 1
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    [rep] = ingestor.scan(quick=True)
    assert rep.lines == 0 and rep.added == 0  # read, same content: not parsed
    assert ingestor.scan(quick=True) == []  # and its new time remembered: not even opened


def test_opencode_database_read_only_live_and_never_its_accounts(
    ingestor: LogIngestor, store: Store, user: Path
) -> None:
    db = OpenCodeDb(user / ".local" / "share" / "opencode" / "opencode.db").create()
    # A tripwire: reading OpenCode's account table would fail the read.
    with db.connect() as c:
        c.execute("DROP TABLE account")
        c.execute("CREATE VIEW account AS SELECT no_such_function() AS access_token")
    db.session("ses_1", "/home/u/birds")
    db.say("ses_1", Said("user", "what do kiwis eat?", T0))
    db.say("ses_1", Said("assistant", "Worms and grubs.", T0 + 2))
    db.session("ses_sub", "/home/u/birds", parent="ses_1")  # a sub-agent's session
    db.say("ses_sub", Said("user", "search the web for kiwi diets", T0 + 1))

    def digests() -> dict[str, str]:
        # The -shm file is the readers' shared lock table, which every reader of a WAL
        # database writes (OpenCode's own readers too); the database and its log are the data.
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                for p in db.path.parent.iterdir() if not p.name.endswith("-shm")}  # fmt: skip

    files = digests()
    ingestor.start()
    wait_for(lambda: texts(store, "opencode") == ["what do kiwis eat?", "Worms and grubs."], 30)
    # Read-only: OpenCode's files are as they were (no file created, none written).
    assert digests() == files
    # Live: a new message, and a streamed part written again with more text.
    mid = db.say("ses_1", Said("user", "and in winter?", T0 + 10))
    wait_for(lambda: "and in winter?" in texts(store, "opencode"), 30)
    with db.connect() as c:
        [(pid,)] = c.execute("SELECT id FROM part WHERE message_id = ?", (mid,)).fetchall()
        db.part(c, "ses_1", mid, {"type": "text", "text": "and in winter, when it snows?"},
                int((T0 + 30) * 1000), pid)  # fmt: skip
    wait_for(lambda: "and in winter, when it snows?" in texts(store, "opencode"), 30)
    assert len(texts(store, "opencode")) == 3
    [(project, agent)] = rows(store, "SELECT DISTINCT project, agent_id FROM turns")
    assert (project, agent) == ("/home/u/birds", "opencode")
    # While OpenCode holds a write open, memd still reads what was committed.
    with db.connect() as c:
        c.execute("BEGIN IMMEDIATE")
        c.execute("UPDATE session SET title = 'x'")
        db_path = str(db.path)
        ingestor.ingest_paths([db_path])
        c.execute("ROLLBACK")
    assert ingestor.problems == {}


def test_opencode_storage_files_part_before_its_message(
    ingestor: LogIngestor, store: Store, user: Path
) -> None:
    data = user / ".local" / "share" / "opencode"
    parts = opencode_storage(data, "ses_9", "/home/u/x", [Said("user", "hello kiwi", T0)])
    msg = next((data / "storage" / "message" / "ses_9").iterdir())
    held = msg.read_text()
    msg.unlink()  # the part was written before its message
    ingestor.scan(quick=True)
    assert texts(store, "opencode") == []
    assert any("message file is not there" in b for b in ingestor.status().recent_bad_lines)
    msg.write_text(held)
    ingestor.scan(quick=True)  # read again at the next scan
    assert texts(store, "opencode") == ["hello kiwi"]
    assert parts


def test_inventory_lists_every_assistant(ingestor: LogIngestor, store: Store, user: Path) -> None:
    codex_rollout(user / ".codex", [Said("user", "a"), Said("assistant", "b")])
    folder = gemini_project(user / ".gemini", "/home/u/p")
    broken = gemini_chat_path(folder, "0199eeee-0000-7000-8000-000000000000", "json")
    broken.write_text('{"sessionId": "S4", "messages": [')
    ingestor.scan()
    found = {
        f.name: f
        for f in inventory.assistants(store.read(), configured(user).choices, ingestor.problems)
    }
    assert set(found) >= {"claude-code", "codex", "gemini", "opencode"}
    assert (found["codex"].found, found["codex"].files, found["codex"].turns) == (True, 1, 2)
    assert found["codex"].folders == [str(user / ".codex")]
    assert (found["opencode"].found, found["opencode"].turns) == (False, 0)
    assert any(broken.name in p for p in found["gemini"].problems)
    assert found["codex"].problems == []


def test_the_inventory_reads_no_turn_of_the_index(
    ingestor: LogIngestor, store: Store, user: Path
) -> None:
    """`memd status` (and the page polling it) lists every assistant with its turns and
    sessions: counted over every turn of the index, that took 5.5 ms at 20,000 turns and grows
    with every turn a person ever had. Counted from the sessions, it reads no turn — and says
    the same as counting the turns."""
    codex_rollout(user / ".codex", [Said("user", "a"), Said("assistant", "b")])
    ingestor.scan()
    conn = store.read()
    said: list[str] = []
    conn.set_trace_callback(said.append)
    try:
        found = inventory.assistants(conn, configured(user).choices, ingestor.problems)
    finally:
        conn.set_trace_callback(None)
    plans = [
        str(row[-1]) for sql in said if sql.lstrip().upper().startswith("SELECT")
        for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}")
    ]  # fmt: skip
    assert not [p for p in plans if p.startswith("SCAN turns")], plans
    counted = dict(
        ((src, (n, s)) for src, n, s in conn.execute(
            "SELECT source, count(*), count(DISTINCT session_id) FROM turns GROUP BY source"))
    )  # fmt: skip
    assert {a.name: (a.turns, a.sessions) for a in found if a.turns} == counted == {"codex": (2, 1)}


def test_sources_of_logs_sources_may_name_an_assistant_format(user: Path) -> None:
    picked = configured(user, **{"logs.sources": [{"path": str(user / "x"), "format": "codex"}]})
    extra = [s for s in picked.sources if s.root == user / "x"]
    assert [(s.format, s.assistant, s.agent) for s in extra] == [("codex", "codex", "codex")]
    assert LogSource(user / "x", "codex").accepts(
        str(codex_path(user / "x", "abc")).replace("/sessions", "")
    )


def test_opencode_database_while_opencode_is_not_running_gets_no_files_beside_it(
    ingestor: LogIngestor, store: Store, user: Path
) -> None:
    db = OpenCodeDb(user / ".local" / "share" / "opencode" / "opencode.db").create()
    db.session("ses_1", "/home/u/birds")
    db.say("ses_1", Said("user", "what do kiwis eat?", T0))
    with db.connect() as c:  # OpenCode quits: its log is folded in and removed
        c.execute("PRAGMA journal_mode = DELETE")
    before = sorted(os.listdir(db.path.parent))
    assert before == ["opencode.db"]
    ingestor.scan()
    assert texts(store, "opencode") == ["what do kiwis eat?"]
    assert sorted(os.listdir(db.path.parent)) == before


def test_folders_of_assistants_not_installed_do_not_turn_watching_into_polling(
    ingestor: LogIngestor, user: Path
) -> None:
    """Most people have one or two of the assistants: the others' missing folders are watched
    for, and the folders that exist keep their rare safety scan (not one every poll)."""
    (user / ".claude" / "projects").mkdir(parents=True)
    ingestor.start()
    w = wait_for(
        lambda: ingestor.watcher if ingestor.watcher and ingestor.watcher.watched_roots else None,
        10,
    )
    assert str(user / ".claude" / "projects") in w.watched_roots and w.waiting_for
    ingestor._last_scan = time.monotonic()
    assert not ingestor._needs_scan(time.monotonic())


def test_claude_code_project_folders_of_memds_own_runs_are_never_read(user: Path) -> None:
    picked = configured(user)
    assert all(not s.skip for s in picked.choices[0].sources())
    s = load(env={"MEMD_HOME": str(user / "memd")}, use_file=False)
    [claude] = [x for x in sources.configured(s.value, Where(user, {}), skip=["-srv-memd-llm"]).sources
                if x.assistant == "claude-code"]  # fmt: skip
    root = user / ".claude" / "projects"
    assert not claude.accepts(str(root / "-srv-memd-llm" / "a.jsonl"))
    assert claude.accepts(str(root / "-home-u-app" / "a.jsonl"))


def test_opencode_databases_of_any_channel_and_their_logs(user: Path) -> None:
    data = user / ".local" / "share" / "opencode"
    src = LogSource(data, "opencode-db")
    for name in ("opencode.db", "opencode-dev.db", "opencode.db-wal", "opencode-dev.db-wal"):
        assert src.accepts(str(data / name)), name
    assert src.database(str(data / "opencode-dev.db-wal")) == str(data / "opencode-dev.db")
    for name in ("opencode.db-shm", "auth.json", "storage/part/m/p.json", "snapshot/x/opencode.db"):
        assert not src.accepts(str(data / name)), name
