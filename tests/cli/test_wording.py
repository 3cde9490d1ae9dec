"""What memd prints reads right: one noun for one thing, numbers as 200,000 in the CLI and on
the page, an import headline that adds up, a job's counts said once, no scheduler chatter in the
log, and the README's examples as memd writes them."""

from __future__ import annotations

import re
from pathlib import Path

from memd.core.text import counted
from tests.ui.uihelp import UiProcess
from tests.utils import ROOT, DaemonProcess

README = (ROOT / "README.md").read_text()


def test_counted_says_one_thing_and_many() -> None:
    assert counted(1, "section") == "1 section"
    assert counted(0, "section") == "0 sections"
    assert counted(200_000, "token") == "200,000 tokens"
    assert counted(1, "memory", "memories") == "1 memory"
    assert counted(3, "memory", "memories") == "3 memories"


def test_the_cli_the_page_and_the_log_read_right(home: Path, tmp_path: Path) -> None:
    d = DaemonProcess(home, MEMD_LOG_LEVEL="INFO").start()
    try:
        # No APScheduler INFO chatter at start ("Adding job tentatively" four times).
        log = d.log.read_text()
        assert "Adding job tentatively" not in log and "apscheduler" not in log, log
        # One turn in one session: singular nouns.
        out = d.cli(
            "ingest",
            input='{"session_id": "s1", "role": "user", "content": "I use vitest for tests"}\n',
        )
        assert out.returncode == 0 and out.stdout.strip() == "1 turn added, 0 updated in 1 session"
        # A job run says its counts once, in words, with the run's id for `undo --run`.
        out = d.cli("extract", "--now")
        assert out.returncode == 0, out.stderr
        assert "1 turn of 1 session (offline rules)" in out.stdout
        assert "(sessions 1" not in out.stdout and "turns 1" not in out.stdout
        assert re.search(r"\(run \d+\)$", out.stdout.strip()), out.stdout
        status = d.cli("status").stdout
        assert re.search(r"index: \d+ files, \d+ sections, 1 item \(", status), status
        assert "1 turn in 1 session" in status
        # The README's item is what `remember` writes.
        r = d.call("remember", {"text": "always use vitest"})
        line = next(x for x in Path(r["path"]).read_text().splitlines() if "always use vitest" in x)
        shown = re.search(r"`(- always use vitest <!-- memd [^`]*-->)`", README)
        assert shown is not None
        shape = re.sub(r"=\S+", "=…", shown.group(1))
        assert re.sub(r"=\S+", "=…", line) == shape, (line, shown.group(1))
        # The README's quotas are the daemon's (the headings paid first name the project, so a
        # long project name moves them by a few tokens: "about").
        quotas = d.call("context", {"query": "x", "budget_tokens": 2000})["quotas"]
        said = re.search(r"tiers get about (\d+)/(\d+)/(\d+)", README.replace("\n", " "))
        assert said is not None
        for tier, n in zip(("user", "project", "conversation"), said.groups(), strict=True):
            assert abs(quotas[tier] - int(n)) <= 5, (tier, quotas)
        # Export, then import into an empty home: the headline's total is the sum of its parts.
        dump = tmp_path / "out.json"
        out = d.cli("export", str(dump))
        assert out.returncode == 0 and "exported 1 session (1 chat)" in out.stdout, out.stdout
        ui = UiProcess(home).start()
        try:
            cookie = ui.sign_in()
            _, _, page = ui.request("GET", "/activity", headers={"Cookie": cookie})
        finally:
            ui.stop()
        assert 'offline rules · <span class="why">auto: no Anthropic key' in page
        assert "Off: set sync.backend" in page and "Off. " not in page
        assert re.search(r"\d+ files, \d+ sections, 2 items ·", page)
        assert "1 session, 1 turn" in page
    finally:
        d.stop()
    other = DaemonProcess(tmp_path / "b").start()
    try:
        out = other.cli("import", str(dump))
        assert out.returncode == 0, out.stderr
        head = out.stdout.splitlines()[0]
        m = re.search(r": ([\d,]+) new \((.*)\)$", head)
        assert m, head
        parts = [int(p.split()[0].replace(",", "")) for p in m.group(2).split(", ")]
        assert sum(parts) == int(m.group(1).replace(",", "")), head
        assert "1 new session of 1" in out.stdout and "1 new turn," in out.stdout
    finally:
        other.stop()
