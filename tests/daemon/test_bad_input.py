"""Hostile input gets a JSON-RPC error naming what is wrong; -32000 is kept for real bugs."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from pathlib import Path
from typing import Any

import pytest

from memd.api import messages as m
from memd.api.methods import Method
from memd.core.errors import InvalidParams, MethodNotFound
from memd.daemon.server import Server
from tests.daemon.test_server import raw, rpc
from tests.utils import DaemonProcess


def test_deep_nesting_is_answered_not_dropped(daemon: DaemonProcess) -> None:
    s = raw(daemon.sock)
    deep = b"[" * 100_000 + b"]" * 100_000
    r = rpc(s, deep + b"\n")
    assert r["error"]["code"] in (-32700, -32600)
    r = rpc(s, b'{"jsonrpc":"2.0","id":1,"method":"search","params":{"query":' + deep + b"}}\n")
    assert r["error"]["code"] in (-32700, -32600, -32602)
    assert rpc(s, b'{"jsonrpc":"2.0","id":2,"method":"status"}\n')["id"] == 2
    s.close()


def test_lone_surrogates_are_invalid_params(daemon: DaemonProcess) -> None:
    s = raw(daemon.sock)
    for method, params in (
        ("remember", '{"text": "a\\ud800b"}'),
        ("search", '{"query": "x \\udfff"}'),
        ("context", '{"query": "\\ud83d"}'),
        ("ingest", '{"session_id": "s\\ud800", "role": "user", "content": "hi"}'),
    ):
        line = f'{{"jsonrpc":"2.0","id":3,"method":"{method}","params":{params}}}\n'
        r = rpc(s, line.encode())
        assert r["error"]["code"] == -32602, (method, r)
        assert "surrogate" in r["error"]["message"]
    # A surrogate pair is fine: it is one character.
    r = rpc(s, b'{"jsonrpc":"2.0","id":4,"method":"search","params":{"query":"\\ud83d\\ude00"}}\n')
    assert "result" in r
    s.close()


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("import", {"path": "/tmp/a\u0000b"}),
        ("import", {"path": "/tmp/" + "a" * 5000}),
        ("import", {"path": "/tmp/" + "b" * 300 + "/x.json"}),
        ("export", {"path": "/tmp/a\u0000b.json"}),
        ("export", {"path": "/tmp/" + "c" * 300 + ".json"}),
        ("context", {"project": "/tmp/p\u0000q"}),
        ("remember", {"text": "x", "scope": "project", "project": "/tmp/" + "d" * 5000}),
    ],
)
def test_unusable_paths_are_invalid_params(
    module_daemon: DaemonProcess, method: str, params: dict[str, Any]
) -> None:
    s = raw(module_daemon.sock)
    line = json.dumps({"jsonrpc": "2.0", "id": 5, "method": method, "params": params})
    r = rpc(s, line.encode() + b"\n")
    assert r["error"]["code"] == -32602, r
    assert "path" in r["error"]["message"] or "project" in r["error"]["message"]
    s.close()


class _Buggy:
    """A method table whose one method has a bug (a TypeError inside the handler)."""

    def lookup(self, name: str, params: Any) -> tuple[Method[Any, Any], Any]:
        if name != "status":
            raise MethodNotFound(name)
        return Method(m.STATUS, self.handler, why="test"), m.NoParams()

    def dispatch(self, method: Method[Any, Any], params: Any) -> Any:
        return method.handler(params)

    @staticmethod
    def handler(params: Any) -> Any:
        return len(None)  # type: ignore[arg-type]  # the bug this test needs


def test_a_bug_is_internal_error_with_a_logged_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def main() -> dict[str, Any]:
        server = Server(_Buggy())
        lsock = socket.socket(socket.AF_UNIX)
        path = tmp_path / "s.sock"
        lsock.bind(str(path))
        lsock.listen()
        lsock.setblocking(False)
        await server.start(lsock)
        reader, writer = await asyncio.open_unix_connection(str(path))
        writer.write(b'{"jsonrpc":"2.0","id":1,"method":"status"}\n')
        answer: dict[str, Any] = json.loads(await reader.readline())
        writer.close()
        await server.stop(grace=1)
        return answer

    with caplog.at_level(logging.ERROR):
        answer = asyncio.run(main())
    assert answer["error"]["code"] == -32000
    assert "internal error" in answer["error"]["message"]
    bug = [r for r in caplog.records if r.exc_info and r.exc_info[0] is TypeError]
    assert bug, "the bug must be logged with its traceback"


def test_invalid_params_is_not_a_bug() -> None:
    with pytest.raises(InvalidParams):
        m.decode_params(m.ImportParams, {"path": "a\u0000b"})
