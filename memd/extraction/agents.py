"""Agents and their relationship with the user, kept current in `agents/<id>/relationship.md`.

**Which agent.** A session belongs to the agent its turns name (`agent_id` of pushed turns and
of generic log lines, else the `agent` of the log source). Claude Code's own sessions are agent
`claude-code`; each sub-agent run (a sidechain transcript, counted without its text) is a
session of `claude-code-<type>` by its `.meta.json` (`claude-code-explore`, …), or of
`claude-code-subagent` when the type is unknown. An agent id is used as a folder name, so it is
slugified (`Ally` → `ally`).

**The update** (`update_relationships`, at the end of every extraction run): for every agent
seen, the counts and familiarity are computed from the sessions; every session that has ended
(no turn for `summary.idle_min`) and that this memd extracted to its last turn moves trust by
one bounded step made of its signals (`memd.extraction.relationship`), once: what was applied
is recorded per session (`relationship_sessions`) before the file is written, so a crash in
between loses a step rather than applying it twice. The latest such session sets the mood. The
file is rewritten with the pure `memd.memory.relationship.update_status`, which reads the trust
in the file as it is at that moment: a value edited by hand is where memd goes on from.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from memd.api.messages import MemoryPoint, RelationshipResult
from memd.conversations import repo as conversations
from memd.conversations.formats import CLAUDE_CODE_AGENT
from memd.core.conditions import day_of
from memd.core.errors import MemdError, PathError
from memd.core.fsio import open_regular, resolve_inside
from memd.core.redact import redact
from memd.db import Connection
from memd.extraction import repo
from memd.extraction.relationship import familiarity, mood_of, trust_step
from memd.extraction.seen import subagent_id
from memd.history import Cause
from memd.memory.files import MemoryFiles, Operation, TextEdit, decode
from memd.memory.jobs import JobContext
from memd.memory.relationship import (
    TRUST_START,
    Standing,
    StatusUpdate,
    read_relationship,
    update_status,
)
from memd.memory.tree import slugify

log = logging.getLogger("memd.agents")
# An empty file this fresh may be one an editor is saving (truncate, then write): leave it be.
SAVING_GRACE_S = 2.0


def relationship_file(memory_root: Path, agent_id: str) -> Path:
    """`agents/<id>/relationship.md` of an agent."""
    return memory_root / "agents" / slugify(agent_id) / "relationship.md"


@dataclass(slots=True)
class Activity:
    """An agent's sessions, (last turn time, turns) each; sub-agent runs count as sessions."""

    agent_id: str
    sessions: list[tuple[float, int]] = field(default_factory=list)
    first: float = 0.0
    last: float = 0.0
    subagent: bool = True  # only sub-agent runs: the user never spoke to it

    @property
    def turns(self) -> int:
        return sum(t for _, t in self.sessions)

    def add(self, sessions: Sequence[tuple[float, int]], first: float, last: float) -> None:
        self.sessions += sessions
        self.first = min(self.first, first) if self.first else first
        self.last = max(self.last, last)

    def standing(self, now: float) -> Standing:
        return Standing(
            sessions=len(self.sessions),
            turns=self.turns,
            first=day_of(self.first) if self.first else None,
            last=day_of(self.last) if self.last else None,
            familiarity=familiarity(self.sessions, now),
        )


def activities(conn: Connection, agent: str = "") -> dict[str, Activity]:
    """Every agent seen in the conversations (or only `agent`), by its slugified id."""
    raw: list[str] | None = None
    types: list[str] | None = None
    if agent:
        raw = [a for a in repo.agent_ids(conn) if slugify(a) == agent]
        types = []
        if agent.startswith(f"{CLAUDE_CODE_AGENT}-"):
            types = [t for t, *_ in conversations.subagent_totals(conn) if subagent_id(t) == agent]
    out: dict[str, Activity] = {}
    for a in repo.agent_sessions(conn, raw) if raw != [] else []:
        act = out.setdefault(slugify(a.agent_id), Activity(slugify(a.agent_id)))
        act.add(a.sessions, a.first, a.last)
        act.subagent = False
    for r in conversations.subagent_runs(conn, types) if types != [] else []:
        name = subagent_id(r.agent_type)
        act = out.setdefault(name, Activity(name))
        act.add([(r.last_ts, r.turns)], r.first_ts, r.last_ts)
    return out


@dataclass(slots=True)
class RelationshipRun:
    """What one update did: files rewritten, session parts applied, agents that failed."""

    updated: int = 0
    applied: int = 0
    errors: list[str] = field(default_factory=list)


def update_relationships(ctx: JobContext, op: Operation | Cause = Cause.EXTRACT) -> RelationshipRun:
    """Bring every agent's relationship file up to date (see the module docstring), as part
    of `op` (the run's operation)."""
    run = RelationshipRun()
    conn = ctx.store.read()
    acts = activities(conn)
    if not acts:
        return run
    now = ctx.now()
    ended_before = now - ctx.settings.summary_idle_min * 60
    parts: dict[str, list[tuple[repo.FinishedPart, list[repo.StoredSignal]]]] = {}
    for p in repo.finished_parts(conn, ended_before):
        parts.setdefault(slugify(p.agent_id), []).append((p, repo.part_signals(conn, p)))
    states = repo.agent_states(conn)
    for agent, act in sorted(acts.items()):
        try:
            _update_agent(ctx, run, act, parts.get(agent, []), states.get(agent), now, op)
        except (MemdError, OSError) as exc:
            # One agent's file (unwritable, being edited) must not stop the others.
            log.warning("relationship of %s not updated: %s", agent, exc)
            run.errors.append(f"{agent}: {exc}")
    return run


def _update_agent(
    ctx: JobContext,
    run: RelationshipRun,
    act: Activity,
    parts: list[tuple[repo.FinishedPart, list[repo.StoredSignal]]],
    state: repo.AgentState | None,
    now: float,
    op: Operation | Cause,
) -> None:
    state = state or repo.AgentState()
    steps = [(p, trust_step(signals)) for p, signals in parts]
    latest = max(parts, key=lambda x: (x[0].ended_at, x[0].session_id), default=None)
    mood = None
    if latest is not None and latest[0].ended_at >= state.mood_at:
        p, signals = latest
        mood = mood_of(signals, title=p.title, ended=day_of(p.ended_at))
    standing = act.standing(now)
    update = StatusUpdate(
        standing,
        trust_step=sum(step for _, step in steps),
        trust_start=state.trust if state.trust is not None else TRUST_START,
        with_trust=not act.subagent,
        mood=mood,
    )
    agent = act.agent_id
    if steps:
        mood_at = latest[0].ended_at if mood is not None and latest is not None else None
        ctx.store.w.run(lambda c: repo.mark_applied(c, agent, steps, mood_at=mood_at, now=now))
        run.applied += len(steps)
    try:
        # Written only inside the memory roots: an `agents/<id>` linked elsewhere is left alone.
        path = ctx.indexer.resolve(relationship_file(ctx.memory_root, agent))
    except PathError as exc:
        log.warning("agent %s: relationship file not updated: %s", agent, exc)
        return
    written = rewrite(ctx.files, path, lambda old: update_status(old, update), op)
    if written is None:
        return
    ctx.indexer.index_paths([str(path)])
    run.updated += 1
    trust = read_relationship(written).trust
    ctx.store.w.run(lambda c: repo.note_written(c, agent, trust, standing.familiarity, now))


def rewrite(
    files: MemoryFiles, path: Path, change: Callable[[str], str], op: Operation | Cause
) -> str | None:
    """Replace the file's text with `change(text)` (a missing file reads as ""); return what was
    written, or None when nothing changed.

    Through memd's safe writer: `change` is applied to the text as it is on disk, and again if
    the file changes meanwhile, so a hand edit saved meanwhile is never overwritten; an empty
    file written in the last moments (an editor in the middle of saving) is left alone until
    the next run. The file must lead inside the memory roots (`PathError` otherwise).
    """
    if _read(path) is None:
        return None
    written = files.edit(path, TextEdit(lambda old: (change(old or ""), None)), op)
    return written.after if written.changed else None


def _read(path: Path) -> str | None:
    """The file's text, line endings as they are; "" when missing, None while being saved.

    Only a regular file is read (a FIFO or a device named `relationship.md` would block the
    job): anything else raises `NotRegularFile`.
    """
    try:
        fd = open_regular(path)
    except FileNotFoundError:
        return ""
    with os.fdopen(fd, "rb") as f:
        text = decode(f.read())
        if not text and time.time() - os.fstat(f.fileno()).st_mtime < SAVING_GRACE_S:
            return None
    return text


def relationship_data(
    conn: Connection, memory_root: Path, agent_id: str, now: float
) -> RelationshipResult:
    """An agent's relationship as data: counts and familiarity from the conversations, trust,
    mood and memory points as the file says them now."""
    agent = slugify(agent_id)
    act = activities(conn, agent).get(agent) or Activity(agent, subagent=False)
    path = relationship_file(memory_root, agent)
    try:
        # A file (or an `agents/<id>` folder) linked out of the memory tree is not read.
        text = _read(resolve_inside([memory_root], path)) or ""
    except (MemdError, OSError):
        text = ""
    # Served as the index would serve it: secrets redacted, `<private>` spans left out.
    rel = read_relationship(redact(text, keep_lines=True))
    return RelationshipResult(
        agent_id=agent,
        path=str(path),
        exists=path.is_file(),
        subagent=act.subagent,
        sessions=len(act.sessions),
        turns=act.turns,
        first_at=float(act.first) if act.first else None,
        last_at=float(act.last) if act.last else None,
        familiarity=familiarity(act.sessions, now),
        trust=rel.trust,
        trust_text=rel.trust_text,
        mood=rel.mood,
        mood_note=rel.mood_note,
        points=[
            MemoryPoint(text=p.text, id=p.id, line=p.line, meta=dict(p.meta)) for p in rel.points
        ],  # fmt: skip
    )
