"""`memd demo`: start a real daemon on a throwaway home and show what it does, step by step."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from memd.api import client
from memd.api import messages as m
from memd.core import settings
from memd.core.errors import DaemonNotRunning
from memd.core.text import counted

# Variables of the shell the demo daemon does not get (see `demo_env`).
_NOT_INHERITED = ("MEMD_", "LISTEN_", "NOTIFY_SOCKET", "SUPABASE_")

VUE = """---
type: topic
tags: [vue, frontend]
---
# Vue

## Components
- Prefer the Composition API with `<script setup>`
- Keep components under 200 lines; split by feature

## State
- Pinia for shared state, not Vuex
"""
PREFS = """---
type: preference
pinned: true
---
# User Preferences

## Communication Style
- Concise answers with code examples

## Technical Preferences
- TypeScript strict mode everywhere
"""


def demo_env(home: Path, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The demo daemon's environment: `home` for everything, whatever the shell says.

    Every MEMD_* variable of the shell is left out (a MEMD_SOCKET or MEMD_CONFIG there would
    point the daemon at the user's own socket or settings, which the demo must never touch),
    so are systemd's socket-activation variables, and Claude Code's transcripts are not
    followed: the demo shows only what it puts in itself.
    """
    environ = os.environ if environ is None else environ
    env = {k: v for k, v in environ.items() if not k.startswith(_NOT_INHERITED)}
    env.update(
        {
            "MEMD_HOME": str(home),
            "MEMD_SOCKET": str(home / "run" / "memd.sock"),
            "MEMD_LOG_LEVEL": "WARNING",
            "MEMD_LOGS_CLAUDE_CODE": "false",
        }
    )
    return env


def _wait(sock: Path, proc: subprocess.Popen[bytes], timeout: float = 120) -> None:
    """Until the daemon has done its first index (before that, `status` alone answers and the
    other calls are told to wait): seconds on a first run or a busy machine."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"the daemon exited early with code {proc.returncode}")
        try:
            st = client.request(sock, m.STATUS, m.NoParams(), timeout=10)
            if st.daemon.starting is not True:
                return
        except DaemonNotRunning:
            pass
        time.sleep(0.1)
    raise SystemExit(f"the daemon did not come up within {timeout:.0f} s")


def _show(title: str, text: str) -> None:
    print(f"\n\033[1m== {title}\033[0m" if sys.stdout.isatty() else f"\n== {title}")
    print(text)


def run_demo(home: Path | None = None, serve: bool = False) -> int:
    """Run the walkthrough; with `serve`, leave the daemon running in the foreground.

    A home made here is a throwaway: it is removed when the demo ends.
    """
    throwaway = home is None
    home = home or Path(tempfile.mkdtemp(prefix="memd-demo-"))
    env = demo_env(home)
    sock = settings.load(env=env).socket_path
    # -P: the current folder is not put on sys.path, so a folder named `memd` here (the clone,
    # seen from its parent) cannot shadow the installed package.
    proc = subprocess.Popen([sys.executable, "-P", "-m", "memd", "serve"], env=env)
    try:
        _wait(sock, proc)
        mem = home / "memory"
        print(f"memd daemon running (pid {proc.pid}) with MEMD_HOME={home}")
        (mem / "_core" / "preferences.md").write_text(PREFS, encoding="utf-8")
        (mem / "topics" / "vue.md").write_text(VUE, encoding="utf-8")
        time.sleep(0.6)  # the watcher picks the files up; no command is run
        ctx = client.request(
            sock, m.CONTEXT, m.ContextParams(query="how should I structure this Vue component?")
        )
        _show("context('how should I structure this Vue component?')", ctx.text)
        print(f"[{ctx.tokens}/{ctx.budget} tokens]")
        with open(mem / "topics" / "vue.md", "a", encoding="utf-8") as fh:
            fh.write("- Tests: vitest + @vue/test-utils\n")
        time.sleep(0.6)
        hits = client.request(sock, m.SEARCH, m.SearchParams(query="vitest")).hits
        _show("edited topics/vue.md by hand; search('vitest') right after", "\n".join(
            f"{h.path}:{h.start_line}-{h.end_line}  {h.snippet}" for h in hits))  # fmt: skip
        said = m.RememberParams(text="The user's name is Sam", type="personal")
        r = client.request(sock, m.REMEMBER, said)
        _show("remember('The user's name is Sam')", f"{r.id} -> {r.path}:{r.line}")
        client.request(sock, m.INGEST, m.IngestParams(turns=[
            {"session_id": "demo-1", "role": "user", "content": "Should Vue components use Pinia or Vuex?",
             "ts": time.time() - 86400},
            {"session_id": "demo-1", "role": "assistant", "content": "Pinia: it is the official store now.",
             "ts": time.time() - 86390},
        ]))  # fmt: skip
        asked = m.ContextParams(query="之前聊过 Vue 吗? (did we talk about Vue before?)")
        ctx = client.request(sock, m.CONTEXT, asked)
        _, _, recalled = ctx.text.partition("## From past conversations")
        _show("ingest a conversation, then context('之前聊过 Vue 吗?') recalls it",
              recalled.replace("</memory>", "").strip() or "(nothing recalled)")  # fmt: skip
        st = client.request(sock, m.STATUS, m.NoParams())
        ix = st.index  # a daemon's status always has its index
        files, sections = (0, 0) if isinstance(ix, m.UnsetType) else (ix.files, ix.sections)
        _show(
            "status",
            f"{counted(files, 'file')}, {counted(sections, 'section')};"
            f" RSS {m.or_default(st.daemon.rss_mb, None)} MB",
        )
        if serve:
            print(f"\nServing on {sock}. Try, in another terminal:\n"
                  f"  MEMD_HOME={home} MEMD_SOCKET={sock} memd context 'vue state'"
                  "\nCtrl-C to stop.")  # fmt: skip
            proc.wait()
        return 0
    except KeyboardInterrupt:
        return 0
    finally:
        stop_daemon(proc)
        if throwaway:
            shutil.rmtree(home, ignore_errors=True)


def stop_daemon(proc: subprocess.Popen[bytes], wait_s: float | None = None) -> None:
    """Stop the demo's daemon: SIGTERM, then wait as long as a daemon's stop may take (it ends
    on its own within `STOP_DEADLINE_S`), then SIGKILL. A shorter wait (it was 10 s) raised
    on a loaded machine, leaving the daemon running and the throwaway home on disk."""
    if proc.poll() is not None:
        return
    if wait_s is None:
        from memd.daemon.process import STOP_DEADLINE_S

        wait_s = STOP_DEADLINE_S + 5
    proc.terminate()
    try:
        proc.wait(wait_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
