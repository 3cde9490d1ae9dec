"""LoCoMo retrieval: recall@k of memd's conversation search against a plain FTS5 baseline.

    python -m bench.locomo [--data ../shared/bench-data/locomo-dev.json] [--out docs/benchmarks.md] [--no-write]
    python -m bench.locomo --semantic [--zh ../shared/bench-data/locomo-dev-zh.json] [--home DIR]

With --semantic two daemons ingest the same logs, one with recall by meaning on (packaged
model; measured after its backfill) and one with it off, and every English and Chinese
question goes to both through `search` and `recall`, reported per fold (--home keeps the
first daemon's MEMD_HOME, vectors included, for the next run).

1. Writes each LoCoMo conversation as a generic JSONL log (one session per LoCoMo session,
   one turn per dia_id — `id` = the dia_id, `name` = the speaker, `content` = the text plus
   "(shared a photo: caption)" when the turn shares an image, `ts` = the session's date + the
   turn's position in seconds, `project` = the conversation) into a fresh MEMD_HOME's log folder.
2. Starts a real daemon with that folder as a log source and waits until every turn is in.
3. For each question of categories 1-4 asks the running daemon over its socket for the top
   20 turns of that conversation (`search` with `scope: conversations` and the conversation
   as `project`), and scores recall@k = |evidence ∩ top-k| / |evidence|, k = 1, 5, 10, 20.
4. Computes in the same run the plain FTS5 baseline of ../shared/bench-data/README.md: one
   in-memory FTS5 table (unicode61) per conversation, documents = speaker + text, query = OR
   of the question's non-stopword terms, ranked by bm25().

The evidence lists are only used for scoring; questions are sent as they are.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.daemon import Daemon
from bench.report import REPO, machine_line, publish, summary_ms, table

BLOCK = "locomo"
KS = (1, 5, 10, 20)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
DEFAULT_DATA = REPO.parent / "shared" / "bench-data" / "locomo-dev.json"
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


# -- data ------------------------------------------------------------------------------------
def session_time(text: str) -> float:
    """LoCoMo's "1:56 pm on 8 May, 2023" as epoch seconds (local time)."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").timestamp()


def turn_text(turn: dict[str, Any], captions: bool = True) -> str:
    text = str(turn["text"])
    if captions and turn.get("blip_caption"):
        text += f" (shared a photo: {turn['blip_caption']})"
    return text


def sessions_of(conv: dict[str, Any]) -> list[tuple[int, float, list[dict[str, Any]]]]:
    out = []
    for key, turns in conv.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if m and isinstance(turns, list) and turns:
            out.append((int(m.group(1)), session_time(conv[f"{key}_date_time"]), turns))
    return sorted(out)


def normalise_evidence(raw: Sequence[str], known: set[str]) -> list[str]:
    """Evidence ids as dia_ids ("D8:6; D9:17" → two ids, "D:11:26" → "D11:26"), unknown ones dropped."""
    out: list[str] = []
    for item in raw:
        for m in _EVIDENCE.finditer(str(item)):
            did = f"D{int(m.group(1))}:{int(m.group(2))}"
            if did in known and did not in out:
                out.append(did)
    return out


def write_logs(samples: list[dict[str, Any]], folder: Path, captions: bool) -> int:
    """One JSONL log per conversation; returns the number of turns written."""
    folder.mkdir(parents=True, exist_ok=True)
    n = 0
    for ci, sample in enumerate(samples):
        conv = sample["conversation"]
        a = conv["speaker_a"]
        lines = []
        for num, ts, turns in sessions_of(conv):
            for j, t in enumerate(turns):
                lines.append(json.dumps({
                    "session_id": f"locomo{ci}-s{num}", "id": t["dia_id"], "name": t["speaker"],
                    "role": "user" if t["speaker"] == a else "assistant",
                    "content": turn_text(t, captions), "ts": ts + j, "project": f"locomo-{ci}",
                    "title": f"{a} and {conv['speaker_b']}, session {num}",
                }, ensure_ascii=False))  # fmt: skip
                n += 1
        (folder / f"locomo-{ci}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return n


def questions(samples: list[dict[str, Any]]) -> list[tuple[int, str, int, list[str]]]:
    """(conversation, question, category, evidence) for categories 1-4 with usable evidence."""
    out = []
    for ci, sample in enumerate(samples):
        known = {t["dia_id"] for _, _, turns in sessions_of(sample["conversation"]) for t in turns}
        for qa in sample["qa"]:
            cat = int(qa.get("category", 0))
            if cat not in CATEGORIES:
                continue
            ev = normalise_evidence(qa.get("evidence", []), known)
            if ev:
                out.append((ci, str(qa["question"]), cat, ev))
    return out


# -- scoring ---------------------------------------------------------------------------------
Retriever = Callable[[int, str], list[str]]


def evaluate(qs: list[tuple[int, str, int, list[str]]], retrieve: Retriever) -> dict[str, Any]:
    per_cat: dict[int, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    times: list[float] = []
    for ci, q, cat, ev in qs:
        t0 = time.perf_counter()
        ranked = retrieve(ci, q)
        times.append(time.perf_counter() - t0)
        for k in KS:
            got = len(set(ranked[:k]) & set(ev)) / len(ev)
            per_cat[cat][k].append(got)
            per_cat[0][k].append(got)
    return {
        "recall": {
            cat: {k: statistics.fmean(v) for k, v in ks.items()} for cat, ks in per_cat.items()
        },
        "n": {cat: len(ks[1]) for cat, ks in per_cat.items()},
        "latency": summary_ms(times),
    }


# -- the baseline ----------------------------------------------------------------------------
class FTS5Baseline:
    """README's floor: per-turn documents (speaker + text), OR of non-stopword terms, bm25()."""

    def __init__(self, samples: list[dict[str, Any]]) -> None:
        self.db = sqlite3.connect(":memory:")
        for ci, sample in enumerate(samples):
            self.db.execute(
                f"CREATE VIRTUAL TABLE c{ci} USING fts5(dia_id UNINDEXED, text, tokenize='unicode61')"
            )
            rows = [(t["dia_id"], f"{t['speaker']}: {turn_text(t, captions=False)}")
                    for _, _, ts in sessions_of(sample["conversation"]) for t in ts]  # fmt: skip
            self.db.executemany(f"INSERT INTO c{ci}(dia_id, text) VALUES (?, ?)", rows)

    def __call__(self, ci: int, question: str) -> list[str]:
        from memd.core.text import terms

        q = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms(question))
        if not q:
            return []
        rows = self.db.execute(
            f"SELECT dia_id FROM c{ci} WHERE c{ci} MATCH ? ORDER BY bm25(c{ci}) LIMIT 20", (q,)
        )
        return [r[0] for r in rows]


# -- memd over its socket ----------------------------------------------------------------------
def memd_retriever(daemon: Daemon) -> tuple[Retriever, Callable[[], None]]:
    from memd.api.client import Client

    client = Client(daemon.sock, timeout=30).connect()

    def retrieve(ci: int, question: str) -> list[str]:
        res = client.call(
            "search",
            {"query": question, "scope": "conversations", "project": f"locomo-{ci}", "limit": 20},
        )
        return [h["turn_id"] for h in res["hits"]]

    return retrieve, client.close


def wait_ingested(daemon: Daemon, expected: int, timeout: float = 120) -> float:
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        if daemon.call("status")["logs"]["turns"] >= expected:
            return time.perf_counter() - t0
        time.sleep(0.05)
    raise RuntimeError(
        f"the daemon did not ingest {expected} turns in {timeout}s:\n{daemon.log_tail()}"
    )


# -- report ----------------------------------------------------------------------------------
def _row(name: str, res: dict[str, Any], cat: int = 0) -> list[object]:
    r = res["recall"][cat]
    return [name, *(f"{r[k]:.3f}" for k in KS)]


def render(base: dict[str, Any], memd: dict[str, Any], info: dict[str, Any]) -> str:
    lines = [
        "### LoCoMo retrieval (recall@k of evidence turns)",
        "",
        f"{info['conversations']} conversations, {info['turns']} turns, {base['n'][0]} questions of categories 1-4"
        f" (adversarial category 5 has no evidence). Logs ingested by the daemon in {info['ingest_s']:.2f} s;"
        " memd answers over its Unix socket (`search`, `scope: conversations`, the conversation as `project`);"
        " the baseline runs in-process in the same run.",
        "",
        table(
            ["retriever", *(f"recall@{k}" for k in KS)],
            [_row("FTS5 bm25, OR of terms (baseline)", base), _row("memd search (socket)", memd)],
        ),
        "",
        "Per category:",
        "",
        table(
            [
                "category",
                "questions",
                *(f"baseline @{k}" for k in (5, 10)),
                *(f"memd @{k}" for k in KS),
            ],
            [
                [
                    f"{c} {name}",
                    base["n"][c],
                    *(f"{base['recall'][c][k]:.3f}" for k in (5, 10)),
                    *(f"{memd['recall'][c][k]:.3f}" for k in KS),
                ]
                for c, name in CATEGORIES.items()
                if c in base["n"]
            ],
        ),  # fmt: skip
        "",
        table(
            ["latency per question (ms)", "mean", "p50", "p95", "max"],
            [
                [name, *(f"{res['latency'][p]:.2f}" for p in ("mean", "p50", "p95", "max"))]
                for name, res in (("baseline (in-process)", base), ("memd over the socket", memd))
            ],
        ),  # fmt: skip
        "",
        "Targets (issue 4): recall@10 ≥ 0.70 (floor 0.568) with p95 < 20 ms.",
        "",
        machine_line(),
    ]
    return "\n".join(lines)


# -- with recall by meaning (--semantic) -------------------------------------------------------
SEM_BLOCK = "locomo-semantic"
FOLDS = {"A (conversations 3-4)": (3, 4), "B (conversations 0-2)": (0, 1, 2)}
DEFAULT_ZH = REPO.parent / "shared" / "bench-data" / "locomo-dev-zh.json"


def chinese_questions(
    samples: list[dict[str, Any]], path: Path
) -> list[tuple[int, str, int, list[str]]]:
    """The translated category 1-4 questions (same evidence ids), as `questions` gives them."""
    by_id = {s.get("sample_id", i): i for i, s in enumerate(samples)}
    out = []
    for e in json.loads(path.read_text(encoding="utf-8")):
        ci = by_id[e["sample_id"]]
        known = {t["dia_id"] for _, _, ts in sessions_of(samples[ci]["conversation"]) for t in ts}
        ev = normalise_evidence(e["evidence"], known)
        if ev and int(e.get("category", 0)) in CATEGORIES:
            out.append((ci, str(e["question_zh"]), int(e["category"]), ev))
    return out


def wait_backfilled(
    daemon: Daemon, turns: int, timeout: float = 7200
) -> tuple[float, dict[str, Any]]:
    """Until every turn has its vector and the served index holds them all. The worker's "idle"
    alone is not enough: it looks for new turns every few seconds, and until it has looked,
    its counts are those of the turns it knew."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        sem = daemon.call("status").get("semantic", {})
        b = sem.get("backfill", {})
        stored = sem.get("vectors", {}).get("turn", 0)
        served = sem.get("index", {}).get("turn", {}).get("rows", -1)
        if b.get("state") == "idle" and not b.get("pending") and stored >= turns == served:
            return time.perf_counter() - t0, sem
        time.sleep(1.0)
    raise RuntimeError(f"backfill not done after {timeout:.0f} s:\n{daemon.log_tail()}")


def daemon_retrievers(
    daemon: Daemon,
) -> tuple[dict[str, Retriever], Callable[[], None], dict[str, int]]:
    """The daemon's `search` and `recall` (topic mode) over its socket, each scoped to the
    question's conversation; `search` also counts which rankings found its top-10 hits."""
    from memd.api.client import Client

    client = Client(daemon.sock, timeout=60).connect()
    counts: dict[str, int] = defaultdict(int)

    def search(ci: int, question: str) -> list[str]:
        res = client.call(
            "search",
            {"query": question, "scope": "conversations", "project": f"locomo-{ci}", "limit": 20},
        )
        for h in res["hits"][:10]:
            counts["+".join(h.get("found_by", ["fts"]))] += 1
        return [h["turn_id"] for h in res["hits"]]

    def recall(ci: int, question: str) -> list[str]:
        """Turns in the order `recall` lists them: sessions best first, turns by time."""
        res = client.call(
            "recall",
            {"mode": "topic", "query": question, "project": f"locomo-{ci}", "limit": 20},
        )
        return [t["turn_id"] for s in res["sessions"] for t in s.get("turns", [])]

    return {"search": search, "recall": recall}, client.close, counts


def by_fold(
    qs: list[tuple[int, str, int, list[str]]], retrieve: Retriever
) -> dict[str, dict[str, Any]]:
    """`evaluate` over each fold's questions and over all of them."""
    out = {
        name: evaluate([q for q in qs if q[0] in convs], retrieve) for name, convs in FOLDS.items()
    }
    out["all five"] = evaluate(qs, retrieve)
    return out


def context_close_turns(
    daemon: Daemon, qs: list[tuple[int, str, int, list[str]]]
) -> dict[str, float]:
    """`context` for each question (no recall keyword, all five conversations in scope): how
    often the conversation tier adds past turns by their vectors alone (`CLOSE_Z`), and how
    many of those come from the question's own conversation or are its evidence."""
    from memd.api.client import Client

    asked = with_close = turns = own = evidence = 0
    with Client(daemon.sock, timeout=60) as c:
        for ci, q, _, ev in qs:
            ctx = c.call("context", {"query": q, "budget_tokens": 2000})
            asked += 1
            close = [s for s in ctx["sections"] if s["tier"] == "conversation"
                     and "vector" in s.get("found_by", []) and "fts" not in s["found_by"]]  # fmt: skip
            with_close += bool(close)
            for s in close:
                mine = s["session_id"].startswith(f"locomo{ci}-")
                for tid in s["turn_ids"]:
                    turns += 1
                    own += mine
                    evidence += mine and tid in ev
    return {"questions": asked, "with": with_close, "turns": turns, "own": own,
            "evidence": evidence}  # fmt: skip


def measure_daemon(
    daemon: Daemon,
    en: list[tuple[int, str, int, list[str]]],
    zh: list[tuple[int, str, int, list[str]]],
    again: bool = False,
) -> dict[str, Any]:
    """Both question sets through one daemon's `search` and `recall`, by fold; every `search`
    ranking is kept (`rankings`), and with `again` every question is asked a second time and
    the rankings that came out different are counted (`changed`)."""
    retrievers, close, counts = daemon_retrievers(daemon)
    out: dict[str, Any] = {"found_by": {}, "rankings": {}, "changed": {}}
    try:
        retrievers["search"](0, "warm up the connection")
        for lang, qs in (("en", en), ("zh", zh)):
            counts.clear()
            seen: dict[str, list[str]] = {}

            def kept(ci: int, q: str, seen: dict[str, list[str]] = seen) -> list[str]:
                seen[f"{ci}\t{q}"] = ranked = retrievers["search"](ci, q)
                return ranked

            out[lang] = by_fold(qs, kept)
            out["found_by"][lang] = dict(counts)
            out["rankings"][lang] = {k: seen[k] for k in sorted(seen)}
            out[f"{lang}-recall"] = by_fold(qs, retrievers["recall"])
            if again:
                out["changed"][lang] = sum(
                    retrievers["search"](ci, q) != seen[f"{ci}\t{q}"] for ci, q, _, _ in qs
                )
    finally:
        close()
    return out


def run_semantic(args: argparse.Namespace, samples: list[dict[str, Any]]) -> str:
    """Two real daemons on the same logs, recall by meaning on (packaged model, after its
    backfill) and off, and every question through both."""
    en = questions(samples)
    zh = chinese_questions(samples, args.zh)
    with tempfile.TemporaryDirectory(prefix="memd-locomo-sem-", dir="/tmp") as tmp:
        homes = {"on": args.home or Path(tmp) / "on", "off": Path(tmp) / "off"}
        n_turns = 0
        for home in homes.values():
            n_turns = write_logs(samples, home / "logs", captions=not args.no_captions)
        base = FTS5Baseline(samples)
        res: dict[str, Any] = {"base": {"en": by_fold(en, base), "zh": by_fold(zh, base)}}
        kinds = {"on": "packaged", "off": "off"}
        info: dict[str, Any] = {"turns": n_turns, "en": len(en), "zh": len(zh)}
        info["reused"] = (homes["on"] / "data" / "index.db").exists()
        for name, home in homes.items():
            env = {"MEMD_LOGS_SOURCES": json.dumps([{"path": str(home / "logs"), "format": "jsonl"}]),
                   "MEMD_SEMANTIC_KIND": kinds[name], "MEMD_SEMANTIC_THREADS": str(args.threads)}  # fmt: skip
            with Daemon(home, **env) as daemon:
                daemon.wait_ready()
                info[f"ingest_s_{name}"] = wait_ingested(daemon, n_turns)
                if name == "on":
                    info["fill_s"], sem = wait_backfilled(daemon, n_turns)
                    info["model"] = sem.get("model", "")
                    print(f"{n_turns} turns embedded in {info['fill_s']:.0f} s", flush=True)
                info[f"load_{name}"] = [os.getloadavg()[0]]
                res[name] = measure_daemon(daemon, en, zh, again=name == "on")
                if name == "on":
                    info["context"] = context_close_turns(daemon, en)
                info[f"load_{name}"].append(os.getloadavg()[0])
    if args.dump:
        rankings = {name: res[name]["rankings"] for name in homes}
        args.dump.write_text(json.dumps(rankings, ensure_ascii=False, indent=0))
    return render_semantic(res, info)


TARGET = {"en": 0.78, "zh": 0.65}


def _verdict(lang: str, on: float, off: float) -> str:
    met = on >= TARGET[lang]
    floor = "" if on >= off else f"; below FTS only ({off:.3f})"
    return ("met" if met else "not met") + floor


def _sem_rows(res: dict[str, Any], lang: str, path: str = "") -> list[list[object]]:
    name = {"en": "English", "zh": "Chinese"}[lang]
    rows: list[list[object]] = []
    for fold in (*FOLDS, "all five"):
        on, off = res["on"][lang + path][fold], res["off"][lang + path][fold]
        held = fold in FOLDS
        rows.append([f"{name}, fold {fold}" if held else f"{name}, {fold}", on["n"][0],
                     f"{res['base'][lang][fold]['recall'][0][10]:.3f}",
                     *(f"{off['recall'][0][k]:.3f}" for k in (1, 5, 10)),
                     *(f"{on['recall'][0][k]:.3f}" for k in KS),
                     f"≥ {TARGET[lang]:.2f}" if held else "",
                     _verdict(lang, on["recall"][0][10], off["recall"][0][10]) if held else ""])  # fmt: skip
    return rows


def render_semantic(res: dict[str, Any], info: dict[str, Any]) -> str:
    head = ["questions", "n", "FTS5 plain @10", "daemon off @1", "off @5", "off @10",
            *(f"daemon on @{k}" for k in KS), "target @10", "verdict"]  # fmt: skip
    lat = {n: res[n]["en"]["all five"]["latency"] for n in ("on", "off")}
    lat_zh = res["on"]["zh"]["all five"]["latency"]

    def share(c: dict[str, int]) -> str:
        total = sum(c.values()) or 1
        return ", ".join(f"{k} {v / total:.0%}" for k, v in sorted(c.items(), key=lambda x: -x[1]))

    per_cat = _per_category(res)
    changed = res["on"].get("changed", {})
    again = (
        f"Every question was asked a second time of the daemon with the extra: the ranking came"
        f" out different for {changed.get('en', 0)} of {info['en']} English and"
        f" {changed.get('zh', 0)} of {info['zh']} Chinese questions."
        if changed
        else ""
    )
    lines = [
        "### LoCoMo retrieval with recall by meaning, through the daemon (`bench/locomo.py --semantic`)",
        "",
        f"The same {info['turns']} turns as the `locomo` block, ingested by two real daemons in"
        f" the same run: one with `semantic.kind = packaged` ({info['model']}; "
        + (
            f"the vectors its backfill worker stored in an earlier run with the same `--home`,"
            f" checked in {info['fill_s']:.0f} s"
            if info["reused"]
            else f"its backfill worker embedded them in {info['fill_s']:.0f} s"
        )
        + "), one with `semantic.kind = off` (full text"
        " only, as without the extra). Every question goes over the socket to both. `search`:"
        " `scope: conversations`, the conversation as `project`, limit 20; with the extra the"
        " daemon plans the question, runs its full-text search as typed and bridged, ranks the"
        " turn vectors and fuses them with `memd.semantic.recipe` (over turns at"
        " `memd.conversations.turn_search.TURN_WEIGHTS`). Nothing is tuned here: the"
        " constants are the modules' (`memd.semantic.recipe`, `memd.conversations.turn_search`,"
        " `memd.conversations.ranking`), and the folds only split the questions (fold A:"
        " conversations 3-4; fold B: 0-2). The weights over turns, the floor of a vector hit"
        " next to full-text evidence (`SUPPORTED_SD`, 0.5) and the evidence after fusion (a"
        " named speaker, a turn's session, a turn saying when for a question asking when, a date"
        " the question names) are values both folds' other conversations accept"
        " (`bench/locomo_tune.py`'s rule), so both folds' figures are held out for them; the"
        " feedback search (`fts:feedback`) is off: the folds accept no weight in common."
        " `python -m bench.locomo_tune --report` gives what each fold's other conversations choose"
        " and its held-out figures (docs/retrieval.md)."
        f" {info['en']} English questions, {info['zh']} Chinese ones (`locomo-dev-zh.json`, the"
        " same questions translated, same evidence) over the English conversations. FTS5 plain:"
        " the README's in-process floor.",
        "",
        "`search` (recall@k of the evidence turns):",
        "",
        table(head, _sem_rows(res, "en") + _sem_rows(res, "zh")),
        "",
        "`recall` (`mode: topic`, the conversation as `project`): the turns in the order it lists"
        " them (sessions best first, each session's turns by time):",
        "",
        table(head, _sem_rows(res, "en", "-recall") + _sem_rows(res, "zh", "-recall")),
        "",
        "`search` per category, each fold held out (recall@k; off: the same daemon without"
        " the extra):",
        "",
        table(
            ["questions", "fold", "category", "n", "off @10", "on @1", "on @5", "on @10"], per_cat
        ),
        "",
        again,
        "",
        f"`search` latency per question over the socket: English p50 {lat['off']['p50']:.1f} ms"
        f" off, {lat['on']['p50']:.1f} ms on (p95 {lat['off']['p95']:.1f} / {lat['on']['p95']:.1f}"
        f" ms); Chinese on p50 {lat_zh['p50']:.1f} ms, p95 {lat_zh['p95']:.1f} ms (each question"
        " embedded once: no cache hits). Which rankings found the top-10 hits with the extra:"
        f" English {share(res['on']['found_by']['en'])}; Chinese {share(res['on']['found_by']['zh'])}."
        f" 1-minute load average while the questions ran: on {info['load_on'][0]:.2f} →"
        f" {info['load_on'][1]:.2f}, off {info['load_off'][0]:.2f} → {info['load_off'][1]:.2f}"
        " (recall does not depend on load; the latencies do).",
        "",
        _context_line(info["context"]),
        "",
        machine_line(),
    ]
    return "\n".join(lines)


def _per_category(res: dict[str, Any]) -> list[list[object]]:
    rows: list[list[object]] = []
    for lang, name in (("en", "English"), ("zh", "Chinese")):
        for fold in FOLDS:
            on, off = res["on"][lang][fold], res["off"][lang][fold]
            rows += [[name, fold.split()[0], f"{c} {cat}", on["n"][c],
                      f"{off['recall'][c][10]:.3f}",
                      *(f"{on['recall'][c][k]:.3f}" for k in (1, 5, 10))]
                     for c, cat in CATEGORIES.items() if c in on["n"]]  # fmt: skip
    return rows


def _context_line(c: dict[str, float]) -> str:
    n = c["turns"] or 1
    return (
        f"`context` for each English question (no recall keyword; all five conversations in"
        f" scope): the conversation tier added past turns by their vectors alone for {c['with']}"
        f" of {c['questions']} questions ({c['turns']} turns: {c['own'] / n:.0%} from the"
        f" question's own conversation, {c['evidence'] / n:.0%} its evidence turns)."
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="locomo-dev.json (kept outside the repo)"
    )
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "benchmarks.md")
    ap.add_argument("--no-write", action="store_true", help="print only, do not touch --out")
    ap.add_argument(
        "--no-captions", action="store_true", help="leave image captions out of the logs"
    )
    ap.add_argument(
        "--home", type=Path, help="use (and keep) this MEMD_HOME instead of a temp folder"
    )
    ap.add_argument("--semantic", action="store_true",
                    help="recall by meaning on: both folds, English and Chinese (own block)")  # fmt: skip
    ap.add_argument("--zh", type=Path, default=DEFAULT_ZH, help="locomo-dev-zh.json (--semantic)")
    ap.add_argument("--threads", type=int, default=2, help="model threads (--semantic)")
    ap.add_argument("--dump", type=Path, help="write every `search` ranking to this JSON file"
                    " (--semantic; two runs' files diffed show what varies)")  # fmt: skip
    args = ap.parse_args(argv)
    samples = json.loads(args.data.read_text(encoding="utf-8"))
    if args.semantic:
        publish(args, SEM_BLOCK, run_semantic(args, samples))
        return 0
    qs = questions(samples)
    with tempfile.TemporaryDirectory(prefix="memd-locomo-", dir="/tmp") as tmp:
        home = args.home or Path(tmp)
        logs = home / "logs"
        n_turns = write_logs(samples, logs, captions=not args.no_captions)
        env = {"MEMD_LOGS_SOURCES": json.dumps([{"path": str(logs), "format": "jsonl"}])}
        print(
            f"{len(samples)} conversations, {n_turns} turns, {len(qs)} questions; starting the daemon in {home}"
        )
        base = evaluate(qs, FTS5Baseline(samples))
        with Daemon(home, **env) as daemon:
            daemon.wait_ready()
            ingest_s = wait_ingested(daemon, n_turns)
            retrieve, close = memd_retriever(daemon)
            try:
                retrieve(0, "warm up the connection")
                res = evaluate(qs, retrieve)
            finally:
                close()
    info = {"conversations": len(samples), "turns": n_turns, "ingest_s": ingest_s}
    publish(args, BLOCK, render(base, res, info))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
