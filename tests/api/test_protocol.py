"""The wire format: the daemon's fast encoder must say what the stdlib encoder says."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memd.api import protocol
from memd.core.errors import ParseRequestError, ProtocolError


@dataclass
class _Point:
    x: int


@pytest.mark.parametrize(
    "value",
    [
        {"text": '记忆 ✓ "quoted" \\ back\nslash\ttab \u2028', "n": 3, "ok": True, "none": None},
        {"score": 0.1234, "neg": -2.5, "big": 2**62, "list": [1, "a", {"b": []}]},
        {
            "path": Path("/tmp/x"),
            "when": dt.datetime(2026, 11, 21, 10, 0, 0),
            "day": dt.date(2026, 1, 2),
        },
        {1: "int key", "obj": _Point(3)},
    ],
)
def test_fast_encoder_matches_the_stdlib_one(value: dict[str, Any]) -> None:
    fast = protocol.encode_result(7, value)
    slow = protocol._dump({"jsonrpc": "2.0", "id": 7, "result": value})
    assert fast.endswith(b"\n") and fast.count(b"\n") == 1
    assert json.loads(fast) == json.loads(slow)


def test_values_the_fast_encoder_refuses_fall_back() -> None:
    line = protocol.encode_result("a", {"huge": 2**70})
    assert json.loads(line)["result"]["huge"] == 2**70


def test_decode_rejects_what_is_not_a_request() -> None:
    with pytest.raises(ParseRequestError):
        protocol.decode_request(b"{not json")
    with pytest.raises(ProtocolError):
        protocol.decode_request(b'{"jsonrpc": "1.0", "method": "x"}')
    req = protocol.decode_request(b'{"jsonrpc": "2.0", "method": "status", "id": 1}')
    assert (req.method, req.params, req.id) == ("status", {}, 1)
