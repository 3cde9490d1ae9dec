"""The ranking set: does `search` put first what a person would want first?

    python -m bench.ranking [--semantic off|packaged|both] [--folds A|B|C|D|E|all]
        [--dump FILE.json] [--out docs/benchmarks.md] [--no-write]

The set (`bench/ranking_set/`, written before any ranking change it measures) is a memory tree
a bilingual developer could have after a month — `_core/` notes, profile and preferences,
`topics/`, `projects/`, an agent's relationship file, an archived topic and a note — with the
memories memd extracted carrying their source turns, plus 20 conversations with four
assistants (Claude Code as its own transcripts, Codex, Gemini CLI and Cline as generic JSONL
logs), which the daemon ingests and journals itself. `queries.json` holds the queries, English
and Chinese, each with its expected first answers: `expect` is a list of up to three slots,
each slot the keys that are right there (`<file>#<heading>` for a section, `turn:<label>` for
a turn); a query with no slot is one the memory has no answer to (nothing should come back).
Every query belongs to fold A or B (alternating within its language and kind), to fold C,
written later by someone who never read the ranking, to fold D, written after C was measured
by another such stranger, to fold E, written by a third in the round D was measured, to fold
F, written by a fourth in the round E was measured, or to fold G, written by a fifth in the
round F was measured: the fresh fold, asked by no option until the ranking is frozen
(`FROZEN`), then only by `--folds G` or `all`. A fold of `LATER` (H, written by a sixth for a
round after this one) is asked by no option: `main` drops it before choosing folds.

1. A fresh MEMD_HOME gets the tree and the logs; a real daemon starts on it (the extraction
   and archival jobs held off, so the tree stays as written; old exchanges still journaled),
   ingests every turn, writes and indexes the journal, and — with the extra — embeds it all.
2. Every query goes over the socket to `search` (memory and conversations, limit 10).
3. top-1: the first hit is in the first slot; top-3: a hit of the first three is. For a query
   with no answer both mean that nothing came back. set@3: the share of a query's slots
   matched within the first three hits.

The daemon's tree is checked afterwards: a file of the set changed by memd fails the run. The
one change allowed is made before the queries: the `extract` job's update of the status
sections memd keeps in each agent's `relationship.md` (`keep_relationships`).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import itertools
import json
import os
import re
import shutil
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from bench.daemon import Daemon, bench_env
from bench.report import REPO, machine_line, publish, table
from memd.semantic.fusion import Script

BLOCK = "ranking"
SET = REPO / "bench" / "ranking_set"
LIMIT = 10
FOLDS = ("A", "B", "C", "D", "E", "F")
TUNED = "A"
"""The fold the ranking's constants were chosen on (`--tune A`)."""
DEV = ("B", "C", "D", "E", "F")
"""No longer held out: B was read with fold A as development data in issue 28's second ranking
round (its figures had been reported several times); C, D, E and F were the fresh held-out
folds of the second to fifth rounds, each measured once at its round's end, and read as
development data in the round after (F in the sixth)."""
FRESH = "G"
"""This round's held-out fold, written by a fifth stranger in the round fold F was measured:
never a choice of `--tune` or `--file-weights` (not in FOLDS), and asked by no option at all
until the ranking is `FROZEN`; then only by `--folds G` or `--folds all`, once."""
FROZEN = True
"""Whether this round's ranking is frozen: until it is, `main` drops FRESH's queries with
LATER's, before any selection. Set when the sixth round's ranking was frozen, in the commit
whose run measured G once."""
NEXT = "H"
"""Written for a later round; asked by no option until it becomes FRESH (it is in `LATER`)."""
LATER = ("H",)
"""Written for the rounds after this one; asked by no option of this round: never in FOLDS, DEV
or FRESH, and dropped by `main` before any selection."""
TARGET = {"top1": 0.85, "top3": 0.95}
# Conversations of these assistants are written as generic JSONL logs (their own readers are
# other formats); Claude Code's as its transcripts.
CLAUDE = "claude-code"


# -- the set ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Query:
    id: str
    fold: str
    lang: str
    kind: str
    text: str
    expect: list[list[str]]


@dataclass
class Conversations:
    sessions: list[dict[str, Any]]
    label_of_turn: dict[str, str] = field(default_factory=dict)
    label_of_title: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for s in self.sessions:
            self.label_of_title[s["title"]] = s["label"]
            for t in s["turns"]:
                self.label_of_turn[t["id"]] = t["label"]

    @property
    def turns(self) -> int:
        return sum(len(s["turns"]) for s in self.sessions)


def load_set(folder: Path = SET) -> tuple[list[Query], Conversations]:
    raw = json.loads((folder / "queries.json").read_text(encoding="utf-8"))
    qs = [Query(e["id"], e["fold"], e["lang"], e["kind"], e["query"], e["expect"]) for e in raw]
    convs = Conversations(json.loads((folder / "conversations.json").read_text(encoding="utf-8")))
    return qs, convs


def tree_hashes(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*.md"))
    }


# -- the home --------------------------------------------------------------------------------
def _claude_lines(s: dict[str, Any]) -> list[str]:
    start = dt.datetime.fromisoformat(s["started"])
    lines = [json.dumps({"type": "summary", "summary": s["title"],
                         "leafUuid": s["turns"][-1]["id"]})]  # fmt: skip
    parent = None
    for i, t in enumerate(s["turns"]):
        at = (start + dt.timedelta(minutes=2 * i)).astimezone(dt.UTC)
        content: Any = t["text"] if t["role"] == "user" else [{"type": "text", "text": t["text"]}]
        lines.append(json.dumps({
            "parentUuid": parent, "isSidechain": False, "userType": "external",
            "cwd": f"/home/wei/src/{s['project'] or 'scratch'}", "sessionId": s["session_id"],
            "version": "2.1.202", "gitBranch": "main", "type": t["role"],
            "message": {"role": t["role"], "content": content}, "uuid": t["id"],
            "timestamp": at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        }, ensure_ascii=False))  # fmt: skip
        parent = t["id"]
    return lines


def _jsonl_lines(s: dict[str, Any]) -> list[str]:
    start = dt.datetime.fromisoformat(s["started"])
    return [
        json.dumps(
            {
                "session_id": s["session_id"],
                "id": t["id"],
                "role": t["role"],
                "content": t["text"],
                "ts": (start + dt.timedelta(minutes=2 * i)).isoformat(),
                "agent_id": s["assistant"],
                "project": s["project"],
                "title": s["title"],
            },
            ensure_ascii=False,
        )  # fmt: skip
        for i, t in enumerate(s["turns"])
    ]


def build_home(home: Path, convs: Conversations, folder: Path = SET) -> dict[str, str]:
    """The tree under `home/memory`, the logs under `home/claude` and `home/logs`; returns
    the environment of a daemon serving them."""
    shutil.copytree(folder / "tree", home / "memory")
    claude, logs = home / "claude", home / "logs"
    for s in convs.sessions:
        if s["assistant"] == CLAUDE:
            out = claude / f"-home-wei-src-{s['project'] or 'scratch'}" / f"{s['session_id']}.jsonl"
            lines = _claude_lines(s)
        else:
            out = logs / f"{s['assistant']}.jsonl"
            lines = out.read_text(encoding="utf-8").splitlines() if out.exists() else []
            lines += _jsonl_lines(s)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {
        "MEMD_LOGS_CLAUDE_CODE": "true",
        "MEMD_LOGS_CLAUDE_DIR": str(claude),
        "MEMD_LOGS_SOURCES": json.dumps([{"path": str(logs), "format": "jsonl"}]),
        # The set's exchanges are weeks old: journal them all the same.
        "MEMD_JOURNAL_MAX_AGE_DAYS": "100000",
        # Nothing ages out of the set's tree while it is measured.
        "MEMD_ARCHIVE_UNUSED_DAYS": "36500",
    }


def prepare(home: Path, env: dict[str, str], convs: Conversations) -> None:
    """A first start ingests the logs, writes the journal and runs extraction once (its cursor
    then stands at the end, as after a month of use); the set's own files are then put back
    as the set wrote them, and files extraction added are removed, so that every run measures
    the same tree: the set's, plus the journal memd wrote.

    The write guard's kept changes are dropped with them: a file put back within seconds of
    memd's write would otherwise look, at the next start, like an editor's older copy saved
    while memd was down, and memd would write its items back into it."""
    with Daemon(home, **env, MEMD_SEMANTIC_KIND="off") as d:
        d.wait_ready()
        wait_settled(d, convs, semantic=False)
        d.call("run_job", {"name": "extract"}, timeout=600)
    from memd.core import settings

    settings.load(env=bench_env(home, **env)).write_guard_path.unlink(missing_ok=True)
    memory = home / "memory"
    keep = set(tree_hashes(SET / "tree"))
    for p in sorted(memory.rglob("*.md")):
        rel = str(p.relative_to(memory))
        if rel not in keep and not rel.startswith("journal" + os.sep) and rel != "README.md":
            p.unlink()
    shutil.copytree(SET / "tree", memory, dirs_exist_ok=True)


def wait_settled(d: Daemon, convs: Conversations, semantic: bool, timeout: float = 1800) -> float:
    """Until every turn is in, the journal holds every session and is indexed, and (with the
    extra) every section, memory and turn has its vector in the served index.

    The index has caught up when no file event came and nothing was indexed for 3 s (many
    times the watcher's debounce): what a run waits on does not hang on how `status` reports
    the watcher's lag (it once kept the lag of an event that had nothing to index)."""
    t0 = time.perf_counter()
    journal = d.home / "memory" / "journal"
    last: tuple[Any, ...] = ()
    stable_since = 0.0
    while time.perf_counter() - t0 < timeout:
        st = d.call("status")
        heads = sum(p.read_text(encoding="utf-8").count("\n## ") for p in journal.glob("*.md"))
        ix = st["index"]
        files = sum(1 for p in (d.home / "memory").rglob("*.md") if p.name != "README.md")
        ready = (st["logs"]["turns"] >= convs.turns and heads >= len(convs.sessions)
                 and ix["files"] >= files)  # fmt: skip
        if ready and semantic:
            sem = st.get("semantic", {})
            b = sem.get("backfill", {})
            rows = sum(v.get("rows", 0) for v in sem.get("index", {}).values())
            ready = (b.get("state") == "idle" and not b.get("pending") and b.get("done", 0) > 0
                     and rows == sum(sem.get("vectors", {}).values()))  # fmt: skip
        now = (ix["files"], ix["sections"], ix["items"], st["logs"]["turns"], heads,
               ix["last_change_at"], ix["last_indexed_at"])  # fmt: skip
        if ready and now == last:
            if time.perf_counter() - stable_since >= 3.0:
                return time.perf_counter() - t0
        else:
            stable_since = time.perf_counter()
        last = now
        time.sleep(0.5)
    raise RuntimeError(f"the daemon did not settle in {timeout:.0f} s:\n{d.log_tail()}")


# -- scoring ---------------------------------------------------------------------------------
def hit_key(h: dict[str, Any], convs: Conversations) -> str:
    """A hit as the set names it: `turn:<label>`, `journal:<session label>` or `<file>#<heading>`."""
    if h["kind"] == "turn":
        turn = str(h["turn_id"])
        return "turn:" + convs.label_of_turn.get(turn, turn)
    rel = str(h["path"]).split(os.sep + "memory" + os.sep, 1)[-1]
    heading = str(h["heading"])
    if rel.startswith("journal" + os.sep):
        title = heading.rsplit("·", 1)[0].strip()
        return "journal:" + convs.label_of_title.get(title, title)
    return f"{rel}#{heading}"


def hit_keys(h: dict[str, Any], convs: Conversations) -> set[str]:
    """A hit's key and the keys of the journal lines and turns folded into it (its sources,
    shown with it)."""
    return {hit_key(h, convs)} | {
        hit_key({**s, "kind": "turn" if s["kind"] == "turn" else "section"}, convs)
        for s in h.get("sources", ())
    }


def score(q: Query, keys: list[set[str]]) -> dict[str, float]:
    if not q.expect:
        nothing = float(not keys)
        return {"top1": nothing, "top3": nothing, "set3": nothing}
    first = set(q.expect[0])
    return {
        "top1": float(bool(keys) and bool(keys[0] & first)),
        "top3": float(any(k & first for k in keys[:3])),
        "set3": statistics.fmean(float(any(k & set(s) for k in keys[:3])) for s in q.expect),
    }


def answer(q: Query, hits: list[dict[str, Any]], convs: Conversations) -> dict[str, Any]:
    """One query's hits as keys, scored."""
    keys = [hit_keys(h, convs) for h in hits]
    return {"id": q.id, "query": q.text, "keys": [sorted(k) for k in keys], **score(q, keys),
            "hits": [{"key": hit_key(h, convs), "score": h["score"],
                      "found_by": h.get("found_by", []), "snippet": h["snippet"],
                      "sources": sorted(k - {hit_key(h, convs)})}
                     for k, h in zip(keys, hits, strict=True)]}  # fmt: skip


def ask(d: Daemon, qs: list[Query], convs: Conversations) -> list[dict[str, Any]]:
    return [
        answer(q, d.call("search", {"query": q.text, "limit": LIMIT})["hits"], convs) for q in qs
    ]


def summary(qs: list[Query], answers: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Mean top-1, top-3 and set@3 per fold and language, and over each fold."""
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for q, a in zip(qs, answers, strict=True):
        for group in (q.fold, f"{q.fold} {q.lang}", "all"):
            by[group].append(a)
    return {g: {m: statistics.fmean(a[m] for a in rows) for m in ("top1", "top3", "set3")}
            | {"n": len(rows)} for g, rows in by.items()}  # fmt: skip


# -- the run ---------------------------------------------------------------------------------
def run_one(
    kind: str, qs: list[Query], convs: Conversations, threads: int, keep: Path | None = None
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="memd-ranking-", dir="/tmp") as tmp:
        home = Path(tmp)
        env = build_home(home, convs)
        prepare(home, env, convs)
        before = tree_hashes(home / "memory")
        env |= {"MEMD_SEMANTIC_KIND": kind, "MEMD_SEMANTIC_THREADS": str(threads)}
        with Daemon(home, **env) as d:
            d.wait_ready()
            settle_s = wait_settled(d, convs, semantic=kind != "off")
            before = keep_relationships(d, before)
            settle_s += wait_settled(d, convs, semantic=kind != "off")
            load = [os.getloadavg()[0]]
            answers = ask(d, qs, convs)
            load.append(os.getloadavg()[0])
        after = tree_hashes(home / "memory")
        changed = [p for p, h in before.items() if after.get(p) != h]
        if changed:
            raise RuntimeError(f"memd changed files of the set while measuring: {changed}")
        if keep is not None:
            shutil.copytree(
                home, keep / kind, symlinks=True, ignore=shutil.ignore_patterns("*.sock")
            )
    return {"answers": answers, "summary": summary(qs, answers), "settle_s": settle_s,
            "load": load}  # fmt: skip


def keep_relationships(d: Daemon, before: dict[str, str]) -> dict[str, str]:
    """The tree once the `extract` job has run: the job is scheduled two minutes after a start
    and brings the status sections of every agent's `relationship.md` up to date (the set's file
    has none), so on a loaded machine it would rewrite that file in the middle of the queries.
    Run now, it has nothing to extract (`prepare` left its cursor at the end) and changes only
    those sections; any other file of the set it changed fails the run. Its later runs write
    the same status again."""
    d.call("run_job", {"name": "extract"}, timeout=600)
    now = tree_hashes(d.home / "memory")
    changed = [p for p, h in before.items() if now.get(p) != h]
    other = [p for p in changed if not re.fullmatch(r"agents/[^/]+/relationship\.md", p)]
    if other:
        raise RuntimeError(f"the extract job changed files of the set: {other}")
    return now


def render(res: dict[str, dict[str, Any]], qs: list[Query], convs: Conversations,
           folds: tuple[str, ...]) -> str:  # fmt: skip
    rows = []
    for kind, r in res.items():
        s = r["summary"]
        for g in (*folds, *(f"{f} {lang}" for f in folds for lang in ("en", "zh"))):
            if g not in s:
                continue
            rows.append([f"`semantic.kind = {kind}`", _fold_name(g), s[g]["n"],
                         f"{s[g]['top1']:.3f}", f"{s[g]['top3']:.3f}", f"{s[g]['set3']:.3f}",
                         _verdict(s[g]) if g in folds and g not in (TUNED, *DEV) else ""])  # fmt: skip
    kinds: dict[str, int] = defaultdict(int)
    for q in qs:
        kinds[q.kind] += 1
    loads = "; ".join(f"{k}: {r['load'][0]:.2f} → {r['load'][1]:.2f}" for k, r in res.items())
    return "\n".join([
        "### The ranking set: what `search` puts first (`bench/ranking.py`)",
        "",
        f"{len(qs)} queries ({sum(q.lang == 'en' for q in qs)} English,"
        f" {sum(q.lang == 'zh' for q in qs)} Chinese; "
        + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items(), key=lambda x: -x[1]))
        + f") over the memory tree of `bench/ranking_set/` and {convs.turns} turns of"
        f" {len(convs.sessions)} conversations with four assistants, through a real daemon's"
        f" `search` (memory and conversations, limit {LIMIT}). top-1: the first hit is one the"
        " set expects first; top-3: one of the first three is; set@3: the share of the"
        " expected slots found in the first three. A query with nothing to find scores 1 when"
        f" nothing comes back. The ranking's constants were chosen on fold {TUNED} (tuned);"
        f" folds {', '.join(DEV[:-1])} and {DEV[-1]} were held out until they were read as"
        " development data"
        f" (marked dev); fold {FRESH} was written afterwards by someone who never read the"
        " ranking and is held out. Targets on the held-out fold: top-1"
        f" ≥ {TARGET['top1']}, top-3 ≥ {TARGET['top3']}.",
        "",
        table(["daemon", "fold", "queries", "top-1", "top-3", "set@3", "held-out targets"], rows),
        "",
        f"1-minute load average while the queries ran: {loads}.",
        "",
        machine_line(),
    ])  # fmt: skip


def _fold_name(group: str) -> str:
    """A group of `summary` ("A", "B en") named with its fold marked tuned, dev or held out."""
    fold, _, lang = group.partition(" ")
    marks = {TUNED: "tuned", **dict.fromkeys(DEV, "dev"), FRESH: "fresh, held out"}
    mark = marks.get(fold, "held out")
    return f"{fold} ({mark}){', ' + lang if lang else ''}"


def _verdict(s: dict[str, float]) -> str:
    """Against the targets: met, or short by how much."""
    return "; ".join(
        f"{name} met" if s[m] >= TARGET[m] else f"{name} short by {TARGET[m] - s[m]:.3f}"
        for m, name in (("top1", "top-1"), ("top3", "top-3"))
    )


# -- tuning, in-process over homes kept by an earlier run (--keep) -----------------------------
PRIOR_GRID = {
    "archive": (0.2, 0.4, 0.6, 0.8, 1.0),
    "conversation": (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0),
    "journal": (0.05, 0.1, 0.2, 0.3, 0.5, 0.6, 0.8),
}
OWN_MATCH_GRID = {"section": (0.0, 0.25, 0.5, 0.75, 1.0), "turn beside sections": (0.0, 0.25, 0.5)}
# The tiers' priors of turns and journal lines and a turn's own match beside sections, searched
# together by `--tiers` (the other constants as shipped).
TIER_GRID = {"conversation": (0.1, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0), "journal": (0.3, 0.5, 0.6, 0.8, 1.0),
             "turn beside sections": (0.0, 0.5)}  # fmt: skip
FLOOR_K = (1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0)
FULL_K = (1.0, 2.0, 3.0)  # how many standard deviations above the floor a full match is
SUPPORTED_K = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0)
# How far below the mean cosine of unrelated pairs a hit full text found only through the
# bridge may be (`memd.semantic.recipe.BRIDGED_ONLY_SD`); -inf: no such limit.
BRIDGED_K = (float("-inf"), -1.5, -1.0, -0.75, -0.5, -0.25, 0.0, 0.5, 1.0)
# A hit full text found only by common words (`memd.semantic.recipe.COMMON_SD`, how close its
# vector must be; inf: never shown) and what makes a word common
# (`memd.semantic.common_words.COMMON_GLOSSES`, the dictionary's headwords using it; the
# largest: no word is).
COMMON_K = (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, float("inf"))
COMMON_GLOSSES = (75, 100, 150, 200, 300, 10**9)
GRIDS = ("priors", "own", "scale", "supported", "bridged", "common")


def gathered(home: Path, kind: str, qs: list[Query]) -> list[Any]:
    """What both rankers find for each query, asked in-process of the home's index (the
    vector floor lowered to nothing, so that tuning can raise it)."""
    from memd.cli.offline import readonly_engine
    from memd.conversations import ranking
    from memd.core import settings
    from memd.semantic import recipe

    st = settings.load(env=bench_env(home, MEMD_SEMANTIC_KIND=kind))
    saved = recipe.VECTOR_SCALE, recipe.SUPPORTED_SD, recipe.BRIDGED_ONLY_SD, recipe.COMMON_SD
    recipe.VECTOR_SCALE, recipe.SUPPORTED_SD = {}, -1e9
    recipe.BRIDGED_ONLY_SD = recipe.COMMON_SD = float("-inf")
    try:
        with readonly_engine(st) as eng:
            sem = eng.semantic.recall if kind != "off" else None
            depth = max(ranking.MIN_DEPTH, ranking.DEPTH * LIMIT)
            conn = eng.store.read()
            return [ranking.gather(conn, q.text, depth=depth, semantic=sem) for q in qs]
    finally:
        recipe.VECTOR_SCALE, recipe.SUPPORTED_SD, recipe.BRIDGED_ONLY_SD, recipe.COMMON_SD = saved


def cosine_stats(home: Path, qs: list[Query]) -> dict[tuple[Script, Script], tuple[float, float]]:
    """Mean and standard deviation of the cosines between the queries and every section and
    turn of the set, by (query script, document script): almost all of them unrelated pairs."""
    from memd.cli.offline import readonly_engine
    from memd.core import settings

    st = settings.load(env=bench_env(home, MEMD_SEMANTIC_KIND="packaged"))
    cos: dict[tuple[Script, Script], list[float]] = defaultdict(list)
    with readonly_engine(st) as eng:
        rec = eng.semantic.recall
        for q in qs:
            p = rec.plan(q.text)
            assert p is not None
            for found in (rec.sections(p, k=100_000), rec.turns(p, k=100_000)):
                for d, c in zip(found.docs, found.cosines, strict=True):
                    cos[(p.script, found.scripts.get(d, ""))].append(c)
    return {k: (statistics.fmean(v), statistics.pstdev(v)) for k, v in cos.items() if len(v) > 1}


def evaluate(
    qs: list[Query],
    found: list[Any],
    convs: Conversations,
    priors: dict[str, float],
    own_match: dict[str, float],
) -> dict[str, float]:
    from memd.conversations import ranking

    answers = [
        answer(q, msgspec.to_builtins(ranking.rank(f, LIMIT, priors, own_match)), convs)
        for q, f in zip(qs, found, strict=True)
    ]
    return {m: statistics.fmean(a[m] for a in answers) for m in ("top1", "top3", "set3")}


def steadiest(grid: list[Any], objective: Callable[[Any], float]) -> Any:
    """The best setting of a grid; of several as good, the middle one (in the grid's order):
    the objective is a step function of the constants, flat over ranges, and the middle of a
    flat range is the choice least likely to be an accident of the fold."""
    scores = [objective(c) for c in grid]
    top = max(scores)
    tied = [c for c, v in zip(grid, scores, strict=True) if v >= top - 1e-9]
    return tied[len(tied) // 2]


def tune(
    homes: Path, fold: str, qs: list[Query], convs: Conversations, only: tuple[str, ...] = GRIDS
) -> dict[str, Any]:
    """The ranking's constants that do best on `fold` (one fold of `FOLDS`, or several
    together: "ABC"; the mean of top-1 and top-3 over both daemons), by coordinate search — the
    tier priors on a grid with the rest fixed, then how much of a hit's score is its own match,
    then the vector scale, then how far from the query a hit found only through the bridge may
    be, then how close one found only by common words must be and which words are common,
    twice over; the other folds are never read. With `only`
    (some of `GRIDS`), just those, from the shipped constants (`COSINE_STATS` as shipped)."""
    from memd.conversations import ranking
    from memd.semantic import common_words, recipe

    qs = [q for q in qs if q.fold in fold]
    every = set(only) == set(GRIDS)
    stats = cosine_stats(homes, qs) if every else dict(recipe.COSINE_STATS)
    found = {k: gathered(homes, k, qs) for k in ("off", "packaged")}
    cfg: dict[str, Any] = {"priors": dict(ranking.PRIORS), "own": dict(ranking.OWN_MATCH),
                           "floor_k": 2.5 if every else recipe.FLOOR_SD,
                           "full_k": 4.5 if every else recipe.FULL_SD,
                           "supported_k": recipe.SUPPORTED_SD, "bridged_k": recipe.BRIDGED_ONLY_SD,
                           "common_k": recipe.COMMON_SD,
                           "common_glosses": common_words.COMMON_GLOSSES}  # fmt: skip

    def objective(c: dict[str, Any]) -> float:
        recipe.VECTOR_SCALE = {
            p: (mu + c["floor_k"] * sd, mu + c["full_k"] * sd) for p, (mu, sd) in stats.items()
        }
        recipe.SUPPORTED_SD = c["supported_k"]
        recipe.BRIDGED_ONLY_SD = c["bridged_k"]
        recipe.COMMON_SD = c["common_k"]
        common_words.COMMON_GLOSSES = c["common_glosses"]
        res = {k: evaluate(qs, f, convs, c["priors"], c["own"]) for k, f in found.items()}
        return statistics.fmean(r["top1"] + r["top3"] for r in res.values())

    def options() -> Iterator[tuple[str, list[dict[str, Any]]]]:
        yield "priors", [{**cfg, "priors": {**cfg["priors"], **dict(zip(PRIOR_GRID, c, strict=True))}}
                         for c in itertools.product(*PRIOR_GRID.values())]  # fmt: skip
        yield "own", [{**cfg, "own": {**cfg["own"], **dict(zip(OWN_MATCH_GRID, c, strict=True))}}
                      for c in itertools.product(*OWN_MATCH_GRID.values())]  # fmt: skip
        yield "scale", [{**cfg, "floor_k": k, "full_k": k + f} for k in FLOOR_K for f in FULL_K]
        yield "supported", [{**cfg, "supported_k": k} for k in SUPPORTED_K]
        yield "bridged", [{**cfg, "bridged_k": k} for k in BRIDGED_K]
        yield "common", [{**cfg, "common_k": k, "common_glosses": g}
                         for g in COMMON_GLOSSES for k in COMMON_K]  # fmt: skip

    for _ in range(2):
        for name, grid in options():
            if name in only:
                cfg = steadiest(grid, objective)
    obj = objective(cfg)
    figures = {k: evaluate(qs, f, convs, cfg["priors"], cfg["own"]) for k, f in found.items()}
    scale = {f"{a}/{b}": v for (a, b), v in recipe.VECTOR_SCALE.items()}
    return {"fold": fold, "objective": obj, **cfg, "scale": scale, "figures": figures,
            "stats": {f"{a}/{b}": v for (a, b), v in stats.items()}}  # fmt: skip


def tiers(homes: Path, qs: list[Query], convs: Conversations) -> dict[str, Any]:
    """`TIER_GRID` over the dev folds (`FOLDS`), both daemons' homes (`--keep`'s folder) asked
    in-process with the gates as shipped: the setting of the best top-1 + top-3 count over all
    of them (of several as good, the middle one, `steadiest`), and each fold left out in turn —
    the setting chosen on the other four, its count on the fold left out against the shipped
    constants' (how far a choice on some folds carries over to another)."""
    from memd.cli.offline import readonly_engine
    from memd.conversations import ranking
    from memd.core import settings

    qs = [q for q in qs if q.fold in FOLDS]
    found: dict[str, list[Any]] = {}
    for k in ("off", "packaged"):
        with readonly_engine(settings.load(env=bench_env(homes / k, MEMD_SEMANTIC_KIND=k))) as e:
            sem, conn = (e.semantic.recall if k != "off" else None), e.store.read()
            found[k] = [ranking.gather(conn, q.text, depth=max(ranking.MIN_DEPTH, ranking.DEPTH
                                                                * LIMIT), semantic=sem) for q in qs]  # fmt: skip

    def counts(c: tuple[float, ...]) -> dict[str, int]:
        priors = {**ranking.PRIORS, ranking.TURN: c[0], ranking.JOURNAL: c[1]}
        own = {**ranking.OWN_MATCH, ranking.BESIDE_SECTIONS: c[2]}
        out: dict[str, int] = defaultdict(int)
        for f in found.values():
            for q, one in zip(qs, f, strict=True):
                a = answer(q, msgspec.to_builtins(ranking.rank(one, LIMIT, priors, own)), convs)
                out[q.fold] += int(a["top1"] + a["top3"])
        return out

    shipped = (ranking.PRIORS[ranking.TURN], ranking.PRIORS[ranking.JOURNAL],
               ranking.OWN_MATCH[ranking.BESIDE_SECTIONS])  # fmt: skip
    grid = [shipped, *itertools.product(*TIER_GRID.values())]
    by = {c: counts(c) for c in grid}
    grid = grid[1:]

    def chosen(folds: str) -> tuple[float, ...]:
        return tuple(steadiest(grid, lambda c: float(sum(by[c][f] for f in folds))))

    return {"shipped": shipped, "counts": by[shipped], "chosen on all": chosen("".join(FOLDS)),
            "left out": {f: {"chosen": (c := chosen("".join(g for g in FOLDS if g != f))),
                             "count": by[c][f], "shipped": by[shipped][f]} for f in FOLDS},
            "every setting": {" ".join(map(str, c)): dict(by[c]) for c in grid}}  # fmt: skip


UNHEARD_SHARES = (0.2, 0.25, 1 / 3, 0.4, 0.5, 0.6, 0.75)
UNHEARD_MATCHES = (0.0, 0.1, 0.2, 0.25, 1 / 3, 0.4, 0.5)
"""`--unheard`'s grid: `memd.conversations.unheard.SHARE` and `MATCH`."""


def unheard_grid(homes: Path, qs: list[Query], convs: Conversations) -> dict[str, Any]:
    """`UNHEARD_SHARES` × `UNHEARD_MATCHES` over the dev folds (`FOLDS`), both daemons' homes
    (`--keep`'s folder) asked in-process: the top-1 + top-3 count of each setting and of none
    (the gate off), the setting chosen on all folds (the best count; of several as good, the
    middle one, `steadiest`) and each fold left out in turn (chosen on the others, its count
    on the fold left out against the gate off)."""
    from memd.cli.offline import readonly_engine
    from memd.conversations import ranking, unheard
    from memd.core import settings

    qs = [q for q in qs if q.fold in FOLDS]
    depth = max(ranking.MIN_DEPTH, ranking.DEPTH * LIMIT)
    found: dict[str, list[Any]] = {}
    for k in ("off", "packaged"):
        with readonly_engine(settings.load(env=bench_env(homes / k, MEMD_SEMANTIC_KIND=k))) as e:
            sem, conn = (e.semantic.recall if k != "off" else None), e.store.read()
            found[k] = [ranking.gather(conn, q.text, depth=depth, semantic=sem) for q in qs]
    saved = unheard.SHARE, unheard.MATCH

    def counts(c: tuple[float, float]) -> dict[str, int]:
        unheard.SHARE, unheard.MATCH = c
        out: dict[str, int] = defaultdict(int)
        try:
            for f in found.values():
                for q, one in zip(qs, f, strict=True):
                    a = answer(q, msgspec.to_builtins(ranking.rank(one, LIMIT)), convs)
                    out[q.fold] += int(a["top1"] + a["top3"])
        finally:
            unheard.SHARE, unheard.MATCH = saved
        return out

    none = (float("inf"), 0.0)
    grid = list(itertools.product(UNHEARD_SHARES, UNHEARD_MATCHES))
    by = {c: counts(c) for c in [none, *grid]}

    def chosen(folds: str) -> tuple[float, float]:
        return tuple(steadiest(grid, lambda c: float(sum(by[c][f] for f in folds))))

    return {"shipped": saved, "none": dict(by[none]), "chosen on all": chosen("".join(FOLDS)),
            "left out": {f: {"chosen": (c := chosen("".join(g for g in FOLDS if g != f))),
                             "count": by[c][f], "none": by[none][f]} for f in FOLDS},
            "every setting": {f"{a:.3f} {b:.3f}": dict(by[(a, b)]) for a, b in grid}}  # fmt: skip


FILE_WEIGHTS = (0.0, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0)
"""The bm25 weight of a section's file column (its file's title and path words) tried by
`--file-weights`, the heading's and the body's kept (`memd.memory.repo.BM25_WEIGHTS`)."""


def file_weights(homes: Path, fold: str, qs: list[Query], convs: Conversations) -> dict[str, Any]:
    """`fold`'s top-1 and top-3 for each weight of the file column, both daemons' indexes
    asked in-process with the ranking's constants as they are. The chosen weight is below the
    body's (a section saying a word outranks a section of a file named by it) and, of those,
    does best on the mean of top-1 and top-3 (the smallest of several as good)."""
    from memd.conversations import ranking
    from memd.memory import repo

    qs = [q for q in qs if q.fold == fold]
    saved = repo.BM25_WEIGHTS
    figures: dict[float, dict[str, dict[str, float]]] = {}
    try:
        for w in FILE_WEIGHTS:
            repo.BM25_WEIGHTS = (*saved[:2], w)
            figures[w] = {k: evaluate(qs, gathered(homes, k, qs), convs, dict(ranking.PRIORS),
                                      dict(ranking.OWN_MATCH)) for k in ("off", "packaged")}  # fmt: skip
    finally:
        repo.BM25_WEIGHTS = saved

    def objective(w: float) -> float:
        return statistics.fmean(r["top1"] + r["top3"] for r in figures[w].values())

    below = [w for w in FILE_WEIGHTS if w < saved[1]]
    top = max(map(objective, below))
    return {"fold": fold, "chosen": min(w for w in below if objective(w) >= top - 1e-9),
            "figures": {str(w): f for w, f in figures.items()}}  # fmt: skip


def unasked() -> tuple[str, ...]:
    """The folds no option asks: LATER's, and FRESH until the ranking is FROZEN."""
    return (*LATER, *(() if FROZEN else (FRESH,)))


def _dev_folds(arg: str) -> str:
    """`--tune`'s folds: one or more of `FOLDS` (the fresh fold is never tuned on)."""
    if not arg or any(f not in FOLDS for f in arg):
        raise argparse.ArgumentTypeError(f"folds to tune on: letters of {''.join(FOLDS)}")
    return arg


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--semantic", choices=("off", "packaged", "both"), default="both")
    fresh = () if FRESH in unasked() else (FRESH,)
    ap.add_argument("--folds", choices=(*FOLDS, *fresh, "all"),
                    help="which fold's queries to ask (tune on one, report the others; without it"
                    f" {', '.join(FOLDS)}, with all also the fresh {FRESH} once the ranking is"
                    " frozen)")  # fmt: skip
    ap.add_argument("--threads", type=int, default=2, help="model threads")
    ap.add_argument("--dump", type=Path, help="write every query's hits to this JSON file")
    ap.add_argument("--keep", type=Path, help="copy each measured MEMD_HOME under this folder")
    ap.add_argument(
        "--tune",
        type=_dev_folds,
        help="grid-search the ranking's constants on this"
        f' fold, or these folds together ("{"".join(FOLDS)}"; never {FRESH}), in-process over'
        " the homes --keep wrote (give that folder as --home)",
    )
    ap.add_argument("--file-weights", choices=FOLDS, help="top-1/top-3 of this fold for each"
                    " bm25 weight of the file column, in-process over the homes --keep wrote"
                    " (give that folder as --home)")  # fmt: skip
    ap.add_argument("--tiers", action="store_true", help="search TIER_GRID over the dev folds,"
                    " each left out in turn, in-process over --keep's folder (give it as"
                    " --home)")  # fmt: skip
    ap.add_argument("--unheard", action="store_true", help="search the unheard-query gate's"
                    " grid over the dev folds, each left out in turn, in-process over --keep's"
                    " folder (give it as --home)")  # fmt: skip
    ap.add_argument("--only", help="with --tune: a comma-separated few of " + ",".join(GRIDS)
                    + " to search, the rest kept as shipped")  # fmt: skip
    ap.add_argument(
        "--home", type=Path, help="with --tune: the folder --keep wrote (its packaged home)"
    )
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "benchmarks.md")
    ap.add_argument("--no-write", action="store_true", help="print only, do not touch --out")
    args = ap.parse_args(argv)
    qs, convs = load_set()
    qs = [q for q in qs if q.fold not in unasked()]
    if args.tiers:
        if args.home is None:
            ap.error("--tiers needs --home (the folder --keep wrote)")
        print(json.dumps(tiers(args.home, qs, convs), indent=1, default=str))
        return 0
    if args.unheard:
        if args.home is None:
            ap.error("--unheard needs --home (the folder --keep wrote)")
        print(json.dumps(unheard_grid(args.home, qs, convs), indent=1, default=str))
        return 0
    if args.tune or args.file_weights:
        if args.home is None:
            ap.error("--tune needs --home (a folder an earlier run wrote with --keep)")
        if args.tune:
            only = tuple(args.only.split(",")) if args.only else GRIDS
            print(json.dumps(tune(args.home, args.tune, qs, convs, only), indent=1))
        else:
            print(json.dumps(file_weights(args.home, args.file_weights, qs, convs), indent=1))
        return 0
    folds = (
        FOLDS if args.folds is None else (*FOLDS, FRESH) if args.folds == "all" else (args.folds,)
    )
    qs = [q for q in qs if q.fold in folds]
    kinds = ("off", "packaged") if args.semantic == "both" else (args.semantic,)
    res = {k: run_one(k, qs, convs, args.threads, args.keep) for k in kinds}
    if args.dump:
        args.dump.write_text(json.dumps({k: r["answers"] for k, r in res.items()},
                                        ensure_ascii=False, indent=1))  # fmt: skip
    publish(args, BLOCK, render(res, qs, convs, folds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
