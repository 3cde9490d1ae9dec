"""What the LLM jobs share: the backend, the LLM gate, the budgets and the turn text they send.

An LLM job opens its model with `open_llm` (the backend `memd.llm.choice` picks, or a
configuration error) and asks `gate_llm` before spending anything: memory switched off, a
configuration error already reported for the same settings (so a bad key is not retried every
interval), the machine on battery or busy (`conditions`; scheduled runs only, not a run asked
for with `--now`), or today's token budget of that backend spent. Requests and tokens are
recorded per run and backend in `llm_runs`, in the same transaction as the work they paid for.
A server on this machine or network has no token budget: `llm.rpm` paces its requests instead.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit, urlunsplit

from memd.api.messages import LLMStatus
from memd.core.conditions import SystemState, day_of, defer_reason, is_requested_now
from memd.core.errors import LLMConfigError
from memd.core.models import JobOutcome, JobResult
from memd.core.settings import Settings
from memd.core.text import META_COMMENT, counted, estimate_tokens, normalize
from memd.db import Connection, Store
from memd.llm import repo
from memd.llm.answers import LLMUsage
from memd.llm.choice import Choice, Undecided, build, choose, llm_key, llm_url
from memd.llm.client import LLM

# A reported configuration error is not retried with the same settings for this long.
CONFIG_ERROR_QUIET_S = 6 * 3600
# The fixed part of an LLM request: system prompt, schema and instructions.
PROMPT_TOKENS = 900
MAX_TURN_CHARS = 4000
# A local server has no token budget; this stands for "no limit" in the batch arithmetic.
UNLIMITED = 10**12
_RECALLED = re.compile(r'<memory source="memd">.*?(?:</memory>|\Z)', re.S)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
# Lines shorter than this are not treated as echoes of a memory ("- React" is not one).
MIN_ECHO_CHARS = 12


class LLMJob(Protocol):
    """What the gate and the budget read from the job that asks (a memory `JobContext`)."""

    @property
    def settings(self) -> Settings: ...

    @property
    def store(self) -> Store: ...

    @property
    def now(self) -> Callable[[], float]: ...

    @property
    def probe(self) -> Callable[[], SystemState]: ...


def strip_recalled(text: str, echoes: set[str]) -> str:
    """Turn text without what memd gave the assistant: the fenced context block, and lines
    that repeat a stored memory (`echoes` holds normalised memory texts)."""
    text = _RECALLED.sub("", text)
    kept = []
    for line in text.split("\n"):
        core = META_COMMENT.sub("", _BULLET.sub("", line)).strip()
        if len(core) >= MIN_ECHO_CHARS and normalize(core) in echoes:
            continue
        kept.append(line)
    return "\n".join(kept).strip()


def turn_tokens(text: str) -> int:
    """Estimated prompt tokens of one turn (the extractor cuts turns at 4000 characters)."""
    return estimate_tokens(text[:MAX_TURN_CHARS]) + 12


def open_llm(ctx: LLMJob, job: str) -> tuple[Choice, LLM | None] | JobResult:
    """The backend in use and its LLM (None: the offline rules), or the configuration error
    that stops the job (latched like any other)."""
    choice = choose(ctx.settings)
    try:
        return choice, build(ctx.settings, choice)
    except LLMConfigError as exc:
        msg = f"{exc}" + (f" ({exc.hint})" if exc.hint else "")
        latch_config_error(ctx, msg)
        return JobResult(job, JobOutcome.CONFIG_ERROR, msg)


def llm_config_fingerprint(settings: Settings) -> str:
    """Identifies the LLM configuration without storing the key."""
    s = settings
    raw = "\0".join((s.llm_backend, s.anthropic_key, llm_key(s), s.llm_model, s.extract_model,
                     llm_url(s), s.llm_claude_path))  # fmt: skip
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


@dataclass
class Budget:
    """What one run may still spend: the per-run cap and what is left of the day's budget, in
    tokens of its backend (a local server: no token limit)."""

    job: str
    backend: str
    model: str
    started: float
    day: dt.date
    daily_limit: int
    run_limit: int
    spent_today: int = 0
    spent_run: int = 0
    requests: int = 0
    run_id: int | None = None

    @classmethod
    def start(cls, ctx: LLMJob, job: str, choice: Choice) -> Budget:
        started = ctx.now()
        day = day_of(started)
        s = ctx.settings
        daily, run = (UNLIMITED, UNLIMITED) if choice.local else (s.extract_daily_tokens,
                                                                  s.extract_run_tokens)  # fmt: skip
        spent = repo.tokens_on(ctx.store.read(), day, choice.backend)
        return cls(job, choice.backend, choice.model, started, day, daily, run, spent_today=spent)

    def room(self) -> int:
        return max(0, min(self.daily_limit - self.spent_today, self.run_limit - self.spent_run))

    def exhausted_message(self, need: int) -> str:
        if self.daily_limit - self.spent_today <= self.run_limit - self.spent_run:
            return (
                f"daily token budget reached ({self.spent_today} of {self.daily_limit} spent today)"
            )
        return f"per-run token cap reached ({self.spent_run} of {self.run_limit}; next batch needs ~{need})"

    def write(self, conn: Connection, usage: LLMUsage) -> None:
        """Record requests and tokens inside the caller's write transaction."""
        self.run_id = repo.add_usage(
            conn, self.run_id, job=self.job, started=self.started, day=self.day,
            backend=self.backend, model=self.model, requests=usage.requests,
            input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
        )  # fmt: skip

    def spent(self, usage: LLMUsage) -> None:
        """Count requests once their transaction committed."""
        self.spent_today += usage.tokens
        self.spent_run += usage.tokens
        self.requests += usage.requests

    def counts(self) -> dict[str, int]:
        return {"llm_requests": self.requests, "tokens": self.spent_run}

    def cost(self) -> str:
        """What the run spent, in the words of a job's message."""
        return f"{counted(self.requests, 'LLM request')}, {counted(self.spent_run, 'token')}"


def gate_llm(ctx: LLMJob, job: str, choice: Choice) -> JobResult | None:
    """A result that stops an LLM job before it spends anything, or None to go ahead."""
    s = ctx.settings
    err = latched_config_error(ctx)
    if err:
        return JobResult(
            job, JobOutcome.CONFIG_ERROR, f"{err} (not retried until the LLM settings change)"
        )
    # Load and battery defer scheduled runs only; a person who asked for this run gets it.
    why = "" if is_requested_now() else defer_reason(ctx.probe(), s.jobs_min_battery)
    if why:
        return JobResult(job, JobOutcome.DEFERRED, f"waiting: {why}")
    if choice.local:
        return None
    spent = repo.tokens_on(ctx.store.read(), day_of(ctx.now()), choice.backend)
    if spent >= s.extract_daily_tokens:
        return JobResult(job, JobOutcome.BUDGET_EXHAUSTED,
                         f"daily token budget of {choice.backend} reached ({spent} of"
                         f" {s.extract_daily_tokens} spent today)", {"tokens_today": spent})  # fmt: skip
    return None


def latched_config_error(ctx: LLMJob) -> str:
    """The configuration error reported for the current LLM settings, if still fresh."""
    raw = repo.config_error(ctx.store.read())
    if not raw:
        return ""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        return ""
    if data.get("fp") != llm_config_fingerprint(ctx.settings):
        return ""
    if ctx.now() - float(data.get("at", 0)) > CONFIG_ERROR_QUIET_S:
        return ""
    return str(data.get("message", "configuration error"))


def latch_config_error(ctx: LLMJob, message: str) -> None:
    value = json.dumps(
        {"fp": llm_config_fingerprint(ctx.settings), "at": ctx.now(), "message": message}
    )
    ctx.store.w.run(lambda c: repo.latch_config_error(c, value))


def clear_config_error(conn: Connection) -> None:
    """Inside a write transaction: a request went through, the configuration works."""
    repo.clear_config_error(conn)


def _shown_url(url: str) -> str:
    """A base URL as it may be shown: without a user or password in it."""
    parts = urlsplit(url)
    if not parts.hostname:
        return url
    netloc = parts.hostname + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def llm_status(ctx: LLMJob) -> LLMStatus:
    """The `llm` part of `status`: the backend and why, its model, what runs cost, why jobs
    wait. Before the daemon's first choice is made (a probe still running) the backend is
    "deciding"."""
    s = ctx.settings
    day = day_of(ctx.now())
    conn = ctx.store.read()
    try:
        choice = choose(s, cached_only=True)
    except Undecided:
        choice = Choice("deciding", "auto: checking what is available")
    out = LLMStatus(
        backend=choice.backend,
        # The name older clients read: "anthropic", else "offline rules" or the backend.
        mode="offline rules" if choice.backend == "off" else choice.backend,
        why=choice.why,
        model=choice.model,
        base_url=_shown_url(choice.where) if choice.backend == "openai" else "",
        # Where the daemon found its key (never the key): `memd doctor` compares it with a shell's.
        key_source=choice.key_source,
        local=choice.local,
        note=choice.note or None,
        tokens_today=repo.tokens_on(conn, day, choice.backend),
        requests_today=repo.requests_on(conn, day, choice.backend),
        daily_budget=0 if choice.local else s.extract_daily_tokens,
        run_budget=0 if choice.local else s.extract_run_tokens,
        rpm=s.llm_rpm if choice.local else 0,
        last_run=repo.last_run(conn, choice.backend),
    )
    if choice.online:
        out.waiting = defer_reason(ctx.probe(), s.jobs_min_battery) or None
        out.config_error = latched_config_error(ctx) or None
    return out
