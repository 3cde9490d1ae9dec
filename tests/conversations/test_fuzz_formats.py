"""Property-based fuzzing of every log format's parser and of the daemon's `ingest`.

Random bytes, random JSON and records of each format with fields of random types: a parser
returns turns or raises memd's per-line `ParseError`, nothing else; a valid line next to bad
ones is never lost; and through a real daemon every `ingest` gets an answer (a result or
-32602), and every turn it acknowledged is there, also after the index is deleted.
"""

from __future__ import annotations

import itertools
import json
import math
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memd.conversations.formats import (
    ChatGPTImport,
    SessionTitle,
    parse_chatgpt_export,
    parse_claude_code_line,
    parse_jsonl_line,
)
from memd.conversations.logs import LogIngestor
from memd.core.errors import InvalidParams, ParseError
from memd.core.models import MAX_TS, Turn
from memd.db import Store
from tests.utils import DaemonProcess, call

PARSERS = settings(max_examples=300, deadline=2000)
FILES = settings(
    max_examples=40, deadline=10_000, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
DAEMON = settings(
    max_examples=60,
    deadline=30_000,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.integers(min_value=10**300, max_value=10**400)  # beyond any float
    | st.floats()
    | st.text(max_size=30)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
stamps = (
    json_values
    | st.floats(min_value=-1e25, max_value=1e25)
    | st.integers(min_value=0, max_value=10**22)
    | st.integers(min_value=10**300, max_value=10**400)
    | st.datetimes().map(lambda d: d.isoformat())
    | st.sampled_from(["2026-07-06T12:00:00.000Z", "1700000000", "", "  ", "nan", "inf"])
)
words = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=40)


def maybe(fields: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """Records with these fields: all of them well typed, or any subset with values of any
    JSON type (mostly well typed, so that deep branches of the parsers are reached)."""
    return st.fixed_dictionaries(fields) | st.fixed_dictionaries(
        {}, optional={k: st.one_of(v, v, json_values) for k, v in fields.items()}
    )


content_parts = st.lists(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "tool_use", "image", "thinking"])},
        optional={"text": words | json_values},
    )
    | json_values,  # fmt: skip
    max_size=4,
)
claude_records = maybe({
    "type": st.sampled_from(["user", "assistant", "summary", "system", "progress"]),
    "uuid": words, "parentUuid": words, "sessionId": words, "timestamp": stamps, "cwd": words,
    "isMeta": st.booleans(), "isSidechain": st.booleans(), "summary": words, "leafUuid": words,
    "message": maybe({"role": words, "id": words, "content": words | content_parts}),
})  # fmt: skip
generic_records = maybe({
    "session_id": words, "role": st.sampled_from(["user", "assistant", "system"]),
    "content": words | content_parts, "ts": stamps, "id": words, "agent_id": words,
    "project": words, "title": words, "name": words,
})  # fmt: skip
openai_records = maybe({
    "id": words, "title": words,
    "messages": st.lists(maybe({"role": st.sampled_from(["user", "assistant", "tool"]),
                                "content": words | content_parts, "timestamp": stamps,
                                "name": words}) | json_values, max_size=5),
})  # fmt: skip
chatgpt_nodes = maybe({
    "id": words, "parent": words, "children": st.lists(words, max_size=2),
    "message": maybe({
        "id": words, "create_time": stamps, "recipient": st.sampled_from(["all", "python"]),
        "author": maybe({"role": st.sampled_from(["user", "assistant", "system", "tool"])}),
        "content": maybe({"content_type": st.sampled_from(["text", "multimodal_text", "code"]),
                          "parts": st.lists(words | json_values, max_size=3), "text": words}),
    }),
})  # fmt: skip
chatgpt_exports = st.lists(
    maybe({"id": words, "title": words, "create_time": stamps, "current_node": words,
           "mapping": st.dictionaries(words, chatgpt_nodes, max_size=5)}) | json_values,
    max_size=4,
)  # fmt: skip


def lines(records: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[bytes]:
    """A log line: a record as JSON, random JSON, or random bytes."""
    dumped = records.map(lambda r: json.dumps(r).encode())
    return dumped | json_values.map(lambda v: json.dumps(v).encode()) | st.binary(max_size=200)


def check_turn(t: Turn) -> None:
    assert t.session_id and t.turn_id and isinstance(t.text, str) and t.text
    assert t.role in ("user", "assistant")
    assert math.isfinite(t.ts) and 0 <= t.ts <= MAX_TS, t.ts


def check_records(out: list[Any]) -> None:
    for rec in out:
        if isinstance(rec, SessionTitle):
            assert rec.title and rec.leaf_id
        else:
            check_turn(rec)


# -- each parser ----------------------------------------------------------------------------------
@PARSERS
@given(lines(claude_records))
def test_claude_code_lines(raw: bytes) -> None:
    try:
        out = parse_claude_code_line(raw, path="f.jsonl", lineno=3, session_hint="hint")
    except ParseError as exc:
        assert exc.line == 3 and str(exc)
        return
    check_records(out)


@PARSERS
@given(lines(generic_records))
def test_generic_jsonl_lines(raw: bytes) -> None:
    try:
        out = parse_jsonl_line(raw, path="f.jsonl", lineno=5)
    except ParseError as exc:
        assert exc.line == 5 and str(exc)
        return
    check_records(list(out))


@PARSERS
@given(lines(openai_records))
def test_openai_messages_lines(raw: bytes) -> None:
    try:
        out = parse_jsonl_line(raw, path="f.jsonl", lineno=7)
    except ParseError as exc:
        assert exc.line == 7 and str(exc)
        return
    check_records(list(out))


@PARSERS
@given(chatgpt_exports.map(lambda v: json.dumps(v).encode()) | st.binary(max_size=300))
def test_chatgpt_exports(raw: bytes) -> None:
    try:
        out = parse_chatgpt_export(raw, path="conversations.json")
    except ParseError as exc:
        assert str(exc)
        return
    assert isinstance(out, ChatGPTImport)
    for t in out.turns:
        check_turn(t)


# -- a valid line is never lost next to bad ones ---------------------------------------------------
_n = itertools.count()


def valid_line(fmt: str, session: str) -> tuple[bytes, str]:
    """A line the parser must accept, and the text it holds."""
    i = next(_n)
    text = f"valid line {i}"
    if fmt == "claude-code":
        rec: dict[str, Any] = {"type": "user", "uuid": f"u{i}", "sessionId": session,
                               "timestamp": "2026-07-06T12:00:00Z",
                               "message": {"role": "user", "content": text}}  # fmt: skip
    else:
        rec = {
            "session_id": session,
            "id": f"t{i}",
            "role": "user",
            "content": text,
            "ts": 1.7e9 + i,
        }
    return json.dumps(rec).encode(), text


@pytest.fixture(scope="module")
def log_store() -> Iterator[tuple[Store, Path]]:
    with tempfile.TemporaryDirectory(prefix="memd-fzl-") as d:
        store = Store.open(Path(d) / "index.db")
        yield store, Path(d)
        store.close()


@FILES
@given(
    fmt=st.sampled_from(["claude-code", "jsonl"]),
    layout=st.lists(
        st.booleans() | lines(claude_records | generic_records | openai_records),
        min_size=1,
        max_size=12,
    ),  # fmt: skip
)
def test_valid_lines_survive_bad_neighbours(
    log_store: tuple[Store, Path], fmt: str, layout: list[bool | bytes]
) -> None:
    store, folder = log_store
    session = f"s{next(_n)}"
    path = folder / f"{session}.jsonl"
    expected = []
    data = []
    for item in layout:
        if item is True or item is False:
            raw, text = valid_line(fmt, session)
            expected.append(text)
        else:
            raw = item.replace(b"\n", b" ").replace(b"\r", b" ")
        data.append(raw)
    path.write_bytes(b"\n".join(data) + b"\n")
    LogIngestor(store, []).ingest_files([(str(path), fmt)])
    got = {r[0] for r in store.read().execute(
        "SELECT text FROM turns WHERE session_id = ? OR source_path = ?", (session, str(path)))}  # fmt: skip
    assert set(expected) <= got


# -- the daemon's ingest ---------------------------------------------------------------------------
ACKED: dict[str, set[str]] = {}


@pytest.fixture(scope="module")
def fuzzed() -> Iterator[DaemonProcess]:
    with tempfile.TemporaryDirectory(prefix="memd-fzi-", dir="/tmp") as home:
        d = DaemonProcess(Path(home), MEMD_LOGS_CLAUDE_CODE="false").start()
        yield d
        if d.proc is not None and d.proc.poll() is None:
            d.stop()


def valid_turn(session: str, with_id: bool, with_ts: bool) -> dict[str, Any]:
    i = next(_n)
    t: dict[str, Any] = {"session_id": session, "role": "user" if i % 2 else "assistant",
                         "content": f"acknowledged turn {i}"}  # fmt: skip
    if with_id:
        t["id"] = f"id{i}"
    if with_ts:
        t["ts"] = 1.7e9 + i
    return t


@DAEMON
@given(
    items=st.lists(
        st.tuples(st.booleans(), st.booleans()) | generic_records | openai_records | json_values,
        min_size=1,
        max_size=6,
    ),  # fmt: skip
    extra=maybe({"request_id": words, "session_id": words, "role": words, "content": words}),
)
def test_every_ingest_is_answered_and_nothing_acknowledged_is_lost(
    fuzzed: DaemonProcess, items: list[Any], extra: dict[str, Any]
) -> None:
    session = f"fz{next(_n)}"
    turns = [valid_turn(session, *it) if isinstance(it, tuple) else it for it in items]
    params = {**extra, "turns": turns}
    try:
        res = call(fuzzed.sock, "ingest", params, timeout=30)
    except InvalidParams as exc:
        assert str(exc)
        return
    assert res["enabled"] is True and res["accepted"] >= sum(isinstance(i, tuple) for i in items)
    mine = {t["content"] for t in turns if isinstance(t, dict) and t.get("session_id") == session
            and isinstance(t.get("content"), str) and t["content"].startswith("acknowledged")}  # fmt: skip
    if mine:
        ACKED[session] = mine
        stored = fuzzed.call("recall", {"session_id": session, "limit": 100})["sessions"][0]
        assert mine <= {t["text"] for t in stored["turns"]}


def test_acknowledged_turns_come_back_after_the_index_is_lost(fuzzed: DaemonProcess) -> None:
    assert fuzzed.proc is not None and fuzzed.proc.poll() is None, "the daemon died"
    assert ACKED, "no request was acknowledged"
    assert fuzzed.stop() == 0
    for suffix in ("", "-wal", "-shm"):
        Path(str(fuzzed.home / "data" / "index.db") + suffix).unlink(missing_ok=True)
    fuzzed.start()
    for session, texts in ACKED.items():
        stored = fuzzed.call("recall", {"session_id": session, "limit": 100})["sessions"][0]
        assert texts <= {t["text"] for t in stored["turns"]}, session
