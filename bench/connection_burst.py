"""Daemon memory before, during and after bursts of 1,000 connections each trickling a 1 MB line.

    python -m bench.connection_burst [--files 300] [--connections 1000] [--rounds 3]
                                     [--out docs/benchmarks.md] [--no-write]

Starts a real daemon on a generated tree, then for each round opens `--connections` sockets,
sends on each the start of a request and then up to 1 MB more without a newline (as far as the
daemon reads), asks `status` on another connection meanwhile, closes them all and waits two
seconds. Reports the daemon's RSS before, its peak during (VmHWM) and its RSS after each round,
the `status` time during the burst, and how the connections ended (answered busy or left open).
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import corpus
from bench.daemon import Daemon
from bench.report import add_common_args, machine_line, publish, table

BLOCK = "connections"
MB = 1 << 20


def proc_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def burst(d: Daemon, n: int, per_conn: int, seconds: float) -> dict[str, Any]:
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX)
        s.connect(str(d.sock))
        s.setblocking(False)
        s.send(b'{"jsonrpc":"2.0","id":1,"method":"search","params":{"query":"')
        socks.append(s)
    chunk = b"x" * 65536
    sent = [0] * n
    taken = 0
    end = time.monotonic() + seconds
    idle_since = time.monotonic()
    while time.monotonic() < end and time.monotonic() - idle_since < 2.0:
        moved = False
        for i, s in enumerate(socks):
            if sent[i] >= per_conn:
                continue
            try:
                k = s.send(chunk[: per_conn - sent[i]])
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                sent[i] = per_conn  # the daemon closed it
                continue
            sent[i] += k
            taken += k
            moved = moved or k > 0
        if moved:
            idle_since = time.monotonic()
    t = time.perf_counter()
    d.call("status")
    status_s = time.perf_counter() - t
    busy = 0
    for s in socks:
        try:
            data = s.recv(4096)
            if data and json.loads(data.split(b"\n")[0])["error"]["code"] == -32005:
                busy += 1
        except (BlockingIOError, OSError, ValueError, KeyError):
            pass
        s.close()
    return {"sent_mb": taken / MB, "status_ms": status_s * 1000, "busy": busy}


def run(args: argparse.Namespace) -> str:
    tmp = Path(tempfile.mkdtemp(prefix="memd-bench-conn-"))
    d: Daemon | None = None
    try:
        home = tmp / "home"
        info = corpus.generate(home / "memory", args.files, seed=args.seed)
        d = Daemon(home)
        d.start()
        d.wait_ready()
        before = proc_kb(d.pid, "VmRSS")
        rows = []
        for r in range(1, args.rounds + 1):
            print(f"round {r}: {args.connections} connections …", flush=True)
            out = burst(d, args.connections, MB, seconds=60)
            peak = proc_kb(d.pid, "VmHWM")
            closed = time.monotonic()
            time.sleep(2.0)
            at_2s = proc_kb(d.pid, "VmRSS")
            # Then until it settles near where it started (connections that were waiting for
            # the shared budget notice their client left when their wait ends).
            while time.monotonic() - closed < 20 and proc_kb(d.pid, "VmRSS") > before + 30 * 1024:
                time.sleep(0.25)
            settled = proc_kb(d.pid, "VmRSS")
            rows.append([r, f"{out['sent_mb']:.0f}", f"{peak / 1024:.0f}", f"{at_2s / 1024:.0f}",
                         f"{settled / 1024:.0f} after {time.monotonic() - closed:.1f} s",
                         f"{out['status_ms']:.1f}", out["busy"]])  # fmt: skip
        d.stop()
        d = None
        return "\n".join([
            "### Many connections: daemon memory during and after bursts (`bench/connection_burst.py`)",
            "",
            f"Tree: {info.summary()}. Each round opens {args.connections:,} connections; each sends "
            "the start of a `search` request and then up to 1 MB more with no newline, as fast "
            "as the daemon reads; `status` is asked on another connection meanwhile; then all are "
            f"closed. Connections whose line found no room in the shared budget wait up to 2 s for it, are then answered busy and closed, which is when the daemon notices their client has gone. Daemon RSS before the first round: {before / 1024:.0f} MB.",
            "",
            table(["round", "MB sent (as far as the daemon read)", "peak RSS (VmHWM), MB",
                   "RSS 2 s after, MB", "RSS settled, MB", "`status` during the burst, ms",
                   "refused busy (-32005)"], rows),  # fmt: skip
            "",
            "Before the shared read budget (main at e155ab5) the same burst took the daemon to a "
            "1.07 GB peak (measured with tests/daemon/test_connections.py on that code).",
            "",
            machine_line(),
        ])  # fmt: skip
    finally:
        if d is not None:
            d.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_common_args(ap, files=300)
    ap.add_argument("--connections", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    publish(args, BLOCK, run(args))


if __name__ == "__main__":
    main()
