"""A later turn's new value for a slot an earlier turn filled, said without the slot's words.

A later turn often gives only the new value and the change, leaving out what it is the value
of: "Bumped the app to Node 20 yesterday" after "The app is pinned to Node 16", "前端上周刚升级到
React 18" after "我们项目的前端是用 React 17 写的", "组里把 Go 升到 1.22 了"; "The organizers pushed
the slide deadline to March 17" after "The conference talk slides are due on March 3", "导师说可以
晚一周，初稿改成 4 月 17 号交了". Two slots are read by their value's shape alone, with no list of
words for the thing they belong to:

- **a version** (`new_versions`): an earlier memory names a technology with a version ("Node.js
  16", "PostgreSQL 13"); a stating clause of the turn that says a change names the same
  technology with another version, or — when the session holds one versioned value only — gives
  a bare version after an upgrade ("升到 1.22", "bumped it to 3.12"). The turn's memory naming the
  new version, or else the earlier statement with its version replaced, gets the earlier
  memory's key (its type: the slot's; the project's when the clause's subject is the team or one
  of its systems);
- **a date** (`moved_dates`): an earlier task has a date (its `due`, or one its words give); a
  stating clause of the turn says a date moved (pushed, moved, postponed, extension, now due, 推迟,
  延到, 改成, 提前) and names the task's words, a deadline, or only "it", with a new date (not
  "My dentist visit moved to June 20" after a beta's due date). The
  turn's task of that date, or else the earlier task with its date replaced, gets the earlier
  task's key.

Placement then marks the earlier memory superseded; nothing is deleted. A question, a
hypothesis, a negated clause and someone else's change replace nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import date

from memd.core.models import ExtractedMemory
from memd.extraction.rules.common import (
    CJK_RE,
    IMP_PROJECT,
    SENTENCE_RE,
    Ctx,
    is_question,
)
from memd.extraction.rules.dates import due_en, due_zh, find_date
from memd.extraction.rules.generic import others_change
from memd.extraction.rules.learned import _EN_NOT_RE, _ZH_NOT_RE, cut, says_change
from memd.extraction.rules.tech import mentioned_tech

_SUPPOSE_RE = re.compile(
    r"^(?:if|suppose|imagine|what\s+if|should|could|would|maybe)\b|如果|假如|假设|要是|万一|打算|考虑",
    re.I,
)


# A clause addressed to the assistant asks ("Can you help me …", 帮我 …).
_ASKS_RE = re.compile(r"\b(?:you|please)\b|^(?:帮我|请|麻烦|能不能)|你", re.I)


def _statements(text: str) -> Iterator[list[str]]:
    """The stating clauses of each sentence of a turn: no question, negation, or sentence that
    supposes."""
    for sentence in SENTENCE_RE.findall(text):
        clauses = cut(sentence)
        if any(_SUPPOSE_RE.search(c) for c in clauses):
            continue
        yield [
            c
            for c in clauses
            if not is_question(c)
            and not _ASKS_RE.search(c)
            and not (_ZH_NOT_RE if CJK_RE.search(c) else _EN_NOT_RE).search(c)
        ]


def _replaced(out: Sequence[ExtractedMemory], end: int) -> set[int]:
    """The indexes before `end` of memories a later memory shares a key with."""
    last: dict[str, int] = {}
    gone: set[int] = set()
    for i, m in enumerate(out):
        if m.subject:
            if m.subject in last and last[m.subject] < end:
                gone.add(last[m.subject])
            last[m.subject] = i
    return gone


def _slug(text: str) -> str:
    return re.sub(r"[^\w\u3400-\u9fff]+", "-", text.casefold()).strip("-")[:40]


def _link(
    out: list[ExtractedMemory], i: int, new: ExtractedMemory, j: int | None, kind: str
) -> None:
    """The earlier memory `out[i]` and the new one (at `j`, or added) get one key."""
    old = out[i]
    key = old.subject or f"{kind}:{_slug(re.sub(r'[(（].*?[)）]', '', old.content))}"
    out[i] = replace(old, subject=key)
    if j is None:
        out.append(replace(new, subject=key))
    else:
        out[j] = replace(new, subject=key)


# -- versions ------------------------------------------------------------------------------------
_VERSIONED_RE = re.compile(
    r"(?P<name>[A-Za-z][\w.+#\-]*?)\s?v?(?P<version>\d+(?:\.\d+)*)(?![\w.])(?!\s*(?:%|个|年|次))"
)
_UPGRADE_RE = re.compile(
    r"\b(?:upgraded|bumped|moved|migrated|updated|switched)\b[^,;]{0,30}?\bto\s+v?"
    r"(?P<v1>\d+(?:\.\d+)+|\d+)\b(?!\s*(?:%|pm|am))"
    r"|(?:升到|升级到|升级成|升成|换到|切到|更新到)\s*v?(?P<v2>\d+(?:\.\d+)*)",
    re.I,
)


def _tech_name(word: str) -> str:
    tech = mentioned_tech(word)
    return tech.name.casefold() if tech is not None else ""


def _versions(text: str) -> list[tuple[str, str, str]]:
    """(technology, version, the words as said) of the versioned technologies a text names."""
    out = []
    for m in _VERSIONED_RE.finditer(text):
        name = _tech_name(m.group("name"))
        if name:
            out.append((name, m.group("version"), m.group(0)))
    return out


def new_versions(text: str, ctx: Ctx, out: list[ExtractedMemory], start: int) -> None:
    """A technology's new version said in a later turn (see the module)."""
    gone = _replaced(out, start)
    held = [
        (i, v)
        for i in range(start)
        if i not in gone and out[i].type in ("skill", "preference", "project", "decision")
        for v in _versions(out[i].content)[:1]
    ]
    if not held:
        return
    for clause in (c for clauses in _statements(text) for c in clauses):
        if not says_change(clause):
            continue
        said = _versions(clause)
        bare = _UPGRADE_RE.search(clause)
        for i, (name, version, words) in held:
            new = next((s for s in said if s[0] == name and s[1] != version), None)
            if new is None and bare is not None and len(held) == 1 and not said:
                v = bare.group("v1") or bare.group("v2")
                if v != version and v.count(".") == version.count("."):
                    new = (name, v, v)
            if new is None:
                continue
            _version_link(clause, ctx, out, start, i, words, new)
            return


def _version_link(
    clause: str,
    ctx: Ctx,
    out: list[ExtractedMemory],
    start: int,
    i: int,
    words: str,
    new: tuple[str, str, str],
) -> None:
    old = out[i]
    team = _team_clause(clause)
    typed = "project" if team or old.type == "project" else old.type
    # The turn's memory naming the new version, or the earlier statement with it.
    found = [
        j
        for j in range(start, len(out))
        if any(n == new[0] and v == new[1] for n, v, _ in _versions(out[j].content))
    ]
    if found:
        j = next((k for k in found if out[k].type == typed), found[0])
        if out[j].subject and out[j].subject == old.subject:
            out[j] = replace(out[j], type=typed)  # linked by a reader: the slot's type
            return
        _link(out, i, replace(out[j], type=typed), j, "version")
        return
    version = _versions(words)[0][1]
    content = old.content.replace(words, words.replace(version, new[1]), 1)
    made = ctx.mem(content, typed, max(old.importance, IMP_PROJECT if typed == "project" else 0))
    _link(out, i, made, None, "version")


# The clause's subject is the team or one of its systems ("we", "the app", 我们, 组里, staging).
_EN_TEAM_RE = re.compile(
    r"\b(?:we|we're|we've|our|us|team|the\s+(?:app|service|repo|project|codebase|team|site|"
    r"backend|frontend|server|cluster|stack|build|pipeline|database|db))\b|^\s*[a-z][\w\-]*\s",
    re.I,
)
_ZH_TEAM_RE = re.compile(r"我们|咱们|组里|团队|公司|项目|前端|后端|服务|线上|库|集群|^[A-Za-z]")


def _team_clause(clause: str) -> bool:
    zh = bool(CJK_RE.search(clause))
    if zh:
        return bool(_ZH_TEAM_RE.search(clause)) and not clause.lstrip().startswith("我")
    return bool(_EN_TEAM_RE.search(clause)) and not re.match(r"\s*I\b", clause)


# -- dates ---------------------------------------------------------------------------------------
_MOVED_RE = re.compile(
    r"\b(?:slipped|slips|pushed|postponed|delayed|moved|rescheduled|bumped|shifted|brought"
    r"\s+forward|pulled\s+in|extension|extended|now\s+due|changed)\b"
    r"|推迟|延期|延后|延到|推到|改到|改成|挪到|提前到?|调到|晚一|早一",
    re.I,
)
_DEADLINE_RE = re.compile(r"\b(?:deadline|due|date)\b|截止|ddl|交|时间|日期", re.I)
_BARE_HEAD_RE = re.compile(
    r"(?:it|that|this|which)?(?:\s+(?:got|was|has\s+been|is))?|已经|又|被", re.I
)
_EVENT_RE = re.compile(r"[a-z][a-z\-]{2,}|[\u4e00-\u9fff]{2}")
_PLAIN_EVENT = frozenset(
    "the for with from that this user user's needs need due has have and was are".split()
)


def _task_date(m: ExtractedMemory, today: date) -> date | None:
    if m.due:
        try:
            return date.fromisoformat(m.due)
        except ValueError:
            return None
    found = find_date(m.content, today)
    return found[0] if found else None


def _event_words(content: str) -> set[str]:
    low = re.sub(r"[(（].*?[)）]", "", content.casefold())
    words = {w for w in _EVENT_RE.findall(low) if w not in _PLAIN_EVENT}
    if CJK_RE.search(low):
        cjk = re.sub(r"[^\u4e00-\u9fff]", "", low)
        words |= {a + b for a, b in zip(cjk, cjk[1:], strict=False)}
    return words - {"用户", "需要", "用户需", "户需"}


def moved_dates(text: str, ctx: Ctx, out: list[ExtractedMemory], start: int) -> None:
    """A task's date moved in a later turn (see the module)."""
    gone = _replaced(out, start)
    tasks = [
        (i, when)
        for i in range(start)
        if i not in gone and out[i].type == "task"
        for when in [_task_date(out[i], ctx.today)]
        if when is not None
    ]
    if not tasks:
        return
    for clauses in _statements(text):
        for k, clause in enumerate(clauses):
            moved = _MOVED_RE.search(clause)
            if moved is None:
                continue
            # "PM 说 freeze 提前了，Wednesday 就要 merge": the new date may follow in the next clause.
            after = " ".join([clause[moved.start() :], *clauses[k + 1 :]])
            found = find_date(after, ctx.today)
            if found is None:
                continue
            low = " ".join(clauses).casefold()
            named = [
                (i, w) for i, w in tasks if any(e in low for e in _event_words(out[i].content))
            ]
            # No task named: a deadline, or a move of "it" ("it slipped to June 2", 推迟到下周五).
            head = clause[: moved.start()].strip()
            if not named and (_DEADLINE_RE.search(low) or _BARE_HEAD_RE.fullmatch(head)):
                named = tasks[-1:]
            for i, old_when in named[-1:]:
                if old_when != found[0]:
                    _date_link(ctx, out, start, i, old_when, found[0])
                    return


def _date_link(
    ctx: Ctx, out: list[ExtractedMemory], start: int, i: int, old_when: date, when: date
) -> None:
    old = out[i]
    iso = when.isoformat()
    found = [
        j
        for j in range(start, len(out))
        if out[j].type == "task"
        and (out[j].due == iso or (_task_date(out[j], ctx.today) or old_when) == when)
    ]
    zh = bool(CJK_RE.search(old.content))
    shown, now = (due_zh(old_when), due_zh(when)) if zh else (due_en(old_when), due_en(when))
    if shown in old.content:
        content = old.content.replace(shown, now)
    else:
        content = f"{old.content}（改到 {now}）" if zh else f"{old.content} (moved to {now})"
    if found:
        j = found[0]
        if out[j].subject and out[j].subject == old.subject:
            return
        # "用户：延到5月20号" names no task: the earlier task's words, with the new date.
        named = _event_words(old.content) & _event_words(out[j].content)
        _link(out, i, replace(out[j], due=iso, content=out[j].content if named else content), j,
              "date")  # fmt: skip
        return
    _link(out, i, ctx.mem(content, "task", old.importance, topic=old.topic, due=iso), None, "date")


def apply_slots(text: str, ctx: Ctx, out: list[ExtractedMemory], start: int) -> None:
    """A later turn's new version or date for a slot an earlier turn filled (see the module)."""
    if start == 0:
        return
    # A date someone else moved is still the user's ("The organizers pushed the deadline").
    moved_dates(text, ctx, out, start)
    if not others_change(text):
        new_versions(text, ctx, out, start)
