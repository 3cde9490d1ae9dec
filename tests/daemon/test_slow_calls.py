"""A slow call does not hold up other clients: it runs off the event loop.

No timing is asserted: a heavy `context` is sent first on one connection, a `status` right
after on another, and the test checks which answer comes back first. With the heavy read on
the loop (as before), `status` had to wait for it.
"""

from __future__ import annotations

import json
import select
import socket
from pathlib import Path

from bench import corpus
from tests.utils import DaemonProcess, wait_for


def test_a_heavy_context_does_not_hold_up_status(home: Path) -> None:
    corpus.generate(home / "memory", 800, seed=3, sections=(6, 10))
    d = DaemonProcess(home).start(timeout=120)
    try:
        wait_for(lambda: d.call("status")["index"]["sections"] > 4000, timeout=60)
        heavy = {"query": "the and of to in deploy build test config data server user team",
                 "budget_tokens": 200_000}  # fmt: skip
        firsts = []
        for i in range(3):
            a = socket.socket(socket.AF_UNIX)
            b = socket.socket(socket.AF_UNIX)
            a.connect(str(d.sock))
            b.connect(str(d.sock))
            a.sendall(json.dumps({"jsonrpc": "2.0", "id": f"ctx{i}", "method": "context",
                                  "params": heavy}).encode() + b"\n")  # fmt: skip
            b.sendall(b'{"jsonrpc":"2.0","id":"st","method":"status"}\n')
            ready, _, _ = select.select([a, b], [], [], 120)
            firsts.append("status" if b in ready and a not in ready else "context")
            for s in (a, b):
                s.settimeout(120)
                s.makefile("rb").readline()
                s.close()
        assert firsts.count("status") >= 2, firsts
    finally:
        d.stop()
