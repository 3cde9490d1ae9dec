"""PURE: where an extracted memory goes, and whether it is new, a repeat, or replaces a fact.

The rules (DESIGN.md §3, §5):

- personal/skill → `_core/profile.md`, preference → `_core/preferences.md`, task →
  `tasks.md`; project/decision/knowledge → the session's project memory when it has one,
  else `topics/<topic>.md`. A memory point (how the user wants the assistant to work) said in
  a session with an agent goes to that agent's `agents/<id>/relationship.md` instead.
- An exact or near duplicate of a live item is not added: the item's `hits` and `seen` date
  are bumped instead. Near means most words shared, or the same fact in other words or
  another language ("用户喜欢用 Neovim 写代码" after "User uses Neovim": `same_fact`) — but not a
  memory on the item's `subject` that names other numbers: that is its new value, however many
  words the two share ("…论文初稿（截止 12月12日…）" after "…论文初稿（截止 12月5日…）").
- A new fact on the same `subject` (employer, city, tool:testing…) as a live item marks that
  item `superseded=<date> by=<new id>`; its text stays. Nothing here ever deletes an item.
- Hand edits win: a memory memd wrote once (its content hash is known) whose line was deleted
  or whose text was changed by hand is never written again.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from memd.core.models import ExtractedMemory
from memd.core.text import cjk_bigrams, normalize, terms
from memd.extraction.rules import is_memory_point, same_fact
from memd.memory import relationship
from memd.memory.tree import slugify

NEAR_DUPLICATE = 0.8
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_TOPIC_FALLBACK = {"project": "projects", "decision": "decisions", "knowledge": "knowledge"}
_COMMUNICATION = re.compile(
    r"\b(?:reply|replies|answer|answers|respond|response|explain|tone|language)\b"
    r"|回答|回复|语言|语气|解释|沟通",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Target:
    """A Markdown file and section a memory is appended to; `scope` bounds dedupe/supersession."""

    path: Path
    section: str
    title: str
    scope: str  # "user" | "project:<slug>" | "agent:<id>"


@dataclass(frozen=True, slots=True)
class Existing:
    """A list item already in the memory tree (from the index)."""

    id: str
    path: str
    text: str
    meta: Mapping[str, str]
    scope: str  # "user" | "project:<slug>" | "agent:<id>" | "archive"

    @property
    def live(self) -> bool:
        m = self.meta
        return self.scope != "archive" and not m.get("superseded") and not m.get("archived")


@dataclass(frozen=True, slots=True)
class Known:
    """A memory memd has written before (the `memory_hashes` table)."""

    hash: str
    memory_id: str
    content: str
    scope: str


@dataclass(frozen=True, slots=True)
class Add:
    """Append a new item; mark `supersedes` items superseded by it."""

    memory: ExtractedMemory
    target: Target
    text: str
    meta: dict[str, str]
    hash: str
    supersedes: tuple[Existing, ...] = ()


@dataclass(frozen=True, slots=True)
class Bump:
    """A repeat of a live item: count it (`hits`) and date it (`seen`)."""

    memory: ExtractedMemory
    item: Existing


@dataclass(frozen=True, slots=True)
class Skip:
    """Nothing to write, and why."""

    memory: ExtractedMemory
    reason: str  # "replay" | "duplicate" | "forgotten" | "edited" | "archived" | "empty"


Action = Add | Bump | Skip


@dataclass(slots=True)
class Plan:
    """The actions of one batch, in order."""

    actions: list[Action] = field(default_factory=list)


def content_hash(text: str) -> str:
    """The hash memd remembers for every memory it writes."""
    return hashlib.sha256(normalize(text).encode()).hexdigest()[:32]


@functools.lru_cache(maxsize=8192)
def statement_words(text: str) -> frozenset[str]:
    """The words of a statement that carry meaning: terms without stopwords (all of them when
    only stopwords are left), CJK runs as character bigrams, "'s" dropped."""
    out: set[str] = set()
    for t in terms(text) or terms(text, drop_stopwords=False):
        if _CJK.match(t):
            out.update(cjk_bigrams(t))
        else:
            out.add(t.removesuffix("'s").removesuffix("’s"))
    return frozenset(out)


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of the statements' words (CJK as character bigrams)."""
    if normalize(a) == normalize(b):
        return 1.0
    ta, tb = statement_words(a), statement_words(b)
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / len(ta | tb)


def near_duplicate(a: str, b: str) -> bool:
    """Whether two statements say the same thing (exact after normalising, or ≥ 0.8 similar)."""
    return similarity(a, b) >= NEAR_DUPLICATE


_NUMBER_RE = re.compile(r"\d+(?:\.\d+)*")


def _numbers(text: str) -> frozenset[str]:
    return frozenset(_NUMBER_RE.findall(text))


def _repeats(item: Existing, text: str, type_: str) -> bool:
    """Whether a live item already says `text`: in most of its words, or as the same fact in
    other words when both are of one type (a tool used is not the employer of the same name)."""
    if near_duplicate(item.text, text):
        return True
    return item.meta.get("type", type_) == type_ and same_fact(item.text, text)


def target_for(
    memory: ExtractedMemory, memory_root: Path, project: tuple[str, Path] | None, agent: str = ""
) -> Target:
    """The file and section a memory belongs in.

    `project` is (slug, folder of that project's Markdown memory) for sessions that belong to
    a project, else None; `agent` the agent the session was with, or "".
    """
    core = memory_root / "_core"
    t = memory.type
    if agent and is_memory_point(memory):
        slug = slugify(agent)
        path = memory_root / "agents" / slug / "relationship.md"
        return Target(path, relationship.POINTS, relationship.TITLE, f"agent:{slug}")
    if t == "personal":
        return Target(core / "profile.md", "Basic Info", "User Profile", "user")
    if t == "skill":
        return Target(core / "profile.md", "Skills", "User Profile", "user")
    if t == "preference":
        communication = memory.subject == "reply-language" or bool(
            _COMMUNICATION.search(memory.content)
        )
        section = "Communication Style" if communication else "Technical Preferences"
        return Target(core / "preferences.md", section, "User Preferences", "user")
    if t == "task":
        return Target(memory_root / "tasks.md", "Open", "Tasks", "user")
    section = {"project": "Context", "decision": "Decisions"}.get(t, "Knowledge")
    if project is not None:
        slug, folder = project
        name = "decisions.md" if t == "decision" else "context.md"
        return Target(folder / name, section, f"Project {slug}", f"project:{slug}")
    topic = slugify(memory.topic) if memory.topic.strip() else _TOPIC_FALLBACK.get(t, "knowledge")
    title = topic.replace("-", " ").title()
    return Target(memory_root / "topics" / f"{topic}.md", section, title, "user")


def _src_turns(src: str) -> set[tuple[str, str]]:
    session, _, turns = src.partition("#")
    return {(session, t) for t in turns.split(",") if t}


def plan_memory(
    memory: ExtractedMemory,
    target: Target,
    *,
    existing: Sequence[Existing],
    known: Mapping[tuple[str, str], Known],
    new_id: str,
    at: str,
    src: str,
    added: str = "",
) -> Action:
    """Decide what one proposed memory does to the tree.

    `existing` are the items of the tree (all scopes, archive included, superseded included),
    `known` the memories written before keyed by (scope, content hash), `at` the day of the fact
    (the day its turn was said), `added` the day memd writes it (when extraction runs: a turn
    read two days later keeps its own day in `at`), `src` its source as
    ``<session>#<turn>,<turn>``.
    """
    text = " ".join(memory.content.split())
    if not text:
        return Skip(memory, "empty")
    h = content_hash(text)
    live = [e for e in existing if e.live and e.scope == target.scope]
    numbers = _numbers(text)
    for e in live:
        if (
            memory.subject
            and e.meta.get("subject") == memory.subject
            and _numbers(e.text) != numbers
        ):
            continue  # the same key with another number: a new value, not a repeat
        if _repeats(e, text, memory.type):
            if not e.meta.get("id"):
                return Skip(memory, "duplicate")  # a hand-written line: never touched
            if e.meta.get("src") == src or _src_turns(src) & _src_turns(e.meta.get("src", "")):
                # The same turns extracted again (a run interrupted after writing Markdown).
                return Skip(memory, "replay")
            return Bump(memory, e)
    # A live copy wins over an archived one with the same id.
    by_id = {e.meta["id"]: e for e in sorted(existing, key=lambda e: e.live) if e.meta.get("id")}
    match = known.get((target.scope, h))
    if match is None:
        scoped = (k for k in known.values() if k.scope == target.scope)
        match = next(
            (k for k in scoped if near_duplicate(k.content, text) or same_fact(k.content, text)),
            None,
        )
    if match is not None:
        item = by_id.get(match.memory_id)
        if item is None:
            return Skip(memory, "forgotten")
        if item.scope == "archive" or item.meta.get("archived"):
            return Skip(memory, "archived")
        if not near_duplicate(item.text, match.content):
            return Skip(memory, "edited")
        # Otherwise the old item is there but superseded: the fact is current again.
    meta = {"id": new_id, "type": memory.type, "imp": str(max(1, min(10, memory.importance)))}
    if memory.subject:
        meta["subject"] = memory.subject
    meta["src"] = src
    meta["at"] = at
    if added:
        meta["added"] = added
    if memory.due:
        meta["due"] = memory.due
    holders: tuple[Existing, ...] = ()
    if memory.subject:
        same = [e for e in live if e.meta.get("subject") == memory.subject and e.meta.get("id")]
        newer = [e for e in same if e.meta.get("at", "") > at]
        if newer:
            # An older statement reached us late: record it, already replaced by the newer one.
            latest = max(newer, key=lambda e: e.meta.get("at", ""))
            meta["superseded"] = latest.meta.get("at", at)
            meta["by"] = latest.meta["id"]
        else:
            holders = tuple(same)
    return Add(memory, target, text, meta, h, holders)


def plan_batch(
    memories: Iterable[tuple[ExtractedMemory, Target, str, str]],
    *,
    existing: Sequence[Existing],
    known: Mapping[tuple[str, str], Known],
    new_id: Iterable[str],
    added: str = "",
) -> Plan:
    """Plan several memories (memory, target, at, src) so later ones see earlier ones' effects;
    `added` is the day of the run (see `plan_memory`)."""
    items = list(existing)
    known_now = dict(known)
    ids = iter(new_id)
    plan = Plan()
    for memory, target, at, src in memories:
        action = plan_memory(memory, target, existing=items, known=known_now, new_id=next(ids),
                             at=at, src=src, added=added)  # fmt: skip
        plan.actions.append(action)
        if isinstance(action, Add):
            new_meta = action.meta
            gone = {e.meta.get("id") for e in action.supersedes}
            items = [
                replace(e, meta={**e.meta, "superseded": at, "by": new_meta["id"]})
                if e.meta.get("id") in gone
                else e
                for e in items
            ]
            items.append(
                Existing(new_meta["id"], str(target.path), action.text, new_meta, target.scope)
            )
            known_now[(target.scope, action.hash)] = Known(
                action.hash, new_meta["id"], action.text, target.scope
            )
    return plan
