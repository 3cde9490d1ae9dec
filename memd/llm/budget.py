"""What the LLM jobs share: the LLM gate, the token budget and the turn text they send.

An LLM job asks `gate_llm` before spending anything: memory switched off, a configuration
error already reported for the same key/model (so a bad key is not retried every interval),
the machine on battery or busy (`conditions`; scheduled runs only, not a run asked for with
`--now`), or today's token budget spent. Tokens are
recorded per run in `llm_runs`, in the same transaction as the work they paid for.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from memd.core.conditions import SystemState, day_of, defer_reason, is_requested_now
from memd.core.models import JobOutcome, JobResult
from memd.core.settings import Settings
from memd.core.text import META_COMMENT, estimate_tokens, normalize
from memd.db import Connection, Store
from memd.llm import repo
from memd.llm.anthropic import AnthropicExtractor, LLMUsage

# A reported configuration error is not retried with the same settings for this long.
CONFIG_ERROR_QUIET_S = 6 * 3600
# The fixed part of an LLM request: system prompt, schema and instructions.
PROMPT_TOKENS = 900
MAX_TURN_CHARS = 4000
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


def llm_extractor(settings: Settings) -> AnthropicExtractor | None:
    """The Anthropic extractor when a key is configured, else None (offline)."""
    key = settings.anthropic_key
    if not key:
        return None
    return AnthropicExtractor(
        key,
        settings.extract_model,
        base_url=settings.extract_base_url,
        timeout=settings.extract_timeout_s,
    )


def llm_config_fingerprint(settings: Settings) -> str:
    """Identifies the LLM configuration without storing the key."""
    raw = "\0".join((settings.anthropic_key, settings.extract_model, settings.extract_base_url))
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


@dataclass
class Budget:
    """Tokens one run may still spend: the per-run cap and what is left of the day's budget."""

    job: str
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
    def start(cls, ctx: LLMJob, job: str) -> Budget:
        started = ctx.now()
        day = day_of(started)
        s = ctx.settings
        return cls(job, s.extract_model, started, day, s.extract_daily_tokens, s.extract_run_tokens,
                   spent_today=repo.tokens_on(ctx.store.read(), day))  # fmt: skip

    def room(self) -> int:
        return max(0, min(self.daily_limit - self.spent_today, self.run_limit - self.spent_run))

    def exhausted_message(self, need: int) -> str:
        if self.daily_limit - self.spent_today <= self.run_limit - self.spent_run:
            return (
                f"daily token budget reached ({self.spent_today} of {self.daily_limit} spent today)"
            )
        return f"per-run token cap reached ({self.spent_run} of {self.run_limit}; next batch needs ~{need})"

    def write(self, conn: Connection, usage: LLMUsage) -> None:
        """Record one request's usage inside the caller's write transaction."""
        self.run_id = repo.add_usage(
            conn, self.run_id, job=self.job, started=self.started, day=self.day, model=self.model,
            input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
        )  # fmt: skip

    def spent(self, usage: LLMUsage) -> None:
        """Count a request once its transaction committed."""
        n = usage.input_tokens + usage.output_tokens
        self.spent_today += n
        self.spent_run += n
        self.requests += 1

    def counts(self) -> dict[str, int]:
        return {"llm_requests": self.requests, "tokens": self.spent_run}


def gate_llm(ctx: LLMJob, job: str) -> JobResult | None:
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
    spent = repo.tokens_on(ctx.store.read(), day_of(ctx.now()))
    if spent >= s.extract_daily_tokens:
        return JobResult(job, JobOutcome.BUDGET_EXHAUSTED,
                         f"daily token budget reached ({spent} of {s.extract_daily_tokens} spent today)",
                         {"tokens_today": spent})  # fmt: skip
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


def key_source(s: Settings) -> str:
    """Which setting the Anthropic key comes from: extract.api_key, ANTHROPIC_API_KEY, or ""."""
    if s.extract_api_key:
        return "extract.api_key"
    return "ANTHROPIC_API_KEY" if s.anthropic_key else ""


def llm_status(ctx: LLMJob) -> dict[str, Any]:
    """The `llm` part of `status`: configured or offline, budget, and why jobs wait."""
    s = ctx.settings
    configured = bool(s.anthropic_key)
    out: dict[str, Any] = {
        "mode": "anthropic" if configured else "offline rules",
        "model": s.extract_model if configured else "",
        # Where the daemon found its key (never the key): `memd doctor` compares it with a shell's.
        "key_source": key_source(s),
        "tokens_today": repo.tokens_on(ctx.store.read(), day_of(ctx.now())),
        "daily_budget": s.extract_daily_tokens,
        "run_budget": s.extract_run_tokens,
    }
    if configured:
        out["waiting"] = defer_reason(ctx.probe(), s.jobs_min_battery) or None
        out["config_error"] = latched_config_error(ctx) or None
    return out
