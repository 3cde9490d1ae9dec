"""Idle cost of the daemon: RSS after indexing a 10,000-file tree, CPU and wakeups while idle.

    python -m bench.idle_bench [--files 10000] [--logs 200] [--idle 60] [--settle 120] [--out docs/benchmarks.md] [--no-write]

1. Generates N Markdown files (default 10,000) with `bench.corpus` in a temporary MEMD_HOME,
   and `--logs` Claude Code transcripts (default 200) in a projects folder the daemon tails,
   as on a machine where Claude Code has been used for a while.
2. Starts a real daemon (`python -m memd serve`) on it and waits until the socket answers
   (the startup index is done): RSS after indexing.
3. Waits until the daemon has been quiet (< 20 ms CPU per second) for 5 s in a row, at most
   `--settle` s: background start-up work (reading the logs, first job runs) lands here. Then
   touches nothing for `--idle` seconds and reads the daemon's CPU time and context switches
   before and after. Target: < 0.5 s CPU per minute. Context switches per second show busy
   polling even when each wakeup is cheap.
4. Stops the daemon with SIGTERM (exit code reported) and writes the `idle` block of
   docs/benchmarks.md; the other blocks are left alone.
Everything lives in a temp folder that is removed afterwards.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import corpus
from bench.daemon import Daemon, proc_mem
from bench.report import add_common_args, machine_line, publish, table, verdict

BLOCK = "idle"
TARGET_CPU_PER_MIN = 0.5
TARGET_RSS_MB = 80.0


def _context_switches(pid: int) -> int | None:
    """Context switches of every thread (psutil and /proc/<pid>/status count the main one only)."""
    total = 0
    tasks = list(Path(f"/proc/{pid}/task").glob("*"))
    if not tasks:
        return None
    for task in tasks:
        try:
            for line in (task / "status").read_text().splitlines():
                if line.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")):
                    total += int(line.split()[1])
        except OSError:
            continue  # the thread ended between listing and reading
    return total


def sample(pid: int) -> dict[str, Any]:
    """CPU seconds, context switches and per-thread CPU of a process, right now."""
    import psutil

    p = psutil.Process(pid)
    with p.oneshot():
        cpu = p.cpu_times()
        threads = {t.id: t.user_time + t.system_time for t in p.threads()}
        ctx = _context_switches(pid)
        if ctx is None:
            c = p.num_ctx_switches()
            ctx = c.voluntary + c.involuntary
    return {"t": time.monotonic(), "cpu_s": cpu.user + cpu.system, "ctx": ctx, "threads": threads}


def measure_idle(pid: int, seconds: float) -> dict[str, Any]:
    """CPU, wakeups and the busiest threads of `pid` over `seconds` of doing nothing to it."""
    a = sample(pid)
    time.sleep(seconds)
    b = sample(pid)
    span = b["t"] - a["t"]
    cpu = b["cpu_s"] - a["cpu_s"]
    per_thread = sorted(
        (t - a["threads"].get(tid, 0.0) for tid, t in b["threads"].items()), reverse=True
    )
    return {
        "seconds": span,
        "cpu_s": cpu,
        "cpu_per_min": cpu * 60 / span,
        "wakeups_per_s": (b["ctx"] - a["ctx"]) / span,
        "threads": len(b["threads"]),
        "top_threads": per_thread[:3],
    }


def write_transcripts(root: Path, sessions: int, turns: int = 20, seed: int = 42) -> int:
    """`sessions` Claude Code transcripts (`<root>/<project>/<session>.jsonl`); returns bytes."""
    rng = random.Random(seed)
    words = corpus.TECH + corpus.TOPICS
    total = 0
    for i in range(sessions):
        project = f"-home-user-{corpus.PROJECTS[i % len(corpus.PROJECTS)]}"
        sid = f"5f1c2d3e-0000-4000-8000-{i:012d}"
        lines, parent = [], None
        for t in range(turns):
            role = "user" if t % 2 == 0 else "assistant"
            text = " ".join(rng.choice(words) for _ in range(rng.randint(8, 40)))
            content: Any = text if role == "user" else [{"type": "text", "text": text}]
            uuid = f"{i:06d}-{t:04d}"
            lines.append(json.dumps({
                "parentUuid": parent, "isSidechain": False, "userType": "external",
                "cwd": f"/home/user/{project}", "sessionId": sid, "version": "2.1.202", "type": role,
                "message": {"role": role, "content": content}, "uuid": uuid,
                "timestamp": f"2026-07-{1 + i % 28:02d}T12:{t // 60:02d}:{t % 60:02d}.000Z",
            }))  # fmt: skip
            parent = uuid
        path = root / project / f"{sid}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        data = ("\n".join(lines) + "\n").encode()
        path.write_bytes(data)
        total += len(data)
    return total


def settle(pid: int, limit: float, quiet_cpu: float = 0.02, quiet_s: int = 5) -> dict[str, Any]:
    """Wait until `pid` used < `quiet_cpu` s of CPU in each of `quiet_s` seconds in a row."""
    first = prev = sample(pid)
    quiet = 0
    while quiet < quiet_s and time.monotonic() - first["t"] < limit:
        time.sleep(1.0)
        cur = sample(pid)
        quiet = quiet + 1 if cur["cpu_s"] - prev["cpu_s"] < quiet_cpu else 0
        prev = cur
    return {
        "seconds": prev["t"] - first["t"],
        "cpu_s": prev["cpu_s"] - first["cpu_s"],
        "quiet": quiet >= quiet_s,
    }


def run(args: argparse.Namespace) -> str:
    tmp = Path(tempfile.mkdtemp(prefix="memd-idle-"))
    home = tmp / "home"
    d: Daemon | None = None
    try:
        print(f"generating {args.files:,} files …", flush=True)
        info = corpus.generate(home / "memory", args.files, seed=args.seed)
        print(f"  {info.summary()}", flush=True)
        logs = home / "claude-projects"
        log_bytes = write_transcripts(logs, args.logs)
        print(f"  {args.logs} Claude Code transcripts, {log_bytes / 1e6:.1f} MB", flush=True)
        d = Daemon(home, MEMD_LOGS_CLAUDE_CODE="true", MEMD_LOGS_CLAUDE_DIR=str(logs))
        d.start()
        ready_s = d.wait_ready()
        mem_ready = proc_mem(d.pid)
        st = d.call("status")
        print(f"daemon ready in {ready_s:.2f}s: {st['index']['files']:,} files, RSS {mem_ready['rss_mb']:.1f} MB",
              flush=True)  # fmt: skip
        settled = settle(d.pid, args.settle)
        print(f"settled after {settled['seconds']:.0f}s: {settled['cpu_s']:.3f}s CPU"
              + ("" if settled["quiet"] else " (NOT quiet)"), flush=True)  # fmt: skip
        print(f"idle {args.idle:g}s …", flush=True)
        idle = measure_idle(d.pid, args.idle)
        mem_idle = proc_mem(d.pid)
        print(f"  {idle['cpu_s']:.3f}s CPU ({idle['cpu_per_min']:.3f} s/min), "
              f"{idle['wakeups_per_s']:.1f} context switches/s", flush=True)  # fmt: skip
        rc = d.stop()
        d = None
        return render(args, info, log_bytes, st, ready_s, mem_ready, mem_idle, settled, idle, rc)
    finally:
        if d is not None:
            d.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def render(args: argparse.Namespace, info: corpus.CorpusInfo, log_bytes: int, st: dict[str, Any], ready_s: float,
           mem_ready: dict[str, float], mem_idle: dict[str, float], settle: dict[str, Any],
           idle: dict[str, Any], rc: int | None) -> str:  # fmt: skip
    top = ", ".join(f"{cpu:.3f} s" for cpu in idle["top_threads"])
    rows = [
        ("daemon start → socket ready (startup index of the tree)", f"{ready_s:.2f} s", "", ""),
        (f"RSS after indexing {st['index']['files']:,} files", f"{mem_ready['rss_mb']:.1f} MB "
         f"(peak {mem_ready['peak_mb']:.1f} MB)", f"< {TARGET_RSS_MB:.0f} MB",
         verdict(mem_ready["rss_mb"], TARGET_RSS_MB)),
        (f"RSS after {args.idle:g} s idle", f"{mem_idle['rss_mb']:.1f} MB", f"< {TARGET_RSS_MB:.0f} MB",
         verdict(mem_idle["rss_mb"], TARGET_RSS_MB)),
        ("start-up work after ready until quiet (logs read, first jobs)",
         f"{settle['cpu_s']:.3f} s CPU over {settle['seconds']:.0f} s"
         + ("" if settle["quiet"] else f" (**not quiet within {args.settle:g} s**)"), "", ""),
        (f"CPU over {idle['seconds']:.0f} s idle", f"{idle['cpu_s']:.3f} s = **{idle['cpu_per_min']:.3f} s per minute**",
         f"< {TARGET_CPU_PER_MIN} s/min", verdict(idle["cpu_per_min"], TARGET_CPU_PER_MIN)),
        ("context switches while idle, all threads (wakeups: busy polling shows here)",
         f"{idle['wakeups_per_s']:.2f} per second", "", ""),
        (f"CPU of the busiest of {idle['threads']} threads while idle", top, "", ""),
        ("exit code after SIGTERM", str(rc), "0", "pass" if rc == 0 else "**FAIL**"),
    ]  # fmt: skip
    body = [
        "### Idle daemon: memory and CPU (`bench/idle_bench.py`)",
        "",
        f"Corpus: {info.summary()} (seed {args.seed}), plus {args.logs} Claude Code transcripts"
        f" ({log_bytes / 1e6:.1f} MB) in the tailed projects folder. A real `memd serve` indexes"
        f" the tree at start; once it is quiet, nothing touches the files or the socket for"
        f" {args.idle:g} s. CPU time is user + system of all threads (psutil), context switches"
        " are summed over /proc/<pid>/task/*/status, RSS is from /proc.",
        "",
        table(["measure", "memd", "target", "verdict"], rows),
        "",
        machine_line(),
    ]
    return "\n".join(body)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_common_args(ap, files=10_000)
    ap.add_argument("--idle", type=float, default=60.0, help="seconds of idle measurement")
    ap.add_argument(
        "--logs", type=int, default=200, help="Claude Code transcripts to tail (default 200)"
    )
    ap.add_argument(
        "--settle", type=float, default=120.0, help="longest wait for the daemon to go quiet"
    )
    args = ap.parse_args()
    publish(args, BLOCK, run(args))


if __name__ == "__main__":
    main()
