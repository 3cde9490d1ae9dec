"""The memory page from two trees, compared: a change of types leaves every view as it was.

The page (`memd ui`) reads the daemon's answers and draws them; a change that only moves types
around must leave what it draws alone. This script runs `bench.wire_compare`'s scenario (the
same memory, conversations, jobs, edits and history) against a real daemon from each tree on a
fresh home, then starts that tree's `memd ui`, signs in with its token and fetches every view
(and a few forms' answers), with the daemon up and after it stopped (the page then answers
from the index, as the CLI does). The HTML is compared as text after the same normal form as
the socket's answers (temp folder, times near now, durations, random ids numbered by first
appearance).

    python -m bench.page_compare --base /tmp/base-tree         # this tree against another
    python -m bench.page_compare --base . --show               # this tree against itself

Nothing here times anything: it writes no block of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import http.client
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote, unquote_plus, urlencode

from bench.report import REPO
from bench.wire_compare import (
    Tree,
    compare,
    everyday_methods,
    prepare,
    run,
)

FIRST_LINE = re.compile(r"memd ui: http://127\.0\.0\.1:(\d+)/\?token=([\w-]+)$")
# What differs between two runs in a page and not in an answer: the form's CSRF token, the
# session cookie's value, and the nonce of the content security policy.
SECRETS = re.compile(r'(name="csrf" value=|nonce=|csrf=)"?[\w-]+"?')


class Page:
    """A running `memd ui` of one tree, signed in."""

    def __init__(self, t: Tree) -> None:
        self.t = t
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memd", "ui", "--no-browser"], env=t.env(), cwd=str(t.tree),
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True,
        )  # fmt: skip
        assert self.proc.stdout is not None
        m = FIRST_LINE.match(self.proc.stdout.readline().strip())
        if m is None:
            self.stop()
            raise RuntimeError("memd ui did not say where it listens")
        self.port, token = int(m.group(1)), m.group(2)
        _, headers, _ = self.request("GET", f"/?token={token}")
        self.cookie = headers.get("set-cookie", "").split(";")[0]

    def request(self, method: str, path: str, body: str = "") -> tuple[int, dict[str, str], str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            headers = {"Host": f"127.0.0.1:{self.port}"}
            if getattr(self, "cookie", ""):
                headers["Cookie"] = self.cookie
            if body:
                headers["Content-Type"] = "application/x-www-form-urlencoded"
                headers["Origin"] = f"http://127.0.0.1:{self.port}"
            conn.request(method, path, body=body or None, headers=headers)
            resp = conn.getresponse()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read().decode()
        finally:
            conn.close()

    def csrf(self) -> str:
        _, _, html = self.request("GET", "/memory")
        m = re.search(r'name="csrf" value="([\w-]+)"', html)
        return m.group(1) if m else ""

    def get(self, label: str, path: str) -> None:
        status, headers, html = self.request("GET", path)
        self.record(label, f"GET {path}", status, headers, html)

    def post(self, label: str, path: str, form: dict[str, str]) -> None:
        body = urlencode({**form, "csrf": self.csrf()})
        status, headers, html = self.request("POST", path, body)
        self.record(label, f"POST {path} {sorted(form)}", status, headers, html)

    def record(
        self, label: str, what: str, status: int, headers: dict[str, str], html: str
    ) -> None:
        where = unquote_plus(headers.get("location", ""))
        text = SECRETS.sub(r"\1<secret>", f"{status} {where}\n{html}")
        self.t.records.append((self.t.norm.text(f"{label}: {what}"), self.t.norm.cli_text(text)))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def views(p: Page, label: str) -> None:
    """Every view, with the params that reach each shape of it."""
    change = ""
    h = p.t.raw("history", {"limit": 5}).get("result") if label == "daemon up" else None
    if h and h.get("changes"):
        change = h["changes"][0]["id"]
    for path in (
        "/memory", "/memory/file?root=0&rel=topics/vue.md", "/memory/file?root=0&rel=nope.md",
        "/search?q=tabs", "/search?q=deploy&scope=conversations", "/search?q=vue&scope=memory",
        "/context?q=vue", "/context?q=deploy&agent_id=ally&budget=300", "/conversations",
        "/conversations?days=7&source=claude-code", "/conversations/session?id=app-7",
        "/conversations/session?id=none", "/activity", "/history", "/history?path=topics&limit=50",
        "/history?item=m_00000000", "/edit", f"/history/change?id={quote(change)}",
    ):  # fmt: skip
        p.get(label, path)


def forms(p: Page, label: str) -> None:
    """Every form, answered with a redirect and its message, and the views that show them."""
    p.post(
        label, "/remember", {"text": "Written from the page", "scope": "user", "back": "/memory"}
    )
    p.post(label, "/remember", {"text": "", "scope": "user", "back": "/memory"})
    p.post(label, "/remember", {"text": "x", "scope": "team", "back": "/memory"})
    items = p.t.raw("memories", {"all": True})["result"]["items"]
    item = next(i for i in items if i["text"] == "Written from the page")
    p.get(label, f"/edit?id={item['id']}&forget=page")
    edit = {"id": item["id"], "expect": item["text"], "text": "Written from the page, edited",
            "importance": "9", "orig_importance": "", "back": "/memory"}  # fmt: skip
    p.post(label, "/edit_item", edit)
    p.post(label, "/edit_item", {**edit, "expect": "stale", "text": "x"})
    p.post(label, "/edit_item", {**edit, "importance": "11"})
    p.post(label, "/edit_item", {**edit, "move_path": "topics/page.md", "orig_path": "x"})
    p.post(label, "/forget", {"query": "from the page", "back": "/memory"})
    p.post(label, "/forget", {"id": item["id"], "back": "/memory"})
    p.t.settle()
    changes = p.t.raw("history", {"limit": 3})["result"]["changes"]
    p.post(label, "/undo", {"change": changes[0]["id"], "back": "/history"})
    p.post(label, "/undo", {"change": "", "run": "", "back": "/history"})
    p.post(label, "/switch", {"enabled": "off", "back": "/activity"})
    p.post(label, "/remember", {"text": "While off", "scope": "user", "back": "/memory"})
    p.post(label, "/switch", {"enabled": "on", "back": "/activity"})
    p.t.settle()
    for path in ("/memory", "/history", "/activity"):
        p.get(label, path)


def page_scenario(t: Tree) -> None:
    prepare(t)
    t.start()
    try:
        everyday_methods(t)
        t.settle()
        page = Page(t)
        try:
            views(page, "daemon up")
            forms(page, "daemon up")
            t.settle()
        finally:
            page.stop()
    finally:
        t.stop()
    page = Page(t)
    try:
        views(page, "no daemon")
    finally:
        page.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", type=Path, required=True, help="the tree to compare against")
    ap.add_argument("--tree", type=Path, default=REPO, help="the tree under test (default: this)")
    ap.add_argument("--show", action="store_true", help="list the pages that are the same too")
    ap.add_argument("--keep", type=Path, help="copy each run's folder and pages here")
    args = ap.parse_args(argv)
    base = run(args.base, page_scenario, args.keep, "page-base")
    tree = run(args.tree, page_scenario, args.keep, "page-tree")
    pages = [label for label, _ in base if " GET " in label or " POST " in label]
    total = compare(base, tree, args.show)
    print(f"{len(base)} answers and pages compared ({len(pages)} pages), {total} differ")
    return 1 if total else 0


if __name__ == "__main__":
    raise SystemExit(main())
