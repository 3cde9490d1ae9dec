"""Decode cost of a typical `context` request and answer: msgspec structs vs dataclasses.

    python -m bench.api_decode [--n 20000]

The typed messages of the socket (`memd.api.messages`) could be msgspec `Struct`s or plain
dataclasses checked by one generic validator. This measures both on the same bytes: a
`context` request line's params, and a ~20 KB answer (20 sections, 10 dropped, the shape of a
budget-2000 answer on the bench tree), decoded from JSON into the typed value and validated.
It prints the figures; they are quoted in docs/benchmarks-log.md (2026-11-23).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import time
import types
import typing
from collections.abc import Callable
from typing import Any

import msgspec

from memd.api import messages as m


# -- the dataclass alternative: one generic validator over annotated dataclasses ----------
@dataclasses.dataclass(frozen=True, slots=True)
class DcContextParams:
    query: str = ""
    budget_tokens: int | None = None
    agent_id: str = ""
    project: str = ""
    session_id: str = ""
    relevant_only: bool = False


@dataclasses.dataclass(slots=True)
class DcSection:
    tier: str
    source: str
    title: str
    tokens: int
    reason: str
    score: float | None = None
    path: str | None = None
    rel: str | None = None
    heading: str | None = None
    start_line: int | None = None
    end_line: int | None = None


@dataclasses.dataclass(slots=True)
class DcContextResult:
    enabled: bool
    text: str
    tokens: int
    budget: int
    sections: list[DcSection]
    dropped: list[DcSection]
    project: str = ""


_HINTS: dict[type, dict[str, Any]] = {}


def validate(cls: type, data: Any, where: str = "$") -> Any:
    """Build dataclass `cls` from JSON values, checking every field's type (the one validator)."""
    if not isinstance(data, dict):
        raise TypeError(f"{where}: expected an object")
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls)
    kw = {}
    for f in dataclasses.fields(cls):
        if f.name in data:
            kw[f.name] = _check(hints[f.name], data[f.name], f"{where}.{f.name}")
    return cls(**kw)


def _check(tp: Any, v: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(tp):
            try:
                return _check(arg, v, where)
            except TypeError:
                continue
        raise TypeError(f"{where}: {v!r} does not match {tp}")
    if origin is list:
        if not isinstance(v, list):
            raise TypeError(f"{where}: expected a list")
        (item,) = typing.get_args(tp)
        return [_check(item, x, f"{where}[{i}]") for i, x in enumerate(v)]
    if tp is type(None):
        if v is not None:
            raise TypeError(f"{where}: expected null")
        return v
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return validate(tp, v, where)
    if tp is float and isinstance(v, int) and not isinstance(v, bool):
        return float(v)
    if tp is int and isinstance(v, bool):
        raise TypeError(f"{where}: expected int")
    if not isinstance(v, tp):
        raise TypeError(f"{where}: expected {tp.__name__}")
    return v


# -- sample messages -------------------------------------------------------------------------
def sample_request() -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": 7, "method": "context",
         "params": {"query": "how should I test this vue component", "budget_tokens": 2000,
                    "project": "/home/user/code/shop", "session_id": "0b6e-41f2"}}
    ).encode()  # fmt: skip


def sample_result() -> bytes:
    body = "- prefers small components with vitest and testing-library for the behaviour\n" * 8

    def section(i: int, dropped: bool) -> dict[str, Any]:
        d: dict[str, Any] = {
            "tier": "user", "source": "topic", "title": f"topics/vue.md › Part {i}",
            "tokens": 120, "reason": "matches the query", "path": f"/m/topics/t{i}.md",
            "rel": f"topics/t{i}.md", "heading": f"Part {i}", "start_line": 3 * i,
            "end_line": 3 * i + 8,
        }  # fmt: skip
        if not dropped:
            d["score"] = 4.25 + i
        return d

    result = {
        "enabled": True,
        "text": "<memory>\n" + body * 20 + "</memory>",
        "tokens": 1962,
        "budget": 2000,
        "project": "shop",
        "sections": [section(i, False) for i in range(20)],
        "dropped": [section(i, True) for i in range(10)],
    }
    return json.dumps({"jsonrpc": "2.0", "id": 7, "result": result}).encode()


def timed(fn: Callable[[], Any], n: int) -> float:
    """Median of 5 rounds of the mean µs per call."""
    rounds = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        rounds.append((time.perf_counter() - t) / n * 1e6)
    return statistics.median(rounds)


class _Envelope(msgspec.Struct):
    result: msgspec.Raw


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=20_000)
    n = ap.parse_args().n
    req, res = sample_request(), sample_result()

    def ms_request() -> Any:
        return m.decode_params(m.ContextParams, json.loads(req)["params"])

    def dc_request() -> Any:
        return validate(DcContextParams, json.loads(req)["params"])

    dec = msgspec.json.Decoder(_Envelope)
    res_dec = msgspec.json.Decoder(m.ContextResult)

    def ms_result() -> Any:
        return res_dec.decode(dec.decode(res).result)

    def dc_result() -> Any:
        return validate(DcContextResult, json.loads(res)["result"])

    assert ms_result().sections[3].score == 7.25 and dc_result().sections[3].score == 7.25
    rows = [
        ("`context` request params (JSON line → typed params)", ms_request, dc_request, n),
        (f"`context` answer ({len(res):,} bytes → typed result)", ms_result, dc_result, n // 10),
    ]
    print("| message | msgspec Struct | dataclass + validator | ratio |")
    print("|---|---|---|---|")
    for name, a, b, k in rows:
        ta, tb = timed(a, k), timed(b, k)
        print(f"| {name} | {ta:.1f} µs | {tb:.1f} µs | {tb / ta:.1f}× |")


if __name__ == "__main__":
    main()
