"""FTS4 + sqlite-fts4 `rank_bm25` against FTS5 `bm25()` on the same sections and queries.

    python -m bench.fts_compare [--files 10000] [--queries 200] [--out docs/benchmarks.md] [--no-write]

The generated corpus is parsed with memd's own parser; every `##` section (heading, body, both
passed through `memd.core.text.index_text`, the CJK-bigram transform memd indexes) is loaded into

  (a) FTS4, ``tokenize=porter`` (FTS4 cannot stack porter on unicode61), ranked with
      sqlite-fts4: ``rank_bm25(matchinfo(t, 'pcnalx'))`` (a Python function per matching row);
  (b) FTS5, ``tokenize='porter unicode61 remove_diacritics 2'`` (memd's table), ranked with the
      built-in ``bm25(t)``.

Both are unweighted (sqlite-fts4's rank_bm25 takes no column weights) and use the same
1–3 term OR queries built by memd's own `fts_query` quoting. Reported: build time and size,
median/p95 top-10 query time, the FTS4/FTS5 ratio, and result agreement (mean Jaccard of the
top-10 id sets, top-1 agreement).
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import corpus
from bench.report import add_common_args, machine_line, pct, publish, table

BLOCK = "fts"


def load_sections(root: Path) -> list[tuple[int, str, str]]:
    from memd.core.text import index_text
    from memd.memory.parse import parse_markdown

    out: list[tuple[int, str, str]] = []
    for p in sorted(root.rglob("*.md")):
        parsed = parse_markdown(p.read_text(encoding="utf-8"), fallback_title=p.stem)
        for s in parsed.sections:
            out.append((len(out) + 1, index_text(s.heading), index_text(s.text)))
    return out


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA cache_size = -16000")
    return conn


def build(
    path: Path, ddl: str, insert: str, rows: Sequence[tuple[int | str, ...]]
) -> tuple[sqlite3.Connection, float]:
    conn = _connect(path)
    conn.execute(ddl)
    t = time.perf_counter()
    conn.execute("BEGIN")
    conn.executemany(insert, rows)
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return conn, time.perf_counter() - t


FTS4_RANKED = (
    "SELECT docid, rank_bm25(matchinfo(t4, 'pcnalx')) AS score FROM t4"
    " WHERE t4 MATCH ? ORDER BY score LIMIT 10"
)
FTS4_UNRANKED = "SELECT docid FROM t4 WHERE t4 MATCH ? LIMIT 10"
FTS5_RANKED = "SELECT rowid, bm25(t5) AS score FROM t5 WHERE t5 MATCH ? ORDER BY score LIMIT 10"


def run(args: argparse.Namespace) -> str:
    import sqlite_fts4

    from memd.core.text import fts_term

    tmp = Path(tempfile.mkdtemp(prefix="memd-bench-fts-"))
    try:
        t = time.perf_counter()
        info = corpus.generate(tmp / "memory", args.files, seed=args.seed)
        rows = load_sections(tmp / "memory")
        print(f"corpus: {info.summary()}; {len(rows):,} sections parsed in {time.perf_counter() - t:.1f}s",
              flush=True)  # fmt: skip

        c4, build4 = build(
            tmp / "fts4.db",
            "CREATE VIRTUAL TABLE t4 USING fts4(heading, body, tokenize=porter)",
            "INSERT INTO t4(docid, heading, body) VALUES (?,?,?)",
            rows,
        )
        sqlite_fts4.register_functions(c4)
        c5, build5 = build(
            tmp / "fts5.db",
            "CREATE VIRTUAL TABLE t5 USING fts5(heading, body,"
            " tokenize='porter unicode61 remove_diacritics 2')",
            "INSERT INTO t5(rowid, heading, body) VALUES (?,?,?)",
            rows,
        )
        size4 = (tmp / "fts4.db").stat().st_size / 1e6
        size5 = (tmp / "fts5.db").stat().st_size / 1e6
        print(
            f"build: FTS4 {build4:.2f}s ({size4:.1f} MB), FTS5 {build5:.2f}s ({size5:.1f} MB)",
            flush=True,
        )

        qs = [" OR ".join(fts_term(w) for w in ts) for ts in corpus.term_queries(args.queries)]
        # Warm both page caches and statement caches.
        for q in qs:
            c4.execute(FTS4_RANKED, (q,)).fetchall()
            c5.execute(FTS5_RANKED, (q,)).fetchall()
        times: dict[str, list[float]] = {"fts4": [], "fts4_unranked": [], "fts5": []}
        res4: list[list[int]] = []
        res5: list[list[int]] = []
        matches: list[int] = []
        heading_hits = [0, 0]  # top-10 hits whose heading matches the query: FTS4, FTS5
        for rep in range(args.repeat):
            for q in qs:
                t = time.perf_counter()
                r4 = c4.execute(FTS4_RANKED, (q,)).fetchall()
                times["fts4"].append(time.perf_counter() - t)
                t = time.perf_counter()
                r5 = c5.execute(FTS5_RANKED, (q,)).fetchall()
                times["fts5"].append(time.perf_counter() - t)
                t = time.perf_counter()
                c4.execute(FTS4_UNRANKED, (q,)).fetchall()
                times["fts4_unranked"].append(time.perf_counter() - t)
                if rep == 0:
                    res4.append([r[0] for r in r4])
                    res5.append([r[0] for r in r5])
                    matches.append(
                        c5.execute("SELECT count(*) FROM t5 WHERE t5 MATCH ?", (q,)).fetchone()[0]
                    )
                    in_heading = {
                        r[0]
                        for r in c5.execute(
                            "SELECT rowid FROM t5 WHERE t5 MATCH ?", (f"heading : ({q})",)
                        )
                    }
                    heading_hits[0] += sum(x in in_heading for x in res4[-1])
                    heading_hits[1] += sum(x in in_heading for x in res5[-1])
        c4.close()
        c5.close()
        agree = agreement(res4, res5)
        agree["heading_share"] = (
            heading_hits[0] / max(1, sum(map(len, res4))),
            heading_hits[1] / max(1, sum(map(len, res5))),
        )
        print(f"agreement: {agree}", flush=True)
        agree1 = one_column_agreement(tmp, rows, qs)
        print(f"agreement, one column: {agree1}", flush=True)
        return render(args, info, len(rows), build4, build5, size4, size5, times, agree, agree1,
                      matches, qs)  # fmt: skip
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def one_column_agreement(
    tmp: Path, rows: list[tuple[int, str, str]], qs: list[str]
) -> dict[str, Any]:
    """Agreement when heading and body share one column: isolates the rankers' column handling."""
    import sqlite_fts4

    one = [(i, h + "\n" + b) for i, h, b in rows]
    c4, _ = build(tmp / "fts4-one.db", "CREATE VIRTUAL TABLE t4 USING fts4(body, tokenize=porter)",
                  "INSERT INTO t4(docid, body) VALUES (?,?)", one)  # fmt: skip
    sqlite_fts4.register_functions(c4)
    c5, _ = build(
        tmp / "fts5-one.db",
        "CREATE VIRTUAL TABLE t5 USING fts5(body, tokenize='porter unicode61 remove_diacritics 2')",
        "INSERT INTO t5(rowid, body) VALUES (?,?)",
        one,
    )
    a = [[r[0] for r in c4.execute(FTS4_RANKED, (q,))] for q in qs]
    b = [[r[0] for r in c5.execute(FTS5_RANKED, (q,))] for q in qs]
    # Queries whose 10th and 11th FTS5 scores tie: the top-10 set is then arbitrary at its edge.
    ties = 0
    for q in qs:
        sc = [r[1] for r in c5.execute(FTS5_RANKED.replace("LIMIT 10", "LIMIT 11"), (q,))]
        ties += len(sc) == 11 and abs(sc[9] - sc[10]) < 1e-9
    c4.close()
    c5.close()
    return {**agreement(a, b), "ties_at_10": ties}


def agreement(a: list[list[int]], b: list[list[int]]) -> dict[str, Any]:
    jac, top1, both = [], 0, 0
    for x, y in zip(a, b, strict=True):
        if not x and not y:
            continue
        both += 1
        sx, sy = set(x), set(y)
        jac.append(len(sx & sy) / len(sx | sy))
        top1 += bool(x and y and x[0] == y[0])
    return {
        "queries_with_hits": both,
        "jaccard": statistics.fmean(jac) if jac else float("nan"),
        "top1": top1 / both if both else float("nan"),
        "identical_sets": sum(1 for j in jac if j == 1.0) / both if both else float("nan"),
        "same_count": sum(1 for x, y in zip(a, b, strict=True) if len(x) == len(y)) / len(a),
    }


def render(args: argparse.Namespace, info: corpus.CorpusInfo, n_sections: int, build4: float,
           build5: float, size4: float, size5: float, times: dict[str, list[float]],
           agree: dict[str, Any], agree1: dict[str, Any], matches: list[int],
           qs: list[str]) -> str:  # fmt: skip
    def ms(xs: list[float], p: float) -> float:
        return pct(xs, p) * 1000

    m4, m5, mu = ms(times["fts4"], 50), ms(times["fts5"], 50), ms(times["fts4_unranked"], 50)
    p4, p5, pu = ms(times["fts4"], 95), ms(times["fts5"], 95), ms(times["fts4_unranked"], 95)
    rows = [
        ("index build (insert all sections, one transaction)", f"{build4:.2f} s", f"{build5:.2f} s",
         f"{build4 / build5:.2f}×"),
        ("index size on disk", f"{size4:.1f} MB", f"{size5:.1f} MB", f"{size4 / size5:.2f}×"),
        ("top-10 ranked query, median", f"{m4:.2f} ms", f"{m5:.2f} ms", f"**{m4 / m5:.1f}×**"),
        ("top-10 ranked query, p95", f"{p4:.2f} ms", f"{p5:.2f} ms", f"**{p4 / p5:.1f}×**"),
        ("top-10 ranked query, max", f"{max(times['fts4']) * 1000:.1f} ms",
         f"{max(times['fts5']) * 1000:.1f} ms", ""),
        ("FTS4 MATCH without ranking (first 10 rows), median / p95", f"{mu:.2f} / {pu:.2f} ms", "—", ""),
    ]  # fmt: skip
    agree_rows = [
        ("queries with at least one hit", f"{agree['queries_with_hits']} of {len(qs)}",
         f"{agree1['queries_with_hits']} of {len(qs)}"),
        ("mean Jaccard of the top-10 id sets", f"{agree['jaccard']:.3f}", f"{agree1['jaccard']:.3f}"),
        ("top-10 sets identical", f"{agree['identical_sets']:.1%}", f"{agree1['identical_sets']:.1%}"),
        ("top-1 agreement", f"{agree['top1']:.1%}", f"{agree1['top1']:.1%}"),
        ("top-10 hits whose heading matches the query: FTS4 / FTS5",
         f"{agree['heading_share'][0]:.0%} / {agree['heading_share'][1]:.0%}", "—"),
        ("queries whose FTS5 10th and 11th scores tie", "", str(agree1["ties_at_10"])),
    ]  # fmt: skip
    body = [
        "### FTS4 + sqlite-fts4 vs FTS5 (`bench/fts_compare.py`)",
        "",
        f"Corpus: {info.summary()} (seed {args.seed}) → {n_sections:,} sections, loaded into both"
        " tables after memd's CJK-bigram transform. FTS4 uses `tokenize=porter` (ASCII case folding;"
        " FTS4 cannot stack porter on unicode61), FTS5 uses memd's"
        " `porter unicode61 remove_diacritics 2`. Ranking: FTS4 `rank_bm25(matchinfo(t4, 'pcnalx'))`"
        " from sqlite-fts4 vs FTS5 `bm25(t5)`, both unweighted, `ORDER BY score LIMIT 10`.",
        f"{len(qs)} queries of 1–3 terms drawn from the corpus vocabulary (10% Chinese words), joined"
        f" with OR (memd's quoting); each timed {args.repeat}× after a warm-up pass"
        f" ({len(times['fts5']):,} samples per engine). Matching rows per query: median"
        f" {statistics.median(matches):,.0f}, p95 {pct(matches, 95):,.0f}, max {max(matches):,}.",
        "",
        table(["measure", "FTS4 + rank_bm25", "FTS5 bm25()", "FTS4 / FTS5"], rows),
        "",
        table(
            [
                "result agreement",
                "heading + body columns (as memd indexes)",
                "one column (heading and body concatenated)",
            ],
            agree_rows,
        ),  # fmt: skip
        "",
        "Why FTS5: sqlite-fts4 scores every matching row in Python (decode `matchinfo`, loop over"
        " phrases × columns), so query time grows with the number of matching rows rather than with"
        " the 10 rows returned; FTS5's bm25 runs in C inside the query. FTS4's MATCH itself is not the"
        " problem (first 10 unranked rows in well under a millisecond): the cost is the Python ranker.",
        "",
        "Why the rankings disagree on two columns: sqlite-fts4's `rank_bm25` scores each column as"
        " its own document (per-column IDF and per-column length normalisation, summed), while FTS5"
        " pools the columns into one document. A term that is rare among headings gets a large"
        " heading-column IDF, so heading matches dominate FTS4's top 10 (see the heading-match"
        " shares above). With a single column the two agree closely (second column above);"
        " what remains is tokenizer differences (FTS4 porter keeps non-ASCII punctuation as"
        " tokens) and ties at the 10th place. sqlite-fts4 also clamps IDF at 0 where FTS5 floors it"
        " at 1e-6. memd weights headings 2× in FTS5 (`bm25(sections_fts, 2.0, 1.0)`) to get a"
        " controlled version of the heading boost.",
        "",
        machine_line(),
    ]
    return "\n".join(body)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_common_args(ap, files=10_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3, help="timed passes over the query set")
    args = ap.parse_args()
    publish(args, BLOCK, run(args))


if __name__ == "__main__":
    main()
