"""Reading Codex CLI, Gemini CLI and OpenCode conversations into memd, next to Claude Code's:
turns per second for the same generated conversations in each format.

    python -m bench.assistant_logs [--turns 20000] [--out docs/benchmarks.md] [--no-write]

The conversations are `bench.ingest_bench.conversations` (seeded), written as each assistant
writes them (`tests/assistants.py`: what the CLIs wrote here, with what they add around what was
said — Codex's injected AGENTS.md and environment parts, developer messages, events repeating
each turn, encrypted reasoning, tool calls and output; Gemini's session context and `$set`
lines; OpenCode's step, reasoning and tool parts in its database). Each format is read by
`LogIngestor` into a fresh index (parse, redact, SQLite writes and full-text indexing, as the
daemon's first scan; summaries not counted), timed in the order A..F F..A in one process, so a
drift of the shared machine falls on every format alike; the figure is the median of the two.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.ingest_bench import conversations, write_claude
from bench.report import machine_line, publish, table
from tests.assistants import (
    SCHEMA,
    Said,
    codex_injected,
    codex_meta,
    codex_tools,
    codex_turn,
    gemini_document,
    gemini_header,
    gemini_message,
    jsonl,
    opencode_storage,
)

BLOCK = "assistant-logs"
Conversations = list[tuple[str, list[tuple[str, str, float]]]]


def write_codex(convs: Conversations, folder: Path) -> int:
    """One rollout per session, as Codex CLI 0.171 writes it."""
    n = 0
    for sid, turns in convs:
        session = str(uuid.uuid5(uuid.NAMESPACE_URL, sid))
        path = folder / "2026" / "09" / "21" / f"rollout-2026-09-21T10-00-00-{session}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        records = [
            codex_meta(session, "/home/user/bench", turns[0][2]),
            *codex_injected("/home/user/bench"),
        ]
        for i, (role, text, ts) in enumerate(turns):
            records += codex_turn(Said(role, text, ts), msg_id=f"msg_{sid}_{i}")
            if role == "user" and i % 3 == 0:
                records += codex_tools(ts)
            n += 1
        path.write_text(jsonl(records), encoding="utf-8")
    return n


def write_gemini(convs: Conversations, folder: Path, *, document: bool) -> int:
    """One chat per session in a project folder: JSONL (today) or one JSON document (before)."""
    chats = folder / "bench" / "chats"
    chats.mkdir(parents=True, exist_ok=True)
    (folder / "bench" / ".project_root").write_text("/home/user/bench")
    n = 0
    for k, (sid, turns) in enumerate(convs):
        messages = [
            gemini_message(Said(role, text, ts), f"{sid}-{i}")
            for i, (role, text, ts) in enumerate(turns)
        ]
        n += len(messages)
        name = f"session-2026-09-21T10-00-{k:08x}"
        if document:
            (chats / f"{name}.json").write_text(gemini_document(sid, messages), encoding="utf-8")
            continue
        lines: list[dict[str, Any]] = [gemini_header(sid)]
        for m in messages:
            lines += [m, {"$set": {"lastUpdated": m["timestamp"]}}]
        (chats / f"{name}.jsonl").write_text(jsonl(lines), encoding="utf-8")
    return n


def write_opencode(convs: Conversations, folder: Path) -> int:
    """Every session in one `opencode.db`, with the parts OpenCode 1.18 writes around a reply."""
    folder.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(folder / "opencode.db")
    db.executescript(SCHEMA)
    n = 0
    sessions, messages, parts = [], [], []
    for sid, turns in convs:
        sessions.append((sid, "global", "s", "/home/user/bench", f"New session - {sid}", "1.18.33",
                         int(turns[0][2] * 1000), int(turns[-1][2] * 1000)))  # fmt: skip
        for i, (role, text, ts) in enumerate(turns):
            ms, mid = int(ts * 1000), f"msg_{sid}_{i:04d}"
            messages.append((mid, sid, ms, ms, json.dumps({"role": role, "time": {"created": ms}})))
            bodies: list[dict[str, Any]] = [{"type": "text", "text": text}]
            if role == "assistant":
                bodies = [{"type": "step-start"}, {"type": "reasoning", "text": "Thinking."}, *bodies,
                          {"type": "step-finish", "reason": "stop"}]  # fmt: skip
            for j, body in enumerate(bodies):
                parts.append((f"prt_{sid}_{i:04d}_{j}", mid, sid, ms, ms + j, json.dumps(body)))
            n += 1
    db.executemany("INSERT INTO session(id, project_id, slug, directory, title, version, time_created,"
                   " time_updated) VALUES (?,?,?,?,?,?,?,?)", sessions)  # fmt: skip
    db.executemany("INSERT INTO message VALUES (?,?,?,?,?)", messages)
    db.executemany("INSERT INTO part VALUES (?,?,?,?,?,?)", parts)
    db.commit()
    db.close()
    return n


def write_opencode_storage(convs: Conversations, folder: Path) -> int:
    """The same as part files of OpenCode's storage folder (before 1.2)."""
    n = 0
    for sid, turns in convs:
        opencode_storage(folder, sid, "/home/user/bench", [Said(r, t, ts) for r, t, ts in turns])
        n += len(turns)
    return n


def reader(fmt: str, folder: Path, expected: int) -> Callable[[], float]:
    """Seconds to read `folder` in format `fmt` into a fresh index (checked: every turn read)."""
    from memd.conversations.logs import LogIngestor
    from memd.conversations.sources import LogSource
    from memd.db import Store

    def run() -> float:
        with tempfile.TemporaryDirectory(prefix="memd-bench-ix-") as ix:
            store = Store.open(Path(ix) / "index.db")
            try:
                ing = LogIngestor(store, [LogSource(folder, fmt)])
                t0 = time.perf_counter()
                ing.ingest_files(
                    [(p, fmt) for p in LogSource(folder, fmt).files()], summaries=False
                )
                took = time.perf_counter() - t0
                got = store.read().execute("SELECT count(*) FROM turns").fetchone()[0]
            finally:
                store.close()
        if got != expected:
            raise RuntimeError(f"{fmt}: expected {expected} turns, read {got}")
        return took

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
    args = ap.parse_args()
    convs = conversations(args.turns, args.seed)
    with tempfile.TemporaryDirectory(prefix="memd-bench-") as tmp:
        root = Path(tmp)
        written = {
            "claude-code": (root / "claude", write_claude(convs, root / "claude")),
            "codex": (root / "codex", write_codex(convs, root / "codex")),
            "gemini (JSONL)": (root / "gemini", write_gemini(convs, root / "gemini", document=False)),
            "gemini-chat (JSON)": (root / "gemini-doc", write_gemini(convs, root / "gemini-doc", document=True)),
            "opencode-db": (root / "opencode", write_opencode(convs, root / "opencode")),
            "opencode (storage files)": (root / "oc-files" / "storage",
                                         write_opencode_storage(convs, root / "oc-files")),
        }  # fmt: skip
        formats = {"claude-code": "claude-code", "codex": "codex", "gemini (JSONL)": "gemini",
                   "gemini-chat (JSON)": "gemini-chat", "opencode-db": "opencode-db",
                   "opencode (storage files)": "opencode"}  # fmt: skip
        runs = {name: reader(formats[name], *written[name]) for name in written}
        order = list(runs) + list(reversed(runs))
        seconds: dict[str, list[float]] = {name: [] for name in runs}
        for name in order:
            seconds[name].append(runs[name]())
        rows = []
        for name in runs:
            folder, n = written[name]
            median = statistics.median(seconds[name])
            rows.append([name, f"{size_mb(folder):.1f} MB", f"{n:,}", f"{median:.2f}", f"{n / median:,.0f}",
                         ", ".join(f"{n / s:,.0f}" for s in seconds[name])])  # fmt: skip
    body = "\n".join([
        "### Reading Codex CLI, Gemini CLI and OpenCode into the index",
        "",
        f"{args.turns:,} generated turns (seed {args.seed}) written as each assistant writes them, with what it "
        "adds around them (Codex: injected instructions and environment, developer messages, events repeating "
        "each turn, encrypted reasoning, tool calls and output; Gemini CLI: the session context and `$set` "
        "lines; OpenCode: step, reasoning and tool parts in its database). Read by `LogIngestor` into a fresh "
        "index each time (parse, redact, write, index; summaries not counted), each format twice in the order "
        "A–F F–A in one process, the median shown. `python -m bench.assistant_logs`.",
        "",
        table(["format", "files", "turns", "seconds (median)", "turns/s", "both runs, turns/s"], rows),
        "",
        "OpenCode's parts are read as parts of their message (each text part stored as a part of its turn, so a part written again as it streams replaces its copy); its storage folder (before 1.2) is one small JSON file per part, each read with its message's and session's files: the slowest to read, and read once.",
        "",
        machine_line(),
    ])  # fmt: skip
    publish(args, BLOCK, body)


if __name__ == "__main__":
    main()
