"""What `memd search` prints a person: excerpts cut between words, Markdown as text, the list
items that matched rather than the whole section, and for a turn its date, its assistant and
short ids that `forget` takes back. A real daemon reading real Claude Code transcripts."""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from memd.core.text import snippet
from tests.utils import DaemonProcess, wait_for

SESSION = "5f1c2d3e-0000-4000-8000-000000000001"
TURN = "9a8b7c6d-1111-4222-8333-444455556666"
PROSE = (
    "We spent the morning going through the deployment checklist again because the staging"
    " cluster kept rejecting the new certificates, and after a long detour through the ingress"
    " annotations it turned out the CI job did not configure environment variables before"
    " importing the client, so every request went to the default endpoint instead of ours."
)


def short_id(ident: str) -> str:
    """How the journal's headings name a long id: its first 8 characters and 4 of its sha1."""
    return f"{ident[:8]}-{hashlib.sha1(ident.encode()).hexdigest()[:4]}"


def transcript(folder: Path) -> None:
    """One Claude Code session, as Claude Code writes it."""
    lines = [
        {"type": "summary", "summary": "Fix the flaky login test", "leafUuid": TURN},
        {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/home/u/proj",
         "sessionId": SESSION, "version": "2.1.202", "type": "user", "uuid": TURN,
         "timestamp": "2026-11-03T01:12:00.000Z",
         "message": {"role": "user", "content": "why does the quokka login test fail on CI?"}},
    ]  # fmt: skip
    path = folder / "-home-u-proj" / f"{SESSION}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


@pytest.fixture(scope="module")
def daemon() -> Iterator[DaemonProcess]:
    with tempfile.TemporaryDirectory(prefix="memd-t-", dir="/tmp") as tmp:
        home = Path(tmp)
        transcript(home / "claude")
        d = DaemonProcess(
            home, MEMD_LOGS_CLAUDE_CODE="true", MEMD_LOGS_CLAUDE_DIR=str(home / "claude")
        )
        d.start()
        try:
            yield d
        finally:
            d.stop()


def search(d: DaemonProcess, *args: str) -> str:
    out = d.cli("search", *args)
    assert out.returncode == 0, out.stderr
    return out.stdout


def found(d: DaemonProcess, word: str, *args: str) -> str:
    """`memd search WORD ARGS` once it finds something holding the word."""
    out: str = wait_for(lambda: (lambda o: o if word in o else None)(search(d, word, *args)), 10)
    return out


def test_an_excerpt_is_cut_between_words() -> None:
    cut = snippet(PROSE, ["configure"], width=80)
    assert cut.startswith("…") and cut.endswith("…")
    words = set(re.findall(r"\w+", PROSE))
    assert all(w in words for w in re.findall(r"\w+", cut)), cut
    # The words around the match are whole: "environment", never "environ".
    assert "configure environment" in cut


def test_markdown_is_shown_as_text(daemon: DaemonProcess) -> None:
    (daemon.memory / "journal" / "2026-11-20.md").write_text(
        "# 2026-11-20\n\n## Release · 7d1e4b20-aa10\n\n"
        "- 10:32 **Q:** when do we tag the wombat release? **A:** On `Friday`, after the"
        " [checklist](https://example.com/list). <!-- memd turn=q1 -->\n"
    )
    out = wait_for(
        lambda: search(daemon, "wombat") if "wombat" in search(daemon, "wombat") else "", 10
    )
    assert "Q: when do we tag the wombat release? A: On Friday, after the checklist." in out, out
    assert "**" not in out and "`" not in out and "](" not in out


def test_the_items_that_matched_are_shown_not_the_whole_section(daemon: DaemonProcess) -> None:
    (daemon.memory / "_core" / "notes.md").write_text(
        "# Notes\n\n## Notes\n- I prefer tabs over spaces\n- always use vitest for the kiwi app"
        " <!-- memd id=m_1 -->\n- 我的记忆力不好，重要的事情要写下来\n"
    )
    out = found(daemon, "vitest", "--scope", "memory")
    lines = out.splitlines()
    assert lines[1].strip() == "- always use vitest for the kiwi app", out
    assert "tabs" not in out and "记忆力" not in out and "memd id" not in out


def test_a_turn_shows_its_date_assistant_and_short_ids(daemon: DaemonProcess) -> None:
    out = found(daemon, "quokka", "--scope", "conversations")
    first = out.splitlines()[0]
    assert "claude-code" in first and "2026-11-03" in first, first
    assert f"session {short_id(SESSION)}" in first and f"turn {short_id(TURN)}" in first
    assert SESSION not in out and TURN not in out
    assert "user: why does the quokka login test fail on CI?" in out
    # The short ids it prints are the ones `forget` takes.
    gone = daemon.cli("forget", "--session", short_id(SESSION), "--turn", short_id(TURN), "--yes")
    assert gone.returncode == 0, gone.stderr
    assert "no matches" in search(daemon, "quokka", "--scope", "conversations")
