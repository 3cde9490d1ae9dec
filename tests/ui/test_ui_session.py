"""A session's page says what extraction did for it and when the next run is: through
`extraction_progress` and the `extract` job in `status`, against a real daemon and page."""

from __future__ import annotations

import html
import re
from typing import Any

from memd.api.messages import ExtractionProgressResult, JobStatus
from memd.ui.present import extraction_note
from tests.ui.uihelp import UiProcess
from tests.utils import DaemonProcess

JOB = JobStatus(interval_s=1800, next_run="2026-03-02T10:30:00+00:00", last_finished=0)


def progress(turns: int, read: int) -> ExtractionProgressResult:
    return ExtractionProgressResult(session_id="s1", found=True, turns=turns, read=read)


def test_the_note_says_what_was_read_and_what_waits() -> None:
    done = progress(4, 4)
    assert extraction_note(done, JOB, taken=2, enabled=True) == (
        "Extraction read all 4 turns of this session and took the 2 items below."
    )
    said = extraction_note(done, JOB, taken=0, enabled=True)
    assert "read all 4 turns" in said and "found nothing to remember" in said
    waiting = progress(5, 3)
    said = extraction_note(waiting, JOB, taken=0, enabled=True)
    assert said.startswith("2 of 5 turns not read by extraction yet: the next run is at ")
    assert "(every 30 min)" in said and "memd extract --now" in said
    assert "memory is off" in extraction_note(waiting, JOB, taken=0, enabled=False)
    assert "no daemon is running" in extraction_note(waiting, JobStatus(), taken=0, enabled=True)
    assert "does not say" in extraction_note(None, JOB, taken=1, enabled=True)


def session_note(ui: UiProcess, cookie: str, sid: str) -> str:
    status, _, body = ui.request("GET", f"/conversations/session?id={sid}",
                                 headers={"Cookie": cookie})  # fmt: skip
    assert status == 200
    m = re.search(r'<p class="note" id="extraction-note">(.*?)</p>', body, re.S)
    assert m, body[-3000:]
    assert "extraction runs every few minutes" not in body
    return html.unescape(m.group(1))


def test_the_session_page_says_what_extraction_did(daemon: DaemonProcess) -> None:
    d = daemon
    turns: list[dict[str, Any]] = [
        {
            "session_id": "s1",
            "id": "q1",
            "role": "user",
            "content": "I always use vitest for tests",
        },
        {"session_id": "s1", "id": "a1", "role": "assistant", "content": "Noted."},
        {"session_id": "s2", "id": "q1", "role": "user", "content": "What time is it?"},
        {"session_id": "s2", "id": "a1", "role": "assistant", "content": "Noon."},
    ]
    d.call("ingest", {"turns": turns})
    assert d.call("extraction_progress", {"session_id": "s1"}) == {
        "session_id": "s1", "found": True, "turns": 2, "read": 0,
    }  # fmt: skip
    ui = UiProcess(d.home).start()
    try:
        cookie = ui.sign_in()
        before = session_note(ui, cookie, "s1")
        assert before.startswith("2 of 2 turns not read by extraction yet: the next run is at ")
        assert "(every 30 min)" in before
        assert d.call("run_job", {"name": "extract"})["outcome"] == "success"
        after = session_note(ui, cookie, "s1")
        assert after.startswith("Extraction read all 2 turns of this session and took the 1 item")
        assert "(last run " in after
        quiet = session_note(ui, cookie, "s2")
        assert "read all 2 turns" in quiet and "found nothing to remember" in quiet
    finally:
        ui.stop()
    assert d.call("extraction_progress", {"session_id": "nope"})["found"] is False
