"""A later turn's new value for a slot an earlier turn filled, said without the slot's words.

A later turn often gives only the new value and the change, leaving out what it is the value
of: "Bumped the app to Node 20 yesterday" after "The app is pinned to Node 16", "前端上周刚升级到
React 18" after "我们项目的前端是用 React 17 写的", "组里把 Go 升到 1.22 了"; "The organizers pushed
the slide deadline to March 17" after "The conference talk slides are due on March 3", "导师说可以
晚一周，初稿改成 4 月 17 号交了", "现在 78 公斤了". Three slots are read by their value's
shape alone, with no list of words for the thing they belong to (`moved` reads a value left by
name and a reversed choice):

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
  task's key;
- **a quantity** (`new_quantities`): an earlier memory names a number with a unit ("85 公斤",
  "two kids", "20 mg"; not a date, a time, a duration or an age); a stating clause of the turn
  that says a change (or a raise: upped, lowered, 提到, 降到) gives another number of the same
  unit. The turn's memory of it, or else the earlier statement with its number replaced (not
  when the clause names someone else), gets the earlier memory's key.

A version said as a technology's attribute ("Go 版本是 1.19") stays in the turn's memory of that
technology (`keep_versions`), so a later version has one to replace.

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
from memd.extraction.rules.dates import cn_number, due_en, due_zh, find_date
from memd.extraction.rules.general import someone_else_in
from memd.extraction.rules.generic import others_change
from memd.extraction.rules.learned import (
    _EN_NOT_RE,
    _ZH_NOT_RE,
    cut,
    says_change,
)
from memd.extraction.rules.tech import mentioned_tech

SUPPOSE_RE = re.compile(
    r"^(?:if|suppose|imagine|what\s+if|should|could|would|maybe)\b|如果|假如|假设|要是|万一|打算|考虑",
    re.I,
)


# A clause addressed to the assistant asks ("Can you help me …", 帮我 …).
ASKS_RE = re.compile(r"\b(?:you|please)\b|^(?:帮我|请|麻烦|能不能)|你", re.I)


def _statements(text: str) -> Iterator[list[str]]:
    """The stating clauses of each sentence of a turn: no question, negation, or sentence that
    supposes."""
    for sentence in SENTENCE_RE.findall(text):
        clauses = cut(sentence)
        if any(SUPPOSE_RE.search(c) for c in clauses):
            continue
        yield [
            c
            for c in clauses
            if not is_question(c)
            and not ASKS_RE.search(c)
            and not (_ZH_NOT_RE if CJK_RE.search(c) else _EN_NOT_RE).search(c)
        ]


def replaced_before(out: Sequence[ExtractedMemory], end: int) -> set[int]:
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


def link(
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
    gone = replaced_before(out, start)
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
            _versionlink(clause, ctx, out, start, i, words, new)
            return


def _versionlink(
    clause: str,
    ctx: Ctx,
    out: list[ExtractedMemory],
    start: int,
    i: int,
    words: str,
    new: tuple[str, str, str],
) -> None:
    old = out[i]
    team = team_clause(clause)
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
        link(out, i, replace(out[j], type=typed), j, "version")
        return
    version = _versions(words)[0][1]
    content = old.content.replace(words, words.replace(version, new[1]), 1)
    made = ctx.mem(content, typed, max(old.importance, IMP_PROJECT if typed == "project" else 0))
    link(out, i, made, None, "version")


# The clause's subject is the team or one of its systems ("we", "the app", 我们, 组里, staging).
_EN_TEAM_RE = re.compile(
    r"\b(?:we|we're|we've|our|us|team|the\s+(?:app|service|repo|project|codebase|team|site|"
    r"backend|frontend|server|cluster|stack|build|pipeline|database|db))\b|^\s*[a-z][\w\-]*\s",
    re.I,
)
_ZH_TEAM_RE = re.compile(r"我们|咱们|组里|团队|公司|项目|前端|后端|服务|线上|库|集群|^[A-Za-z]")


def team_clause(clause: str) -> bool:
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
    low = re.sub(r"[(（].*?[)）]|\d+\s*[月日号]|周[一二三四五六日天]", "", content.casefold())
    words = {w for w in _EVENT_RE.findall(low) if w not in _PLAIN_EVENT}
    if CJK_RE.search(low):
        cjk = re.sub(r"[^\u4e00-\u9fff]", "", low)
        words |= {a + b for a, b in zip(cjk, cjk[1:], strict=False)}
    return words - {"用户", "需要", "用户需", "户需"}


def moved_dates(text: str, ctx: Ctx, out: list[ExtractedMemory], start: int) -> None:
    """A task's date moved in a later turn (see the module)."""
    gone = replaced_before(out, start)
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
                    _datelink(ctx, out, start, i, old_when, found[0])
                    return


def _datelink(
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
    said = find_date(old.content, ctx.today)
    if shown in old.content:
        content = old.content.replace(shown, now)
    elif said is not None:
        # "用户：论文初稿 1 月 10 号交": the date as said, replaced by the new one.
        a, b = said[1]
        short = f"{when.month}月{when.day}日" if zh else due_en(when).split(",")[0]
        content = old.content[:a] + short + old.content[b:]
    else:
        content = f"{old.content}（改到 {now}）" if zh else f"{old.content} (moved to {now})"
    if found:
        j = found[0]
        if out[j].subject and out[j].subject == old.subject:
            return
        # "用户：延到5月20号" names no task: the earlier task's words, with the new date.
        named = _event_words(old.content) & _event_words(out[j].content)
        link(out, i, replace(out[j], due=iso, content=out[j].content if named else content), j,
              "date")  # fmt: skip
        return
    link(out, i, ctx.mem(content, "task", old.importance, topic=old.topic, due=iso), None, "date")


# -- quantities ----------------------------------------------------------------------------------
_EN_NUMBER = r"\d+(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
_EN_QUANTITY_RE = re.compile(r"\b(?P<n>" + _EN_NUMBER + r")[\s\-]?(?P<unit>[a-z]{1,12})\b", re.I)
_ZH_QUANTITY_RE = re.compile(
    r"(?P<n>\d+(?:\.\d+)?|[一二两三四五六七八九十]{1,3})\s*(?P<unit>个?[\u4e00-\u9fff]{1,2})"
    r"(?=[\u4e00-\u9fff]?(?:[了的，,。\s]|$)|空格|缩进|人|孩子)"
)
# Units of time are dates, durations and ages, read by their own readers; words that follow a
# number without measuring it ("2 of", "3 and").
_NOT_UNITS = frozenset(
    "am pm st nd rd th of and or to in on at for the a an is was are by x s years year months month"
    " weeks week days day hours hour minutes minute min mins h d m y k".split()
) | frozenset("年 月 日 号 天 周 点 分 秒 岁 次 遍 年级 点钟 个月 小时 分钟 星期 礼拜 号楼".split())
_EN_WORD_NUMBERS = {w: str(i) for i, w in enumerate(_EN_NUMBER.split("|")[1:], 1)}
# A quantity changed: raised, lowered, up to, 提到, 降到, 改成 … (besides the change words).
_RAISED_RE = re.compile(
    r"\b(?:raised|lowered|increased|reduced|cut|upped|dropped|went|down|up)\b|[升降提减加]|改成|变成",
    re.I,
)


def _number(n: str) -> str:
    low = n.casefold()
    if low in _EN_WORD_NUMBERS:
        return _EN_WORD_NUMBERS[low]
    if not n[:1].isdigit():
        return str(cn_number(n))
    return n


def _unit(unit: str) -> str:
    u = unit.casefold().removeprefix("个")
    return u[:-1] if len(u) > 3 and u.endswith("s") else u


def _quantities(text: str) -> list[tuple[str, str, str]]:
    """(number, unit, the words as said) of the measured quantities a text names."""
    rx = _ZH_QUANTITY_RE if CJK_RE.search(text) else _EN_QUANTITY_RE
    out = []
    for m in rx.finditer(text):
        unit = _unit(m.group("unit"))
        if unit and unit not in _NOT_UNITS and m.group("unit").casefold() not in _NOT_UNITS:
            out.append((_number(m.group("n")), unit, m.group(0)))
    return out


def new_quantities(text: str, ctx: Ctx, out: list[ExtractedMemory], start: int) -> None:
    """A quantity's new number in a later turn: "现在 78 公斤了" after "我体重 85 公斤", "it's three
    kids now" after "I have two kids", "raised it to 40 mg" after "I take 20 mg": the same unit,
    another number, in a clause that says a change."""
    gone = replaced_before(out, start)
    held = [
        (i, q)
        for i in range(start)
        if i not in gone and out[i].type != "task"
        for q in _quantities(out[i].content)
    ]
    if not held:
        return
    for clause in (c for clauses in _statements(text) for c in clauses):
        if not (says_change(clause) or _RAISED_RE.search(clause)):
            continue
        for number, unit, said in _quantities(clause):
            for i, (n, u, words) in held:
                if u != unit or n == number:
                    continue
                old = out[i]
                found = [
                    j
                    for j in range(start, len(out))
                    if any(q[:2] == (number, unit) for q in _quantities(out[j].content))
                ]
                if found:
                    j = next((k for k in found if out[k].type == old.type), found[0])
                    if not (out[j].subject and out[j].subject == old.subject):
                        link(out, i, out[j], j, "amount")
                    return
                if someone_else_in(clause):
                    return
                content = old.content.replace(words, said, 1)
                link(out, i, ctx.mem(content, old.type, old.importance), None, "amount")
                return


# "Go 版本是 1.19", "Python version is 3.9": a version said as the technology's attribute.
_DIGIT_RE = re.compile(r"\d")
_VERSION_OF_RE = re.compile(
    r"(?P<name>[A-Za-z][\w.+#\-]*)\s*(?:的)?\s*(?:版本|version)\s*(?:是|为|is|:|：)?\s*v?"
    r"(?P<v>\d+(?:\.\d+)+|\d+)\b",
    re.I,
)


def keep_versions(text: str, out: list[ExtractedMemory], start: int) -> None:
    """A memory of the turn that names a technology the turn gives a version of ("我们组用的是
    MySQL 5.7" read as "用户使用MySQL", "我们组的 Go 版本是 1.19") names the version too, so a later
    turn's new version has one to replace."""
    if _DIGIT_RE.search(text) is None:
        return  # no version said: the cheap test first
    said: dict[str, str] = {}
    for name, version, _ in _versions(text):
        said.setdefault(name, version)
    for m in _VERSION_OF_RE.finditer(text):
        name = _tech_name(m.group("name"))
        if name:
            said.setdefault(name, m.group("v"))
    if not said:
        return
    for j in range(start, len(out)):
        mem = out[j]
        if mem.type not in ("skill", "preference", "project", "decision") or _versions(mem.content):
            continue
        words = re.findall(r"[A-Za-z][\w.+#\-]*[\w+#]|[A-Za-z]", mem.content)
        named = [w for w in words if _tech_name(w) in said]
        if len(named) == 1 and mem.content.rstrip().endswith(named[0]):
            content = f"{mem.content} {said[_tech_name(named[0])]}"
            if all(o.content != content for o in out[start:]):  # not a second copy of one
                out[j] = replace(mem, content=content)


def apply_slots(text: str, ctx: Ctx, out: list[ExtractedMemory], start: int) -> None:
    """A later turn's new version or date for a slot an earlier turn filled (see the module)."""
    keep_versions(text, out, start)
    if start == 0:
        return
    # A date someone else moved is still the user's ("The organizers pushed the deadline").
    moved_dates(text, ctx, out, start)
    if not others_change(text):
        new_versions(text, ctx, out, start)
        new_quantities(text, ctx, out, start)
