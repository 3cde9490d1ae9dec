"""Shared helpers of the bench scripts: machine info, percentiles, tables, the doc's blocks.

Each script owns one block of docs/benchmarks.md, delimited by
``<!-- bench:NAME -->`` and ``<!-- /bench:NAME -->``. `write_block` replaces that block (or
appends it when missing) and leaves the rest of the file — the intro and the other scripts'
blocks — untouched.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import shlex
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
START_LOAD = os.getloadavg()[0]  # other work on the machine skews wall-clock figures


def speed_check(steps: int = 2_000_000) -> float:
    """Seconds for a fixed pure-Python loop: how fast this (shared, virtual) CPU is right now.

    Wall-clock figures on this VM move by ±30% from one minute to the next with no load of
    ours; printing this next to them, at the start and end of a run, shows which state the
    machine was in.
    """
    t = time.perf_counter()
    total = 0
    for i in range(steps):
        total += i
    return time.perf_counter() - t


START_SPEED = speed_check()
DEFAULT_OUT = REPO / "docs" / "benchmarks.md"


def add_common_args(ap: argparse.ArgumentParser, files: int) -> None:
    ap.add_argument(
        "--files", type=int, default=files, help=f"files to generate (default {files:,})"
    )
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="Markdown file to update")
    ap.add_argument("--no-write", action="store_true", help="print only, do not touch --out")
    ap.add_argument("--seed", type=int, default=42, help="corpus seed")


# -- numbers -------------------------------------------------------------------------------
def pct(values: Sequence[float], p: float) -> float:
    """The p-th percentile (0–100), linear interpolation between closest ranks."""
    if not values:
        return float("nan")
    xs = sorted(values)
    k = (len(xs) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def summary_ms(values_s: Sequence[float]) -> dict[str, float]:
    """p50/p95/p99/max/mean of durations given in seconds, in milliseconds."""
    ms = [v * 1000 for v in values_s]
    return {
        "p50": pct(ms, 50),
        "p95": pct(ms, 95),
        "p99": pct(ms, 99),
        "max": max(ms) if ms else float("nan"),
        "mean": statistics.fmean(ms) if ms else float("nan"),
        "n": len(ms),
    }


def verdict(value: float, target: float, goal: float | None = None) -> str:
    """'pass' / 'pass (goal met)' / 'FAIL' for lower-is-better figures."""
    if value != value:  # NaN
        return "no data"
    if value >= target:
        return "**FAIL**"
    if goal is not None:
        return "pass, goal met" if value < goal else "pass, goal missed"
    return "pass"


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


# -- machine -------------------------------------------------------------------------------
def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ram_gb() -> float:
    try:
        import psutil

        total: int = psutil.virtual_memory().total
        return total / (1 << 30)
    except Exception:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / (1 << 30)


def _git_rev() -> str:
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
            timeout=5, check=True,
        ).stdout.strip()  # fmt: skip
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "memd"],
            cwd=REPO, capture_output=True, text=True, timeout=5,
        ).stdout.strip()  # fmt: skip
        return rev + (" + uncommitted changes in memd/" if dirty else "")
    except Exception:
        return "unknown"


def machine_info() -> dict[str, str]:
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": _cpu_model(),
        "cores": str(os.cpu_count()),
        "ram": f"{_ram_gb():.1f} GB",
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "memd commit": _git_rev(),
        "load": f"{START_LOAD:.2f} at start, {os.getloadavg()[0]:.2f} at end",
        "speed": f"{START_SPEED:.3f} s at start, {speed_check():.3f} s at end",
    }


def command_line() -> str:
    """The command that produced the figures, as a user would type it."""
    mod = Path(sys.argv[0]).stem
    return "python -m bench." + mod + (" " + shlex.join(sys.argv[1:]) if sys.argv[1:] else "")


def machine_line(info: dict[str, str] | None = None) -> str:
    info = info or machine_info()
    return (
        f"Measured {info['date']} on {info['cpu']}, {info['cores']} cores, {info['ram']} RAM,"
        f" {info['os']}, Python {info['python']}, SQLite {info['sqlite']}, memd {info['memd commit']};"
        f" 1-minute load average {info['load']}; speed check (a fixed 2M-step Python loop,"
        f" lower is faster) {info['speed']}."
        f" Command: `{command_line()}`."
    )


# -- the document --------------------------------------------------------------------------
_HEADER = "# memd benchmarks\n\nFigures written by the `bench/` scripts.\n"


def replace_block(doc: str, name: str, body: str) -> str:
    """`doc` with the block NAME replaced by `body` (appended at the end when missing)."""
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    block = f"{start}\n{body.strip()}\n{end}"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
    if pattern.search(doc):
        return pattern.sub(lambda _m: block, doc, count=1)
    return doc.rstrip("\n") + "\n\n" + block + "\n"


def write_block(path: Path, name: str, body: str) -> None:
    """Replace one block of the Markdown file atomically (other blocks are kept)."""
    doc = path.read_text(encoding="utf-8") if path.exists() else _HEADER
    new = replace_block(doc, name, body)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(new, encoding="utf-8")
    os.replace(tmp, path)


def publish(args: argparse.Namespace, name: str, body: str) -> None:
    """Print the block, and write it into --out unless --no-write."""
    print()
    print(body)
    if args.no_write:
        return
    write_block(args.out, name, body)
    print(f"\nwrote block '{name}' in {args.out}")
