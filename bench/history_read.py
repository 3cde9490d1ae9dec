"""What reading the history costs: `memd history` (the last 50 changes) and `memd history show`.

    python -m bench.history_read [--changes 2000] [--baseline PATH] [--home DIR]
                                 [--out docs/benchmarks.md] [--no-write]

A history of `--changes` memd writes (remembers over 50 files, committed in batches of 100 as
the daemon's history thread does) is built once with this tree's code; then each case is timed
in a fresh process per tree: the CPU of the process and of the git processes it ran (user +
system), the median of five calls after one to warm the page cache. The cases: `History.log`
of the last 50 changes, and `History.show` of the newest change, the tenth newest, the one in
the middle and the oldest but one. With `--baseline PATH` (a checkout of another commit) both
trees are measured in turn, A B B A, on the same history.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

if __name__ == "__main__" and "--measure" in sys.argv:  # run by its path in another tree
    sys.path.remove(str(Path(__file__).resolve().parent))
else:
    from bench.report import DEFAULT_OUT, REPO, machine_line, publish, table

BLOCK = "history-read"
CALLS = 5


def build(root: Path, n: int) -> None:
    """A history of `n` remembers over 50 files under `root` (tree/ and h.git)."""
    from memd.history import Cause, History

    tree = root / "tree"
    (tree / "topics").mkdir(parents=True)
    h = History(tree, root / "h.git")
    try:
        for i in range(n):
            p = tree / "topics" / f"f{i % 50}.md"
            old = p.read_text() if p.exists() else None
            new = (old or "# Notes\n\n") + f"- item {i}\n"
            p.write_text(new)
            h.record_written({p: (old, new)}, Cause.REMEMBER, f"item {i}")
            if i % 100 == 99:
                h.flush(force=True)
        h.flush(force=True)
    finally:
        h.close()


def _cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def measure(root: Path) -> dict[str, float]:
    """CPU ms per call of each case, in this process (run with the tree's memd importable)."""
    from memd.history import History

    h = History(root / "tree", root / "h.git")
    try:
        ids = [c.id for c in h.log(limit=0)]
        cases: dict[str, Callable[[], object]] = {
            "log, the last 50 changes": lambda: h.log(limit=50),
            "show the newest change": lambda: h.show(ids[0]),
            "show the 10th newest": lambda: h.show(ids[9]),
            "show the one in the middle": lambda: h.show(ids[len(ids) // 2]),
            "show the oldest but one": lambda: h.show(ids[-2]),
        }
        out = {}
        for name, call in cases.items():
            call()
            cpu = []
            for _ in range(CALLS):
                c0 = _cpu()
                call()
                cpu.append((_cpu() - c0) * 1000)
            out[name] = statistics.median(cpu)
        return out
    finally:
        h.close()


def _measure_in(tree: Path, root: Path) -> dict[str, float]:
    """`measure` in a fresh process importing memd from `tree` (this file is run by its path,
    so a tree without it can be measured)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, __file__, "--measure", str(root)], env=env, cwd=tree,
                          capture_output=True, text=True, check=True)  # fmt: skip
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _rev(tree: Path) -> str:
    return subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()  # fmt: skip


def run(args: argparse.Namespace) -> str:
    tmp = Path(tempfile.mkdtemp(prefix="memd-bench-hist-"))
    root = args.home or tmp / "history"
    try:
        if not (root / "h.git").exists():
            t0 = time.perf_counter()
            build(root, args.changes)
            print(f"built {args.changes} changes in {time.perf_counter() - t0:.0f} s", flush=True)
        trees = {"this tree": REPO}
        if args.baseline is not None:
            trees = {f"baseline {_rev(args.baseline)}": args.baseline.resolve(), **trees}
        order = list(trees) if len(trees) == 1 else [*trees, *reversed(trees)]
        runs: dict[str, list[dict[str, float]]] = {t: [] for t in trees}
        for name in order:
            runs[name].append(_measure_in(trees[name], root))
            print(f"{name}: {runs[name][-1]}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    cases = list(next(iter(runs.values()))[0])
    rows = [
        [case, *(" / ".join(f"{r[case]:.1f}" for r in runs[t]) for t in trees)] for case in cases
    ]
    return "\n".join([
        "### Reading the history (`bench/history_read.py`)",
        "",
        f"A history of {args.changes:,} remembers over 50 files. CPU per call in ms (the process"
        " and the git processes it ran; the median of five calls)"
        + (", each tree's two runs of the order A B B A." if len(trees) > 1 else "."),
        "",
        table(["call", *trees], rows),
        "",
        machine_line(),
    ])  # fmt: skip


def main() -> None:
    if sys.argv[1:2] == ["--measure"]:
        print(json.dumps(measure(Path(sys.argv[2]))))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--changes", type=int, default=2000)
    ap.add_argument("--baseline", type=Path, help="a checkout of the commit to compare with")
    ap.add_argument("--home", type=Path, help="build the history here once and reuse it")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="Markdown file to update")
    ap.add_argument("--no-write", action="store_true", help="print only, do not touch --out")
    args = ap.parse_args()
    publish(args, BLOCK, run(args))


if __name__ == "__main__":
    main()
