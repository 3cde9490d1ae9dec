"""Conversation ingestion throughput: turns per second for a 100,000-turn log.

    python -m bench.ingest_bench [--turns 100000] [--out docs/benchmarks.md] [--no-write]

1. Generates a generic JSONL log (seeded): sessions of 20-200 turns spread over the last
   year, questions of 5-40 words and answers of 20-250 words, one turn in ten in Chinese, a
   few with secrets for the redactor to find. It also writes the same conversations as a
   Claude Code transcript set (one file per session, with the records Claude Code adds:
   thinking, tool calls and results, file snapshots, an assistant message split per block).
2. In a child process, the library path: `LogIngestor.ingest_files` into a fresh index
   (wall and CPU time; summaries after the last chunk are timed apart).
3. A real daemon on a fresh MEMD_HOME with an empty log folder: at t0 the log is moved into
   the folder; `status` is polled until every turn is stored and searchable (t1), then until
   no session summary is due (t2). Turns/s = turns / (t1 - t0).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.daemon import Daemon, bench_env
from bench.report import machine_line, publish, table

BLOCK = "ingest"
TARGET = 20_000
_WORDS = """
    the a to of and in is it that for you this with on be are as can not use we if or do have
    database query index memory vue react postgres migration table schema column user assistant
    session log file python rust typescript test build deploy server client socket cache token
    budget context summary journal recall trip plan port error fix bug branch commit merge review
    docker kubernetes cluster node pod service ingress config yaml json parse stream buffer queue
    worker thread async await future promise callback handler route component props state store
    render hook effect layout style css grid flex mobile desktop release version changelog
    benchmark latency throughput memory leak profile trace span metric alert dashboard invoice
    customer order payment refund shipping address kyoto nara osaka hotel flight train ticket
""".split()
_ZH = ["我想优化数据库的查询性能", "这个组件的状态管理应该怎么设计", "帮我写一个快速排序", "部署到服务器的时候报错了",
       "明天去京都的行程安排", "为什么测试在持续集成里失败", "缓存失效的策略有哪些", "把这个函数改成异步的"]  # fmt: skip


def _sentence(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(lo, hi))).capitalize() + "."


def _text(rng: random.Random, role: str) -> str:
    if rng.random() < 0.1:
        return "，".join(rng.sample(_ZH, 2)) + "。"
    if role == "user":
        text = _sentence(rng, 5, 40)
    else:
        text = " ".join(_sentence(rng, 8, 30) for _ in range(rng.randint(1, 8)))
    if rng.random() < 0.002:
        text += " export GITHUB_TOKEN=ghp_" + "".join(
            rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(36)
        )
    return text


def conversations(n_turns: int, seed: int) -> list[tuple[str, list[tuple[str, str, float]]]]:
    """(session id, [(role, text, ts)]) with `n_turns` turns in all."""
    rng = random.Random(seed)
    now = time.time()
    out: list[tuple[str, list[tuple[str, str, float]]]] = []
    made = 0
    while made < n_turns:
        size = min(rng.randint(20, 200), n_turns - made)
        start = now - rng.uniform(0, 365 * 86400)
        turns = [("user" if i % 2 == 0 else "assistant", _text(rng, "user" if i % 2 == 0 else "assistant"),
                  start + i * 30) for i in range(size)]  # fmt: skip
        out.append((f"bench-{len(out):05d}", turns))
        made += size
    return out


def write_generic(convs: list[tuple[str, list[tuple[str, str, float]]]], path: Path) -> int:
    with open(path, "w", encoding="utf-8") as f:
        for sid, turns in convs:
            for i, (role, text, ts) in enumerate(turns):
                f.write(json.dumps({"session_id": sid, "role": role, "content": text, "ts": ts, "id": f"{sid}-{i}"},
                                   ensure_ascii=False) + "\n")  # fmt: skip
    return sum(len(t) for _, t in convs)


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(ts))


def write_claude(convs: list[tuple[str, list[tuple[str, str, float]]]], folder: Path) -> int:
    """Claude Code transcripts: each answer is a thinking block, a text block and, every third
    turn, a tool call and its result, each a record of its own, as Claude Code writes them."""
    (folder / "-home-user-bench").mkdir(parents=True, exist_ok=True)
    for sid, turns in convs:
        lines: list[dict[str, Any]] = []
        env = {"sessionId": sid, "cwd": "/home/user/bench", "version": "2.1.202", "gitBranch": "main",
               "isSidechain": False, "userType": "external"}  # fmt: skip
        parent = None
        for i, (role, text, ts) in enumerate(turns):
            uid = f"{sid}-{i}"
            if role == "user":
                lines.append({"type": "file-history-snapshot", "messageId": uid, "snapshot": {}})
                lines.append({**env, "type": "user", "uuid": uid, "parentUuid": parent, "timestamp": _iso(ts),
                              "message": {"role": "user", "content": text}})  # fmt: skip
                parent = uid
                continue
            mid = f"msg_{uid}"
            blocks: list[dict[str, Any]] = [
                {"type": "thinking", "thinking": "Let me think.", "signature": "c2ln"}
            ]
            if i % 6 == 1:
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": f"toolu_{uid}",
                        "name": "Read",
                        "input": {"file_path": "/x"},
                    }
                )
            blocks.append({"type": "text", "text": text})
            for j, block in enumerate(blocks):
                rec_id = f"{uid}-{j}"
                lines.append({**env, "type": "assistant", "uuid": rec_id, "parentUuid": parent, "timestamp": _iso(ts),
                              "requestId": f"req_{uid}", "message": {"id": mid, "type": "message", "role": "assistant",
                              "model": "claude-sonnet-4-6", "content": [block], "usage": {"input_tokens": 10}}})  # fmt: skip
                parent = rec_id
                if block["type"] == "tool_use":
                    lines.append({**env, "type": "user", "uuid": f"{rec_id}-r", "parentUuid": parent,
                                  "timestamp": _iso(ts), "toolUseResult": {"type": "text"},
                                  "message": {"role": "user", "content": [{"type": "tool_result",
                                  "tool_use_id": block["id"], "content": "line\n" * 40}]}})  # fmt: skip
                    parent = f"{rec_id}-r"
        path = folder / "-home-user-bench" / f"{sid}.jsonl"
        path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return sum(len(t) for _, t in convs)


# -- child: the library path ------------------------------------------------------------------
def child(home: Path, source: Path, fmt: str) -> dict[str, Any]:
    from memd.conversations.logs import LogIngestor, LogSource
    from memd.core import settings
    from memd.db import Store

    s = settings.load(env=bench_env(home))
    store = Store.open(s.db_path)
    ing = LogIngestor(store, [LogSource(source, fmt)])
    files = LogSource(source, fmt).files()
    t0, c0 = time.perf_counter(), time.process_time()
    reports = ing.ingest_files(
        [(f, fmt) for f in files], summaries=False
    )  # as the daemon's scan does
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    t1 = time.perf_counter()
    ing.refresh_summaries(s for r in reports for s in r.report.sessions)
    summaries = time.perf_counter() - t1
    store.close()
    return {"added": sum(r.added for r in reports), "wall_s": wall, "cpu_s": cpu, "summaries_s": summaries,
            "bytes": sum(os.path.getsize(f) for f in files)}  # fmt: skip


def run_child(home: Path, source: Path, fmt: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "bench.ingest_bench", "--child", str(home), str(source), fmt],
        env=bench_env(home), capture_output=True, text=True, check=True,
    )  # fmt: skip
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


# -- the daemon --------------------------------------------------------------------------------
def daemon_run(home: Path, log: Path, expected: int) -> dict[str, float]:
    folder = home / "logs"
    folder.mkdir(parents=True)
    env = {"MEMD_LOGS_SOURCES": json.dumps([{"path": str(folder), "format": "jsonl"}])}
    with Daemon(home, **env) as d:
        d.wait_ready()
        t0 = time.perf_counter()
        os.replace(log, folder / log.name)
        t1 = t2 = 0.0
        while time.perf_counter() - t0 < 600:
            logs = d.call("status")["logs"]
            now = time.perf_counter()
            if not t1 and logs["turns"] >= expected:
                t1 = now
            if t1 and logs["summaries_due"] == 0:
                t2 = now
                break
            time.sleep(0.1)  # status counts every turn: polling it harder slows what it measures
        if not t2:
            raise RuntimeError(f"the daemon did not finish:\n{d.log_tail()}")
        hits = d.call(
            "search", {"query": "postgres migration", "scope": "conversations", "limit": 5}
        )["hits"]
        if not hits:
            raise RuntimeError("ingested turns are not searchable")
    return {"turns_s": t1 - t0, "summaries_s": t2 - t0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--turns", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument(
        "--repeat", type=int, default=3, help="runs of the generic log (library and daemon)"
    )
    ap.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md",
    )
    ap.add_argument("--no-write", action="store_true", help="print only, do not touch --out")
    ap.add_argument(
        "--child", nargs=3, metavar=("HOME", "SOURCE", "FORMAT"), help=argparse.SUPPRESS
    )
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(Path(args.child[0]), Path(args.child[1]), args.child[2])))
        return 0
    convs = conversations(args.turns, args.seed)
    rows = []
    with tempfile.TemporaryDirectory(prefix="memd-ingest-", dir="/tmp") as tmp:
        base = Path(tmp)
        log = base / "bench.jsonl"
        n = write_generic(convs, log)
        claude = base / "claude"
        write_claude(convs, claude)
        print(
            f"{n:,} turns in {len(convs):,} sessions; generic log {log.stat().st_size / 1e6:.1f} MB"
        )
        libs = []
        for i in range(args.repeat):
            libs.append(run_child(base / f"lib{i}", log, "jsonl"))
            print(
                f"  library run {i + 1}: {libs[-1]['added'] / libs[-1]['wall_s']:,.0f} turns/s",
                flush=True,
            )
        lib_cc = run_child(base / "lib-cc", claude, "claude-code")
        dms = []
        for i in range(args.repeat):
            moved = base / f"run{i}.jsonl"
            shutil.copyfile(log, moved)
            dms.append(daemon_run(base / f"daemon{i}", moved, n))
            print(f"  daemon run {i + 1}: {n / dms[-1]['turns_s']:,.0f} turns/s", flush=True)
    libs.sort(key=lambda r: r["wall_s"])
    lib = libs[len(libs) // 2]
    dms.sort(key=lambda r: r["turns_s"])
    dm = dms[len(dms) // 2]
    for name, r in ((f"library, generic JSONL (one file), median of {len(libs)}", lib),
                    ("library, Claude Code transcripts (one file per session)", lib_cc)):  # fmt: skip
        rows.append([name, f"{r['bytes'] / 1e6:.1f} MB", f"{r['added']:,}", f"{r['wall_s']:.2f}",
                     f"{r['added'] / r['wall_s']:,.0f}", f"{r['added'] / r['cpu_s']:,.0f}",
                     f"{r['summaries_s']:.2f}"])  # fmt: skip
    every = ", ".join(f"{r['added'] / r['wall_s']:,.0f}" for r in libs)
    every_dm = ", ".join(f"{n / r['turns_s']:,.0f}" for r in dms)
    ok = n / dm["turns_s"] >= TARGET and lib["added"] / lib["wall_s"] >= TARGET
    body = "\n".join([
        "### Conversation ingestion",
        "",
        f"{n:,} generated turns in {len(convs):,} sessions spread over the last year (seed {args.seed}),"
        " redacted, stored with their sessions and indexed for search; the Claude Code set holds the same"
        " turns with the records Claude Code adds around them (thinking, tool calls and results, snapshots,"
        " split assistant messages). Wall time includes parsing, redaction, SQLite writes and FTS indexing;"
        " session summaries are refreshed after the last chunk and are not counted in turns/s.",
        "",
        table(["path", "log size", "turns", "seconds", "turns/s (wall)", "turns per CPU-second",
               "then summaries (s)"], rows),  # fmt: skip
        "",
        f"Every library run, turns/s: {every}.",
        "",
        table([f"daemon (log moved into a watched folder), median of {len(dms)}", "seconds", "turns/s"], [
            ["every turn stored and searchable", f"{dm['turns_s']:.2f}", f"{n / dm['turns_s']:,.0f}"],
            ["every session summary refreshed too", f"{dm['summaries_s']:.2f}", f"{n / dm['summaries_s']:,.0f}"],
        ]),  # fmt: skip
        "",
        f"Every daemon run, turns/s until all stored and searchable: {every_dm}.",
        "",
        f"Target (issue 4): ≥ {TARGET:,} turns/s for a 100,000-turn log — "
        + ("met by the medians of both paths." if ok else "**not met** by the medians."),
        "",
        machine_line(),
    ])  # fmt: skip
    publish(args, BLOCK, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
