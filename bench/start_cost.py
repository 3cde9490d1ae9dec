"""What starting a memd process costs in CPU, and the modules it imports.

    python -m bench.start_cost [--runs 10] [--baseline PATH] [--out docs/benchmarks.md]
                               [--no-write]

Every command, hook and daemon is a new Python process, so what it imports before it does
anything is paid on each of an assistant's prompts (the hooks) and by every test that starts
one. The cases, each a new process on a temporary MEMD_HOME:

- `memd --help` (the parser alone);
- `memd context QUERY` and `memd hook user-prompt` with a daemon up (they ask the socket);
- `memd context QUERY` with the daemon down (it answers from the index opened read-only);
- a daemon from spawn until its `status` says it is ready, then stopped with SIGTERM.

CPU is user + system time of the process (its rusage once reaped), the median of `--runs`;
the modules are those `python -X importtime` lists (memd's own in brackets). With
`--baseline PATH` (a checkout of another commit, e.g. `git worktree add --detach`), the same
cases run from both trees in turn, A B B A, and the table puts them side by side. Each tree's
bytecode is compiled first (`compileall`), as an installed memd has it.
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
from collections.abc import Callable
from functools import partial
from pathlib import Path

from bench.daemon import Daemon
from bench.report import DEFAULT_OUT, REPO, machine_line, publish, table

BLOCK = "start"
PROMPT = json.dumps({"session_id": "s1", "cwd": "/", "hook_event_name": "UserPromptSubmit",
                     "prompt": "which database do we use?"})  # fmt: skip
CASES = (
    ("memd --help", ["--help"], ""),
    ("memd context, daemon up", ["context", "database"], ""),
    ("memd hook user-prompt, daemon up", ["hook", "user-prompt"], PROMPT),
    ("memd context, daemon down (reads the index)", ["context", "database"], ""),
)
DAEMON_CASE = "daemon: spawn → ready → SIGTERM → exit"


def _cpu_of(run: Callable[[], object]) -> float:
    """CPU seconds (user + system) of the children `run` started and reaped."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _memd(d: Daemon, args: list[str], stdin: str, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *flags, "-m", "memd", *args], input=stdin, capture_output=True,
        text=True, env=d.env, cwd="/", timeout=60,
    )  # fmt: skip


def _modules(importtime: str) -> tuple[int, int]:
    """(all modules, memd's) in `python -X importtime` output."""
    names = [line.rsplit("|", 1)[1].strip() for line in importtime.splitlines()
             if line.startswith("import time:") and "self [us]" not in line]  # fmt: skip
    return len(names), sum(1 for n in names if n == "memd" or n.startswith("memd."))


class Tree:
    """One checkout's figures: CPU samples and module counts per case."""

    def __init__(self, path: Path, tmp: Path) -> None:
        self.path = path
        self.tmp = tmp
        self.cpu: dict[str, list[float]] = {}
        self.mods: dict[str, tuple[int, int]] = {}
        self.n = 0

    def daemon(self) -> Daemon:
        self.n += 1
        return Daemon(self.tmp / f"home{self.n}", PYTHONPATH=str(self.path))

    def add(self, case: str, seconds: float) -> None:
        self.cpu.setdefault(case, []).append(seconds)

    def measure(self, runs: int) -> None:
        """One pass: `runs` daemon starts, then `runs` of each command."""
        for _ in range(max(1, runs // 2)):
            self.add(DAEMON_CASE, _cpu_of(self._daemon_life))
        d = self.daemon()
        d.start()
        d.wait_ready()
        try:
            d.call("remember", {"text": "We use PostgreSQL as the database", "scope": "user"})
            for name, args, stdin in CASES:
                if "daemon down" in name:
                    d.stop()
                for _ in range(runs):
                    self.add(name, _cpu_of(partial(_memd, d, args, stdin)))
                if name not in self.mods:
                    self.mods[name] = _modules(_memd(d, args, stdin, "-X", "importtime").stderr)
        finally:
            d.stop()
        if DAEMON_CASE not in self.mods:
            d = self.daemon()
            d.env["PYTHONPROFILEIMPORTTIME"] = "1"
            d.start()
            d.wait_ready()
            d.stop()
            self.mods[DAEMON_CASE] = _modules(d.log_path.read_text(errors="replace"))

    def _daemon_life(self) -> None:
        d = self.daemon()
        d.start()
        d.wait_ready()
        d.stop()

    def cell(self, case: str) -> str:
        ms = statistics.median(self.cpu[case]) * 1000
        total, memd = self.mods.get(case, (0, 0))
        return f"{ms:.0f} ms ({total} modules, {memd} memd)"


def run(args: argparse.Namespace) -> str:
    tmp = Path(tempfile.mkdtemp(prefix="memd-bench-start-"))
    try:
        this = Tree(REPO, tmp / "this")
        trees = [this]
        order = [this]
        if args.baseline:
            base = Tree(args.baseline.resolve(), tmp / "baseline")
            trees = [base, this]
            order = [this, base, base, this]
        for tree in trees:
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree.path / "memd")],
                           check=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})  # fmt: skip
        for tree in order:
            tree.measure(args.runs)
            print(f"{tree.path}: " + ", ".join(
                f"{c}: {tree.cell(c)}" for c in tree.cpu), flush=True)  # fmt: skip
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    cases = [c for c, *_ in CASES] + [DAEMON_CASE]
    header = ["process", *(_label(t) for t in trees)]
    rows = [[c, *(t.cell(c) for t in trees)] for c in cases]
    return "\n".join([
        "### What a process costs to start (`bench/start_cost.py`)",
        "",
        "Each case is a new process on a temporary home: CPU (user + system, the median of"
        f" {args.runs * (2 if args.baseline else 1)} runs) and the modules it imports (memd's"
        " own). A daemon's figure is its whole life: spawn, first index of an empty tree, ready,"
        " SIGTERM, exit." + (" Both trees ran in turn, A B B A." if args.baseline else ""),
        "",
        table(header, rows),
        "",
        machine_line(),
    ])  # fmt: skip


def _label(t: Tree) -> str:
    if t.path == REPO:
        return "this tree"
    rev = subprocess.run(["git", "-C", str(t.path), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True).stdout.strip()  # fmt: skip
    return f"baseline {rev or t.path}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--baseline", type=Path, help="a checkout of the commit to compare with")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="Markdown file to update")
    ap.add_argument("--no-write", action="store_true", help="print only, do not touch --out")
    args = ap.parse_args()
    publish(args, BLOCK, run(args))


if __name__ == "__main__":
    main()
