"""No test reads the person's own HOME: a pytest run under a HOME full of an assistant's
transcripts (and CLAUDE_CONFIG_DIR, CODEX_HOME, XDG folders pointing into it) never opens them.

The inner run is tests/fixtures/home_probe/probe_home.py: a daemon started by a module-scoped
fixture (before any test's own set-up), one started by a test, a CLI and library calls. While
it runs, inotify watches every folder of the outer HOME that holds the person's transcripts and
settings: a single open or read there fails this test.
"""

from __future__ import annotations

import ctypes
import json
import os
import struct
import subprocess
import sys
from pathlib import Path

from tests.utils import ROOT

WORD = "quokkazanzibar"  # in the person's transcripts only
IN_ACCESS, IN_OPEN = 0x1, 0x20


def claude_transcript(word: str) -> str:
    """A real Claude Code session file (tests/fixtures/logs) plus a turn naming `word`."""
    base = (ROOT / "tests" / "fixtures" / "logs" / "claude_code_session.jsonl").read_text()
    sid = "5f1c2d3e-0000-4000-8000-000000000001"
    rec = {"parentUuid": "a7", "isSidechain": False, "userType": "external",
           "cwd": "/home/alice/shop", "sessionId": sid, "version": "2.1.202", "type": "user",
           "message": {"role": "user", "content": f"the {word} migration goes out on Friday"},
           "uuid": "u9", "timestamp": "2026-07-06T12:05:00.000Z"}  # fmt: skip
    return base + json.dumps(rec) + "\n"


def populate(outer: Path) -> list[Path]:
    """The person's HOME: assistants' transcripts and settings, memd's config. Returns the
    folders to watch."""
    text = claude_transcript(WORD)
    files = {
        ".claude/projects/-home-alice-shop/5f1c2d3e-0000-4000-8000-000000000001.jsonl": text,
        ".claude/settings.json": "{}\n",
        "claude-config/projects/-home-alice-shop/6a1c2d3e-0000-4000-8000-000000000002.jsonl": text,
        ".codex/sessions/2026/07/06/rollout-2026-07-06T12-00-00-abc.jsonl": text,
        ".gemini/tmp/abc/chats/session-2026-07-06.json": "{}\n",
        ".config/memd/config.toml": f'[memory]\nroot = "{outer / "memory"}"\n',
        ".local/share/memd/memory/_core/user.md": f"# user\n\n## Notes\n\n- {WORD}\n",
    }
    for rel, content in files.items():
        (outer / rel).parent.mkdir(parents=True, exist_ok=True)
        (outer / rel).write_text(content)
    return sorted({p for rel in files for p in (outer / rel).parents if p != outer and
                   p.is_relative_to(outer)})  # fmt: skip


def watch(folders: list[Path]) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    fd = int(libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
    assert fd >= 0, os.strerror(ctypes.get_errno())
    for folder in folders:
        wd = libc.inotify_add_watch(fd, str(folder).encode(), IN_OPEN | IN_ACCESS)
        assert wd >= 0, (folder, os.strerror(ctypes.get_errno()))
    return fd


def opened(fd: int) -> list[str]:
    """Names of what was opened or read under the watched folders since `watch`."""
    names: list[str] = []
    while True:
        try:
            buf = os.read(fd, 65536)
        except BlockingIOError:
            return names
        at = 0
        while at < len(buf):
            _wd, _mask, _cookie, size = struct.unpack_from("iIII", buf, at)
            names.append(buf[at + 16 : at + 16 + size].rstrip(b"\0").decode() or ".")
            at += 16 + size


def test_a_populated_outer_home_is_never_read_by_a_test(tmp_path: Path) -> None:
    outer = tmp_path / "alice"
    folders = populate(outer)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update({
        "HOME": str(outer),
        "CLAUDE_CONFIG_DIR": str(outer / "claude-config"),
        "CODEX_HOME": str(outer / ".codex"),
        "GEMINI_CLI_HOME": str(outer),
        "XDG_CONFIG_HOME": str(outer / ".config"),
        "XDG_DATA_HOME": str(outer / ".local" / "share"),
        "MEMD_HOME": str(outer / ".local" / "share" / "memd"),
        "PROBE_OUTER_HOME": str(outer),
        "PROBE_OUTER_WORD": WORD,
    })  # fmt: skip
    fd = watch(folders)
    try:
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
             "tests/fixtures/home_probe/probe_home.py"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        seen = opened(fd)
    finally:
        os.close(fd)
    assert seen == [], f"opened in the outer HOME: {seen}\n{run.stdout}{run.stderr}"
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 passed" in run.stdout, run.stdout
