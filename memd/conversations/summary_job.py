"""The session summary job: an idle session gets a title and summary written by the LLM.

A session is idle when its last turn is `summary.idle_min` old. Offline (`llm.backend` finds no
model), sessions keep the extractive summary the conversation ingest gives them and this job
does nothing. A session that grows after its summary is summarised again the next time it goes
idle; `llm_summaries` remembers how far each session was handled, so a session too trivial to
summarise is not looked at again until it has new turns.

A model answer that cannot be read is asked for once more; when the second is no better the
session is recorded as failed, keeps its extractive summary (nothing of either answer is
written), and the run ends as failed once the other sessions are done.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from memd.conversations import repo
from memd.conversations.ingest import set_title
from memd.conversations.trivial import is_trivial
from memd.core.errors import LLMBadAnswer, LLMConfigError, LLMDeferred, LLMError, LLMRetryable
from memd.core.models import JobOutcome, JobResult, Turn
from memd.core.text import counted
from memd.db import Connection
from memd.llm.answers import LLMUsage
from memd.llm.budget import (
    PROMPT_TOKENS,
    Budget,
    clear_config_error,
    gate_llm,
    latch_config_error,
    open_llm,
    strip_recalled,
    turn_tokens,
)
from memd.llm.choice import Choice
from memd.llm.client import LLM
from memd.memory.jobs import JobContext

JOB = "summarize"
MAX_INPUT_TOKENS = 6000
HEAD_TURNS = 4  # the opening turns say what a session is about; the rest is its latest part
SUMMARY_OUTPUT_TOKENS = 300
MIN_TURNS = 2


@dataclass(frozen=True, slots=True)
class IdleSession:
    """A session due for an LLM summary."""

    session_id: str
    upto: int  # highest turns.id


def idle_sessions(conn: Connection, idle_before: float) -> list[IdleSession]:
    """Sessions quiet since `idle_before` with turns the summary job has not handled."""
    return [IdleSession(sid, upto) for sid, upto in repo.idle_sessions(conn, idle_before)]


def pick_turns(turns: list[Turn], max_tokens: int) -> list[Turn]:
    """The opening turns and as many of the latest as fit `max_tokens`, in order."""
    cost = [turn_tokens(t.text) for t in turns]
    if sum(cost) <= max_tokens:
        return turns
    head = list(range(min(HEAD_TURNS, len(turns))))
    used = sum(cost[i] for i in head)
    tail: list[int] = []
    for i in range(len(turns) - 1, len(head) - 1, -1):
        if used + cost[i] > max_tokens:
            break
        tail.append(i)
        used += cost[i]
    return [turns[i] for i in head + sorted(tail)]


def run_summaries(ctx: JobContext) -> JobResult:
    """One run of the summary job."""
    if not ctx.ops.enabled():
        return JobResult(JOB, JobOutcome.NOTHING_TO_DO, "memory is switched off")
    opened = open_llm(ctx, JOB)
    if isinstance(opened, JobResult):
        return opened
    choice, llm = opened
    if llm is None:
        return JobResult(
            JOB, JobOutcome.NOTHING_TO_DO, "offline: sessions keep their extractive summaries"
        )
    idle_before = ctx.now() - ctx.settings.summary_idle_min * 60
    sessions = idle_sessions(ctx.store.read(), idle_before)
    if not sessions:
        return JobResult(JOB, JobOutcome.NOTHING_TO_DO, "no idle session without a summary")
    if (stop := gate_llm(ctx, JOB, choice)) is not None:
        return stop
    return _summarize_all(ctx, choice, llm, sessions)


def _summarize_all(
    ctx: JobContext, choice: Choice, llm: LLM, sessions: list[IdleSession]
) -> JobResult:
    budget = Budget.start(ctx, JOB, choice)
    counts: Counter[str] = Counter({"summarized": 0, "skipped": 0})

    def result(outcome: JobOutcome, why: str) -> JobResult:
        msg = (f"{counted(counts['summarized'], 'session')} summarised, {counts['skipped']:,} too"
               f" short ({llm.name} {llm.model}); {budget.cost()}")  # fmt: skip
        return JobResult(
            JOB, outcome, f"{why}; {msg}" if why else msg, {**counts, **budget.counts()}
        )

    conn = ctx.store.read()
    for sess in sessions:
        turns = []
        for t in repo.turns_upto(conn, sess.session_id, sess.upto):
            text = strip_recalled(t.text, set())
            if text and not is_trivial(text):
                turns.append(Turn(t.source, sess.session_id, t.turn_id, t.role, text, float(t.ts)))
        if len(turns) < MIN_TURNS:
            _record(ctx, sess, "too short", None, budget)
            counts["skipped"] += 1
            continue
        room = budget.room() - PROMPT_TOKENS - SUMMARY_OUTPUT_TOKENS
        picked = pick_turns(turns, min(MAX_INPUT_TOKENS, room))
        if room <= 0 or not picked or turn_tokens(picked[0].text) > room:
            return result(JobOutcome.BUDGET_EXHAUSTED, budget.exhausted_message(PROMPT_TOKENS))
        try:
            res = llm.summarize(picked)
        except LLMDeferred as exc:
            return result(JobOutcome.DEFERRED, f"{exc}; waiting until it resets")
        except LLMRetryable as exc:
            return result(JobOutcome.RETRY_LATER, f"{exc}; will retry on the next run")
        except LLMConfigError as exc:
            msg = f"{exc}" + (f" ({exc.hint})" if exc.hint else "")
            latch_config_error(ctx, msg)
            return result(JobOutcome.CONFIG_ERROR, msg)
        except LLMError as exc:
            # This session's answer was unusable, asked twice; it keeps its extractive summary.
            # Billed answers still count against the budgets.
            billed = (
                LLMUsage(exc.input_tokens, exc.output_tokens, exc.requests)
                if isinstance(exc, LLMBadAnswer)
                else None
            )
            _record(ctx, sess, f"error: {exc}"[:200], None, budget, billed)
            if billed is not None:
                budget.spent(billed)
            counts["llm_errors"] += 1
            continue
        _record(ctx, sess, "summarized", (res.title, res.summary, res.usage), budget)
        budget.spent(res.usage)
        counts["summarized"] += 1
    if counts["llm_errors"]:
        return result(JobOutcome.ERROR, f"{counts['llm_errors']} sessions failed: the model's"
                                        " answers could not be read; they keep their extractive"
                                        " summaries")  # fmt: skip
    return result(JobOutcome.SUCCESS, "")


def _record(
    ctx: JobContext,
    sess: IdleSession,
    outcome: str,
    answer: tuple[str, str, LLMUsage] | None,
    budget: Budget,
    billed: LLMUsage | None = None,
) -> None:
    now = ctx.now()

    def write(conn: Connection) -> None:
        repo.record_llm_summary(conn, sess.session_id, sess.upto, now, outcome)
        if answer is None:
            if billed is not None:
                budget.write(conn, billed)
            return
        title, summary, usage = answer
        repo.set_llm_summary(conn, sess.session_id, summary, now)
        if title:
            set_title(conn, sess.session_id, title, "llm")
        budget.write(conn, usage)
        clear_config_error(conn)

    ctx.store.w.run(write)
