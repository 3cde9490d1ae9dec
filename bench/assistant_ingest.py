"""Reading Cline, Roo Code, Continue and Aider files, next to Claude Code's transcripts: turns per
second for the same generated conversations in each format.

    python -m bench.assistant_ingest [--turns 20000] [--out docs/benchmarks.md] [--no-write]

The conversations are `bench.ingest_bench.conversations` (seeded), written by
`bench.assistant_corpus` with what each assistant adds around what was said. Two passes,
each format timed in the order A B C D E E D C B A within one process (so a drift of the
shared machine falls on every format alike; the figure is the median of the two):

1. parsing alone: the files already in memory, the format's pure parser (bytes → turns);
2. reading into a fresh index: `LogIngestor` over the files, as the daemon's first scan does
   (parse, redact, SQLite writes and full-text indexing; summaries not counted).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import assistant_corpus as corpus
from bench.daemon import bench_env
from bench.ingest_bench import conversations, write_claude
from bench.report import machine_line, publish, table

BLOCK = "assistant-ingest"
FORMATS = ("claude-code", "cline", "roo-code", "continue", "aider")


def write_all(root: Path, n_turns: int, seed: int) -> dict[str, tuple[Path, int]]:
    """Each format's folder and the number of turns written there."""
    convs = conversations(n_turns, seed)
    return {
        "claude-code": (root / "claude", write_claude(convs, root / "claude")),
        "cline": (root / "cline", corpus.write_cline(convs, root / "cline")),
        "roo-code": (root / "roo", corpus.write_cline(convs, root / "roo", roo=True)),
        "continue": (root / "continue", corpus.write_continue(convs, root / "continue")),
        "aider": (root / "aider", corpus.write_aider(convs, root / "aider")),
    }


def parser_of(fmt: str, folder: Path) -> Callable[[], int]:
    """A function that parses every file of `folder` (read into memory first) and counts turns."""
    from memd.conversations.formats import parse_claude_code_line
    from memd.conversations.formats.aider import parse_aider_history
    from memd.conversations.formats.cline import parse_cline_task
    from memd.conversations.formats.continue_dev import (
        continue_session_dates,
        parse_continue_session,
    )

    if fmt == "claude-code":
        files = [(str(p), p.read_bytes()) for p in sorted(folder.glob("*/*.jsonl"))]

        def claude() -> int:
            n = 0
            for path, data in files:
                for i, line in enumerate(data.split(b"\n"), 1):
                    n += len(parse_claude_code_line(line, path=path, lineno=i, session_hint="s"))
            return n

        return claude
    if fmt in ("cline", "roo-code"):
        tasks = [
            (p, (p / "ui_messages.json").read_bytes(), _maybe(p / "history_item.json"))
            for p in sorted(folder.iterdir())
        ]
        return lambda: sum(len(parse_cline_task(d, path=str(p), task_id=p.name, source=fmt, meta=m).turns)
                           for p, d, m in tasks)  # fmt: skip
    if fmt == "continue":
        dates = continue_session_dates((folder / "sessions.json").read_bytes())
        sessions = [
            (p, p.read_bytes()) for p in sorted(folder.glob("*.json")) if p.name != "sessions.json"
        ]
        return lambda: sum(len(parse_continue_session(d, path=str(p), session_hint=p.stem, created=dates.get(p.stem, 0.0)).turns)
                           for p, d in sessions)  # fmt: skip
    histories = [(p, p.read_bytes()) for p in sorted(folder.glob("*/.aider.chat.history.md"))]
    return lambda: sum(
        len(parse_aider_history(d, path=str(p), project=str(p.parent)).turns) for p, d in histories
    )


def _maybe(path: Path) -> bytes | None:
    return path.read_bytes() if path.exists() else None


def abba(runs: dict[str, Callable[[], float]]) -> dict[str, list[float]]:
    """Each function's seconds, run in the order A..E E..A."""
    order = list(runs) + list(reversed(runs))
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    for name in order:
        seconds[name].append(runs[name]())
    return seconds


def timed(fn: Callable[[], int], expected: int) -> Callable[[], float]:
    def run() -> float:
        t0 = time.perf_counter()
        got = fn()
        took = time.perf_counter() - t0
        if got != expected:
            raise RuntimeError(f"expected {expected} turns, read {got}")
        return took

    return run


def child(home: Path, folder: Path, fmt: str) -> dict[str, Any]:
    """Read `folder` into a fresh index as the daemon's first scan does; wall and CPU seconds."""
    from memd.conversations.logs import LogIngestor
    from memd.conversations.sources import LogSource
    from memd.core import settings
    from memd.db import Store

    s = settings.load(env=bench_env(home))
    store = Store.open(s.db_path)
    roots = (
        sorted(p.parent for p in folder.glob("*/.aider.chat.history.md"))
        if fmt == "aider"
        else [folder]
    )
    srcs = [LogSource(root, fmt, fmt) for root in roots]
    ing = LogIngestor(store, srcs)
    files = [(f, fmt) for src in srcs for f in src.files()]
    t0, c0 = time.perf_counter(), time.process_time()
    reports = ing.ingest_files(files, summaries=False)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    store.close()
    return {"added": sum(r.added for r in reports), "wall_s": wall, "cpu_s": cpu}


def run_child(home: Path, folder: Path, fmt: str, expected: int) -> Callable[[], float]:
    def run() -> float:
        out = subprocess.run([sys.executable, "-m", "bench.assistant_ingest", "--child", str(home / str(time.monotonic_ns())), str(folder), fmt],
                             env=bench_env(home), capture_output=True, text=True, check=True)  # fmt: skip
        got = json.loads(out.stdout.strip().splitlines()[-1])
        if got["added"] != expected:
            raise RuntimeError(f"{fmt}: expected {expected} turns stored, got {got['added']}")
        return float(got["wall_s"])

    return run


def size_mb(folder: Path) -> float:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 1e6


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--turns", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", type=Path, default=Path("docs/benchmarks.md"))
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument(
        "--child", nargs=3, metavar=("HOME", "FOLDER", "FORMAT"), help=argparse.SUPPRESS
    )
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(Path(args.child[0]), Path(args.child[1]), args.child[2])))
        return
    with tempfile.TemporaryDirectory(prefix="memd-bench-") as tmp:
        written = write_all(Path(tmp), args.turns, args.seed)
        parse = abba({f: timed(parser_of(f, written[f][0]), written[f][1]) for f in FORMATS})
        ingest = abba(
            {f: run_child(Path(tmp) / "homes", written[f][0], f, written[f][1]) for f in FORMATS}
        )
        rows = []
        for fmt in FORMATS:
            folder, n = written[fmt]
            p, i = statistics.median(parse[fmt]), statistics.median(ingest[fmt])
            rows.append([fmt, f"{size_mb(folder):.1f} MB", f"{n:,}", f"{n / p:,.0f}",
                         ", ".join(f"{n / s:,.0f}" for s in parse[fmt]), f"{n / i:,.0f}",
                         ", ".join(f"{n / s:,.0f}" for s in ingest[fmt])])  # fmt: skip
    body = "\n".join(
        [
            "### Reading each assistant's files",
            "",
            f"{args.turns:,} generated turns (seed {args.seed}) written in each format with what the assistant adds "
            "around them (API request records with an environment block, reasoning, tool calls and command "
            "output, attached files, edits, status lines). *Parse*: the files in memory, the format's pure "
            "parser, in one process. *Read into the index*: `LogIngestor` over the files in a fresh process and "
            "index, as the daemon's first scan (parse, redact, SQLite writes, full-text indexing; summaries not "
            "counted). Each format timed twice in the order A–E E–A; the median of the two shown.",
            "",
            table(["format", "files", "turns", "parse, turns/s", "both runs", "read into the index, turns/s",
                   "both runs"], rows),
            "",
            machine_line(),
        ]
    )  # fmt: skip
    publish(args, BLOCK, body)


if __name__ == "__main__":
    if os.environ.get("MEMD_BENCH_PROFILE"):
        import cProfile

        cProfile.run("main()", sort="cumtime")
    else:
        main()
