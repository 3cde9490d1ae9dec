"""Numbers and nesting JSON's decoders choke on get an error naming the field, never -32000 or a
dropped connection: over the socket (-32602 naming the param), in an import (the import's own
error naming the place, nothing imported), on `memd ingest`'s standard input.

An integer of 5,000 digits made Python's json raise `ValueError` (the daemon closed the
connection without an answer); NaN and Infinity are no JSON numbers but Python reads them (a
NaN time failed in SQLite as `NOT NULL constraint failed`); 100,000 nested arrays raised
`RecursionError`.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from memd.api.client import RemoteError
from memd.core.errors import MemdError
from tests import forkserver
from tests.daemon.test_server import raw, rpc
from tests.utils import DaemonProcess, memd_env

BIG = "9" * 5000
DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    ("method", "params", "names"),
    [
        ("search", f'{{"query": "x", "limit": {BIG}}}', "'limit': an integer of 5,000 digits"),
        ("memories", '{"limit": NaN}', "'limit': NaN is not a JSON number"),
        ("ingest", '{"turns": [{"session_id": "s", "role": "user", "content": "x", "ts": NaN}]}',
         "'turns[0].ts': NaN"),
        ("ingest", '{"session_id": "s", "role": "user", "content": "x", "ts": -Infinity}',
         "'ts': -Infinity"),
        ("ingest", '{"session_id": "s", "role": "user", "content": "x", "ts": 1e999}',
         "'ts': 1e999 is out of the range"),
        ("remember", f'{{"text": "x", "request_id": {BIG}}}', "'request_id'"),
        ("history", f'{{"limit": {BIG}}}', "'limit'"),
        ("undo", f'{{"change": "abc", "changes": [{BIG}]}}', "'changes[0]'"),
        ("edit_item", f'{{"id": "m_1", "importance": {BIG}}}', "'importance'"),
    ],
)  # fmt: skip
def test_unreadable_numbers_in_params_are_invalid_params_naming_the_field(
    module_daemon: DaemonProcess, method: str, params: str, names: str
) -> None:
    s = raw(module_daemon.sock)
    line = f'{{"jsonrpc":"2.0","id":5,"method":"{method}","params":{params}}}\n'
    r = rpc(s, line.encode())
    assert r.get("error", {}).get("code") == -32602, r
    assert names in r["error"]["message"], r
    assert rpc(s, b'{"jsonrpc":"2.0","id":6,"method":"status"}\n')["id"] == 6  # still usable
    s.close()


def test_unreadable_numbers_outside_params_are_invalid_requests(
    module_daemon: DaemonProcess,
) -> None:
    s = raw(module_daemon.sock)
    r = rpc(s, f'{{"jsonrpc":"2.0","id":{BIG},"method":"status"}}\n'.encode())
    assert r["error"]["code"] == -32600 and '"id"' in r["error"]["message"]
    r = rpc(s, f'{{"jsonrpc":"2.0","id":1,"method":"status","params":{DEEP}}}\n'.encode())
    assert r["error"] == {"code": -32700, "message": "parse error: nested deeper than memd reads"}
    s.close()


def _export(**doc: Any) -> str:
    base: dict[str, Any] = {"format": "memd-export", "version": 1, "sessions": [],
                            "memories": [], "memory_hashes": [], "tree": []}  # fmt: skip
    return json.dumps({**base, **doc})


def _session(sid: str, **chat: Any) -> dict[str, Any]:
    return {"session_id": sid,
            "chats": [{"seq": 0, "turn_id": "t1", "role": "user", "text": "hi", "ts": 1.0, **chat}]}  # fmt: skip


MEMORY = {"id": "m_1", "text": "x", "path": "topics/a.md"}


@pytest.mark.parametrize(
    ("text", "names"),
    [
        (_export(sessions=[_session("a", ts=float("nan"))]), "sessions[0].chats[0].ts: NaN"),
        (_export(sessions=[_session("b", ts=float("inf"))]), "sessions[0].chats[0].ts: Infinity"),
        (_export(sessions=[_session("c", ts=1e300)]), "sessions[0].chats[0].ts: 1e+300 is not a time"),
        (_export(sessions=[{**_session("d"), "started_at": float("nan")}]), "sessions[0].started_at"),
        (_export(sessions=[_session("e")]).replace('"seq": 0', f'"seq": {BIG}'),
         "sessions[0].chats[0].seq: an integer of 5,000 digits"),
        (_export(sessions=[_session("f", line=2**70)]), "sessions[0].chats[0].line: "),
        (_export(memories=[{**MEMORY, "last_used": float("nan")}]), "memories[0].last_used: NaN"),
        (_export(memories=[{**MEMORY, "uses": 2**64}]), "memories[0].uses: "),
        (_export().replace('"version": 1', f'"version": {BIG}'), "document.version: an integer"),
        ('{"format": "memd-export", "version": 1, "sessions": ' + DEEP + "}",
         "nested deeper than memd reads"),
    ],
)  # fmt: skip
def test_an_export_with_unreadable_numbers_is_refused_naming_the_place(
    module_daemon: DaemonProcess, text: str, names: str
) -> None:
    doc = module_daemon.home / "export.json"
    doc.write_text(text)
    before = module_daemon.call("status")["logs"]["sessions"]
    with pytest.raises(MemdError) as err:
        module_daemon.call("import", {"path": str(doc)})
    assert not isinstance(err.value, RemoteError), err.value  # RemoteError: -32000, a bug
    assert names in str(err.value), err.value
    assert module_daemon.call("status")["logs"]["sessions"] == before  # nothing imported


def test_a_log_line_nested_too_deep_is_a_bad_line(daemon: DaemonProcess) -> None:
    for name, line in (
        ("deep.jsonl", '{"session_id": "s", "role": "user", "content": ' + DEEP + "}\n"),
        ("openai.jsonl", '{"messages": ' + DEEP + "}\n"),
    ):
        log = daemon.home / name
        log.write_text(line + '{"session_id": "s", "role": "user", "content": "fine zqline"}\n')
        res = daemon.call("import", {"path": str(log)})
        assert res["bad_lines"] >= 1, res
    assert "zqline" in daemon.call("recall", {"query": "zqline"})["text"]


def test_memd_ingest_names_the_stdin_line_it_cannot_read(module_daemon: DaemonProcess) -> None:
    for bad in (DEEP, f'{{"session_id": "s", "role": "user", "content": "x", "ts": {BIG}}}'):
        res = forkserver.run(
            [sys.executable, "-m", "memd", "ingest"], input=bad + "\n", capture_output=True,
            text=True, env=memd_env(module_daemon.home), timeout=60,
        )  # fmt: skip
        assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
        assert "stdin line 1" in res.stderr or "'ts'" in res.stderr, res.stderr
