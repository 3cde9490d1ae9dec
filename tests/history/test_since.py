"""`history --since`: the forms of a time it reads, and an error naming them for anything else,
in the CLI, over the socket (-32602 naming the field) and on the page."""

from __future__ import annotations

import datetime as dt
import json
import socket
from pathlib import Path

import pytest

from memd.api import messages as m
from memd.core import errors
from memd.core.moments import BadMoment, parse_moment
from tests.ui.uihelp import UiProcess
from tests.utils import DaemonProcess

NOW = dt.datetime(2026, 3, 31, 15, 30).astimezone().timestamp()
DAY = 86400.0


def midnight(y: int, mo: int, d: int) -> float:
    return dt.datetime(y, mo, d).astimezone().timestamp()


@pytest.mark.parametrize(
    ("said", "when"),
    [
        ("2 days ago", NOW - 2 * DAY),
        ("2 DAYS AGO ", NOW - 2 * DAY),
        ("1 day", NOW - DAY),
        ("3 hours ago", NOW - 3 * 3600),
        ("90 min ago", NOW - 90 * 60),
        ("2w", NOW - 14 * DAY),
        ("1 month ago", dt.datetime(2026, 2, 28, 15, 30).astimezone().timestamp()),
        ("1 year ago", dt.datetime(2025, 3, 31, 15, 30).astimezone().timestamp()),
        ("today", midnight(2026, 3, 31)),
        ("yesterday", midnight(2026, 3, 30)),
        ("now", NOW),
        ("2026-11-01", midnight(2026, 11, 1)),
        ("2026-11-01 14:30", dt.datetime(2026, 11, 1, 14, 30).astimezone().timestamp()),
        ("2026-11-01T14:30:00+00:00", dt.datetime(2026, 11, 1, 14, 30, tzinfo=dt.UTC).timestamp()),
        ("2026-11-01T14:30Z", dt.datetime(2026, 11, 1, 14, 30, tzinfo=dt.UTC).timestamp()),
    ],
)
def test_the_forms_it_reads(said: str, when: float) -> None:
    assert parse_moment(said, NOW) == pytest.approx(when)


@pytest.mark.parametrize(
    "said",
    ["garbage", "yesterday-ish", "a\x00b", "2 fortnights ago", "last tuesday", "2026-13-01",
     "2026-11-01 25:00", "1700000000", "", "ago", "-2 days ago"],
)  # fmt: skip
def test_anything_else_is_refused(said: str) -> None:
    with pytest.raises(BadMoment):
        parse_moment(said, NOW)


@pytest.mark.parametrize("since", ["garbage", "yesterday-ish", "a\x00b", "x" * 5000])
def test_the_params_refuse_it_naming_the_field_and_the_forms(since: str) -> None:
    with pytest.raises(errors.InvalidParams, match=r"param 'since'.*2 days|N UNIT ago") as exc:
        m.decode_params(m.HistoryParams, {"since": since})
    assert "2026-11-01" in str(exc.value) and len(str(exc.value)) < 400
    assert m.decode_params(m.HistoryParams, {"since": "2 days ago"}).since_ts() is not None


def raw_call(sock: Path, line: bytes) -> dict[str, object]:
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(30)
        s.connect(str(sock))
        s.sendall(line)
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    answer: dict[str, object] = json.loads(buf)
    return answer


def test_cli_socket_and_page_refuse_a_time_they_cannot_read(daemon: DaemonProcess) -> None:
    # The socket: invalid params (-32602) naming the field, for garbage and for a NUL byte.
    for since in ("garbage", "a\u0000b", "yesterday-ish"):
        req = {"jsonrpc": "2.0", "id": 1, "method": "history", "params": {"since": since}}
        err = raw_call(daemon.sock, json.dumps(req).encode() + b"\n")["error"]
        assert isinstance(err, dict)
        assert err["code"] == -32602, err
        assert "param 'since'" in err["message"] and "N UNIT ago" in err["message"]
    # What it reads still works: the baseline was recorded a moment ago.
    ok = daemon.call("history", {"since": "1 hour ago"})["changes"]
    assert [c["cause"] for c in ok] == ["baseline"]
    assert daemon.call("history", {"since": "2999-01-01"})["changes"] == []
    # The CLI: an error naming the flag and the forms, not "no changes".
    out = daemon.cli("history", "--since", "garbage")
    assert out.returncode == 1 and out.stdout == ""
    assert "--since: 'garbage' is not a time memd reads" in out.stderr
    assert "2 days ago" in out.stderr or "N UNIT ago" in out.stderr
    out = daemon.cli("history", "--since", "yesterday-ish")
    assert out.returncode == 1 and "baseline" not in out.stdout
    assert "baseline" in daemon.cli("history", "--since", "1 hour ago").stdout
    # The page: the error where the changes would be, not "no changes" or every change.
    ui = UiProcess(daemon.home).start()
    try:
        cookie = ui.sign_in()
        status, _, body = ui.request("GET", "/history?since=garbage", headers={"Cookie": cookie})
        assert status == 200
        assert "is not a time memd reads" in body and "baseline" not in body
        status, _, body = ui.request("GET", "/history?since=today", headers={"Cookie": cookie})
        assert status == 200 and "baseline" in body
    finally:
        ui.stop()
