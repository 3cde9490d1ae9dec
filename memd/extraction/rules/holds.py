"""A new value read by its structure: a clause about the user that says a state now holds.

People tell a change by saying what holds now, in words no change phrase lists: "First week at
Mollie went fine", "it's Pop!_OS now", "We've since moved CI to Semaphore", "the team standardised
on Kotlin", "I start at 10 and finish at 6 now", "现在在字节了", "手机现在是 iPhone 15 了", "组里已经
转到 Go 了". Such a clause has:

- a subject that is the user or their own team or things (I/we/our/my, 我/我们/组里, or none in a
  chat message that goes on about the user), never someone else, and is no question, request,
  hypothetical, plan or negation;
- a predicate that says the state holds now: now, these days, since, as of, lately,
  standardised/settled on, moved/switched/migrated … to, the first week/month at; 现在, 如今,
  目前, 已经, 改成, 换成, 转到, 开始, 入职;
- a value, keyed by its class: a technology by the lexicon's key for its kind (`editor`, `os`,
  `tool:ci`, `language:primary`, `tool:database` …), an organisation after "at"/"with"/在 →
  `employer`, a place after "in"/"to"/在/到 → `city`, a time of day → `schedule`, a spoken
  language → `spoken-language`; when none is known, the key of the thing's head noun ("moved CI
  to X" → `tool:ci`, "手机现在是 X" → `phone`).

`apply_holds(text, ctx, out, start)` reads a turn's text after the other rules: the turn's memory
that names the value (one is made from the clause when no rule read it) and the session's last
earlier memory of the same class get one key and the earlier one's type, so placement marks the
earlier one superseded. A clause without a subject of its own counts only when the session holds a
memory of its class: alone it says too little.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from memd.core.models import ExtractedMemory
from memd.extraction.rules.clauses import subject_of
from memd.extraction.rules.common import (
    CJK_RE,
    IMP_CITY,
    IMP_EMPLOYER,
    IMP_SKILL,
    SENTENCE_RE,
    SPOKEN_LANGUAGES,
    ZH_NOT_ORG_RE,
    Ctx,
    is_question,
)
from memd.extraction.rules.general import head_key
from memd.extraction.rules.life import held_only, life_value, routine_value
from memd.extraction.rules.mentions import techs_in
from memd.extraction.rules.moves import is_org
from memd.extraction.rules.places import is_place
from memd.extraction.rules.replaced import PLATFORM_GROUPS, names_value
from memd.extraction.rules.tech import lookup_tech, primary_key, split_version, stack_side
from memd.extraction.rules.units import cut, without_lead
from memd.extraction.rules.zh_clauses import zh_clauses

IMP_SCHEDULE = 5


@dataclass(frozen=True, slots=True)
class Holds:
    """A value a clause says now holds, the class that keys it, and the memory it gives."""

    value: str
    key: str
    memory: ExtractedMemory
    own_subject: bool  # the clause names the user or their team itself


# -- classes ------------------------------------------------------------------------------------
# Keys whose values are the user's own settings: a preference, not a skill.
PREFERENCE_KEYS = frozenset(
    {"editor", "os", "tool:shell", "tool:terminal", "browser", "phone", "computer", "tablet"}
)


_JS_RUNTIMES = frozenset({"node.js", "deno", "bun"})


def tech_class(name: str) -> str:
    """The key of the kind of technology `name` is, or "": the lexicon's key, a language's
    `language:primary`, a framework's side, a cloud."""
    tech = lookup_tech(name)
    name_only, version = split_version(name)
    if tech is not None and version:
        return f"version:{name_only.lower()}"  # "Python 3.12": one version in use at a time
    if name.casefold() in PLATFORM_GROUPS["cloud"]:
        return "tool:hosting"
    if tech is None or tech.category == "app":
        return ""
    if tech.subject:
        return tech.subject
    if tech.category == "language":
        return primary_key(tech.name)
    if tech.name.casefold() in _JS_RUNTIMES:
        return "runtime:js"  # one runtime under a service at a time: Node, Deno, Bun
    if tech.category == "framework":
        side = stack_side(tech.name)
        return f"framework:{side}" if side else ""
    if tech.name.casefold() in PLATFORM_GROUPS["cloud"]:
        return "tool:hosting"
    return ""


# The class a held memory's subject is of: its own key, or what a key names in other words.
_SUBJECT_CLASSES = {"stack:backend": "framework:backend", "stack:frontend": "framework:frontend"}


def memory_class(memory: ExtractedMemory) -> str:
    """The class of the value a memory holds: its key, else the one technology it names."""
    if memory.subject and not memory.subject.startswith(("about:", "changed:")):
        return _SUBJECT_CLASSES.get(memory.subject, memory.subject)
    zh = bool(CJK_RE.search(memory.content))
    names = techs_in(memory.content, english=not zh)
    classes = {tech_class(n) for n in names} - {""}
    if len(classes) == 1:
        return classes.pop()
    # a time of day the user does something at: "一般过了十一点才开工", "I log on at 7am"
    clock = _ZH_CLOCK_RE if zh else _EN_CLOCK_RE
    return "schedule" if not names and clock.search(memory.content) else ""


# -- English ------------------------------------------------------------------------------------
_EN_NOW_RE = re.compile(
    r"\b(?:now|nowadays|these\s+days|as\s+of|lately|currently|standardi[sz]ed\s+on"
    # "since" of a time, not of a reason ("since we need joins")
    r"|(?:'ve|have|has)\s+since|since\s+(?:then|last|this|early|late|the\s+\w+|\d|(?-i:[A-Z])\w+"
    r"|spring|summer|autumn|fall|winter|moving|joining|starting)"
    r"|settled\s+on|consolidated\s+on|(?:first|second|third|fourth|\d+(?:st|nd|rd|th))\s+"
    r"(?:day|week|month)s?\s+(?:at|with|in|on)|(?:moved|switched|migrated|cut\s+over|ported"
    r"|transitioned|went\s+over)\b[^,;]*?\b(?:to|onto)|(?:got\s+|was\s+|been\s+)?replaced\s+(?:by|with))\b",
    re.I,
)
# A sentence about what might be: nothing in it holds.
_EN_IF_RE = re.compile(
    r"^(?:if|suppose|imagine|assuming|say|what\s+if|in\s+case)\b|\b(?:if|unless|whether)\b", re.I
)
_EN_UNSURE_RE = re.compile(
    r"\b(?:if|would|could|might|maybe|perhaps|should|will|going\s+to|gonna|plan|planning|want"
    r"|wants|thinking|considering|hope|hoping|next|soon|someday|eventually|not|never|no\s+longer"
    r"|n't|without|said|says|told|heard|read|asked|please|too|also|as\s+well|another|alongside"
    r"|plus|dropped|ditched|retired|removed|uninstalled|gone|no\s+more|killed|expired|history"
    r"|anymore|quit)\b|n't\b|'ll\b",
    re.I,
)
_EN_OWN_RE = re.compile(r"\b(?:I|I'm|I've|me|my|we|we're|we've|our|us)\b", re.I)
_EN_ORDER_RE = re.compile(
    r"^(?:please\s+)?(?:change|set|make|update|move|switch|use|add|put|replace|rename|fix)\b(?!:)",
    re.I,
)
_EN_NAME_RE = re.compile(
    r"(?<![\w!])(?-i:[A-Z])[\w.+#!\-]*[\w+#](?:\s+(?-i:[A-Z0-9])[\w.+#!\-]*[\w+#])*"
    r"|(?<![\w!])(?-i:[A-Z])(?![\w])"
)
_EN_AT_RE = re.compile(
    r"\b(?:at|with|joined|for)\s+(?P<v>(?-i:[A-Z])[\w&.\-]*(?:\s+(?-i:[A-Z])[\w&.\-]*)?)"
)
_EN_IN_RE = re.compile(r"\b(?:in|to)\s+(?P<v>(?-i:[A-Z])[\w.'\-]*(?:\s+(?-i:[A-Z])[\w.'\-]*)?)")
_EN_CLOCK_RE = re.compile(
    r"\b(?:at|from|till|until|to|by)\s+(?P<v>\d{1,2}(?::\d{2})?\s*(?:am|pm)?)(?![\d:])"
    r"|\b(?P<w>\d{1,2}(?::\d{2})?\s*(?:am|pm))\b",
    re.I,
)
_EN_HEAD_WORD_RE = re.compile(r"\b[A-Za-z][\w\-]*\b")
_NOT_VALUES = frozenset({"I", "I'm", "I've", "First", "Second", "Third", "Now", "Since"})


# Head nouns of a thing one has one of at a time (not a team, a role or a pastime).
_THING_KEYS = frozenset(
    {"tool:terminal", "tool:shell", "editor", "os", "phone", "browser", "tool:ci",
     "tool:database", "tool:hosting", "city", "computer", "tablet"}
)  # fmt: skip


# "fish has been my login shell since Tuesday": the subject of "is/has been my <thing>" is its
# value, whatever its case.
_EN_IS_MY_RE = re.compile(
    r"^(?P<v>(?!(?:it|this|that|what|which|there|he|she|they)\b)[\w.+#!\-]+(?:\s+[\w.+#!\-]+)?)"
    r"\s+(?:has\s+been|'s\s+been|is|became|has\s+become)\s+(?:my|our)\s+(?:[\w\-]+\s+)?"
    r"(?P<head>[\w\-]+)\b",
    re.I,
)
# A day, a month or a season names when, never what.
_WHEN_WORDS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march april may"
    " june july august september october november december jan feb mar apr jun jul aug sep sept"
    " oct nov dec spring summer autumn winter christmas easter".split()
)


def _en_value(clause: str) -> tuple[str, str]:
    """The value a clause names and the key of its class (see the module), or ("", "")."""
    value, key = life_value(clause, zh=False)
    if value:
        return value, key
    mine = _EN_IS_MY_RE.match(clause.strip())
    if mine is not None and (key := head_key(mine.group("head"), zh=False)) in _THING_KEYS:
        return mine.group("v"), key
    clouds = [n for n in _EN_NAME_RE.findall(clause) if n.casefold() in PLATFORM_GROUPS["cloud"]]
    for name in [*techs_in(clause, english=True), *clouds]:
        key = tech_class(name)
        if key:
            return name, key
    at = _EN_AT_RE.search(clause)
    if at is not None and is_org(at.group("v")) and not is_place(at.group("v")):
        return at.group("v"), "employer"
    place = _EN_IN_RE.search(clause)
    if place is not None and is_place(place.group("v")):
        return place.group("v"), "city"
    clock = _EN_CLOCK_RE.search(clause)
    if clock is not None:
        return (clock.group("v") or clock.group("w")).strip(), "schedule"
    names = [n for n in _EN_NAME_RE.findall(clause)
             if n not in _NOT_VALUES and n.casefold() not in _WHEN_WORDS]  # fmt: skip
    spoken = [n for n in names if n.casefold() in SPOKEN_LANGUAGES]
    if spoken:
        return spoken[0], "spoken-language"
    # the thing named before its value: "moved CI to Semaphore"
    before = clause[: clause.find(names[-1])] if names else ""
    heads = [k for w in _EN_HEAD_WORD_RE.findall(before) if (k := head_key(w, zh=False))]
    heads = [k for k in heads if k in _THING_KEYS]
    if names and heads:
        return names[-1], heads[0]
    return routine_value(clause, zh=False)


def _en_holds(sentence: str, ctx: Ctx) -> Iterator[Holds]:
    text = sentence.strip().rstrip(".!")
    if not text or is_question(text) or _EN_IF_RE.search(text) or _EN_ORDER_RE.match(text):
        return
    previous = "none"
    for clause in (without_lead(c) for c in cut(text, zh=False)):
        whose = subject_of(clause)
        whose = previous if whose == "none" else whose
        previous = whose
        now = _EN_NOW_RE.search(clause)
        if whose == "other" or now is None or _EN_UNSURE_RE.search(clause):
            continue
        # the value said after "now", else anywhere in the clause
        value, key = _en_value(clause[now.start() :])
        if not value:
            value, key = _en_value(clause) if _en_value(clause)[0] else _bare_version(clause, ctx)
        if value:
            own = whose in ("I", "we", "project") and bool(_EN_OWN_RE.search(text))
            yield Holds(value, key, _en_memory(clause, value, key, ctx), own)


_BARE_VERSION_RE = re.compile(r"(?<![\w.])(?P<v>\d+\.\d+(?:\.\d+)?)(?![\w.%])")


def _bare_version(clause: str, ctx: Ctx) -> tuple[str, str]:
    """ "We're on 3.12 now", "已经升到 3.12 了": a bare version is one of the technology whose
    version the session holds, when it holds one only."""
    m = _BARE_VERSION_RE.search(clause)
    keys = [k for k in ctx.session.values if k.startswith("version:")]
    if m is None or len(keys) != 1:
        return "", ""
    tech = lookup_tech(keys[0].removeprefix("version:"))
    return (f"{tech.name} {m.group('v')}", keys[0]) if tech is not None else ("", "")


def _en_memory(clause: str, value: str, key: str, ctx: Ctx) -> ExtractedMemory:
    if key == "employer":
        return ctx.mem(f"User works at {value}", "personal", IMP_EMPLOYER, subject=key)
    if key == "city":
        return ctx.mem(f"User lives in {value}", "personal", IMP_CITY, subject=key)
    if key == "schedule":
        return ctx.mem(f"User's working hours: {clause.strip()}", "personal", IMP_SCHEDULE,
                       subject=key)  # fmt: skip
    if key == "spoken-language":
        return ctx.mem(f"User speaks {value}", "personal", IMP_SKILL, subject=key)
    if key == "commute" or held_only(key):
        return ctx.mem(f"User: {clause.strip()}", "personal", IMP_SKILL, subject=key)
    type_ = "preference" if key in PREFERENCE_KEYS else "skill"
    return ctx.mem(f"User uses {value}", type_, IMP_SKILL, subject=key)


# Chinese head nouns of the things one has one of at a time.
_ZH_THING_HEADS = tuple(
    (re.compile(p, re.I), k)
    for p, k in (
        (r"终端", "tool:terminal"), (r"shell|命令行", "tool:shell"), (r"编辑器|IDE", "editor"),
        (r"操作系统|发行版|系统", "os"), (r"手机", "phone"), (r"浏览器", "browser"),
        (r"流水线|CI|持续集成|构建|打包|发版", "tool:ci"), (r"数据库", "tool:database"),
        (r"服务器|云|托管|线上机器", "tool:hosting"),
    )
)  # fmt: skip

# -- Chinese ------------------------------------------------------------------------------------
_ZH_NOW_RE = re.compile(
    r"^来[^，,]{2,6}?(?:快|已经|都)?[一二两三四五六七八九十半几\d]+个?(?:月|年|周|星期)了|现在|如今|目前|已经|改成|换成|换到|转到|改用|换用|开始|入职|定居|这阵子|最近|现已|迁到|迁移到|切到"
    r"|切换到|升级到|升到|用上了|搬到"
)
_ZH_UNSURE_RE = re.compile(
    r"如果|假如|要是|万一|打算|准备|考虑|想|可能|也许|应该|希望|计划|下周|下个月|明年|以后|将来|听说|据说"
    r"|不|没|别|吗|呢|把|帮|请|麻烦|你|也|还"
    # what is gone: "Jest 已经删掉了", "老的集群已经下线"
    r"|删|卸|停用|停了|下线|淘汰|弃用|废弃|戒|坏了|过期|退了"
)
_ZH_ORG_RE = re.compile(
    r"(?:(?<![现正实存所])在|去了|到了|入职了?|加入了?|^来)\s*(?P<v>[A-Za-z][\w&.\-]*|[\u4e00-\u9fff]{2,6}?)"
    r"(?=了|上班|工作|做|干|$|(?:快|已经|都)?[一二两三四五六七八九十半几\d]+个?(?:月|年|周|星期)了)"
)
_ZH_PLACE_RE = re.compile(
    r"(?:在|到|去|搬到|回到|定居)\s*(?P<v>[\u4e00-\u9fff]{2,4}?)(?=了|定居|生活|住|上班|工作|$)"
)
_ZH_CLOCK_RE = re.compile(r"(?P<v>[\d一二两三四五六七八九十]{1,3}点(?:半)?)")
_LATIN_RE = re.compile(r"[A-Za-z][\w.+#!\-]*(?:\s+[A-Z0-9][\w.+#!\-]*)*")
_ZH_THING_VALUE_RE = re.compile(
    r"(?:是|在|用|换成|迁到|转到|改成)\s*(?P<v>[\u4e00-\u9fff]{2,4}?)(?=上|里|了|$|跑)"
)


def _zh_org(name: str) -> bool:
    if is_place(name) or not is_org(name) or ZH_NOT_ORG_RE.search(name):
        return False
    return not re.search(r"[这那家里上下]|公司$", name)


def _zh_value(clause: str) -> tuple[str, str]:
    value, key = life_value(clause, zh=True)
    if value:
        return value, key
    for name in techs_in(clause, english=False):
        key = tech_class(name)
        if key:
            return name, key
    clock = _ZH_CLOCK_RE.search(clause)
    if clock is not None and re.search(
        r"上班|下班|开工|收工|起床|起来|睡|开始|工作|干活|在线|作息", clause
    ):
        return clock.group("v"), "schedule"
    place = _ZH_PLACE_RE.search(clause)
    if place is not None and is_place(place.group("v")):
        return place.group("v"), "city"
    org = _ZH_ORG_RE.search(clause)
    if org is not None and _zh_org(org.group("v")):
        return org.group("v"), "employer"
    # the thing named before its value: "手机现在是 iPhone 15", "现在流水线全在云效上跑"
    thing = _ZH_THING_VALUE_RE.search(clause)
    names = _LATIN_RE.findall(clause)
    name = names[-1].strip() if names else thing.group("v") if thing else ""
    before = clause[: clause.find(name)] if name else ""
    keys = [k for rx, k in _ZH_THING_HEADS if rx.search(before)]
    if name and keys:
        return name, keys[0]
    return routine_value(clause, zh=True)


def _zh_holds(sentence: str, ctx: Ctx) -> Iterator[Holds]:
    text = sentence.strip().rstrip("。！!；;")
    if not text or is_question(text):
        return
    texts = cut(text, zh=True)
    # "最近改成早起了，早上六点起来写": the time after a change of habit is the one that holds now
    changed = False
    for clause in zh_clauses(texts, carried=ctx.session.spoke):
        now = bool(_ZH_NOW_RE.search(clause.text))
        if clause.subject not in ("I", "we", "none") or _ZH_UNSURE_RE.search(clause.text):
            changed = changed or now
            continue
        value, key = _zh_value(clause.text) if now or changed else ("", "")
        if now and not value:
            value, key = _bare_version(clause.text, ctx)
        changed = changed or now
        if value and (now or key == "schedule"):
            own = clause.subject in ("I", "we") and not clause.implied
            yield Holds(value, key, _zh_memory(clause.text, value, key, ctx), own)


def _zh_memory(clause: str, value: str, key: str, ctx: Ctx) -> ExtractedMemory:
    if key == "employer":
        return ctx.mem(f"用户在{value}工作", "personal", IMP_EMPLOYER, subject=key)
    if key == "city":
        return ctx.mem(f"用户住在{value}", "personal", IMP_CITY, subject=key)
    if key == "schedule":
        said = clause[1:] if clause.startswith("我") else clause
        return ctx.mem(f"用户{said}", "personal", IMP_SCHEDULE, subject=key)
    if key == "commute" or held_only(key):
        return ctx.mem(f"用户{clause.removeprefix('我')}", "personal", IMP_SKILL, subject=key)
    type_ = "preference" if key in PREFERENCE_KEYS else "skill"
    return ctx.mem(f"用户使用{value}", type_, IMP_SKILL, subject=key)


# -- the turn -------------------------------------------------------------------------------------
def holds_in(text: str, ctx: Ctx) -> list[Holds]:
    """The values a turn's text says now hold, in order."""
    out: list[Holds] = []
    for sentence in SENTENCE_RE.findall(text):
        if sentence.strip():
            read = _zh_holds if CJK_RE.search(sentence) else _en_holds
            out += read(sentence, ctx)
    return out


# A tool may be stated as a skill, a preference or a project's stack: one fact, the held type.
_TOOL_TYPES = frozenset({"skill", "preference", "project"})


_VERSION_RE = re.compile(r"\s*v?\d+(?:\.\d+)*$")


def _names_exactly(content: str, value: str) -> bool:
    """Whether `content` names `value` as it is said, its version too ("Java 21", not "Java 8")."""
    if CJK_RE.search(value):
        return value in content
    return bool(re.search(r"(?<![\w.+#\-])" + re.escape(value) + r"(?![\w+#\-])", content, re.I))


def _held(out: Sequence[ExtractedMemory], start: int, key: str, value: str) -> int | None:
    for i in range(start - 1, -1, -1):
        m = out[i]
        if m.type in ("task", "decision") or _names_exactly(m.content, value):
            continue
        if memory_class(m) == key:
            return i
    return None


def _said(out: Sequence[ExtractedMemory], start: int, value: str, key: str) -> int | None:
    """The last memory of the turn that states `value` as a value of `key` (no task, no decision,
    no memory keyed to another thing: "they're on Cursor full time" read as working hours)."""
    for j in range(len(out) - 1, start - 1, -1):
        m = out[j]
        if m.type in ("task", "decision") or m.subject not in ("", key) and memory_class(m) != key:
            continue
        if names_value(m.content, value):
            return j
    return None


def _keyed(memory: ExtractedMemory) -> bool:
    """Whether a memory has a key of a class (the general reader's `about:<head>` is none)."""
    return bool(memory.subject) and not memory.subject.startswith("about:")


def apply_holds(text: str, ctx: Ctx, out: list[ExtractedMemory], start: int) -> None:
    """Key the turn's new values (`out[start:]`) to the session's earlier memories of the same
    class (see the module); `out` is changed in place."""
    for holds in holds_in(text, ctx):
        if any(names_value(m.content, holds.value) and (m.type in ("task", "decision") or
               _keyed(m) and memory_class(m) != holds.key) for m in out[start:]):  # fmt: skip
            # a decision revised ("the formatter is now Ruff") is the decisions' to read; a value
            # a change already keyed ("dropped yarn, it's all Bun now") is the change's
            continue
        held = _held(out, start, holds.key, holds.value)
        bare = _VERSION_RE.sub("", holds.value) or holds.value  # "Pixel 8" said as "Pixel" too
        if held is None and (not holds.own_subject or held_only(holds.key)):
            continue
        said = _said(out, start, holds.value, holds.key)
        if said is None and bare != holds.value:
            said = _said(out, start, bare, holds.key)
        if said is None:
            out.append(holds.memory)
            said = len(out) - 1
        new = out[said]
        key = holds.key
        if held is not None:
            old = out[held]
            key = old.subject or new.subject or key
            out[held] = replace(old, subject=key)
            if new.type != old.type and ({new.type, old.type} <= _TOOL_TYPES or held_only(key)):
                new = replace(new, type=old.type)
        out[said] = replace(new, subject=key)
        ctx.session.values[key] = out[said]
