"""The LLM extraction's wiring, scored with a fake OpenAI-compatible server (no model here).

    python -m bench.extraction_replay [--data FILE] [--out docs/benchmarks.md] [--no-write]

Each case of the extraction dev set runs through the real extraction job exactly as
`bench/extraction_eval.py` runs it, with `llm.backend = "openai"` pointed at a loopback server
that answers what a model would if it found every expected fact: one memory per expected fact
(and, for a supersession case, the old value first with the same subject), nothing for a
negative. So the score is not the quality of a model, which needs one (`extraction_eval.py
--extractor llm`), but of everything around it — parsing, validation, retries, placement and
supersession — under the faults real servers and small models show. Cases are dealt round-robin
to the fault profiles below, by their order in the file; a case is run again while a run says
to retry (at most 4 runs).

The answers are written here from each case's expectations, not recorded from a model; content
is "User <subject>: <first keyword>".
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from collections import deque
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from bench.extraction_eval import (
    DEFAULT_DATA,
    Case,
    load_cases,
    run_case_with,
    score,
    summary_rows,
)
from bench.loopback import LoopbackServer
from bench.report import REPO, machine_line, publish, table

BLOCK = "extraction-replay"
TIMEOUT_S = 1.0
MAX_RUNS = 4


@dataclasses.dataclass(frozen=True, slots=True)
class Answer:
    status: int = 200
    text: str | None = None
    delay: float = 0.0
    usage: bool = True


def memories(case: Case, *, sparse: bool = False) -> dict[str, Any]:
    """What a model that found every expected fact would answer."""
    out: list[dict[str, Any]] = []
    first = case.expect[0] if case.expect else None
    for keys in case.superseded:
        assert first is not None
        out.append(_memory(first.type, "old", keys[0], sparse))
    for e in case.expect:
        out.append(_memory(e.type, "new" if case.superseded else e.type, e.keys[0], sparse))
    return {"memories": out, "signals": []}


def _memory(type_: str, label: str, key: str, sparse: bool) -> dict[str, Any]:
    # A supersession case's two values share a subject: the newer one replaces the older.
    subject = "value" if label in ("old", "new") else ""
    memory: dict[str, Any] = {"content": f"User {type_}: {key}", "type": type_}
    if not sparse:
        memory.update(importance=6, subject=subject, topic="", due="")
    elif subject:
        memory["subject"] = subject
    return memory


def _text(case: Case) -> str:
    return json.dumps(memories(case), ensure_ascii=False)


def _good(case: Case) -> Answer:
    return Answer(text=_text(case))


CUT = Answer(text='{"memories": [{"content": "User personal: ', usage=True)
PROFILES: dict[str, Any] = {
    "clean JSON": lambda c: [_good(c)],
    "fence and prose": lambda c: [Answer(text="Here you go:\n```json\n" + _text(c)
                                         + "\n```\nLet me know if you need more.")],
    "<think> first": lambda c: [Answer(text="<think>The user said {x}.</think>\n" + _text(c))],
    "fields left out, no usage": lambda c: [Answer(text=json.dumps(memories(c, sparse=True)),
                                                  usage=False)],
    "malformed, then good": lambda c: [CUT, _good(c)],
    "malformed twice, then good next run": lambda c: [CUT, Answer(text="Sorry."), _good(c)],
    "429, then good next run": lambda c: [Answer(status=429), _good(c)],
    "500, then good next run": lambda c: [Answer(status=500), _good(c)],
    "too slow, then good next run": lambda c: [dataclasses.replace(_good(c), delay=TIMEOUT_S + 1),
                                               _good(c)],
}  # fmt: skip


class ReplayServer(LoopbackServer):
    """A loopback OpenAI-compatible server answering from a queue the bench fills per case."""

    def __init__(self) -> None:
        self.queue: deque[Answer] = deque()
        self.requests = 0
        super().__init__(self._handler())

    def next(self) -> Answer:
        self.requests += 1
        return self.queue.popleft() if self.queue else Answer(status=500)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        replay = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                answer = replay.next()
                time.sleep(answer.delay)
                body = _body(answer)
                try:
                    self.send_response(answer.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # memd gave up waiting (the slow profile)

        return Handler


def _body(answer: Answer) -> bytes:
    if answer.status != 200:
        return json.dumps({"error": {"message": f"replayed {answer.status}"}}).encode()
    data: dict[str, Any] = {"choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": answer.text}}]}  # fmt: skip
    if answer.usage:
        data["usage"] = {"prompt_tokens": 900, "completion_tokens": 60}
    return json.dumps(data).encode()


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help=f"case file (default {DEFAULT_DATA})"
    )
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "benchmarks.md")
    ap.add_argument("--no-write", action="store_true", help="print only, do not touch --out")
    args = ap.parse_args(argv)
    cases = load_cases(args.data)
    names = list(PROFILES)
    rows: list[list[object]] = []
    by_profile: dict[str, list[Any]] = {n: [] for n in names}
    runs: dict[str, int] = dict.fromkeys(names, 0)
    t0 = time.perf_counter()
    with ReplayServer() as server:

        def configure(settings: Any) -> Any:
            return dataclasses.replace(settings, llm_backend="openai", llm_base_url=server.base_url,
                                       llm_model="replay", extract_timeout_s=TIMEOUT_S, llm_rpm=0)  # fmt: skip

        for i, case in enumerate(cases):
            name = names[i % len(names)]
            server.queue.clear()
            server.queue.extend(PROFILES[name](case))
            memories_, n = run_case_with(case, configure, max_runs=MAX_RUNS)
            by_profile[name].append(score(case, memories_))
            runs[name] += n
        requests = server.requests
    took = time.perf_counter() - t0
    for name in names:
        scores = by_profile[name]
        row = summary_rows(name, scores)[-1]  # the "all" row
        rows.append([*row[:1], *row[2:], f"{runs[name]} for {len(scores)}"])
    all_scores = [s for n in names for s in by_profile[n]]
    rows.append([*summary_rows("all profiles", all_scores)[-1][:1],
                 *summary_rows("all profiles", all_scores)[-1][2:], f"{sum(runs.values())}"])  # fmt: skip
    failed = [s.case.id for s in all_scores if not s.passed]
    body = "\n\n".join([
        "### Extraction wiring with a replaying server (no model)",
        "Every case of the dev set through the real extraction job, `llm.backend = \"openai\"` "
        "pointed at a loopback server that answers with every expected fact (written from the "
        "case, not recorded from a model), under the faults in the first column; a run that "
        "says to retry is run again (at most 4). What is scored is the wiring — parsing, "
        "validation, retries, placement, supersession — not a model's quality.",
        table(["profile", "cases passed", "positive", "supersession", "negative",
               "fact recall", "negatives with FP", "FP", "precision", "runs"], rows),  # fmt: skip
        f"- {len(all_scores)} cases, {requests} requests, in {took:.1f} s; failing: "
        + (", ".join(failed) if failed else "none") + ".",
        machine_line(),
    ])  # fmt: skip
    publish(args, BLOCK, body)


if __name__ == "__main__":
    main()
