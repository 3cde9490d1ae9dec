"""`memd extract --now` runs now, even on a busy machine; it exits 1 when the run did not do its
work; `memd extract` without `--now` says in words what the job did and when it runs next."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import psutil
import pytest

from memd.core.models import JobOutcome
from tests.fakes.anthropic_server import FakeAnthropic, json_reply, overloaded
from tests.jobenv import API_KEY, Env, clock, env

__all__ = ["clock", "env"]  # the fixtures
from tests.utils import DaemonProcess

TURN = {"session_id": "chat-1", "role": "user", "content": "I use pytest for every project.",
        "id": "u1"}  # fmt: skip
ANSWER: dict[str, list[object]] = {"memories": []}


def test_a_run_asked_for_is_not_deferred_on_a_busy_machine(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The load average is the one thing a test cannot set on a shared machine: it is read here.
    monkeypatch.setattr(psutil, "getloadavg", lambda: (99.0, 99.0, 99.0))
    with FakeAnthropic() as server:
        env.engine.settings = dataclasses.replace(
            env.engine.settings, extract_api_key=API_KEY, extract_base_url=server.base_url
        )
        env.say("chat-1", "I use pytest for every project.")
        scheduled = env.engine.jobs["extract"].fn()  # what the scheduler runs: it waits
        assert scheduled.outcome is JobOutcome.DEFERRED and "system busy" in scheduled.message
        assert server.requests == []
        server.enqueue(json_reply({"memories": []}))
        asked = env.engine.run_job("extract")  # `memd extract --now`
        assert asked.outcome == "success", asked
        assert len(server.requests) == 1


def test_extract_now_exits_1_when_it_must_retry_and_0_when_it_ran(home: Path) -> None:
    with FakeAnthropic() as server:
        d = DaemonProcess(
            home, ANTHROPIC_API_KEY=API_KEY, MEMD_EXTRACT_BASE_URL=server.base_url
        ).start()
        try:
            d.call("ingest", TURN)
            server.enqueue(overloaded())
            res = d.cli("extract", "--now")
            assert res.returncode == 1, res.stdout + res.stderr
            assert "retry_later" in res.stdout and "529" in res.stdout

            server.enqueue(json_reply(ANSWER))
            res = d.cli("extract", "--now")
            assert res.returncode == 0, res.stdout + res.stderr
            assert "extract: success" in res.stdout and "1 LLM request" in res.stdout

            shown = d.cli("extract")
            assert shown.returncode == 0
            assert not shown.stdout.lstrip().startswith("{"), shown.stdout
            assert "extract: last run" in shown.stdout and "success" in shown.stdout
            assert "2 runs recorded" in shown.stdout and "next run in" in shown.stdout
            as_json = json.loads(d.cli("extract", "--json").stdout)
            assert as_json["last_outcome"] == "success" and as_json["runs"] == 2
        finally:
            d.stop()
