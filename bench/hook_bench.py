"""Cold start of `memd hook session-start`, with the daemon up and with it down.

    python -m bench.hook_bench [--runs 20] [--out docs/benchmarks.md] [--no-write]

1. Starts a real daemon on a temporary MEMD_HOME and writes one core memory.
2. Runs `python -m memd hook session-start` (what Claude Code runs) `--runs` times with a
   SessionStart payload: a new process each time, wall time from spawn to exit.
3. Stops the daemon and runs the hook again: it now answers from the index opened read-only.
4. Writes the `hook-start` block of docs/benchmarks.md.
The hook's own limit is 0.8 s (`memd.integrations.hooks.TIME_LIMIT_S`); past it, it prints
nothing. Everything lives in a temp folder that is removed afterwards.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.daemon import Daemon
from bench.report import DEFAULT_OUT, machine_line, publish, summary_ms, table, verdict

BLOCK = "hook-start"
MARKER = "PLATYPUS-CORE"
PAYLOAD = json.dumps({"session_id": "s1", "cwd": "/", "hook_event_name": "SessionStart",
                      "source": "startup"})  # fmt: skip


def _runs(d: Daemon, n: int) -> tuple[list[float], int]:
    times, answered = [], 0
    for _ in range(n):
        t = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-m", "memd", "hook", "session-start"], input=PAYLOAD,
            capture_output=True, text=True, env=d.env, cwd="/", timeout=30,
        ).stdout  # fmt: skip
        times.append(time.perf_counter() - t)
        answered += MARKER in out
    return times, answered


def run(args: argparse.Namespace) -> str:
    tmp = Path(tempfile.mkdtemp(prefix="memd-bench-hook-"))
    d = Daemon(tmp / "home")
    try:
        d.start()
        d.wait_ready()
        (d.home / "memory" / "_core" / "preferences.md").write_text(
            f"# Preferences\n\n## Style\n\n- answers short ({MARKER})\n"
        )
        deadline = time.monotonic() + 10
        while not d.call("search", {"query": MARKER})["hits"] and time.monotonic() < deadline:
            time.sleep(0.05)
        up, up_ok = _runs(d, args.runs)
        print(f"daemon up: {summary_ms(up)}", flush=True)
        d.stop()
        down, down_ok = _runs(d, args.runs)
        print(f"daemon down: {summary_ms(down)}", flush=True)
    finally:
        d.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    rows = []
    for name, ts, ok in (("daemon up (asks the socket)", up, up_ok),
                         ("daemon down (reads the index)", down, down_ok)):  # fmt: skip
        s = summary_ms(ts)
        rows.append((name, f"{s['p50']:.0f} / {s['p95']:.0f} / {s['max']:.0f} ms",
                     f"{ok} of {len(ts)}", "< 800 ms", verdict(s["max"] / 1000, 0.8)))  # fmt: skip
    return "\n".join([
        "### Hook cold start (`bench/hook_bench.py`)",
        "",
        "`memd hook session-start` as Claude Code runs it: a new process per call, from spawn to"
        " exit (p50 / p95 / max), and how many calls returned the core memory.",
        "",
        table(["case", "wall time", "answered", "limit", "verdict (max)"], rows),
        "",
        machine_line(),
    ])  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="Markdown file to update")
    ap.add_argument("--no-write", action="store_true", help="print only, do not touch --out")
    args = ap.parse_args()
    publish(args, BLOCK, run(args))


if __name__ == "__main__":
    main()
