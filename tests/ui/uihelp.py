"""Helpers of the memory page's tests: a real `memd ui`, an older daemon, the seed memory."""

from __future__ import annotations

import http.client
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from memd.core.errors import DaemonNotRunning
from tests import forkserver
from tests.utils import DaemonProcess, call, memd_env, wait_for

# Read at import: the autouse fixture clears MEMD_* variables before each test.
SCREENSHOTS = os.environ.get("MEMD_SCREENSHOTS") == "1"
SHOTS_DIR = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
PREFS = """---
type: preference
pinned: true
---
# User Preferences

## Technical Preferences
- TypeScript strict mode everywhere
"""
# Long enough that a small budget leaves some of it out.
VUE = (
    "# Vue\n\n## Components\n"
    + "".join(
        f"- Component rule {n}: keep props typed and emit events with clear names\n"
        for n in range(12)
    )
    + "\n## Testing\n- Tests: vitest with @vue/test-utils\n\n## State\n- Pinia for shared state\n"
)


class OlderDaemon(DaemonProcess):
    """A real daemon without the methods an older memd lacks (tests/ui/older_daemon.py)."""

    def start(self, timeout: float = 20.0) -> DaemonProcess:
        self.home.mkdir(parents=True, exist_ok=True)
        logf = open(self.log, "ab")  # noqa: SIM115 - owned by the process for its lifetime
        self.proc = forkserver.popen(
            [sys.executable, "-m", "tests.ui.older_daemon"],
            env=memd_env(self.home, **self.extra_env),
            stdout=logf,
            stderr=subprocess.STDOUT,
        )
        logf.close()
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise AssertionError(f"daemon exited:\n{self.log.read_text()}")
            try:
                if not call(self.sock, "status", timeout=2)["daemon"].get("starting"):
                    return self
            except DaemonNotRunning:
                pass
            time.sleep(0.05)
        raise AssertionError(f"daemon did not start:\n{self.log.read_text()}")


class UiProcess:
    """A real `memd ui` process on the same MEMD_HOME; `url` carries its token."""

    def __init__(self, home: Path, *, open_browser: bool = False, **env: str) -> None:
        self.home = home
        self.args = () if open_browser else ("--no-browser",)
        self.env = env
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""
        self.stderr = home / "ui.err"

    def start(self, timeout: float = 20.0) -> UiProcess:
        errf = open(self.stderr, "w")  # noqa: SIM115 - owned by the process for its lifetime
        # Forked from the test process's fork server, as the tests' daemons (tests/forkserver.py).
        self.proc = forkserver.popen(
            [sys.executable, "-m", "memd", "ui", *self.args],
            env=memd_env(self.home, **self.env),
            stdout=subprocess.PIPE,
            stderr=errf,
            text=True,
        )
        errf.close()
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        m = re.match(r"memd ui: (http://127\.0\.0\.1:(\d+)/\?token=([\w-]+))$", line.strip())
        assert m, f"unexpected first line {line!r}; stderr:\n{self.stderr.read_text()}"
        self.url, self.port, self.token = m.group(1), int(m.group(2)), m.group(3)
        wait_for(lambda: self._answers(), timeout)
        return self

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _answers(self) -> bool:
        try:
            self.request("GET", "/")
            return True
        except OSError:
            return False

    def request(
        self,
        method: str,
        path: str,
        *,
        headers: dict[str, str] | None = None,
        body: str | bytes | None = None,
        host: str | None = None,
    ) -> tuple[int, dict[str, str], str]:
        """One raw HTTP request (the Host header is ours to set, unlike a browser's)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            conn.putheader("Host", host or f"127.0.0.1:{self.port}")
            data = body.encode() if isinstance(body, str) else body
            for k, v in (headers or {}).items():
                conn.putheader(k, v)
            if data is not None:
                conn.putheader("Content-Length", str(len(data)))
            conn.endheaders(data)
            resp = conn.getresponse()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read().decode()
        finally:
            conn.close()

    def sign_in(self) -> str:
        """The session cookie (`name=value`) the token URL hands out."""
        status, headers, _ = self.request("GET", f"/?token={self.token}")
        assert status == 200, status
        return headers["set-cookie"].split(";")[0]

    def stop(self) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            return self.proc.wait(15)
        finally:
            if self.proc.stdout:
                self.proc.stdout.close()


def csrf_of(html: str) -> str:
    m = re.search(r'name="csrf" value="([^"]+)"', html)
    assert m, "no CSRF field on the page"
    return m.group(1)


def seed(d: DaemonProcess) -> dict[str, Any]:
    """A small memory: preferences, a topic, three conversations, one extraction run."""
    (d.memory / "_core" / "preferences.md").write_text(PREFS, encoding="utf-8")
    (d.memory / "topics" / "vue.md").write_text(VUE, encoding="utf-8")
    wait_for(lambda: d.search_paths("vitest"), 5)
    now = time.time()
    # The page counts sessions per local day: the last one is today's even in the first minutes
    # after midnight (at now - 600 it fell on yesterday's bar then, leaving two bars of three).
    midnight = time.mktime((*time.localtime(now)[:3], 0, 0, 0, 0, 0, -1))
    recent = max(now - 600, midnight + 1)
    d.call(
        "ingest",
        {
            "turns": [
                {"session_id": "s-acme", "id": "t1", "role": "user",
                 "content": "I work at Acme Corp as a backend engineer", "ts": now - 2 * 86400},
                {"session_id": "s-acme", "id": "t2", "role": "assistant",
                 "content": "Noted: backend work at Acme.", "ts": now - 2 * 86400 + 5},
                {"session_id": "s-vue", "id": "t1", "role": "user",
                 "content": "Should our Vue components use Pinia or Vuex?", "ts": now - 86400},
                {"session_id": "s-vue", "id": "t2", "role": "assistant",
                 "content": "Pinia: it is the official store now.", "ts": now - 86400 + 5},
                {"session_id": "s-globex", "id": "t1", "role": "user",
                 "content": "I now work at Globex as a staff engineer", "ts": recent},
            ]
        },
    )  # fmt: skip
    run: dict[str, Any] = d.call("run_job", {"name": "extract"})
    assert run["outcome"] == "success", run
    return run


def open_page(page: Any, ui: UiProcess, path: str = "/memory") -> None:
    """Sign in with the token link (the page lands on /memory), then go to `path`."""
    page.goto(ui.url)
    page.wait_for_url(f"{ui.base}/memory")
    if path != "/memory":
        page.goto(ui.base + path)


def screenshot(page: Any, name: str) -> None:
    """With MEMD_SCREENSHOTS=1, save the whole page as docs/screenshots/<name>.png."""
    if SCREENSHOTS:
        SHOTS_DIR.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS_DIR / f"{name}.png"), full_page=True)
