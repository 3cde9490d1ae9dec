"""Extraction quality: what the extraction job stores from natural user messages.

    python -m bench.extraction_eval [--data FILE ...] [--folds dev|held-out|all]
                                    [--extractor offline|llm|both] [--failures]
                                    [--block NAME] [--note TEXT]
                                    [--out docs/benchmarks.md] [--no-write]

Each case of a JSON Lines set (format and scoring in ../shared/bench-data/extraction-dev.md) runs
through the real extraction job: a fresh MEMD_HOME with its memory tree and index, the case's
turns written as one session the way ingestion writes them (one minute apart), then
`memd.extraction.job.run_extraction` once, as `memd extract --now` runs it, over the memory
feature alone (its index, its operations and the door to the memory files): the tree's history,
which records the job's changes but changes nothing it writes, is not kept, and the index is a
copy of one made and migrated once per process. The memories are read back from the Markdown
tree (every item the job wrote, superseded ones included) and scored:

- a positive case passes when every expected fact is matched by a live memory of the same type
  whose text contains one of its keywords (substring after NFKC + casefold);
- a supersession case passes when, in addition, a memory holding one of the old value's keywords
  is still stored and marked superseded;
- a negative case passes when nothing at all was stored; every memory there is a false positive.

Fact recall = matched expected facts / all expected facts; precision = matched memories /
(matched memories + false positives). Cases are split into three folds by a fixed rule, the
CRC-32 of the case id modulo 3 (0: fold A, 1: fold B, 2: fold C). Folds A and B are the
development folds: rules are written while looking at their failures. Fold C of every set, and
every case of a set named in `HELD_OUT_SETS` (written before the rules it measures), are held
out: they are run only with `--folds held-out` or `--folds all`, to measure, and the report marks
them. A set in `DEV_SETS` was measured once as held out and its failures read since: all of its
folds are development data. `--failures` prints the failing cases that were run (their text, what was expected and
what was stored) to stdout only: the data never goes into the repository or the document, which
gets figures and case ids.

The offline rules always run; with `--extractor llm|both` the model `llm.backend` finds runs
too (docs/llm.md): the Anthropic API when ANTHROPIC_API_KEY is set, Claude Code with
MEMD_LLM_BACKEND=claude-code, an OpenAI-compatible server with MEMD_LLM_BACKEND=openai,
MEMD_LLM_BASE_URL and MEMD_LLM_MODEL. The caller's MEMD_LLM_* and MEMD_EXTRACT_* variables are
honoured, no other setting. `bench/extraction_replay.py` scores the same cases through a fake
server, when no model can be reached.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import dataclasses
import json
import os
import shutil
import tempfile
import time
import unicodedata
import zlib
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path

from bench.report import REPO, machine_line, publish, table
from memd.conversations.ingest import write_turns
from memd.core.conditions import SystemState
from memd.core.models import JobOutcome, JobResult, Turn
from memd.core.settings import Settings, load
from memd.daemon.engine import Engine
from memd.db import Store
from memd.extraction.job import run_extraction
from memd.llm.choice import choose
from memd.memory.api import MemoryFeature
from memd.memory.jobs import JobContext
from memd.memory.parse import split_item
from memd.memory.tree import create_tree

BLOCK = "extraction"
DEFAULT_DATA = REPO.parent / "shared" / "bench-data" / "extraction-dev.jsonl"
START = datetime(2026, 3, 2, 10, 0).timestamp()  # a Monday morning, local time
TURN_GAP_S = 60
KINDS = ("positive", "supersession", "negative")
KEY_VAR = "ANTHROPIC_API_KEY"
FOLDS = ("A", "B", "C")
DEV_FOLDS = ("A", "B")
# Sets written before the rules they measure: every case is held out, whatever its fold.
HELD_OUT_SETS: frozenset[str] = frozenset({"extraction_own22.jsonl"})
# Sets measured as held out once and looked at since: every case is development data.
DEV_SETS = frozenset(
    {
        "extraction_own4.jsonl",
        "extraction_own5.jsonl",
        "extraction_own6.jsonl",
        "extraction_own7.jsonl",
        "extraction_own8.jsonl",
        "extraction_own9.jsonl",
        "extraction_own10.jsonl",
        "extraction_own11.jsonl",
        "extraction_own12.jsonl",
        "extraction_own13.jsonl",
        "extraction_own14.jsonl",
        "extraction_own15.jsonl",
        "extraction_own16.jsonl",
        "extraction_own17.jsonl",
        "extraction_own18.jsonl",
        "extraction_own19.jsonl",
        "extraction_own20.jsonl",
        "extraction_own21.jsonl",
    }
)
# Outcomes after which a run is tried again (the model was busy, or answered badly once more).
AGAIN = (JobOutcome.RETRY_LATER, JobOutcome.DEFERRED, JobOutcome.ERROR)


# -- cases -----------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, slots=True)
class Expect:
    type: str
    keys: tuple[str, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class Case:
    id: str
    lang: str
    turns: tuple[str, ...]
    expect: tuple[Expect, ...]
    superseded: tuple[tuple[str, ...], ...]
    expect_none: bool
    held_set: bool = False  # the whole set is held out
    dev_set: bool = False  # the whole set is development data

    @property
    def kind(self) -> str:
        if self.expect_none:
            return "negative"
        return "supersession" if self.superseded else "positive"

    @property
    def fold(self) -> str:
        return fold_of(self.id)

    @property
    def held_out(self) -> bool:
        """Whether rules may not be written against this case (it only measures)."""
        return self.held_set or (not self.dev_set and self.fold not in DEV_FOLDS)


def fold_of(case_id: str) -> str:
    """The fixed split: CRC-32 of the id modulo 3 → "A", "B", "C"."""
    return FOLDS[zlib.crc32(case_id.encode("utf-8")) % len(FOLDS)]


def select(cases: Sequence[Case], folds: str) -> list[Case]:
    """The cases of `folds`: "dev" (not held out), "held-out", or "all"."""
    if folds == "all":
        return list(cases)
    return [c for c in cases if c.held_out == (folds == "held-out")]


def load_cases(path: Path) -> list[Case]:
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            out.append(
                Case(
                    id=str(d["id"]),
                    lang=str(d["lang"]),
                    turns=tuple(str(t) for t in d["turns"]),
                    expect=tuple(
                        Expect(str(e["type"]), tuple(str(k) for k in e["must_contain_any"]))
                        for e in d["expect"]
                    ),
                    superseded=tuple(
                        tuple(str(k) for k in s["must_contain_any"]) for s in d["superseded"]
                    ),
                    expect_none=bool(d["expect_none"]),
                    held_set=path.name in HELD_OUT_SETS,
                    dev_set=path.name in DEV_SETS,
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise SystemExit(f"{path}:{n}: not a case of the documented format: {exc}") from exc
    return out


# -- running ---------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, slots=True)
class Memory:
    text: str
    type: str
    superseded: bool
    path: str


@contextlib.contextmanager
def _without_key() -> Iterator[None]:
    """The offline rules run even when the caller has an API key in the environment."""
    saved = os.environ.pop(KEY_VAR, None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ[KEY_VAR] = saved


def run_case(case: Case, extractor: str) -> list[Memory]:
    """The case through the extraction job in a fresh home; every memory it wrote."""
    # Only the extractor's own settings pass through (backend, model, base URL, key, timeout).
    passed = {k: v for k, v in os.environ.items() if k.startswith(("MEMD_EXTRACT_", "MEMD_LLM_"))}

    memories, _runs = run_case_with(case, lambda s: s, env=passed, offline=extractor != "llm")
    return memories


# A case's home lives in memory where the system has a folder there (Linux's /dev/shm), else
# in the temporary folder: the job creates a tree of folders and syncs each file it writes as on
# any disk, and for ~1,700 cases those folders and syncs on a disk took more wall time than the
# rules' own CPU (tests/extraction/test_extraction_sets.py). What a case stores is the same.
_CASES_DIR = "/dev/shm" if os.access("/dev/shm", os.W_OK | os.X_OK) else None


def run_case_with(
    case: Case,
    configure: Callable[[Settings], Settings],
    *,
    env: dict[str, str] | None = None,
    offline: bool = False,
    max_runs: int = 1,
) -> tuple[list[Memory], int]:
    """The case through the extraction job in a fresh home with the settings `configure` makes,
    run again (up to `max_runs`) while a run says to retry; the memories and the runs it took."""
    with _case_home() as home:
        settings = configure(load(env={**(env or {}), "MEMD_HOME": str(home)}))
        store = _fresh_home(home, settings)
        try:
            memory = MemoryFeature(Engine(settings, store), store)
            memory.indexer.reconcile()
            ts = [START + i * TURN_GAP_S for i in range(len(case.turns))]
            turns = [
                Turn("ingest", case.id, f"t{i + 1}", "user", text, ts[i])
                for i, text in enumerate(case.turns)
            ]
            now = ts[-1] + TURN_GAP_S
            store.w.run(lambda c: write_turns(c, turns, now=now))
            for run in range(1, max_runs + 1):
                result = _extract(settings, memory, now, offline)
                if result.outcome in (JobOutcome.SUCCESS, JobOutcome.NOTHING_TO_DO):
                    return read_memories(settings.memory_dir), run
                if run == max_runs or result.outcome not in AGAIN:
                    raise SystemExit(f"{case.id}: extraction did not run: {result.message}")
            raise AssertionError("unreachable")  # pragma: no cover
        finally:
            store.close()


# Every case of a process runs in the same home folder, emptied before and after it, so that
# one fresh home (the new memory tree, the index that has read it) is made once and copied for
# each case: the 2,055 cases of tests/extraction's own sets took 37.5 CPU-s against 44.8 when
# each case made its own, every case's memories the same. Nothing of a case outlives it: memd
# keeps what it knows of a folder's files in the objects the case makes (MemoryFeature's).
_CASES: list[Path] = []
_FRESH: dict[str, Path] = {}  # the settings (repr) -> a fresh home made with them


@contextlib.contextmanager
def _case_home() -> Iterator[Path]:
    if not _CASES:
        _CASES.append(Path(tempfile.mkdtemp(prefix="memd-extract-eval-", dir=_CASES_DIR)))
        atexit.register(shutil.rmtree, _CASES[0], ignore_errors=True)
    home = _CASES[0] / "home"
    shutil.rmtree(home, ignore_errors=True)  # a case that ended abruptly
    try:
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _fresh_home(home: Path, settings: Settings) -> Store:
    """The case's home as memd makes it (the memory tree, an index that has read it), from a
    copy made once for these settings; the open index."""
    key = repr(settings)
    if key in _FRESH:
        shutil.copytree(_FRESH[key], home, symlinks=True)
        return Store.open(settings.db_path)
    create_tree(settings.memory_dir)
    _as_if_long_ago(settings.memory_dir)
    store = Store.open(settings.db_path)
    MemoryFeature(Engine(settings, store), store).indexer.reconcile()
    if settings.memory_dir.is_relative_to(home) and settings.db_path.is_relative_to(home):
        store.close()
        _FRESH[key] = _CASES[0] / f"fresh-{len(_FRESH)}"
        shutil.copytree(home, _FRESH[key], symlinks=True)
        store = Store.open(settings.db_path)
    return store


def _as_if_long_ago(tree: Path) -> None:
    """The case's tree, written a moment ago by this process, dated an hour back: memd reads a
    file someone else changed in the last moments only once it has been quiet a while (it may
    be mid-save), which cost every case a wait for files nobody is writing."""
    then = time.time() - 3600
    for p in tree.rglob("*"):
        if p.is_file():
            os.utime(p, (then, then))


def _extract(settings: Settings, memory: MemoryFeature, now: float, offline: bool) -> JobResult:
    # The load and battery gate is for scheduled runs on a user's machine, not for a benchmark.
    idle = SystemState(None, None, 0.0, os.cpu_count() or 1)
    ctx = JobContext(
        settings, memory.store, memory.indexer, memory.ops, now=lambda: now, probe=lambda: idle
    )
    if not offline:
        return run_extraction(ctx)
    with _without_key():
        return run_extraction(dataclasses.replace(ctx, settings=dataclasses.replace(
            settings, llm_backend="off")))  # fmt: skip


def read_memories(root: Path) -> list[Memory]:
    """Every list item the extraction job wrote (it records its source `src` on each)."""
    out = []
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("journal/"):
            continue
        for line in path.read_text(encoding="utf-8").split("\n"):
            item = split_item(line)
            if item is None or not item[1].get("src"):
                continue
            text, meta = item
            out.append(Memory(text, meta.get("type", ""), bool(meta.get("superseded")), rel))
    return out


# -- scoring ---------------------------------------------------------------------------------
def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _contains(text: str, keys: Sequence[str]) -> bool:
    t = _norm(text)
    return any(_norm(k) in t for k in keys)


@dataclasses.dataclass(slots=True)
class Score:
    case: Case
    memories: list[Memory]
    facts_matched: int = 0
    passed: bool = False
    matched_memories: int = 0
    false_positives: int = 0
    type_mismatches: list[str] = dataclasses.field(default_factory=list)
    missed: list[Expect] = dataclasses.field(default_factory=list)
    supersession_ok: bool = True


def score(case: Case, memories: list[Memory]) -> Score:
    s = Score(case, memories)
    live = [m for m in memories if not m.superseded]
    if case.expect_none:
        s.false_positives = len(memories)
        s.passed = not memories
        return s
    used: set[int] = set()
    for e in case.expect:
        hits = [i for i, m in enumerate(live) if m.type == e.type and _contains(m.text, e.keys)]
        if hits:
            s.facts_matched += 1
            used.update(hits)
        else:
            s.missed.append(e)
            s.type_mismatches += [f"{e.type} → {m.type}" for m in live if _contains(m.text, e.keys)]
    s.matched_memories = len(used)
    s.supersession_ok = all(
        any(m.superseded and _contains(m.text, keys) for m in memories) for keys in case.superseded
    )
    s.passed = s.facts_matched == len(case.expect) and s.supersession_ok
    return s


@dataclasses.dataclass(slots=True)
class Totals:
    cases: int = 0
    passed: int = 0
    facts: int = 0
    facts_matched: int = 0
    matched_memories: int = 0
    false_positives: int = 0
    negatives_with_fp: int = 0
    by_kind: Counter[str] = dataclasses.field(default_factory=Counter)
    passed_by_kind: Counter[str] = dataclasses.field(default_factory=Counter)

    def add(self, s: Score) -> None:
        self.cases += 1
        self.passed += s.passed
        self.facts += len(s.case.expect)
        self.facts_matched += s.facts_matched
        self.matched_memories += s.matched_memories
        self.false_positives += s.false_positives
        self.negatives_with_fp += s.false_positives > 0
        self.by_kind[s.case.kind] += 1
        self.passed_by_kind[s.case.kind] += s.passed

    def kind(self, kind: str) -> str:
        return f"{self.passed_by_kind[kind]}/{self.by_kind[kind]}" if self.by_kind[kind] else "–"

    def recall(self) -> str:
        if not self.facts:
            return "–"
        return f"{self.facts_matched}/{self.facts} ({100 * self.facts_matched / self.facts:.0f}%)"

    def precision(self) -> str:
        denom = self.matched_memories + self.false_positives
        return f"{self.matched_memories / denom:.2f}" if denom else "–"


def totals(scores: Sequence[Score]) -> Totals:
    t = Totals()
    for s in scores:
        t.add(s)
    return t


# -- report ----------------------------------------------------------------------------------
def _fold_label(fold: str, part: Sequence[Score]) -> str:
    if all(s.case.held_out for s in part):
        return f"{fold} (held out)"
    if any(s.case.held_out for s in part):
        return f"{fold} (dev + held out)"
    return fold


def summary_rows(label: str, scores: Sequence[Score]) -> list[list[object]]:
    rows: list[list[object]] = []
    for fold in (*FOLDS, "all"):
        part = [s for s in scores if fold == "all" or s.case.fold == fold]
        if not part:
            continue
        t = totals(part)
        rows.append(
            [label, _fold_label(fold, part), f"{t.passed}/{t.cases}", t.kind("positive"),
             t.kind("supersession"), t.kind("negative"), t.recall(),
             f"{t.negatives_with_fp} of {t.by_kind['negative']}", t.false_positives,
             t.precision()]
        )  # fmt: skip
    return rows


def lang_rows(label: str, scores: Sequence[Score]) -> list[list[object]]:
    rows: list[list[object]] = []
    for lang in sorted({s.case.lang for s in scores}):
        t = totals([s for s in scores if s.case.lang == lang])
        rows.append([label, lang, f"{t.passed}/{t.cases}", t.recall(), t.false_positives])
    return rows


def failure_ids(scores: Sequence[Score]) -> str:
    failed = [s.case.id for s in scores if not s.passed]
    return ", ".join(failed) if failed else "none"


def print_failures(scores: Sequence[Score]) -> None:
    for s in scores:
        if s.passed:
            continue
        c = s.case
        held = ", held out" if c.held_out else ""
        print(f"\n--- {c.id} ({c.lang}, {c.kind}, fold {c.fold}{held})")
        for t in c.turns:
            print(f"  > {t}")
        for e in s.missed:
            print(f"  missed {e.type}: {' | '.join(e.keys)}")
        if c.superseded and not s.supersession_ok:
            print(f"  not superseded: {c.superseded}")
        for m in s.memories:
            print(f"  got {m.type}{' (superseded)' if m.superseded else ''}: {m.text}")


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument(
        "--data", type=Path, action="append", help=f"case file (default {DEFAULT_DATA})"
    )
    ap.add_argument("--extractor", choices=("offline", "llm", "both"), default="both",
                    help="llm and both need a model llm.backend finds; without one only offline runs")  # fmt: skip
    ap.add_argument("--folds", choices=("dev", "held-out", "all"), default="dev",
                    help="which cases run (default dev: folds A and B of the sets not held out)")  # fmt: skip
    ap.add_argument("--failures", action="store_true", help="print the failing cases that ran")
    ap.add_argument("--block", default=BLOCK, help=f"block of --out to write (default {BLOCK})")
    ap.add_argument("--note", default="", help="a sentence put at the top of the block")
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "benchmarks.md")
    ap.add_argument("--no-write", action="store_true", help="print only, do not touch --out")
    args = ap.parse_args(argv)

    extractors = ["offline"]
    if args.extractor in ("llm", "both"):
        own = {k: v for k, v in os.environ.items() if k.startswith(("MEMD_EXTRACT_", "MEMD_LLM_"))}
        with tempfile.TemporaryDirectory(prefix="memd-extract-eval-") as tmp:
            choice = choose(load(env={**own, "MEMD_HOME": tmp}))  # not the caller's config file
        if choice.online:
            extractors.append("llm")
            args.note = args.note or f"LLM: {choice.backend} {choice.model} ({choice.why})."
        else:
            print(f"no model found ({choice.why}): the LLM extractor is not scored")
        if args.extractor == "llm" and "llm" in extractors:
            extractors.remove("offline")
    files = args.data or [DEFAULT_DATA]
    summary: list[list[object]] = []
    langs: list[list[object]] = []
    notes: list[str] = []
    for path in files:
        cases = select(load_cases(path), args.folds)
        if not cases:
            continue
        for extractor in extractors:
            t0 = time.perf_counter()
            scores = [score(c, run_case(c, extractor)) for c in cases]
            took = time.perf_counter() - t0
            label = f"{path.name}, {extractor}"
            summary += summary_rows(label, scores)
            langs += lang_rows(label, scores)
            mism = [
                f"{s.case.id} ({'; '.join(s.type_mismatches)})" for s in scores if s.type_mismatches
            ]
            notes.append(
                f"- {label}: {len(cases)} cases in {took:.1f} s; failing: {failure_ids(scores)}."
                + (f" Right keyword, wrong type: {', '.join(mism)}." if mism else "")
            )
            if args.failures:
                print_failures(scores)

    body = "\n\n".join(
        part
        for part in (
            "### Extraction quality (offline rules"
            + (" and the LLM" if "llm" in extractors else "")
            + ")",
            args.note,
            "Each case runs through the real extraction job in a fresh MEMD_HOME (its turns as one"
            " session, `run_extraction` once) and is scored from the Markdown it wrote, as"
            " extraction-dev.md describes. Folds: CRC-32 of the case id modulo 3 (0 = A, 1 = B,"
            " 2 = C); rules are written against folds A and B; fold C of every set"
            + (f" and every case of {', '.join(sorted(HELD_OUT_SETS))}" if HELD_OUT_SETS else "")
            + " are held out (marked); every case of"
            f" {', '.join(sorted(DEV_SETS))} is development data. Cases run: {args.folds}.",
            table(
                [
                    "set, extractor",
                    "fold",
                    "cases passed",
                    "positive",
                    "supersession",
                    "negative",
                    "fact recall",
                    "negatives with FP",
                    "FP",
                    "precision",
                ],
                summary,
            ),  # fmt: skip
            table(["set, extractor", "lang", "cases passed", "fact recall", "FP"], langs),
            "\n".join(notes),
            machine_line(),
        )
        if part
    )
    publish(args, args.block, body)


if __name__ == "__main__":
    main()
