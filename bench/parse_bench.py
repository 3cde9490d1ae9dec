"""Markdown parse cost per file, in-process, on the generated corpus.

    python -m bench.parse_bench [--files 10000] [--runs 5] [--out docs/benchmarks.md] [--no-write]

Generates the corpus (`bench/corpus.py`), reads every file into memory, then times
`parse_markdown` over all of them (median of --runs passes), for three trees:

1. the corpus as generated (ATX headings, bullet lists, prose: the line scan's case);
2. the same files with a fenced shell block (holding a `## comment` line) added to 20% of them,
   which sends those files to the CommonMark parser;
3. every file forced through the CommonMark parser (`full=True`): the cost without the scan.

With a memd that has no `full` parameter (before markdown-it-py) only row 1 is measured.
"""

from __future__ import annotations

import argparse
import inspect
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import corpus
from bench.report import add_common_args, machine_line, publish, table

BLOCK = "parse"
FENCE = "\n```sh\n## run the tests first\nnpm test -- --watch\n```\n"


def _body(front: Any) -> str:
    """The text after the front matter: a `FrontMatter`'s body (a tuple's second item in a tree
    from before it, which this script may be run on)."""
    body: str = front.body if hasattr(front, "body") else front[1]
    return body


def _time(texts: list[tuple[str, str]], parse: Callable[[str, str], object], runs: int) -> float:
    passes = []
    for _ in range(runs):
        t = time.perf_counter()
        for text, stem in texts:
            parse(text, stem)
        passes.append(time.perf_counter() - t)
    return statistics.median(passes)


def _with_fences(texts: list[tuple[str, str]], share: float, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out = []
    for text, stem in texts:
        if rng.random() < share:
            cut = text.rfind("\n## ")
            text = text[:cut] + FENCE + text[cut:] if cut > 0 else text + FENCE
        out.append((text, stem))
    return out


def run(args: argparse.Namespace) -> str:
    from memd.memory import parse as mp

    with tempfile.TemporaryDirectory(prefix="memd-parse-bench-") as tmp:
        info = corpus.generate(Path(tmp) / "memory", args.files, seed=args.seed)
        texts = [(p.read_text(encoding="utf-8"), p.stem) for p in info.files]
    n = len(texts)
    has_full = "full" in inspect.signature(mp.parse_markdown).parameters
    rows: list[list[object]] = []

    def row(
        label: str,
        tree: list[tuple[str, str]],
        parse: Callable[[str, str], object],
        *,
        full: bool = False,
    ) -> None:
        needs = getattr(mp, "needs_full_parse", lambda body: False)
        parsed = n if full else sum(needs(_body(mp.split_front_matter(t))) for t, _ in tree)
        total = _time(tree, parse, args.runs)
        rows.append([label, f"{parsed / n:.0%}", f"{total:.2f} s", f"{total / n * 1e6:.0f} µs"])
        print(rows[-1])

    row("corpus as generated", texts, lambda t, s: mp.parse_markdown(t, s))
    if has_full:
        fenced = _with_fences(texts, 0.2, args.seed)
        row("20% of the files with a code fence", fenced, lambda t, s: mp.parse_markdown(t, s))
        row(
            "every file through the CommonMark parser",
            texts,
            lambda t, s: mp.parse_markdown(t, s, full=True),
            full=True,
        )
    header = ["tree", "files parsed by CommonMark", f"all {n:,} files", "per file"]
    return "\n".join(
        [
            "### Markdown parse cost (`bench/parse_bench.py`)",
            "",
            f"Corpus: {n:,} files, {info.bytes / 1e6:.2f} MB (seed {args.seed}), held in memory;"
            f" `parse_markdown` over all of them, median of {args.runs} passes, one process.",
            "",
            table(header, rows),
            "",
            machine_line(),
        ]
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_common_args(ap, 10_000)
    ap.add_argument("--runs", type=int, default=5, help="timed passes (median is reported)")
    args = ap.parse_args()
    publish(args, BLOCK, run(args))


if __name__ == "__main__":
    main()
