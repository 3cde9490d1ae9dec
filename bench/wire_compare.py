"""Every socket method's answer from two trees, compared: the wire does not change.

A change that only moves types around (the shape a feature returns, the names of modules)
must leave every answer of the socket as it was. This script runs the same scenario of
requests — every method of the method table, with the params that reach each shape of its
answer, errors included — against a real daemon started from each tree, on a fresh home each,
and compares the answers as JSON text (key order included). It also runs CLI commands that
print those answers (`--json`) or text made from them, with the daemon up and without it
(the CLI's fallback answers from the same method table in-process).

    python -m bench.wire_compare --base /tmp/base-tree            # this tree against another
    python -m bench.wire_compare --base . --show                  # this tree against itself

What differs from one run to the next on any tree is put in a normal form first: the temp
folder, times near now, durations and process figures, and random ids (items' `m_…`, change
ids, commits, uuids), which are numbered by first appearance so that the same id is the same
name in both runs. Run it against the same tree (`--base .`) to see that the normal form
leaves no noise. With PostgreSQL's server binaries installed, `--pg` adds a scenario with
cloud sync on (`sync_init_schema`, `sync_now`, `sync_status` and `status`'s `sync` part),
then on another table (the first target listed in `targets`, the new one refused and parked).

Nothing here times anything: it writes no block of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.report import REPO

FIXTURES = REPO / "tests" / "fixtures"
VENV = str(Path(sys.executable).parent.parent)  # the Python both trees run on
PRIVATE_ENV = (
    "MEMD_", "XDG_", "LISTEN_", "NOTIFY_", "ANTHROPIC_", "SUPABASE_", "OPENAI_", "GOOGLE_",
    "CLAUDE_", "CODEX_", "GEMINI_", "OPENCODE_", "AIDER_", "CONTINUE_", "CLINE_", "ROO_",
    "CURSOR_", "WINDSURF_", "VSCODE_",
)  # fmt: skip
# Keys whose value is a duration or a figure of the process, never the same twice.
VOLATILE_KEYS = frozenset({
    "seconds", "elapsed_s", "uptime_s", "rss_mb", "cpu_s", "cpu_percent", "threads", "pid",
    "rate", "eta_s", "lag_s", "rate_per_s", "took_ms", "ms", "bytes", "size", "age_s",
    "oldest_pending_age_s", "mtime", "inode", "pending_writes",
})  # fmt: skip
# Random ids, numbered by first appearance (longest patterns first).
ID_PATTERNS = (
    ("uuid", re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")),
    ("sha", re.compile(r"\b[0-9a-f]{40}\b")),
    ("change", re.compile(r"\b[0-9a-f]{12}\b")),
    ("item", re.compile(r"\bm_[0-9a-f]{8}\b")),
    ("short", re.compile(r"\b[0-9a-f]{7}\b")),
    ("run", re.compile(r"\b1\d{15}\b")),  # a job run's id: microseconds of its start
)
PID = re.compile(r"\b(pid|process) \d+")
THREADS = re.compile(r"\b\d+ threads\b")
PORT = re.compile(r"\b(127\.0\.0\.1|localhost):\d+")
ISO_TIME = re.compile(r"\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?([+-]\d\d:?\d\d|Z)?\b")
CLOCK = re.compile(r"\b\d\d:\d\d(:\d\d)?\b")
DURATION = re.compile(r"\b\d+(\.\d+)?\s?(ms|µs|s|min|MB|KB|kB|KiB|MiB|B)\b")


@dataclass
class Normaliser:
    """Puts what differs between runs into a normal form, the same way for both trees."""

    root: Path
    tree: Path
    now: float
    ids: dict[str, dict[str, str]] = field(default_factory=dict)

    def text(self, s: str) -> str:
        s = (
            s.replace(str(self.root), "<T>")
            .replace(VENV, "<VENV>")
            .replace(str(self.tree), "<TREE>")
        )
        s = PORT.sub(r"\1:<port>", s)
        for kind, pattern in ID_PATTERNS:
            s = pattern.sub(functools.partial(self._match, kind), s)
        s = ISO_TIME.sub("<iso>", s)
        s = PID.sub(r"\1 <pid>", s)
        s = THREADS.sub("<n> threads", s)
        return DURATION.sub("<dur>", s)

    def _match(self, kind: str, m: re.Match[str]) -> str:
        return self._id(kind, m.group(0))

    def _id(self, kind: str, value: str) -> str:
        seen = self.ids.setdefault(kind, {})
        if value not in seen:
            seen[value] = f"<{kind}{len(seen) + 1}>"
        return seen[value]

    def value(self, v: Any, key: str = "") -> Any:
        if isinstance(v, dict):
            return {self.text(k): self.value(x, k) for k, x in v.items()}
        if isinstance(v, list):
            return [self.value(x, key) for x in v]
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, bool) or v is None:
            return v
        if isinstance(v, int | float):
            if key in VOLATILE_KEYS:
                return "<n>"
            if abs(v - self.now) < 3 * 86400:  # a time of this run
                return "<time>"
            if isinstance(v, int) and abs(v / 1e6 - self.now) < 3 * 86400:  # a run id
                return self.text(str(v))
        return v

    def cli_text(self, s: str) -> str:
        return CLOCK.sub("<clock>", self.text(s))


@dataclass
class Tree:
    """One tree's daemon and CLI on a fresh home."""

    tree: Path
    root: Path
    records: list[tuple[str, str]] = field(default_factory=list)
    proc: subprocess.Popen[bytes] | None = None
    norm: Normaliser = field(init=False)
    extra_env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.norm = Normaliser(self.root, self.tree, time.time())

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def memd_home(self) -> Path:
        return self.root / "memd"

    @property
    def sock(self) -> Path:
        return self.root / "memd.sock"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(PRIVATE_ENV)}
        h = self.home
        env.update(
            HOME=str(h), XDG_CONFIG_HOME=str(h / ".config"), XDG_DATA_HOME=str(h / ".local/share"),
            XDG_STATE_HOME=str(h / ".local/state"), XDG_CACHE_HOME=str(h / ".cache"),
            XDG_RUNTIME_DIR=str(h / ".run"), MEMD_HOME=str(self.memd_home),
            MEMD_SOCKET=str(self.sock), MEMD_LOG_LEVEL="WARNING", MEMD_SEMANTIC_KIND="off",
            MEMD_LLM_BACKEND="off", MEMD_LOGS_POLL_S="0.5", PYTHONPATH=str(self.tree),
            TZ="UTC", LC_ALL="C.UTF-8", COLUMNS="120", NO_COLOR="1",
        )  # fmt: skip
        env.update(self.extra_env)
        return env

    # -- the daemon ------------------------------------------------------------------------
    def start(self) -> None:
        log = open(self.root / "daemon.log", "ab")  # noqa: SIM115 - handed to the child
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memd", "serve"], env=self.env(), cwd=str(self.tree),
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        log.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"daemon exited: {self.log_tail()}")
            try:
                st = self.raw("status")
                if "result" in st and not st["result"]["daemon"].get("starting"):
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"daemon not ready: {self.log_tail()}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None

    def log_tail(self) -> str:
        try:
            return (self.root / "daemon.log").read_text(errors="replace")[-3000:]
        except OSError:
            return "(no log)"

    def raw(self, method: str, params: Any = None) -> dict[str, Any]:
        """One JSON-RPC request on a new connection: the response without `jsonrpc`/`id`."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(120)
            s.connect(str(self.sock))
            req = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
            s.sendall(json.dumps(req).encode() + b"\n")
            buf = b""
            while not buf.endswith(b"\n"):
                chunk = s.recv(1 << 20)
                if not chunk:
                    break
                buf += chunk
        out: dict[str, Any] = json.loads(buf)
        out.pop("jsonrpc", None)
        out.pop("id", None)
        return out

    def call(self, label: str, method: str, params: Any = None) -> Any:
        """A request whose answer is recorded (in its normal form); the raw result back."""
        answer = self.raw(method, params)
        self.records.append((self.norm.text(f"{label}: {method}"), self.dump(answer)))
        return answer.get("result")

    def dump(self, value: Any) -> str:
        return json.dumps(self.norm.value(value), ensure_ascii=False, indent=1)

    def cli(self, label: str, *args: str, stdin: str = "") -> str:
        """`memd ARGS` in this tree; its exit code and output (normal form) are recorded."""
        p = subprocess.run(
            [sys.executable, "-m", "memd", *args], env=self.env(), cwd=str(self.tree),
            input=stdin.encode(), capture_output=True, timeout=120,
        )  # fmt: skip
        out = p.stdout.decode(errors="replace")
        err = p.stderr.decode(errors="replace")
        try:
            shown = self.dump(json.loads(out)) if "--json" in args and out.strip() else None
        except json.JSONDecodeError:
            shown = None
        text = shown if shown is not None else self.norm.cli_text(out)
        self.records.append(
            (
                self.norm.text(f"{label}: memd {' '.join(args)}"),
                f"rc={p.returncode}\n{text}\n--\n{self.norm.cli_text(err)}",
            )
        )
        return out

    def settle(self) -> None:
        """Wait until the index stops moving (the watcher's reindex, the journal, history)."""
        last: Any = None
        for _ in range(200):
            st = self.raw("status")["result"]
            now = (st.get("index"), st.get("history", {}).get("pending"),
                   st.get("logs", {}).get("turns"))  # fmt: skip
            if now == last and not (st.get("index") or {}).get("pending_writes"):
                return
            last = now
            time.sleep(0.4)


# -- the scenario ------------------------------------------------------------------------------
def prepare(t: Tree) -> None:
    """Files on disk before the daemon starts: a hand-written topic, a workspace, logs."""
    mem = t.memd_home / "memory" / "topics"
    mem.mkdir(parents=True)
    (mem / "vue.md").write_text(
        "# Vue\n\n## Notes\n\n- Prefers the composition API over options\n"
        "- Pinia for state, never Vuex\n\n## Testing\n\nVitest with happy-dom; Playwright for e2e.\n"
    )
    shop = t.home / "code" / "shop"
    (shop / ".git").mkdir(parents=True)
    claude = t.home / ".claude" / "projects" / "-home-user-proj"
    claude.mkdir(parents=True)
    shutil.copy(FIXTURES / "logs" / "claude_code_session.jsonl", claude / "session.jsonl")
    codex = t.home / ".codex" / "sessions" / "2026" / "01" / "05"
    codex.mkdir(parents=True)
    shutil.copy(FIXTURES / "assistants" / "codex-0.171.jsonl", codex / "rollout.jsonl")
    t.home.joinpath("imports").mkdir()
    for name in ("generic.jsonl", "chatgpt_conversations.json", "three_sessions.jsonl",
                 "openai_messages.jsonl"):  # fmt: skip
        shutil.copy(FIXTURES / "logs" / name, t.home / "imports" / name)


TURNS = [
    {"session_id": "app-7", "role": "user", "content": "Vue or React for the dashboard?",
     "ts": 1767600000, "id": "q1", "agent_id": "ally", "project": "shop", "title": "Dashboard"},
    {"session_id": "app-7", "role": "assistant", "content": "Vue, with Pinia for state.",
     "ts": 1767600060, "id": "a1", "agent_id": "ally", "project": "shop"},
    {"session_id": "app-7", "role": "user",
     "content": "I prefer dark mode everywhere. I live in Lisbon and work at Acme.",
     "ts": 1767600120, "id": "q2", "agent_id": "ally", "project": "shop"},
    {"session_id": "app-8", "role": "user", "content": "Remember that the deploy is on Friday",
     "ts": 1767700000, "id": "q1", "name": "Dana"},
]  # fmt: skip


def memory_methods(t: Tree) -> dict[str, str]:
    shop = str(t.home / "code" / "shop")
    ids: dict[str, str] = {}
    t.settle()
    t.call("status at start", "status")
    t.call("switch", "set_enabled", {"enabled": True})
    r = t.call("user pref", "remember", {"text": "Prefers tabs over spaces", "type": "preference"})
    ids["tabs"] = r["id"]
    t.call("same again", "remember", {"text": "prefers tabs over spaces.", "type": "preference"})
    r = t.call("project", "remember",
               {"text": "Deploys go through the staging branch", "scope": "project",
                "project": shop, "trust_folder": True, "request_id": "r-1"})  # fmt: skip
    ids["deploy"] = r["id"]
    t.call(
        "retry",
        "remember",
        {
            "text": "Deploys go through the staging branch",
            "scope": "project",
            "project": shop,
            "request_id": "r-1",
        },
    )
    r = t.call("agent", "remember", {"text": "Likes short answers", "scope": "agent",
                                     "agent_id": "ally"})  # fmt: skip
    ids["short"] = r["id"]
    t.call(
        "slug project",
        "remember",
        {"text": "Uses Postgres 16", "scope": "project", "project": "backend", "type": "decision"},
    )
    t.call("empty", "remember", {"text": ""})
    t.call("bad scope", "remember", {"text": "x", "scope": "team"})
    t.call("secret", "remember", {"text": "The key is sk-ant-api03-" + "A" * 90})
    t.settle()
    p: dict[str, Any]
    for p in ({}, {"scope": "user"}, {"scope": "project"}, {"scope": "agent"},
              {"all": True, "limit": 2, "offset": 1}, {"limit": -1}):  # fmt: skip
        t.call(f"memories {p}", "memories", p)
    for p in ({"query": "vue testing"}, {"query": "deploy", "project": shop, "trust_folder": True},
              {"query": "answers", "agent_id": "ally", "budget_tokens": 300},
              {"query": "pinia", "relevant_only": True}, {"budget_tokens": 0},
              {"query": "did we talk about the dashboard?", "session_id": "app-8"},
              {"query": "x", "project": "relative/path"}, {"budget_tokens": 10**9}):  # fmt: skip
        t.call(f"context {p}", "context", p)
    for p in ({"query": "pinia"}, {"query": "dashboard", "scope": "conversations"},
              {"query": "deploy", "scope": "memory", "limit": 1}, {"query": "vue", "source": "ingest"},
              {"query": ""}, {"query": "kyoto", "session_id": "s1"}):  # fmt: skip
        t.call(f"search {p}", "search", p)
    return ids


def conversation_methods(t: Tree) -> None:
    t.call("turns", "ingest", {"turns": TURNS, "request_id": "batch-1"})
    t.call("retry", "ingest", {"turns": TURNS, "request_id": "batch-1"})
    t.call("one turn", "ingest", {"session_id": "app-9", "role": "user", "content": "hello there",
                                  "ts": "2026-01-06T10:00:00Z"})  # fmt: skip
    t.call("bad turn", "ingest", {"turns": [{"session_id": "x", "content": "no role"}]})
    for name in ("generic.jsonl", "chatgpt_conversations.json", "three_sessions.jsonl"):
        t.call(f"import {name}", "import", {"path": str(t.home / "imports" / name)})
    t.call(
        "import openai",
        "import",
        {"path": str(t.home / "imports" / "openai_messages.jsonl"), "format": "openai"},
    )
    t.call("import missing", "import", {"path": str(t.home / "nope.json")})
    t.settle()
    for p in ({}, {"mode": "sessions", "limit": 3}, {"query": "dashboard"},
              {"mode": "topic", "query": "kyoto", "per_session": 2}, {"session_id": "app-7"},
              {"session_id": "app-7", "query": "pinia"}, {"session_id": "nope"},
              {"query": "vue", "source": "ingest", "project": "shop"}):  # fmt: skip
        t.call(f"recall {p}", "recall", p)
    t.call("relationship", "relationship", {"agent_id": "ally"})
    t.call("relationship none", "relationship", {"agent_id": "nobody"})
    t.call("relationship empty", "relationship", {})
    t.call("progress", "extraction_progress", {"session_id": "app-7"})
    t.call("progress none", "extraction_progress", {"session_id": "none"})


def job_methods(t: Tree) -> None:
    for name in ("extract", "summarize", "archive", "sync", "nope", ""):
        t.call(f"job {name}", "run_job", {"name": name})
    t.settle()
    t.call("runs", "job_runs", {})
    t.call("runs extract", "job_runs", {"name": "extract", "limit": 2})
    t.call("runs bad", "job_runs", {"limit": 0})


def edit_methods(t: Tree, ids: dict[str, str]) -> None:
    tabs = ids["tabs"]
    t.call("text", "edit_item", {"id": tabs, "text": "Prefers tabs, width 4"})
    t.call("meta", "edit_item", {"id": tabs, "importance": 8, "pinned": True,
                                 "expires": "2099-01-01"})  # fmt: skip
    t.call("stale", "edit_item", {"id": tabs, "expect_text": "something else", "text": "x"})
    t.call(
        "move",
        "edit_item",
        {"id": tabs, "move_to": {"path": "topics/style.md", "section": "Editor"}},
    )
    t.call("nothing", "edit_item", {"id": tabs})
    t.call("unknown", "edit_item", {"id": "m_00000000", "text": "x"})
    t.call("outside", "edit_item", {"id": tabs, "move_to": {"path": "../x.md"}})
    t.settle()
    t.call("forget query", "forget", {"query": "answers"})
    t.call("forget id", "forget", {"id": ids["short"]})
    t.call("forget confirm", "forget", {"query": "staging branch", "confirm": True})
    t.call("forget none", "forget", {})
    t.settle()
    t.call("memories after", "memories", {"all": True})


def history_methods(t: Tree) -> None:
    t.settle()
    h = t.call("history", "history", {})
    t.call("history path", "history", {"path": "topics", "limit": 3})
    t.call("history since", "history", {"since": "2 days ago"})
    t.call("history bad since", "history", {"since": "whenever"})
    changes = h["changes"] if h else []
    if changes:
        t.call("show", "show_change", {"change": changes[0]["id"]})
        t.call("show last", "show_change", {"change": changes[-1]["id"]})
    t.call("show none", "show_change", {"change": "000000000000"})
    edit = next((c for c in changes if c["cause"] == "edit"), None)
    if edit is not None:
        t.call("undo dry", "undo", {"change": edit["id"], "dry_run": True})
        t.call("undo", "undo", {"change": edit["id"]})
    t.call("undo none", "undo", {})
    t.settle()
    t.call("history after undo", "history", {"limit": 3})


def transfer_methods(t: Tree) -> None:
    out = t.home / "export.json"
    t.call("export", "export", {"path": str(out)})
    t.call("export again", "export", {"path": str(out)})
    t.call("export inside", "export", {"path": str(t.memd_home / "memory" / "x.json")})
    t.call("import export", "import", {"path": str(out)})
    (t.memd_home / "memory" / "topics" / "vue.md").write_text("# Vue\n\nChanged here.\n")
    t.settle()
    t.call("import export, a file changed", "import", {"path": str(out), "format": "memd"})
    t.call("export over", "export", {"path": str(out), "overwrite": True, "tree": False})


def rest_methods(t: Tree) -> None:
    t.call("forget conv dry", "forget_conversation", {"session_id": "app-8"})
    t.call(
        "forget conv turns",
        "forget_conversation",
        {"session_id": "app-7", "turn_ids": ["a1"], "confirm": True},
    )
    t.call("forget conv", "forget_conversation", {"session_id": "app-8", "confirm": True})
    t.call("forget conv none", "forget_conversation", {"session_id": "nope"})
    t.call("reindex", "reindex", {})
    t.call("reindex full", "reindex", {"full": True})
    t.call("sync status", "sync_status", {})
    t.call("sync now", "sync_now", {})
    t.call("sync schema", "sync_init_schema", {})
    t.call("unknown", "no_such_method", {})
    t.call("params list", "status", [1])
    t.call("switch off", "set_enabled", {"enabled": False})
    t.call("context off", "context", {"query": "vue"})
    t.call("memories off", "memories", {})
    t.call("ingest off", "ingest", {"session_id": "z", "role": "user", "content": "hi"})
    t.call("remember off", "remember", {"text": "nothing"})
    t.call("switch on", "set_enabled", {"enabled": True})
    t.settle()
    t.call("status at end", "status")


def cli_commands(t: Tree, where: str) -> None:
    shop = str(t.home / "code" / "shop")
    for args in (
        ("status",), ("--json", "status"), ("search", "vue"), ("--json", "search", "pinia"),
        ("search", "--conversations", "dashboard"), ("recall",), ("recall", "dashboard"),
        ("--json", "recall", "--session", "app-7"), ("memories",), ("--json", "memories"),
        ("memories", "--scope", "agent"), ("context", "vue"), ("--json", "context", "deploy",
        "--project", shop), ("history",), ("--json", "history"), ("extract",),
        ("summarize",), ("archive",), ("sync", "status"), ("--json", "sync", "status"),
        ("config",), ("--json", "config"), ("doctor",), ("--json", "doctor"),
        ("integrate", "--list"), ("--json", "integrate", "--list"), ("workspace", "list"),
    ):  # fmt: skip
        t.cli(where, *args)


def pg_scenario(t: Tree, dsn: str) -> None:
    t.extra_env = {"MEMD_SYNC_BACKEND": "postgres", "MEMD_SYNC_DSN": dsn,
                   "MEMD_SYNC_NAMESPACE": "user"}  # fmt: skip
    prepare(t)
    t.start()
    try:
        t.call("sync status before", "sync_status")
        t.call("schema", "sync_init_schema")
        t.call("remember", "remember", {"text": "Synced memory"})
        t.settle()
        t.call("sync now", "sync_now", {})
        t.call("sync now parked", "sync_now", {"retry_parked": True})
        t.call("sync status", "sync_status")
        t.call("status", "status")
        t.cli("pg", "sync", "status")
        t.cli("pg", "--json", "sync", "status")
        t.cli("pg", "status")
    finally:
        t.stop()
    # Another table: the first target is now one of `targets`, and the new one has no tables.
    t.extra_env = {**t.extra_env, "MEMD_SYNC_TABLE": "memd_files_moved"}
    t.start()
    try:
        t.call("moved: remember", "remember", {"text": "Written after the move"})
        t.settle()
        t.call("moved: sync now", "sync_now", {})
        t.call("moved: sync status", "sync_status")
        t.cli("pg moved", "sync", "status")
        t.cli("pg moved", "--json", "sync", "status")
    finally:
        t.stop()


def everyday_methods(t: Tree) -> None:
    """Memory, conversations, jobs, edits and history, in that order, on a started daemon."""
    ids = memory_methods(t)
    conversation_methods(t)
    job_methods(t)
    edit_methods(t, ids)
    history_methods(t)


def scenario(t: Tree) -> None:
    prepare(t)
    t.start()
    try:
        everyday_methods(t)
        transfer_methods(t)
        rest_methods(t)
        cli_commands(t, "daemon up")
    finally:
        t.stop()
    cli_commands(t, "no daemon")
    t.cli("no daemon", "--json", "remember", "Written without a daemon")
    t.cli("no daemon", "--json", "forget", "--yes", "without a daemon")


# -- running and comparing ---------------------------------------------------------------------
@contextmanager
def tree_run(tree: Path, keep: Path | None, name: str) -> Iterator[Tree]:
    root = Path(tempfile.mkdtemp(prefix=f"wire-{name}-"))
    try:
        yield Tree(tree.resolve(), root)
    finally:
        if keep is not None:
            shutil.copytree(root, keep / name, dirs_exist_ok=True, symlinks=True)
        shutil.rmtree(root, ignore_errors=True)


def run(
    tree: Path, run_scenario: Callable[[Tree], None], keep: Path | None, name: str
) -> list[tuple[str, str]]:
    with tree_run(tree, keep, name) as t:
        run_scenario(t)
    if keep is not None:
        text = "".join(f"=== {label}\n{body}\n" for label, body in t.records)
        (keep / f"{name}.txt").write_text(text)
    return t.records


def compare(a: list[tuple[str, str]], b: list[tuple[str, str]], show: bool) -> int:
    """Print each answer that differs; the number of them."""
    import difflib

    differ = 0
    for (la, ta), (lb, tb) in zip(a, b, strict=False):
        if la != lb or ta != tb:
            differ += 1
            print(f"--- differs: {la}")
            sys.stdout.writelines(
                difflib.unified_diff(ta.splitlines(True), tb.splitlines(True), "base", "tree", n=2)
            )
            print()
        elif show:
            print(f"same: {la}")
    if len(a) != len(b):
        differ += 1
        print(f"--- the runs made {len(a)} and {len(b)} calls")
    return differ


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", type=Path, required=True, help="the tree to compare against")
    ap.add_argument("--tree", type=Path, default=REPO, help="the tree under test (default: this)")
    ap.add_argument("--pg", action="store_true", help="also a scenario with sync on PostgreSQL")
    ap.add_argument("--show", action="store_true", help="list the answers that are the same too")
    ap.add_argument("--keep", type=Path, help="copy each run's folder and answers here")
    args = ap.parse_args(argv)
    scenarios: list[tuple[str, Callable[[Tree], None]]] = [("local", scenario)]
    pg_servers = []
    if args.pg:
        sys.path.insert(0, str(REPO))
        from tests.pgserver import PgServer

        for _ in range(2):
            pg_servers.append(PgServer().__enter__())
    total = 0
    calls = 0
    try:
        for name, fn in scenarios:
            base = run(args.base, fn, args.keep, f"{name}-base")
            tree = run(args.tree, fn, args.keep, f"{name}-tree")
            calls += len(base)
            total += compare(base, tree, args.show)
        if args.pg:
            base = run(args.base, lambda t: pg_scenario(t, pg_servers[0].dsn), args.keep, "pg-base")
            tree = run(args.tree, lambda t: pg_scenario(t, pg_servers[1].dsn), args.keep, "pg-tree")
            calls += len(base)
            total += compare(base, tree, args.show)
    finally:
        for pg in pg_servers:
            pg.__exit__(None, None, None)
    print(f"{calls} answers compared, {total} differ")
    return 1 if total else 0


if __name__ == "__main__":
    raise SystemExit(main())
