"""Text the CLI prints for the daemon's documents: `status`, a job, the LLM, cloud sync.

Pure functions of the typed results (no I/O, no clock but the `now` they are given), so each
rendering can be checked on its own. Times are shown as local clock times with how long ago or
from now, never as epoch numbers.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from memd.api import messages as m
from memd.core.models import Hit, HitSource
from memd.core.progress import TaskSnapshot
from memd.core.text import counted, short_id, shorten

T = TypeVar("T")


part = m.or_default  # a status part, or the default when the daemon has no such part


def when(ts: Any) -> str:
    """An epoch time as local ``YYYY-MM-DD HH:MM``."""
    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M") if ts else "undated"


def span(seconds: float) -> str:
    """A duration in the largest unit that keeps it readable: 45 s, 12 min, 3 h, 2 days."""
    s = abs(seconds)
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    if s < 129600:
        return f"{s / 3600:.0f} h"
    return f"{s / 86400:.0f} days"


def relative(ts: float | None, now: float) -> str:
    """``12 min ago (15:30)`` or ``in 3 min (16:00)``; the date is added when not today."""
    if not ts:
        return "never"
    moment = dt.datetime.fromtimestamp(ts)
    clock = moment.strftime(
        "%H:%M" if moment.date() == dt.date.fromtimestamp(now) else "%Y-%m-%d %H:%M"
    )
    delta = ts - now
    return f"in {span(delta)} ({clock})" if delta > 0 else f"{span(delta)} ago ({clock})"


def _iso(value: str | None) -> float | None:
    if not value:
        return None
    return dt.datetime.fromisoformat(value).timestamp()


# -- jobs --------------------------------------------------------------------------------------
def jobs_table(jobs: Mapping[str, m.JobStatus], now: float) -> list[str]:
    """One row per job: last run, its outcome, next run, interval; then each last message."""
    rows = [("job", "last run", "outcome", "next run", "every")]
    for name, j in sorted(jobs.items()):
        nxt = "running now" if j.running else relative(_iso(j.next_run), now)
        if not j.next_run and not j.running:
            nxt = "not scheduled"
        every = span(j.interval_s) if j.interval_s else "-"
        rows.append((name, relative(j.last_finished, now), j.last_outcome or "-", nxt, every))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = [
        "  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]
    out += [f"  {name}: {j.last_message}" for name, j in sorted(jobs.items()) if j.last_message]
    return out


def job_text(name: str, job: m.JobStatus | None, now: float) -> str:
    """`memd extract` (without `--now`): what the job did last and when it runs next."""
    if job is None:
        return f"no job {name!r}"
    runs = job.runs
    lines = [f"{name}: last run {relative(job.last_finished, now)}"
             + (f", {job.last_outcome}" if job.last_outcome else "")
             + f"; {runs} run{'s' if runs != 1 else ''} recorded"]  # fmt: skip
    if job.last_message:
        lines.append(f"  {job.last_message}")
    counts = ", ".join(f"{k} {v}" for k, v in job.counts.items() if v)
    if counts:
        lines.append(f"  counts: {counts}")
    if job.last_success and job.last_success != job.last_finished:
        lines.append(f"  last success {relative(job.last_success, now)}")
    if job.running:
        lines.append("  running now")
    elif job.next_run:
        every = f", every {span(job.interval_s)}" if job.interval_s else ""
        lines.append(f"  next run {relative(_iso(job.next_run), now)}{every}")
    else:
        lines.append("  not scheduled: no daemon is running (`memd serve`)")
    lines.append(f"  `memd {name} --now` runs it now")
    return "\n".join(lines)


def run_text(job: str, outcome: str, message: str, counts: Mapping[str, int]) -> str:
    """A job run as text: its outcome and message, which says the counts in words (the counts
    themselves are in `--json`), and the run's id, which `memd undo --run` takes. A run with
    no message shows its counts."""
    said = f" - {message}" if message else ""
    if not message:
        said += "".join(f", {k} {v:,}" for k, v in counts.items() if v and k != "run")
    run = f" (run {counts['run']})" if counts.get("run") else ""
    return f"{job}: {outcome}{said}{run}"


# -- search ----------------------------------------------------------------------------------
ITEM_CHARS = 160


def search_text(hits: list[Hit]) -> str:
    """`memd search` as text: each hit's score, where it is, what matched (a section's matching
    items, else its excerpt), and what said the same thing (its sources)."""
    if not hits:
        return "no matches"
    out: list[str] = []
    for h in hits:
        found = f"  [{', '.join(h.found_by)}]" if isinstance(h.found_by, list) else ""
        out.append(f"{h.score:6.2f}  {hit_place(h)}{found}")
        shown = [f"- {shorten(i, ITEM_CHARS)}" for i in h.items] or [
            f"{h.role}: {h.snippet}" if h.kind == "turn" and h.role else h.snippet
        ]
        out += [f"        {line}" for line in shown]
        if h.sources:
            out.append("        also said in: " + "; ".join(map(source_place, h.sources)))
    return "\n".join(out)


def hit_place(h: Hit) -> str:
    """Where a hit is: a section's file, lines and heading; a turn's date, assistant, session
    and turn (long ids shortened as the journal prints them; `recall` and `forget` take them)."""
    if h.kind != "turn":
        return f"{h.path}:{h.start_line}-{h.end_line}  § {h.heading}"
    who = f" · {h.source}" if h.source else ""
    title = h.session_title or short_id(h.session_id)
    return f"{when(h.ts)}{who} · {title}  (session {short_id(h.session_id)}, turn {short_id(h.turn_id)})"


def source_place(s: HitSource) -> str:
    """A source of a hit in a few words: ``journal 2026-11-03`` or ``turn 2026-11-03 14:02
    claude-code (session …, turn …)``."""
    if s.kind == "journal":
        return f"journal {Path(s.path).stem}"
    who = f" {s.source}" if s.source else ""
    return f"{s.role or 'turn'} {when(s.ts)}{who} (session {short_id(s.session_id)}, turn {short_id(s.turn_id)})"


# -- the LLM -----------------------------------------------------------------------------------
def llm_line(llm: m.LLMStatus) -> str:
    """The daemon's LLM: which backend and why, which key it sees (never its value), and what
    today cost: requests and tokens (a local server is paced, not budgeted)."""
    backend = llm.backend or ("anthropic" if llm.mode == "anthropic" else "off")
    why = f" ({llm.why})" if llm.why else ""
    if backend == "off":
        return f"llm: offline rules{why}"
    calls = counted(llm.requests_today, "LLM request")
    tokens = llm.tokens_today
    if llm.local:
        spent = f"{calls}, {counted(tokens, 'token')} today, at most {llm.rpm} a minute"
    else:
        budget = counted(llm.daily_budget, "token")
        spent = f"{calls}, {tokens:,} of {budget} today"
    source = f", key from {llm.key_source}" if llm.key_source else ""
    where = f" at {llm.base_url}" if llm.base_url else ""
    line = f"llm: {backend} {llm.model}{where}{why}{source}; {spent}"
    if llm.waiting:
        line += f"; scheduled runs waiting: {llm.waiting}"
    if llm.config_error:
        line += f"; CONFIG ERROR: {llm.config_error}"
    return line


# -- status ------------------------------------------------------------------------------------
def status_text(st: m.StatusResult, now: float | None = None) -> str:
    """`memd status` as text."""
    now = time.time() if now is None else now
    ix = st.index if isinstance(st.index, m.IndexStatus) else m.IndexStatus(path="")
    watcher = st.watcher.mode if isinstance(st.watcher, m.WatcherStatus) else "not running"
    lines = [f"memd {st.version}  memory {'on' if st.enabled else 'OFF'}"]
    lines += daemon_lines(st)
    lines.append(
        f"index: {counted(ix.files, 'file')}, {counted(ix.sections, 'section')},"
        f" {counted(ix.items, 'item')} ({ix.path or None}); lag {ix.lag_s}s; watcher {watcher}"
    )
    lines.append(f"memory root: {part(st.memory_root, '')}")
    if st.read_only:
        lines.append(f"read-only ({part(st.read_only, '')}): queries are answered, writes refused")
    if st.recovered:
        r = st.recovered
        lines.append(f"index was damaged ({r.reason}): moved aside to {r.moved_to}"
                     f" at {when(r.at)} and rebuilt from the files")  # fmt: skip
    if isinstance(st.logs, m.LogsStatus):
        lines += logs_lines(st.logs)
    lines += instructions_lines(part(st.instructions, []))
    lines += agents_lines(part(st.agents, []))
    if st.semantic:
        lines.append(semantic_line(st.semantic))
    if isinstance(st.llm, m.LLMStatus):
        lines.append(llm_line(st.llm))
    if st.sync is not m.UNSET:
        lines.append(sync_line(st.sync, now))
    if st.jobs:
        lines.append("jobs:")
        lines += jobs_table(st.jobs, now)
    problems = part(st.problems, [])
    if problems:
        lines.append(f"problem files ({len(problems)}):")
        lines += [
            f"  {p.path}: {p.reason}"
            + (" (indexed all the same: search finds it)" if p.indexed else " (not indexed)")
            for p in problems
        ]
    return "\n".join(lines)


def semantic_line(sem: m.SemanticStatus) -> str:
    """`status`: whether recall by meaning is on, and how far the backfill got."""
    if not sem.on:
        return f"recall by meaning: off ({sem.reason})"
    line = f"recall by meaning: {part(sem.model, '')}"
    b = sem.backfill
    if b:
        line += f"; vectors {b.done:,}/{b.total:,} ({b.state}"
        if b.pending and b.rate_per_s:
            line += f", {b.rate_per_s}/s, ~{part(b.eta_s, 0) / 60:.0f} min left"
        line += ")"
        if b.last_error:
            line += f"; backfill error: {b.last_error}"
    if sem.query_late:
        line += f"; {sem.query_late:,} answers by full text alone (their query's vector came late)"
    if sem.query_error:
        line += f"; last query error: {sem.query_error}"
    return line


def daemon_lines(st: m.StatusResult) -> list[str]:
    """The daemon: process, settings waiting for a restart, long work under way."""
    d = st.daemon
    if d.running:
        lines = [
            f"daemon: pid {d.pid}, up {span(part(d.uptime_s, 0))}, RSS {part(d.rss_mb, 0)} MB,"
            f" CPU {part(d.cpu_s, 0)}s, socket {st.socket}"
        ]
    else:
        lines = ["daemon: not running"]
    if d.restart_required:
        lines.append(f"restart required for: {', '.join(d.restart_required)}"
                     " (changed in the settings file; restart memd to apply)")  # fmt: skip
    if d.starting:
        lines.append("starting: only `status` is answered until the first index is done;"
                     " queries read the index directly meanwhile")  # fmt: skip
    lines += [f"working: {progress_line(p)}" for p in part(d.progress, [])]
    return lines


def logs_lines(lg: m.LogsStatus) -> list[str]:
    lines = [
        f"logs: {counted(lg.files, 'file')} tailed ({lg.deleted_files:,} deleted),"
        f" {counted(lg.turns, 'turn')} in {counted(lg.sessions, 'session')},"
        f" {counted(lg.bad_lines, 'bad line')}; watcher {lg.watcher}"
    ]
    lines += assistant_lines(lg.assistants)
    lines += [f"  source {s.path} ({s.format})" for s in lg.sources if not s.assistant]
    lines += [f"  cannot read {p}" for p in lg.problems]
    lines += [f"  bad line {b}" for b in lg.recent_bad_lines]
    return lines


def instructions_lines(targets: list[m.InstructionsFile]) -> list[str]:
    """memd's block in each assistant's instructions file: where, last written, its problem."""
    lines = []
    for t in targets:
        state = f"written {when(t.written_at)}" if t.written_at else "current"
        if t.problem:
            state = f"not written: {t.problem}"
        lines.append(f"memory for {t.assistant} in {t.path}: {state}")
    return lines


def assistant_lines(assistants: list[m.AssistantSeen]) -> list[str]:
    """One line per assistant memd knows: on/off, found or not, where, what was read, problems."""
    lines = []
    for a in assistants:
        where = ", ".join(a.folders) + (" (your setting)" if a.custom else "")
        if not a.enabled:
            state = "off"
        elif not a.found:
            state = f"not found (waiting for {where})"
        else:
            state = (f"{counted(a.files, 'file')}, {counted(a.turns, 'turn')} in"
                     f" {counted(a.sessions, 'session')} from {where}")  # fmt: skip
        lines.append(f"  {a.title} ({a.name}): {state}")
        lines += [f"    problem: {p}" for p in a.problems]
    return lines


def agents_lines(agents: list[Any]) -> list[str]:
    """One line per agent seen: interactions, last day, familiarity and trust as last written."""
    if not agents:
        return []
    lines = [f"agents: {len(agents)} seen"]
    for a in agents:
        kind = " (sub-agent)" if a.subagent else ""
        known = [f"{k} {v}" for k, v in (("familiarity", a.familiarity), ("trust", a.trust))
                 if v is not None]  # fmt: skip
        lines.append(
            f"  {a.agent_id}{kind}: {counted(a.sessions, 'session')}, {counted(a.turns, 'turn')},"
            " last"
            f" {when(a.last_at)}" + (f"; {', '.join(known)}" if known else "")
        )
    return lines


def progress_line(p: TaskSnapshot) -> str:
    """``indexing memory files: 3,400 of 10,000 (34%), 520/s, about 13 s left``."""
    done, total, unit = p.done, p.total, p.unit
    text = f"{p.what}: {done:,}"
    if total:
        text += f" of {total:,} {unit}".rstrip() + f" ({100 * done / total:.0f}%)"
    elif unit:
        text += f" {unit}"
    if p.rate:
        text += f", {p.rate:,.0f}/s"
    if p.eta_s is not None and total:
        text += f", about {span(p.eta_s)} left"
    return text


# -- cloud sync --------------------------------------------------------------------------------
def sync_line(st: m.SyncSummary, now: float) -> str:
    """One line for `memd status`; `memd sync status` has the details."""
    hint = part(st.hint, "")
    if st.state == "off":
        return f"sync: off - {hint}"
    backend = part(st.backend, None)
    if st.state == "refused":
        return f"sync: REFUSED by the backend ({backend}) - {hint}"
    parts = [f"sync: on - {backend}"]
    if not isinstance(st.pending, m.UnsetType):
        parts.append(f"{st.pending} pending, {part(st.parked, 0)} parked")
        parts.append(f"last success {relative(part(st.last_success_at, None), now)}")
        if st.last_error:
            parts.append(
                f"last error {relative(part(st.last_error_at, None), now)}: {st.last_error}"
            )
    return "; ".join(parts)


def sync_text(st: m.SyncStatus, now: float | None = None) -> str:
    """`memd sync status`: backend, queue, last success and error, parked ops, conflicts."""
    now = time.time() if now is None else now

    def at(ts: float | None | m.UnsetType) -> str:
        if not ts:
            return "never"
        delta = ts - now
        rel = f"in {delta:.0f}s" if delta > 0 else f"{-delta:.0f}s ago"
        return f"{dt.datetime.fromtimestamp(ts).strftime('%Y-%m-%d %H:%M:%S')} ({rel})"

    backend = part(st.backend, None)
    if st.state == "off":
        lines = [f"sync: off - {part(st.hint, '')}"]
    elif st.state == "refused":
        lines = [f"sync: REFUSED by the backend ({backend}) - {part(st.hint, '')}"]
    else:
        lines = [f"sync: on - {backend}, table {part(st.table, None)}, namespace"
                 f" {part(st.namespace, None)}, device"
                 f" {part(st.device_id, None) or '(not yet assigned)'}"]  # fmt: skip
    if not isinstance(st.pending, m.UnsetType):
        age = part(st.oldest_pending_age_s, None)
        oldest = f", oldest {age:.0f}s" if age else ""
        error = part(st.last_error, None)
        t = part(st.totals, m.SyncTotals(pushed=0, pulled=0, conflicts=0))
        lines += [
            f"queue: {st.pending} pending ({part(st.due, 0)} due{oldest}),"
            f" {part(st.parked, 0)} parked",
            f"last success: {at(st.last_success_at)}",
            f"last error: {at(st.last_error_at)}" + (f": {error}" if error else ""),
            f"next attempt: {at(st.next_attempt_at)}",
            f"totals: {t.pushed} pushed, {t.pulled} pulled, {t.conflicts} conflicts",
        ]
    lines += _sync_problems(st, at)
    return "\n".join(lines)


def _sync_problems(st: m.SyncStatus, at: Callable[[float | None], str]) -> list[str]:
    lines: list[str] = []
    if parked_ops := part(st.parked_ops, []):
        lines.append("parked (fix the cause, then `memd sync --now --retry-parked`):")
        lines += [f"  {op.path} v{op.version} ({op.attempts} attempts): {op.error}"
                  for op in parked_ops]  # fmt: skip
    if conflicts := part(st.conflicts, []):
        lines.append("conflicts (the local file was kept):")
        for c in conflicts:
            copy = f"cloud version in {c.copy}" if c.copy else "nothing to copy"
            lines.append(f"  {c.path}: {c.kind} ({copy}; device {c.remote_device[:8]}, {at(c.at)})")
    for t in part(st.targets, []):
        lines.append(f"other target {part(t.target, None)}: {part(t.pending, 0)} pending,"
                     f" {part(t.parked, 0)} parked, last success"
                     f" {at(part(t.last_success_at, None))}")  # fmt: skip
    return lines
