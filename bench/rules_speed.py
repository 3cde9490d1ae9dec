"""Speed and memory of the offline extraction rules, against a baseline tree (ABBA).

    python -m bench.rules_speed [--baseline DIR] [--data FILE ...] [--rounds N]
                                [--out docs/benchmarks.md] [--no-write]

Each run is a fresh Python process that imports `memd.extraction.rules` from a source tree (this
one, or `--baseline`, e.g. a `git worktree` of an older commit) and measures: the import's
time and the process's resident memory (VmRSS) before and after it, then after extracting every
user message of the sets `--rounds` times (the lexicons, Pygments' language names and
pycountry's places are loaded on first use), and the time per message of the warm rules, in
wall time and in the process's CPU time (which a loaded machine disturbs less). Runs
go baseline, this tree, this tree, baseline (ABBA), so a drift of the shared machine shows as a
difference between the two runs of one tree. Only figures are printed: no message text.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BLOCK = "extraction-speed"
DEFAULT_DATA = [
    REPO.parent / "shared" / "bench-data" / "extraction-dev.jsonl",
    *sorted((REPO / "tests" / "extraction").glob("extraction_own*.jsonl")),
]


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def child(files: list[Path], rounds: int) -> dict[str, float]:
    """One measurement, in this process (called in a fresh child)."""
    texts = [
        str(t)
        for f in files
        for line in f.read_text(encoding="utf-8").splitlines()
        if line.strip()
        for t in json.loads(line)["turns"]
    ]
    rss0 = _rss_mb()
    t0 = time.perf_counter()
    from memd.core.models import Turn
    from memd.extraction.rules import extract_rules

    import_ms = (time.perf_counter() - t0) * 1000
    rss_import = _rss_mb()
    turns = [
        Turn("bench", f"s{i}", "t1", "user", text, 1_772_445_600.0) for i, text in enumerate(texts)
    ]
    t1 = time.perf_counter()
    for t in turns:
        extract_rules([t])
    first_ms = (time.perf_counter() - t1) * 1000
    per: list[float] = []
    cpu: list[float] = []
    for _ in range(rounds):
        t2, c2 = time.perf_counter(), time.process_time()
        for t in turns:
            extract_rules([t])
        per.append((time.perf_counter() - t2) / len(turns) * 1e6)
        cpu.append((time.process_time() - c2) / len(turns) * 1e6)
    return {
        "messages": len(turns),
        "import_ms": import_ms,
        "first_pass_ms": first_ms,
        "us_per_message": statistics.median(per),
        # CPU time of this process: less disturbed than wall time when the machine is loaded
        "cpu_us_per_message": statistics.median(cpu),
        "rss_before_mb": rss0,
        "rss_after_import_mb": rss_import,
        "rss_after_mb": _rss_mb(),
    }


def run(tree: Path, files: list[Path], rounds: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--rounds", str(rounds)]
    cmd += [a for f in files for a in ("--data", str(f))]
    out = subprocess.run(cmd, env=env, cwd=tree, capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _commit(tree: Path) -> str:
    """The short commit id a tree is checked out at (what the report names, not a path)."""
    out = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True, check=False)  # fmt: skip
    return out.stdout.strip() or "an unknown commit"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--baseline", type=Path, help="a source tree to compare with (ABBA)")
    ap.add_argument(
        "--data", type=Path, action="append", help="case files (default: sets not held out)"
    )
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "benchmarks.md")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child([f.resolve() for f in args.data], args.rounds)))
        return
    # Imported here, not in the child: its import of memd would come before the measured one.
    from bench.extraction_eval import HELD_OUT_SETS
    from bench.report import machine_line, publish, table

    # A held-out set runs nowhere before it is measured (bench/extraction_eval.py).
    default = [f for f in DEFAULT_DATA if f.name not in HELD_OUT_SETS]
    # Absolute: each run's process works in the tree it measures.
    files = [f.resolve() for f in args.data or default]

    order = [("baseline", args.baseline), ("this tree", REPO), ("this tree", REPO)]
    order += [("baseline", args.baseline)]
    runs = [(label, run(tree, files, args.rounds)) for label, tree in order if tree is not None]
    cols = ["import_ms", "first_pass_ms", "us_per_message", "cpu_us_per_message", "rss_before_mb",
            "rss_after_import_mb", "rss_after_mb"]  # fmt: skip
    rows = [[label, *(f"{r[c]:.1f}" for c in cols)] for label, r in runs]
    base = f" against the tree of {_commit(args.baseline)}" if args.baseline else ""
    body = "\n\n".join(
        [
            "### Offline rules: speed and memory (`bench/rules_speed.py`)",
            f"{runs[0][1]['messages']:.0f} user messages of the extraction sets, each through"
            f" `extract_rules` in a fresh process per run (ABBA{base}); time per message is the"
            f" median of {args.rounds} warm passes.",
            table(
                [
                    "run",
                    "import (ms)",
                    "first pass (ms)",
                    "µs / message",
                    "CPU µs / message",
                    "RSS before import (MB)",
                    "RSS after import (MB)",
                    "RSS after extracting (MB)",
                ],
                rows,
            ),  # fmt: skip
            machine_line(),
        ]
    )
    publish(args, BLOCK, body)


if __name__ == "__main__":
    main()
