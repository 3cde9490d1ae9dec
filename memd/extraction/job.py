"""The extraction job: new conversation turns → typed memories as list items in the Markdown tree.

Per session, turns after the session's cursor (`sessions.extracted_upto`) are read in
batches. Trivial turns and text memd itself put into the conversation (the fenced
`<memory source="memd">` block, lines repeating a stored memory) are left out. Each batch goes
to the model `llm.backend` chooses (`memd.llm.choice`: the Anthropic API, Claude Code, an
OpenAI-compatible server), else to the offline rules; the memories are placed by `placement`
and written to Markdown; then, in one transaction, the cursor moves past the batch, the
memories' hashes are remembered and the requests and tokens are recorded.

A model answer that cannot be read is asked for once more; when the second is no better, the
run stops as failed with nothing of that batch written and its cursor where it was, so the next
run tries the batch again. A batch the model failed in `RULES_AFTER_FAILED_RUNS` runs in a row
goes to the offline rules instead, so one unreadable batch never stops extraction for good.
Rate limits and outages end the run to be retried later; a usage limit defers it; a
configuration error stops it until the settings change.

Markdown is written before the transaction commits. A run killed in between re-reads the
batch next time, and `placement` recognises its own items by their source turns, so nothing
is written twice; a run stopped anywhere else resumes exactly at the cursor.

In a session with an agent, the memory points (how the user wants the assistant to work) go to
that agent's relationship file, and the batch's signals (thanks, frustration, ...) are stored
with the cursor: the model's for the turns it reads, the rules' for the short turns it is never
sent ("thanks!", "谢谢") and for every turn offline. After the sessions, every agent's
relationship file is brought up to date (`memd.extraction.agents`).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from memd.conversations import repo as conversations
from memd.conversations.trivial import is_trivial
from memd.core.conditions import day_of
from memd.core.errors import (
    LLMBadAnswer,
    LLMConfigError,
    LLMDeferred,
    LLMError,
    LLMRetryable,
    PathError,
)
from memd.core.models import ExtractedMemory, JobOutcome, JobResult, Turn
from memd.core.text import counted, estimate_tokens, normalize
from memd.db import Connection
from memd.extraction.agents import update_relationships
from memd.extraction.placement import (
    Add,
    Bump,
    Existing,
    Known,
    Plan,
    Skip,
    plan_batch,
    statement_words,
    target_for,
)
from memd.extraction.repo import (
    PendingSession,
    add_signals,
    advance_cursor,
    clear_failed_batch,
    failed_runs,
    note_extracted,
    note_failed_batch,
    pending_sessions,
)
from memd.extraction.rules import extract_rules, turn_signals
from memd.history import Cause
from memd.history.models import RUN_TRAILER
from memd.llm.answers import LLMUsage, TurnSignal
from memd.llm.budget import (
    MIN_ECHO_CHARS,
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
from memd.memory import repo as memories
from memd.memory.context import item_meta
from memd.memory.edit import Change, add_item, update_items
from memd.memory.files import Operation
from memd.memory.jobs import JobContext
from memd.memory.ops import new_memory_id
from memd.memory.tree import slugify

JOB = "extract"
log = logging.getLogger(__name__)
BATCH_TURNS = 40
BATCH_INPUT_TOKENS = 6000
# What a request costs besides the turns: the answer (the prompt is PROMPT_TOKENS).
OUTPUT_TOKENS = 600
KNOWN_LIMIT = 150
MAX_SRC_TURNS = 3
RULES_AFTER_FAILED_RUNS = 3
COUNTS = ("sessions", "turns", "skipped_turns", "added", "merged", "superseded", "kept_hand_edits")
SignalRow = tuple[str, str, float, str, str]  # turn id, kind, strength, evidence, source


def load_tree(conn: Connection) -> tuple[list[Existing], dict[tuple[str, str], Known]]:
    """The items of the memory tree (journal aside) and the memories written before."""
    existing = []
    for r in memories.tree_items(conn):
        meta = item_meta(r.meta)
        scope = {
            "project": f"project:{r.owner}",
            "agent": f"agent:{r.owner}",
            "archive": "archive",
        }.get(r.kind, "user")
        existing.append(Existing(meta.get("id", ""), r.path, r.text, meta, scope))
    known = {
        (scope, h): Known(h, memory_id, content, scope)
        for scope, h, memory_id, content in memories.known_memories(conn)
    }
    return existing, known


def run_extraction(ctx: JobContext) -> JobResult:
    """One run of the extraction job (scheduled, or `memd extract --now`)."""
    if not ctx.ops.enabled():
        return JobResult(JOB, JobOutcome.NOTHING_TO_DO, "memory is switched off")
    return _with_relationships(ctx, _extract(ctx))


def _extract(ctx: JobContext) -> JobResult:
    opened = open_llm(ctx, JOB)
    if isinstance(opened, JobResult):
        return opened
    choice, llm = opened
    if llm is not None and (stop := gate_llm(ctx, JOB, choice)) is not None:
        return stop
    sessions = pending_sessions(ctx.store.read())
    if not sessions:
        return JobResult(JOB, JobOutcome.NOTHING_TO_DO, "no new turns")
    # Hand edits since the last reconcile must be in the index before we plan against it.
    ctx.indexer.reconcile()
    return _Extraction(ctx, choice, llm).run(sessions)


def _with_relationships(ctx: JobContext, res: JobResult) -> JobResult:
    """The run's result with what updating the agents' relationship files did."""
    run = {RUN_TRAILER: str(res.counts["run"])} if "run" in res.counts else {}
    with ctx.files.operation(Cause.EXTRACT, "agent relationships", trailers=run) as op:
        rel = update_relationships(ctx, op)
    if not (rel.updated or rel.applied or rel.errors):
        return res
    parts = [f"relationships: {counted(rel.updated, 'file')} updated,"
             f" {counted(rel.applied, 'session')} applied"]  # fmt: skip
    if rel.errors:
        parts.append(f"{len(rel.errors)} not updated: {rel.errors[-1]}")
    counts = {
        **res.counts,
        "relationships_updated": rel.updated,
        "relationship_sessions": rel.applied,
        "relationship_errors": len(rel.errors),
    }
    # The outcome is extraction's ("no new turns" stays nothing_to_do); the files are in counts.
    return JobResult(JOB, res.outcome, "; ".join([res.message, *parts]), counts)


class _Extraction:
    """The state of one run: budget, counters, the extractor."""

    def __init__(self, ctx: JobContext, choice: Choice, llm: LLM | None) -> None:
        self.ctx = ctx
        self.llm = llm
        self.budget = Budget.start(ctx, JOB, choice) if llm is not None else None
        self.counts: Counter[str] = Counter(dict.fromkeys(COUNTS, 0))
        # The run's id: in its counts and on every change it records in the history, so all
        # that one run wrote can be found and undone together (`memd undo --run`).
        self.run_id = time.time_ns() // 1000
        self.counts["run"] = self.run_id
        self.errors: list[str] = []

    def run(self, sessions: Sequence[PendingSession]) -> JobResult:
        for sess in sessions:
            stop = self._session(sess)
            if stop is not None:
                return stop
        return self._result(JobOutcome.SUCCESS, "")

    def _result(self, outcome: JobOutcome, why: str) -> JobResult:
        c = self.counts
        mode = f"{self.llm.name} {self.llm.model}" if self.llm else "offline rules"
        parts = [f"{counted(c['turns'], 'turn')} of {counted(c['sessions'], 'session')} ({mode})",
                 f"{c['added']:,} added, {c['merged']:,} merged, {c['superseded']:,} superseded"]  # fmt: skip
        if c["kept_hand_edits"]:
            parts.append(f"{c['kept_hand_edits']} not re-added (edited or deleted by hand)")
        if self.errors:
            parts.append(f"{counted(len(self.errors), 'batch', 'batches')} went to the rules after failed runs:"
                         f" {self.errors[-1]}")  # fmt: skip
        msg = "; ".join(parts)
        counts = dict(c)
        if self.budget is not None:
            counts.update(self.budget.counts())
            msg += f"; {self.budget.cost()}"
        return JobResult(JOB, outcome, f"{why}; {msg}" if why else msg, counts)

    def _project(self, sess: PendingSession) -> tuple[str, Path] | None:
        if not sess.project:
            return None
        p = self.ctx.ops.project(sess.project, lenient=True)
        if not p.slug:
            return None
        mdir = p.memory_dir
        if mdir is not None and mdir.is_dir():
            return p.slug, mdir
        return p.slug, self.ctx.memory_root / "projects" / p.slug

    def _session(self, sess: PendingSession) -> JobResult | None:
        conn = self.ctx.store.read()
        project = self._project(sess)
        scopes = {"user", f"project:{project[0]}"} if project else {"user"}
        if sess.agent_id:
            scopes.add(f"agent:{slugify(sess.agent_id)}")
        cursor = sess.upto
        self.counts["sessions"] += 1
        while True:
            rows = conversations.turns_after(conn, sess.session_id, cursor, BATCH_TURNS)
            if not rows:
                return None
            existing, known = load_tree(conn)
            echoes = {n for e in existing if len(n := normalize(e.text)) >= MIN_ECHO_CHARS}
            # As the index holds them: redacted, nothing of a `<private>` span.
            known_texts = [e.text for e in existing if e.live and e.scope in scopes and e.text]
            known_texts = known_texts[:KNOWN_LIMIT]
            room = BATCH_INPUT_TOKENS
            if self.budget is not None:
                overhead = PROMPT_TOKENS + OUTPUT_TOKENS + estimate_tokens("\n".join(known_texts))
                room = min(room, self.budget.room() - overhead)
            batch, turns, short = _take(rows, sess, echoes, room)
            if not batch:
                assert self.budget is not None  # only a budget can make the first turn not fit
                return self._result(JobOutcome.BUDGET_EXHAUSTED,
                                    self.budget.exhausted_message(turn_tokens(rows[0].text)))  # fmt: skip
            self.counts["turns"] += len(batch)
            self.counts["skipped_turns"] += len(batch) - len(turns)
            upto = batch[-1].id
            usage: LLMUsage | None = None
            memories: list[ExtractedMemory] = []
            said: list[TurnSignal] | None = None
            if turns:
                asked = self._ask(sess.session_id, cursor, turns, known_texts)
                if isinstance(asked, JobResult):
                    return asked
                memories, said, usage = asked
            signals = _signal_rows(short + (turns if said is None else []), said or [])
            plan = self._plan(memories, turns, sess, project, existing, known)
            self._apply(plan, sess, upto, usage, signals)
            cursor = upto

    def _ask(
        self, session_id: str, cursor: int, turns: list[Turn], known: list[str]
    ) -> tuple[list[ExtractedMemory], list[TurnSignal] | None, LLMUsage | None] | JobResult:
        """Memories, the model's signals (None: the rules read them), what the model cost; or
        the result that ends the run."""
        if self.llm is None:
            return extract_rules(turns), None, None
        runs = failed_runs(self.ctx.store.read(), session_id, cursor)
        if runs >= RULES_AFTER_FAILED_RUNS:
            self.counts["llm_errors"] += 1
            self.errors.append(f"session {session_id}: the model failed it in {runs} runs")
            return extract_rules(turns), None, None
        try:
            res = self.llm.extract(turns, known)
        except LLMDeferred as exc:
            return self._result(JobOutcome.DEFERRED, f"{exc}; waiting until it resets")
        except LLMRetryable as exc:
            return self._result(JobOutcome.RETRY_LATER, f"{exc}; will retry on the next run")
        except LLMConfigError as exc:
            msg = f"{exc}" + (f" ({exc.hint})" if exc.hint else "")
            latch_config_error(self.ctx, msg)
            return self._result(JobOutcome.CONFIG_ERROR, msg)
        except LLMError as exc:
            return self._failed(session_id, cursor, exc)
        return res.memories, res.signals, res.usage

    def _failed(self, session_id: str, cursor: int, exc: LLMError) -> JobResult:
        """The model's answer could not be used, even asked twice: nothing of the batch is
        written and its cursor stays; what the answers cost is recorded all the same."""
        billed = LLMUsage(exc.input_tokens, exc.output_tokens, exc.requests) if isinstance(
            exc, LLMBadAnswer) else LLMUsage(0, 0)  # fmt: skip
        budget = self.budget
        assert budget is not None

        def record(conn: Connection) -> int:
            if billed.requests:
                budget.write(conn, billed)
            return note_failed_batch(conn, session_id, cursor)

        runs = self.ctx.store.w.run(record)
        budget.spent(billed)
        self.counts["llm_errors"] += 1
        left = RULES_AFTER_FAILED_RUNS - runs
        then = (f"the next run tries it again ({left} more before the rules read it)" if left > 0
                else "the next run gives it to the offline rules")  # fmt: skip
        return self._result(JobOutcome.ERROR, f"session {session_id}: {exc}; nothing of this"
                                              f" batch was written, {then}")  # fmt: skip

    def _plan(
        self,
        memories: list[ExtractedMemory],
        turns: list[Turn],
        sess: PendingSession,
        project: tuple[str, Path] | None,
        existing: list[Existing],
        known: dict[tuple[str, str], Known],
    ) -> Plan:
        ts_of = {t.turn_id: t.ts for t in turns}
        planned = []
        for m in memories:
            ids = _source_turns(m, turns)
            at = day_of(max(ts_of[i] for i in ids)).isoformat()
            src = f"{sess.session_id}#{','.join(ids[:MAX_SRC_TURNS])}"
            target = target_for(m, self.ctx.memory_root, project, sess.agent_id)
            planned.append((m, target, at, src))
        # The day the memories are written, beside the day each was said (`at`).
        added = self.ctx.today().isoformat()
        return plan_batch(planned, existing=existing, known=known,
                          new_id=iter(new_memory_id, None), added=added)  # fmt: skip

    def _add(self, a: Add, touched: set[str], op: Operation) -> bool:
        """Write a new item; False when its file is not inside the memory roots (a link on its
        way leads elsewhere), where nothing is written (and nothing it supersedes is marked)."""
        try:
            path = self.ctx.indexer.resolve(a.target.path)  # a link is written at its target
        except PathError as exc:
            log.warning("extract: not written: %s", exc)
            return False
        self.ctx.files.edit(
            path, add_item(path, a.target.section, a.text, a.meta, title=a.target.title), op
        )
        touched.add(str(path))
        self.counts["added"] += 1
        return True

    def _mark(self, path: str, item_id: str, change: Change, op: Operation) -> bool:
        """Change an item already in the tree; False when its file no longer leads inside the
        memory roots (a folder on its way became a link elsewhere): nothing is written."""
        try:
            self.ctx.files.edit(Path(path), update_items(Path(path), _has_id(item_id), change), op)
        except PathError as exc:
            log.warning("extract: not changed: %s", exc)
            return False
        return True

    def _write(self, plan: Plan, session_id: str) -> list[Add]:
        """Write a batch's memories to Markdown and index them; the items added."""
        touched: set[str] = set()
        added: list[Add] = []
        files = self.ctx.files
        run = {RUN_TRAILER: str(self.run_id)}
        # New items first, then the old ones they replace are marked: a crash in between
        # leaves both, not neither. Each step is one change of the history.
        with files.operation(Cause.EXTRACT, trailers=run) as change:
            for a in plan.actions:
                if isinstance(a, Add):
                    if self._add(a, touched, change):
                        added.append(a)
                elif isinstance(a, Bump):
                    bump = _bump(self.ctx.today().isoformat())
                    if self._mark(a.item.path, a.item.id, bump, change):
                        touched.add(a.item.path)
                        self.counts["merged"] += 1
                elif isinstance(a, Skip) and a.reason in ("forgotten", "edited", "archived"):
                    self.counts["kept_hand_edits"] += 1
            change.detail = f"run {self.run_id}: session {session_id}, {len(added)} added"
        replaced = [(old, a) for a in added for old in a.supersedes]
        with files.operation(Cause.SUPERSEDE, trailers=run) as change:
            for old, a in replaced:
                mark = {"superseded": a.meta["at"], "by": a.meta["id"]}
                if self._mark(old.path, old.id, _set_meta(mark), change):
                    touched.add(old.path)
                    self.counts["superseded"] += 1
            change.detail = f"run {self.run_id}: {len(replaced)} replaced by newer memories"
        if touched:
            self.ctx.indexer.index_paths(sorted(touched))
        return added

    def _apply(
        self,
        plan: Plan,
        sess: PendingSession,
        upto: int,
        usage: LLMUsage | None,
        signals: list[SignalRow],
    ) -> None:
        session_id, agent = sess.session_id, sess.agent_id
        with self.ctx.lock:
            added = self._write(plan, session_id)
        now = self.ctx.now()
        budget = self.budget

        def commit(conn: Connection) -> None:
            memories.add_memory_hashes(conn, [
                memories.MemoryHash(a.target.scope, a.hash, a.meta["id"], a.text,
                                    str(a.target.path), session_id, now)
                for a in added
            ])  # fmt: skip
            add_signals(conn, session_id, signals if agent else [])
            note_extracted(conn, session_id, agent, upto)
            advance_cursor(conn, session_id, upto)
            clear_failed_batch(conn, session_id)
            if usage is not None and budget is not None:
                budget.write(conn, usage)
                clear_config_error(conn)

        self.ctx.store.w.run(commit)
        if usage is not None and budget is not None:
            budget.spent(usage)


# Words every memory says and no turn needs to: they support nothing.
_MEMORY_WORDS = frozenset({"user", "users", "用户"})


def _source_turns(memory: ExtractedMemory, turns: Sequence[Turn]) -> list[str]:
    """The turns a memory came from: the ones it names, when they are turns of the batch and not
    simply all of them (what a model's answer falls back to when its ids are unusable).
    Otherwise the user turn whose words support it most (the earliest of equals), or the
    batch's earliest user turn when none does: a memory of unknown provenance is dated no
    later than its batch's first user turn, so it never replaces a fact a later turn of the
    batch states, and a two-day-old fact read in a batch with today's turns keeps its day."""
    batch = [t.turn_id for t in turns]
    ids = [i for i in memory.source_turn_ids if i in batch]
    if ids and not (len(ids) > 1 and set(ids) == set(batch)):
        return ids
    said = [t for t in turns if t.role == "user"] or list(turns)
    words = statement_words(memory.content) - _MEMORY_WORDS
    scores = [len(words & statement_words(t.text)) for t in said]
    best = max(range(len(said)), key=lambda i: (scores[i], -said[i].ts, -i))
    return [said[best].turn_id]


def _take(
    rows: Sequence[conversations.StoredTurn], sess: PendingSession, echoes: set[str], room: int
) -> tuple[list[conversations.StoredTurn], list[Turn], list[Turn]]:
    """The next batch: the rows within `room` tokens, the turns to extract from, and the user
    turns too short for that (their signals still count)."""
    batch: list[conversations.StoredTurn] = []
    turns: list[Turn] = []
    short: list[Turn] = []
    used = 0
    for r in rows:
        text = strip_recalled(r.text, echoes)
        keep = bool(text) and not is_trivial(text)
        cost = turn_tokens(text) if keep else 0
        if keep and used + cost > room:
            break
        batch.append(r)
        turn = Turn(r.source, sess.session_id, r.turn_id, r.role, text, r.ts,
                    agent_id=sess.agent_id, project=sess.project)  # fmt: skip
        if keep:
            turns.append(turn)
            used += cost
        elif text and r.role == "user":
            short.append(turn)
    return batch, turns, short


def _signal_rows(ruled: list[Turn], said: list[TurnSignal]) -> list[SignalRow]:
    """The batch's signals: the rules' for `ruled` turns, then the model's."""
    rows = [(s.turn_id, s.kind.value, s.strength, s.evidence, "rules")
            for t in ruled for s in turn_signals(t)]  # fmt: skip
    return rows + [(s.turn_id, s.kind, s.strength, s.evidence, "llm") for s in said]


def _has_id(item_id: str) -> Callable[[str, dict[str, str]], bool]:
    return lambda _text, meta: meta.get("id") == item_id


def _set_meta(extra: dict[str, str]) -> Callable[[str, dict[str, str]], tuple[str, dict[str, str]]]:
    return lambda text, meta: (text, {**meta, **extra})


def _bump(day: str) -> Callable[[str, dict[str, str]], tuple[str, dict[str, str]]]:
    def change(text: str, meta: dict[str, str]) -> tuple[str, dict[str, str]]:
        try:
            hits = int(meta.get("hits", "1"))
        except ValueError:
            hits = 1
        return text, {**meta, "hits": str(hits + 1), "seen": day}

    return change
