"""`job_runs`: the recorded runs of the scheduled jobs (what each run did, not only the last)."""

from __future__ import annotations

import pytest

from memd.core.errors import InvalidParams
from tests.utils import DaemonProcess

TURNS = [
    {"session_id": "s1", "id": "u1", "role": "user", "content": "I work at Acme Corp as a backend engineer"},
    {"session_id": "s1", "id": "a1", "role": "assistant", "content": "Noted."},
]  # fmt: skip


def test_job_runs_lists_what_each_run_did_newest_first(daemon: DaemonProcess) -> None:
    daemon.call("ingest", {"turns": TURNS})
    extract = daemon.call("run_job", {"name": "extract"})
    daemon.call("run_job", {"name": "archive"})
    runs = daemon.call("job_runs", {})["runs"]
    mine = [r for r in runs if r["job"] in ("extract", "archive")]
    assert [r["job"] for r in mine] == ["archive", "extract"]
    assert [r["started"] for r in runs] == sorted((r["started"] for r in runs), reverse=True)
    ran = mine[1]
    assert ran["outcome"] == "success" and ran["counts"] == extract["counts"]
    assert ran["counts"]["added"] >= 1 and ran["counts"]["run"]  # the id `undo` takes
    assert ran["message"] == extract["message"]
    assert ran["finished"] >= ran["started"] and ran["seconds"] >= 0
    only = daemon.call("job_runs", {"name": "extract"})["runs"]
    assert [r["id"] for r in only] == [ran["id"]]
    assert len(daemon.call("job_runs", {"limit": 1})["runs"]) == 1
    assert daemon.call("job_runs", {"name": "no-such-job"})["runs"] == []


@pytest.mark.parametrize(
    "bad",
    [{"limit": 0}, {"limit": 201}, {"limit": "5"}, {"limit": True}, {"name": 3}],
)
def test_bad_params_are_refused_naming_the_field(
    module_daemon: DaemonProcess, bad: dict[str, object]
) -> None:
    with pytest.raises(InvalidParams, match=f"param '{next(iter(bad))}'"):
        module_daemon.call("job_runs", bad)
