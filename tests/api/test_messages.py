"""Typed messages: params validation names the field, results round-trip, one error table."""

from __future__ import annotations

from typing import Any

import pytest

from memd.api import messages as m
from memd.api import protocol
from memd.core import errors


@pytest.mark.parametrize(
    ("params", "field", "words"),
    [
        ({"budget_tokens": -1}, "budget_tokens", ">= 0"),
        ({"budget_tokens": 10**9}, "budget_tokens", "<= 200000"),
        ({"budget_tokens": True}, "budget_tokens", "expected int, got bool"),
        ({"budget_tokens": "2000"}, "budget_tokens", "expected int, got str"),
        ({"query": 5}, "query", "expected str, got int"),
        ({"relevant_only": "yes"}, "relevant_only", "expected bool"),
    ],
)
def test_invalid_params_name_the_field(params: dict[str, Any], field: str, words: str) -> None:
    with pytest.raises(errors.InvalidParams) as info:
        m.decode_params(m.ContextParams, params)
    assert str(info.value).startswith(f"param {field!r}: ")
    assert words in str(info.value)


def test_nested_fields_are_named_with_their_path() -> None:
    with pytest.raises(errors.InvalidParams, match=r"param 'turns': expected array"):
        m.decode_params(m.IngestParams, {"turns": "x"})
    with pytest.raises(errors.InvalidParams, match=r"param 'scope': invalid enum value 'galaxy'"):
        m.decode_params(m.RememberParams, {"text": "x", "scope": "galaxy"})
    with pytest.raises(errors.InvalidParams, match=r"missing required field `enabled`"):
        m.decode_params(m.SetEnabledParams, {})


def test_null_is_absent_and_unknown_fields_are_ignored() -> None:
    p = m.decode_params(m.SearchParams, {"query": "x", "limit": None, "future_option": 1})
    assert (p.query, p.limit, p.scope) == ("x", 10, "all")
    assert m.decode_params(m.ContextParams, None).budget_tokens is m.UNSET
    with pytest.raises(errors.InvalidParams, match="must be an object"):
        m.decode_params(m.ContextParams, [1, 2])


def test_unset_provenance_is_left_out_and_round_trips() -> None:
    raw = {
        "enabled": True, "text": "t", "tokens": 3, "budget": 10, "project": "",
        "sections": [{"tier": "conversation", "source": "ingest", "title": "s", "tokens": 3,
                      "score": 1.0, "reason": "r", "session_id": "s1", "kind": "session-summary"}],
        "dropped": [{"tier": "user", "source": "topic", "title": "x", "tokens": 9, "reason": "r",
                     "path": "/m/x.md", "start_line": 1, "end_line": 4, "truncated": True}],
    }  # fmt: skip
    typed = m.decode_result(m.CONTEXT, raw)
    assert typed.sections[0].path is m.UNSET and typed.dropped[0].truncated is True
    assert m.to_builtins(typed) == raw


def test_every_error_class_has_one_code_and_back() -> None:
    for cls, code in protocol.ERRORS:
        assert protocol.error_code(cls("x")) == code
        back = protocol.error_class(code)
        assert back is not None and protocol.error_code(back("x")) == code
    # Every error memd raises on purpose has its code; -32000 is left for bugs.
    assert protocol.error_code(errors.StoreError("x")) == protocol.MEMD_ERROR
    assert protocol.error_code(errors.SyncPermanent("x")) == protocol.MEMD_ERROR
    assert protocol.error_class(protocol.APP_ERROR) is None


def test_batches_are_refused_as_invalid_requests() -> None:
    with pytest.raises(errors.ProtocolError, match="batches are not supported") as info:
        protocol.decode_request(b'[{"jsonrpc": "2.0", "id": 1, "method": "status"}]')
    assert protocol.error_code(info.value) == -32600


def test_typed_requests_encode_like_plain_ones() -> None:
    import json

    line = protocol.encode_request("context", m.ContextParams(query="vue", budget_tokens=500), 3)
    assert line.endswith(b"}\n") and line.count(b"\n") == 1
    assert json.loads(line) == {
        "jsonrpc": "2.0", "id": 3, "method": "context",
        "params": {"query": "vue", "budget_tokens": 500, "agent_id": "", "project": "",
                   "session_id": "", "relevant_only": False, "trust_folder": False,
                   "source": ""},
    }  # fmt: skip
    out = json.loads(protocol.encode_result("a", m.SetEnabledResult(enabled=True)))
    assert out == {"jsonrpc": "2.0", "id": "a", "result": {"enabled": True}}


@pytest.mark.parametrize("since", [253402300800.0, -1.0, 1e300])
def test_a_history_since_no_date_can_show_is_invalid_params(since: float) -> None:
    # It reached git's date formatting and came back as an internal error ("year 10000").
    with pytest.raises(errors.InvalidParams, match=r"param 'since'"):
        m.decode_params(m.HistoryParams, {"since": since})
    assert m.decode_params(m.HistoryParams, {"since": 253402300799.0}).since == 253402300799.0
