"""The socket protocol against a real daemon process: methods, errors, concurrency, security."""

from __future__ import annotations

import json
import os
import pwd
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from memd.api import client
from memd.core.errors import DaemonNotRunning, InvalidParams, MemoryDisabled, NotFound
from tests.utils import ROOT, DaemonProcess, call, memd_env, wait_for


def raw(sock_path: Path) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(str(sock_path))
    return s


def rpc(s: socket.socket, payload: bytes) -> dict[str, Any]:
    s.sendall(payload)
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(65536)
        assert chunk, "connection closed"
        buf += chunk
    answer: dict[str, Any] = json.loads(buf)
    return answer


def test_socket_is_private(module_daemon: DaemonProcess) -> None:
    assert oct(module_daemon.sock.stat().st_mode & 0o777) == "0o600"
    assert oct(module_daemon.sock.parent.stat().st_mode & 0o777) == "0o700"


def test_each_method(daemon: DaemonProcess) -> None:
    (daemon.memory / "topics" / "vue.md").write_text("# Vue\n\n## Components\n- small components\n")
    wait_for(lambda: daemon.search_paths("components"), 2)
    st = daemon.call("status")
    assert st["daemon"]["running"] and st["daemon"]["pid"] == daemon.pid
    assert st["daemon"]["rss_mb"] > 0 and "uptime_s" in st["daemon"] and "cpu_s" in st["daemon"]
    assert st["index"]["files"] >= 3 and st["index"]["sections"] >= 1 and "lag_s" in st["index"]
    hits = daemon.call("search", {"query": "components", "limit": 5})["hits"]
    assert hits[0]["heading"] == "Components" and hits[0]["start_line"] == 3 and hits[0]["snippet"]
    r = daemon.call("remember", {"text": "prefers tabs over spaces", "type": "preference"})
    assert r["id"].startswith("m_") and r["path"].endswith("_core/preferences.md")
    ctx = daemon.call("context", {"query": "vue components", "budget_tokens": 500})
    assert "prefers tabs over spaces" in ctx["text"] and "small components" in ctx["text"]
    assert ctx["tokens"] <= 500 and ctx["budget"] == 500
    mem = daemon.call("memories", {"scope": "user"})
    assert any(i["id"] == r["id"] for i in mem["items"])
    assert (
        daemon.call("forget", {"id": r["id"]})["removed"][0]["text"] == "prefers tabs over spaces"
    )
    assert daemon.call("reindex", {})["indexed"] == 0
    assert daemon.call("reindex", {"full": True})["indexed"] >= 3
    assert daemon.search_paths("components")  # the swapped index serves searches
    assert daemon.call("set_enabled", {"enabled": False}) == {"enabled": False}
    off = daemon.call("context", {"query": "vue"})
    assert off["enabled"] is False and off["text"] == ""
    with pytest.raises(MemoryDisabled, match="memory is disabled"):
        daemon.call("remember", {"text": "x"})
    before = (daemon.memory / "_core" / "notes.md").exists()
    assert not before  # nothing was written while disabled
    daemon.stop()
    daemon.start()
    assert daemon.call("context", {})["enabled"] is False  # the switch survives a restart
    daemon.call("set_enabled", {"enabled": True})
    assert daemon.call("context", {})["enabled"] is True


def test_errors_keep_the_connection_usable(module_daemon: DaemonProcess) -> None:
    s = raw(module_daemon.sock)
    assert rpc(s, b"{not json\n")["error"]["code"] == -32700
    assert rpc(s, b'{"jsonrpc": "2.0", "id": 1}\n')["error"]["code"] == -32600
    assert rpc(s, b"[1, 2]\n")["error"]["code"] == -32600
    batch = rpc(s, b'[{"jsonrpc": "2.0", "id": 1, "method": "status"}]\n')["error"]
    assert batch["code"] == -32600 and "batches are not supported" in batch["message"]
    assert rpc(s, b'{"jsonrpc": "2.0", "id": 2, "method": "nope"}\n')["error"]["code"] == -32601
    r = rpc(s, b'{"jsonrpc": "2.0", "id": 3, "method": "search", "params": {"query": 5}}\n')
    assert r["error"]["code"] == -32602 and "query" in r["error"]["message"]
    r = rpc(s, b'{"jsonrpc": "2.0", "id": 4, "method": "search", "params": [1]}\n')
    assert r["error"]["code"] == -32602
    r = rpc(
        s, b'{"jsonrpc": "2.0", "id": 5, "method": "context", "params": {"budget_tokens": -1}}\n'
    )
    assert r["error"]["code"] == -32602
    r = rpc(s, b'{"jsonrpc": "2.0", "id": 6, "method": "forget", "params": {"id": "m_nothere"}}\n')
    assert r["error"]["code"] == -32002
    r = rpc(s, "\xff\n".encode("latin-1"))
    assert r["error"]["code"] == -32700
    r = rpc(s, b'{"jsonrpc": "2.0", "id": 7, "method": "status"}\n')
    assert r["id"] == 7 and r["result"]["daemon"]["running"]  # same connection still works
    s.close()
    with pytest.raises(InvalidParams):
        module_daemon.call("remember", {"text": "x", "scope": "galaxy"})
    with pytest.raises(NotFound):
        module_daemon.call("forget", {"id": "m_missing"})


def test_request_size_limit(home: Path) -> None:
    d = DaemonProcess(home, MEMD_SERVER_MAX_REQUEST_KB="4").start()
    try:
        s = raw(d.sock)
        r = rpc(
            s,
            b'{"jsonrpc":"2.0","id":1,"method":"search","params":{"query":"'
            + b"a" * 8000
            + b'"}}\n',
        )
        assert r["error"]["code"] == -32003
        assert d.call("status")["daemon"]["running"]
    finally:
        d.stop()


def test_disconnect_mid_request_and_idle_timeout(home: Path) -> None:
    d = DaemonProcess(home, MEMD_SERVER_READ_TIMEOUT_S="0.5").start()
    try:
        for _ in range(20):
            s = raw(d.sock)
            s.sendall(
                b'{"jsonrpc":"2.0","id":1,"method":"context","params":{"query":"x"}}'
            )  # no newline
            s.close()
            s = raw(d.sock)
            s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"reindex"}\n')
            s.close()  # gone before the answer
        idle = raw(d.sock)
        time.sleep(1.0)
        assert idle.recv(10) == b""  # closed by the server after the read timeout
        assert d.call("status")["daemon"]["running"]
    finally:
        d.stop()


def test_each_connection_end_is_logged_with_its_reason(home: Path) -> None:
    """With log.level DEBUG, a connection that ends says why: a client whose connections all
    close without an answer can then tell an idle timeout from a refusal or a vanished peer."""
    d = DaemonProcess(
        home, MEMD_SERVER_READ_TIMEOUT_S="0.5", MEMD_SERVER_MAX_REQUEST_KB="4",
        MEMD_LOG_LEVEL="DEBUG",
    ).start()  # fmt: skip
    try:
        s = raw(d.sock)
        assert "result" in rpc(s, b'{"jsonrpc":"2.0","id":1,"method":"status"}\n')
        s.close()  # a clean end after one answer
        s = raw(d.sock)
        s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"con')
        s.close()  # gone in the middle of a request
        s = raw(d.sock)
        assert rpc(s, b'{"q":"' + b"a" * 8000 + b'"}\n')["error"]["code"] == -32003
        s.close()
        idle = raw(d.sock)
        assert idle.recv(10) == b""  # the server closes it after the read timeout
        want = [
            "connection closed: end of stream; 1 answered",
            "connection closed: end of stream inside a request (",
            "connection closed: request larger than 4096 bytes; 0 answered",
            "connection closed: idle for 0.5 s; 0 answered",
        ]
        assert wait_for(lambda: all(w in d.log.read_text() for w in want), timeout=10), (
            d.log.read_text()[-3000:]
        )
    finally:
        d.stop()


def test_hundred_concurrent_clients(module_daemon: DaemonProcess) -> None:
    (module_daemon.memory / "topics" / "vue.md").write_text(
        "# Vue\n\n## Components\n- small components\n"
    )
    wait_for(lambda: module_daemon.search_paths("components"), 2)
    errors: list[BaseException] = []
    results: list[int] = []
    barrier = threading.Barrier(100)

    def one(i: int) -> None:
        try:
            with client.Client(module_daemon.sock, timeout=30) as c:
                barrier.wait()
                for _ in range(5):
                    out = c.call("context", {"query": "vue components"})
                    assert "small components" in out["text"]
                    c.call("search", {"query": "components"})
            results.append(i)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(100)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and len(results) == 100


SYSTEM_PY = next(
    (p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if os.access(p, os.X_OK)), ""
)


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to run a client as another user")
@pytest.mark.skipif(not SYSTEM_PY, reason="no world-executable python3 for the other user")
def test_other_users_are_refused(daemon: DaemonProcess) -> None:
    nobody = pwd.getpwnam("nobody")
    os.chmod(daemon.home, 0o711)
    os.chmod(daemon.sock.parent, 0o711)  # let nobody reach the socket file; its uid is what we test
    os.chmod(daemon.sock, 0o666)
    code = (
        "import socket,sys;s=socket.socket(socket.AF_UNIX);s.connect(sys.argv[1]);"
        's.sendall(b\'{"jsonrpc":"2.0","id":1,"method":"status"}\\n\');print(s.recv(4096).decode())'
    )
    out = subprocess.run(
        [SYSTEM_PY, "-c", code, str(daemon.sock)],
        cwd="/",
        user=nobody.pw_uid, group=nobody.pw_gid, capture_output=True, text=True, timeout=20,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["error"]["code"] == -32004 and "permission denied" in answer["error"]["message"]
    assert daemon.call("status")["daemon"]["running"]


def test_second_daemon_refuses_and_stale_socket_is_replaced(
    daemon: DaemonProcess, home: Path
) -> None:
    second = subprocess.run(
        [sys.executable, "-m", "memd", "serve"],
        env=memd_env(home),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert second.returncode == 1
    assert f"already running (pid {daemon.pid})" in second.stderr
    assert daemon.call("status")["daemon"]["running"]
    daemon.stop(sig=9)  # crash: the socket file stays behind
    assert daemon.sock.exists()
    with pytest.raises(DaemonNotRunning):
        call(daemon.sock, "status")
    daemon.start()  # the stale socket is replaced
    assert daemon.call("status")["daemon"]["pid"] == daemon.pid


def test_live_socket_of_another_home_is_not_replaced(
    module_daemon: DaemonProcess, tmp_path: Path
) -> None:
    other = DaemonProcess(Path(str(module_daemon.home) + "-b"), MEMD_SOCKET=str(module_daemon.sock))
    other.home.mkdir()
    try:
        with pytest.raises(AssertionError, match="already serving"):
            other.start(timeout=10)
    finally:
        import shutil

        shutil.rmtree(other.home, ignore_errors=True)
    assert module_daemon.call("status")["daemon"]["running"]


def test_cli_works_without_a_daemon_and_says_so(home: Path) -> None:
    d = DaemonProcess(home).start()
    (d.memory / "topics" / "vue.md").write_text("# Vue\n\n## Components\n- small components\n")
    wait_for(lambda: d.search_paths("components"), 2)
    d.stop()
    r = d.cli("search", "components")
    assert r.returncode == 0 and "vue.md" in r.stdout
    assert "no daemon" in r.stderr and "answering from the index" in r.stderr
    r = d.cli("context", "vue", "--json")
    assert json.loads(r.stdout)["sections"]
    r = d.cli("remember", "offline memory works")
    assert r.returncode == 0 and "writing directly" in r.stderr
    assert "offline memory works" in d.cli("context").stdout
    assert str(ROOT)  # keeps the import used


def test_cli_remember_context_forget(module_daemon: DaemonProcess) -> None:
    r = module_daemon.cli("remember", "always use vitest")
    assert r.returncode == 0 and "remembered m_" in r.stdout
    notes = module_daemon.memory / "_core" / "notes.md"
    assert "always use vitest" in notes.read_text()
    assert "always use vitest" in module_daemon.cli("context", "how should I test this").stdout
    refused = module_daemon.cli("forget", "vitest")  # no terminal to confirm on: nothing is removed
    assert refused.returncode == 1 and "--yes" in refused.stderr
    assert "always use vitest" in notes.read_text()
    r = module_daemon.cli("forget", "vitest", "--yes")
    assert r.returncode == 0 and "forgot m_" in r.stdout
    assert "vitest" not in notes.read_text()
    assert "always use vitest" not in module_daemon.cli("context", "how should I test this").stdout
