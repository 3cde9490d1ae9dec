"""Bounded resources under many connections: a cap, a shared buffer budget, brief client retries."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from pathlib import Path

import pytest

from memd.core.errors import ServerBusy
from tests.daemon.test_server import raw, rpc
from tests.utils import DaemonProcess, call, wait_for

MB = 1 << 20


def proc_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


def flood(socks: list[socket.socket], per_conn: int, seconds: float) -> int:
    """Send `per_conn` bytes without a newline on each socket, as far as the daemon reads them."""
    chunk = b"x" * 65536
    sent = [0] * len(socks)
    end = time.monotonic() + seconds
    last_progress = time.monotonic()
    while time.monotonic() < end and time.monotonic() - last_progress < 2.0:
        progress = False
        for i, s in enumerate(socks):
            if sent[i] >= per_conn:
                continue
            try:
                n = s.send(chunk[: per_conn - sent[i]])
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                sent[i] = per_conn  # closed by the daemon
                continue
            sent[i] += n
            progress = progress or n > 0
        if progress:
            last_progress = time.monotonic()
        if all(x >= per_conn for x in sent):
            break
    return sum(sent)


@pytest.mark.slow
def test_a_thousand_slow_senders_cost_bounded_memory(daemon: DaemonProcess) -> None:
    assert daemon.proc is not None
    pid = daemon.proc.pid
    rss_start = proc_kb(pid, "VmRSS")
    socks = []
    for _ in range(1000):
        s = socket.socket(socket.AF_UNIX)
        s.connect(str(daemon.sock))
        s.setblocking(False)
        socks.append(s)
    try:
        first = b'{"jsonrpc":"2.0","id":1,"method":"search","params":{"query":"'
        for s in socks:
            s.send(first)
        sent = flood(socks, MB, seconds=60)
        assert sent > 100 * MB  # the daemon did read a good part of it
        # Others are still answered while the thousand lines hang.
        assert daemon.call("status")["daemon"]["running"]
        peak = proc_kb(pid, "VmHWM")
        assert peak < 400 * 1024, f"peak RSS {peak} kB with 1,000 unfinished 1 MB lines"
    finally:
        for s in socks:
            s.close()
    # Memory goes back once the daemon has seen every client leave (a resource check, not a
    # timing: under load that may take a while).
    wait_for(lambda: proc_kb(pid, "VmRSS") < rss_start + 150 * 1024, timeout=60, interval=0.5)
    assert daemon.call("status")["daemon"]["running"]


def test_connections_past_the_cap_are_refused_clearly(home: Path) -> None:
    d = DaemonProcess(home, MEMD_SERVER_MAX_CONNECTIONS="20").start()
    held = []
    try:
        for i in range(20):
            s = raw(d.sock)
            assert rpc(s, b'{"jsonrpc":"2.0","id":%d,"method":"status"}\n' % i)["id"] == i
            held.append(s)
        extra = raw(d.sock)
        answer = json.loads(extra.makefile("rb").readline())
        assert answer["error"]["code"] == -32005
        assert "too many connections" in answer["error"]["message"]
        extra.close()
        with pytest.raises(ServerBusy):
            call(d.sock, "status", timeout=0.5)
        held.pop().close()
        time.sleep(0.2)
        assert call(d.sock, "status", timeout=5)["daemon"]["running"]
    finally:
        for s in held:
            s.close()
        d.stop()


def _answer_all(listener: socket.socket, after: float, count: int) -> None:
    time.sleep(after)
    for _ in range(count):
        conn, _ = listener.accept()
        with conn:
            f = conn.makefile("rb")
            req = json.loads(f.readline())
            conn.sendall(
                json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": "ok"}).encode() + b"\n"
            )


def test_the_client_retries_while_the_backlog_is_full(tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen(1)
    pending = []
    while True:  # fill the backlog
        s = socket.socket(socket.AF_UNIX)
        s.setblocking(False)
        try:
            s.connect(str(path))
        except BlockingIOError:
            s.close()
            break
        pending.append(s)
    for s in pending:
        s.sendall(b'{"jsonrpc":"2.0","id":0,"method":"x"}\n')
    t = threading.Thread(target=_answer_all, args=(listener, 0.3, len(pending) + 1))
    t.start()
    try:
        assert call(path, "status", timeout=5) == "ok"
    finally:
        t.join(10)
        for s in pending:
            s.close()
        listener.close()


def test_the_client_retries_a_socket_that_is_not_listening_yet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memd.api import client

    # The listener starts 0.1 s in; at load ~6 its thread woke up after the product's 0.3 s
    # of retries had run out (the suite beside a benchmark), so the client retries longer here.
    monkeypatch.setattr(client, "RETRY_REFUSED_S", 3.0)
    path = tmp_path / "s.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))  # the file exists, nobody listens: ECONNREFUSED

    def listen_later() -> None:
        time.sleep(0.1)
        listener.listen(8)
        _answer_all(listener, 0, 1)

    t = threading.Thread(target=listen_later)
    t.start()
    try:
        assert call(path, "status", timeout=5) == "ok"
    finally:
        t.join(10)
        listener.close()
    assert not os.path.exists(tmp_path / "nothing")
