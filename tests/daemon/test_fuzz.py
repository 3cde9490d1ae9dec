"""Property-based fuzzing of the socket protocol against one real daemon.

Random bytes, random JSON and random params (known field names with values of any JSON type)
for every method: the daemon never dies, every request line gets exactly one answer, and no
answer is -32000 (an internal error is a bug). Paths the daemon would write to are kept inside
the test's home.
"""

from __future__ import annotations

import json
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memd.api import messages as m
from tests.utils import DaemonProcess

KNOWN_CODES = {-32700, -32600, -32601, -32602, -32001, -32002, -32003, -32005, -32006, -32010}
FUZZ = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


class Conn:
    """One raw connection, reopened when the daemon closes it (after -32003, say)."""

    def __init__(self, d: DaemonProcess) -> None:
        self.d = d
        self.s: socket.socket | None = None
        self.buf = b""

    def ask(self, line: bytes) -> dict[str, Any]:
        if self.s is None:
            self.s = socket.socket(socket.AF_UNIX)
            self.s.settimeout(60)
            self.s.connect(str(self.d.sock))
            self.buf = b""
        self.s.sendall(line)
        while b"\n" not in self.buf:
            chunk = self.s.recv(1 << 16)
            assert chunk, f"connection closed without an answer to {line[:200]!r}"
            self.buf += chunk
        answer, _, self.buf = self.buf.partition(b"\n")
        msg: dict[str, Any] = json.loads(answer)
        if "error" in msg and msg["error"]["code"] in (-32003, -32005):
            self.s.close()
            self.s = None
        return msg


@pytest.fixture(scope="module")
def fuzzed() -> Iterator[tuple[DaemonProcess, Conn]]:
    with tempfile.TemporaryDirectory(prefix="memd-fz-", dir="/tmp") as home:
        # Module-scoped: started before the per-test HOME isolation, so tail no real logs.
        d = DaemonProcess(Path(home), MEMD_LOGS_CLAUDE_CODE="false").start()
        (d.memory / "topics" / "vue.md").write_text("# Vue\n\n## Components\n- small ones\n")
        conn = Conn(d)
        yield d, conn
        assert d.proc is not None and d.proc.poll() is None, "the daemon died"
        assert d.call("status")["daemon"]["running"]
        d.stop()


def check(msg: dict[str, Any]) -> None:
    assert msg.get("jsonrpc") == "2.0"
    assert ("result" in msg) != ("error" in msg)
    if "error" in msg:
        assert msg["error"]["code"] in KNOWN_CODES, msg
        assert isinstance(msg["error"]["message"], str) and msg["error"]["message"]


def _nest(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    _nest,
    max_leaves=12,
)


@FUZZ
@given(data=st.binary(min_size=1, max_size=3000))
def test_random_bytes(fuzzed: tuple[DaemonProcess, Conn], data: bytes) -> None:
    line = data.replace(b"\n", b" ")
    if not line.strip():
        return  # blank lines are skipped, not answered
    check(fuzzed[1].ask(line + b"\n"))


@FUZZ
@given(value=json_values)
def test_random_json(fuzzed: tuple[DaemonProcess, Conn], value: Any) -> None:
    if isinstance(value, dict):
        value = {**value, "id": 1}  # a request without an id is a notification: no answer
    check(fuzzed[1].ask(json.dumps(value).encode() + b"\n"))


def params_for(name: str, home: Path) -> st.SearchStrategy[dict[str, Any]]:
    fields = [f.name for f in msgspec.structs.fields(m.SIGNATURES[name].params)]
    safe_path = st.builds(lambda s: str(home / "fz" / s), st.text(min_size=1, max_size=30))

    def value_for(field: str) -> st.SearchStrategy[Any]:
        if field in ("path", "project"):  # the daemon writes there: keep it in the home
            return safe_path | st.integers() | st.none() | st.just("\u0000") | st.just("a" * 300)
        return json_values

    return st.fixed_dictionaries({}, optional={k: value_for(k) for k in [*fields, "x"]})


METHODS = sorted(m.SIGNATURES)


@pytest.mark.parametrize("method", METHODS)
def test_random_params(fuzzed: tuple[DaemonProcess, Conn], method: str) -> None:
    d, conn = fuzzed

    @FUZZ
    @given(params=params_for(method, d.home) | json_values)
    def run(params: Any) -> None:
        req = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
        check(conn.ask(json.dumps(req).encode() + b"\n"))

    run()
