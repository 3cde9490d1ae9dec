"""A later turn that gives a new value to something the session already said: the subject carried.

Once the user said "I'm 33", "I work at Alibaba", "my editor is Sublime Text" or "please write
in British English", the session knows those subject keys (`age`, `employer`, `editor`,
`style:spelling`) and their values. A later turn often states only the new value, with an
unusual verb or none: "Well, 34 as of today", "现在在京东", "These days it's Neovim for
everything", "Actually switch to American English", "调到杭州分公司了", "Just upgraded to
24.04". Read alone, such a clause says too little to be a fact; read against the key the session
carries, it is that key's new value, and a memory with the same `subject` lets placement
supersede the old one.

`carried_updates(sentence, ctx, said)` reads a sentence's clauses about the user or their team
(not someone else's, not a question, not unsure: `clauses`, `zh_clauses`) for each key the
session holds (`Session.values`) that the sentence's own memories (`said`) do not already give,
with one reader per kind of key:

- `age`: a number of years near the old one, alone or with "now", "as of today", 岁;
- `city`: a place after to/in, 到/在/去 (a known place, or after a verb of moving);
- `employer`: "I'm at X now", "I'm with X", "现在在京东" — a name that is not a place or a tool;
- `role`: "moved into data engineering", "现在是正式员工了", "被调去 infra 组当 tech lead 了";
  a student's role ends with "I graduated", "毕业了";
- tool keys (`tool:*`, `editor`, `os`, `browser`): another known tool of the same key, named in
  a clause not negated (the part before "instead of …"); or a new version of the same tool
  ("24.04", "升到 8.0", "升级到 Vue 3");
- the user's main language or framework (`language:primary`, `framework:frontend|backend`):
  another language, or framework of that side ("Our team switched to Kotlin", "现在主要写 Rust
  了", "I've been using NestJS instead of Express");
- a project's frontend or backend framework (`stack:frontend`, `stack:backend`): another
  framework of that side in a clause that says it changed ("we rewrote the backend in
  FastAPI", "前端已经升级到 Vue 3 了"), not one added beside it ("… too");
- working-style keys (`style:*`, `reply-language`): a clause about the same topic ("switch to
  American English", "缩进统一用 2 个空格"); for the language of replies, another language
  named alone ("English is fine again").

The keys whose values no lexicon lists — `schedule`, `diet`, `date:<event>` — have their readers
in `updates`; a decision keyed by its technology (`decision:<tool>`) is revised by `decisions`.

Only a key the session already holds is read, so a single message never reaches here: what a
negative case says alone cannot become a false fact through this module.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

from memd.core.models import ExtractedMemory
from memd.extraction.rules.clauses import before_instead, en_clauses, someone_else
from memd.extraction.rules.common import (
    CJK_RE,
    IMP_AGE,
    IMP_CITY,
    IMP_EMPLOYER,
    IMP_ROLE,
    IMP_SWITCH,
    NOT_ORGS,
    ZH_NOT_ORG_RE,
    Ctx,
    article,
    clean,
    is_question,
)
from memd.extraction.rules.dates import cn_number
from memd.extraction.rules.decisions import revised
from memd.extraction.rules.mentions import techs_in
from memd.extraction.rules.places import is_place
from memd.extraction.rules.style import style_topic
from memd.extraction.rules.tech import (
    TECH,
    lookup_tech,
    primary_key,
    split_version,
    stack_side,
)
from memd.extraction.rules.updates import dated, diet, pet, schedule
from memd.extraction.rules.zh_clauses import zh_clauses

_ZH_CLAUSE_RE = re.compile(r"[，,；;：:—]")
_ZH_NOT_RE = re.compile(r"不|没|别|以前|之前|曾经|如果|假如|要是|打算|准备|考虑|想")
_HYPOTHETICAL_RE = re.compile(r"^(?:if|suppose|imagine|assuming|say|what\s+if)\b", re.I)

# -- age --------------------------------------------------------------------------------------
_EN_AGE_RE = re.compile(
    r"^(?:(?:I'm|I\s+am|I\s+just\s+turned|I\s+turned|(?:just\s+)?turned|correction|make\s+that)\W+)?"
    r"(?P<n>\d{1,3})(?=\s*(?:$|[,.!;]|\s+(?:now|as\s+of|actually|today|this\s+year|years?\s+old"
    r"|y/?o|since)\b))",
    re.I,
)
_ZH_AGE_RE = re.compile(
    r"^(?:我)?(?:其实|现在|今年|已经|都|是|刚|满)*\s*(?P<n>\d{1,3}|[一二两三四五六七八九十]{1,3})\s*"
    r"(?:(?:周岁|岁)(?:了|啦)?|了|啦)$"
)
_AGE_STEP = 10  # a later age in one conversation is a birthday or a correction: near the old


def _age(text: str, known: ExtractedMemory, ctx: Ctx) -> ExtractedMemory | None:
    zh = bool(CJK_RE.search(text))
    m = (_ZH_AGE_RE if zh else _EN_AGE_RE).search(text.strip())
    old = re.search(r"\d+", known.content)
    if m is None or old is None:
        return None
    if zh and not re.search(r"岁|今年|^我", m.group(0)):
        return None  # "我今年 31 了", "我二十六了" are ages; "现在 3 了" may count anything
    n = cn_number(m.group("n")) if zh else int(m.group("n"))
    if n == int(old.group(0)) or abs(n - int(old.group(0))) > _AGE_STEP:
        return None
    content = f"用户今年{n}岁" if CJK_RE.search(known.content) else f"User is {n} years old"
    return ctx.mem(content, "personal", IMP_AGE, subject="age")


# -- city -------------------------------------------------------------------------------------
_EN_PLACE_RE = re.compile(
    r"\b(?:to|in)\s+(?-i:(?P<place>[A-Z][\w.'\-]*(?:\s+[A-Z][\w.'\-]*){0,2}))", re.I
)
_EN_MOVING_RE = re.compile(
    r"\b(?:moved|moving|relocated|relocating|back|home|living|live|based|now)\b", re.I
)
_NOT_PLACES = frozenset(
    "january february march april may june july august september october november december"
    " monday tuesday wednesday thursday friday saturday sunday english chinese".split()
)
_ZH_TO = "到在去回来驻"
_ZH_NOT_CITIES = frozenset({"老家", "国外", "海外", "家里"})


def _en_place(text: str) -> str:
    for m in _EN_PLACE_RE.finditer(text):
        place = m.group("place")
        first = place.split()[0]
        if first.lower() in NOT_ORGS or first.lower() in _NOT_PLACES or place.lower() in TECH:
            continue
        if first.isupper() and len(first) <= 4:
            continue  # "PST", "UTC": a zone, not a place
        if is_place(place) or _EN_MOVING_RE.search(text):
            return place
    return ""


# Between a verb of going and the place: an aspect particle, a second verb, home ("回了老家合肥",
# "搬去了厦门", "回到家乡长沙").
_ZH_BEFORE_PLACE_RE = re.compile(r"(?:了|过)?(?:[到去回来])?(?:了)?(?:老家|家乡|故乡)?")


def _zh_place(text: str) -> str:
    """The place after 到/在/去/回/来/驻: the shortest run of two to four characters that is
    one ("调到杭州分公司" → 杭州), none of them a verb of going."""
    for i, ch in enumerate(text):
        if ch not in _ZH_TO:
            continue
        i += len(_ZH_BEFORE_PLACE_RE.match(text, i + 1).group(0))  # type: ignore[union-attr]
        for n in range(2, 5):
            run = text[i + 1 : i + 1 + n]
            if len(run) < n or not CJK_RE.fullmatch(run[-1]) or any(c in _ZH_TO for c in run):
                break
            if run not in _ZH_NOT_CITIES and is_place(run):
                return run
    return ""


def _city(text: str, known: ExtractedMemory, ctx: Ctx) -> ExtractedMemory | None:
    zh = bool(CJK_RE.search(text))
    place = _zh_place(text) if zh else _en_place(text)
    if not place or place.casefold() in known.content.casefold():
        return None
    content = f"用户住在{place}" if zh else f"User lives in {place}"
    return ctx.mem(content, "personal", IMP_CITY, subject="city")


# -- employer ---------------------------------------------------------------------------------
_EN_AT_ORG_RE = re.compile(
    r"(?:\bI(?:'m|\s+am)\s+(?:now\s+)?|^(?:now\s+)?)(?:at|with)\s+"
    r"(?-i:(?P<org>[A-Z0-9][\w&.'\-]*(?:\s+[A-Z0-9&][\w&.'\-]*){0,3}))"
    r"(?=\s*(?:$|[,.;!—–]|\s+(?:now|these\s+days|since|full[\s-]time|as\s+of)\b))",
    re.I,
)
_ZH_AT_ORG_RE = re.compile(
    # "说错了，我是在饿了么": a correction says where the user is, with 其实/是.
    r"^(?:我)?(?:现在|目前|如今|已经|又|也|其实|是)*(?:在|去了|到了)(?P<org>[^\s，,。！!；;]{2,10}?)"
    r"(?:上班|工作|了|啦)?$"
)
_ZH_NOT_ORG_RE = re.compile(
    r"家|^(?:这|那)|(?:里|中|上|下)$|公司$|^(?:做|写|用|学|搞|休息|忙|加班)"
)


def _employer(text: str, known: ExtractedMemory, ctx: Ctx) -> ExtractedMemory | None:
    zh = bool(CJK_RE.search(text))
    m = (_ZH_AT_ORG_RE if zh else _EN_AT_ORG_RE).search(text.strip())
    if m is None:
        return None
    org = clean(m.group("org"))
    if not org or is_place(org) or lookup_tech(org) is not None:
        return None
    if zh and (_ZH_NOT_ORG_RE.search(org) or ZH_NOT_ORG_RE.search(org)):
        return None
    if not zh and (org.split()[0].lower() in NOT_ORGS or org.lower() in _NOT_PLACES):
        return None
    if org.casefold() in known.content.casefold():
        return None
    content = f"用户在{org}工作" if zh else f"User works at {org}"
    return ctx.mem(content, "personal", IMP_EMPLOYER, subject="employer")


# -- role -------------------------------------------------------------------------------------
_FIELDS = (
    r"engineering|development|design|research|science|devops|security|analytics|frontend"
    r"|backend|front-end|back-end|full-stack|fullstack|infra|infrastructure|management|product"
    r"|sales|marketing|consulting|ops|QA|testing|ML|AI|data|leadership"
)
_WORK_WORD = (
    r"(?:" + _FIELDS + r"|engineer|developer|development|manager|lead|architect|analyst|designer"
    r"|scientist)s?"
)
_EN_ROLE_MOVE_RE = re.compile(
    r"\b(?:moved|moving|transitioned|switched|pivoted|changed|shifted|went|stepped)\s+(?:over\s+)?"
    r"(?:in)?to\s+(?:an?\s+|the\s+)?(?P<role>(?:[\w\-]+\s+){0,3}?"
    + _WORK_WORD
    + r"(?:\s+"
    + _WORK_WORD
    + r")*)\b(?:\s+(?:role|position|job|track))?",
    re.I,
)
# "I'm back to being an individual contributor", "I'm an engineering manager now": the user's
# title said again, with a word that says it is the current one.
_EN_ROLE_NOW_RE = re.compile(
    r"\bI(?:'m|\s+am)\s+(?:(?P<back>back\s+to\s+being|now)\s+)?(?:an?\s+)(?P<role>(?:[\w\-]+\s+){0,3}?"
    r"(?:engineer|developer|manager|lead|architect|analyst|designer|scientist|contributor"
    r"|consultant|director|founder|freelancer|researcher|PM|SRE|IC))\b(?P<now>\s+now\b)?",
    re.I,
)
# What names a role, not a place or a team: "tech lead", "组长", "架构师", "SRE".
_ROLE_WORD_RE = re.compile(
    r"(?:lead|manager|engineer|developer|architect|head|director|SRE|PM|CTO|VP|主管|经理|组长|负责人"
    r"|总监|架构师|工程师|开发|leader|前端|后端|全栈|运维|测试|算法|产品|设计)$",
    re.I,
)
_ZH_ROLE_NOW_RE = re.compile(
    r"(?:^|我|现在|已经|如今)(?:现在|已经|如今|也)*(?:是|成了|成为了?|当上?了?|担任|转成了?|转为|转做|改做)\s*"
    r"(?:一?[名个位])?(?P<role>[^，,。！!；;]{2,16}?)(?:了|啦)?$"
)


# "最近被调去 infra 组当 tech lead 了", "升为组长了": moved or promoted into a role.
# "我现在做技术负责人了": a title after 做, with a time that says it is new.
_ZH_ROLE_DOING_RE = re.compile(
    r"(?:现在|已经|如今|目前)(?:在)?做\s*(?:一?[名个位])?(?P<role>[^，,。！!；;]{2,16}?)(?:了|啦)?$"
)
_ZH_ROLE_MOVED_RE = re.compile(
    r"(?:被)?(?:调|派|提拔|提|升|转)(?:去|到|为|成|了)?(?:[^，,。！!；;]{0,12}?(?:当上?了?|做|担任))?\s*"
    r"(?:一?[名个位])?(?P<role>[^，,。！!；;]{2,16}?)(?:了|啦)?$"
)


# A student's role ends when they graduate: "I graduated!", "我毕业了".
_STUDENT_RE = re.compile(r"\bstudent\b|\bPhD\s+candidate\b|学生|研究生|博士生|本科生", re.I)
_GRADUATED_RE = re.compile(
    r"\bgraduated\b|\bfinished\s+(?:my\s+)?(?:degree|studies|PhD|master'?s)\b|毕业了|已经毕业", re.I
)


def _role(text: str, known: ExtractedMemory, ctx: Ctx) -> ExtractedMemory | None:
    zh = bool(CJK_RE.search(text))
    if _STUDENT_RE.search(known.content) and _GRADUATED_RE.search(text):
        content = "用户已经毕业" if CJK_RE.search(known.content) else "User has graduated"
        return ctx.mem(content, "personal", IMP_ROLE, subject="role")
    m = (_ZH_ROLE_NOW_RE if zh else _EN_ROLE_MOVE_RE).search(text.strip())
    if m is None and not zh and (now := _EN_ROLE_NOW_RE.search(text)) is not None:
        m = now if now.group("back") or now.group("now") else None
    for moved_re in (_ZH_ROLE_MOVED_RE, _ZH_ROLE_DOING_RE) if m is None and zh else ():
        moved = moved_re.search(text.strip())
        m = moved if moved and _ROLE_WORD_RE.search(moved.group("role").strip()) else None
        if m is not None:
            break
    if m is None:
        return None
    role = clean(m.group("role"))
    if not role or role.endswith("的") or is_place(role) or lookup_tech(role) is not None:
        return None
    if role.casefold() in known.content.casefold():
        return None
    content = f"用户担任{role}" if zh else f"User works as {article(role)} {role}"
    if not zh and not re.search(r"(?:er|or|ist|ead|ant)s?$", role, re.I):
        content = f"User works in {role}"  # a field, not a title: "data engineering"
    return ctx.mem(content, "personal", IMP_ROLE, subject="role")


# -- tools and versions -----------------------------------------------------------------------
_CHANGE_RE = re.compile(
    r"\b(?:upgrad\w*|updat\w*|mov\w*|switch\w*|migrat\w*|bump\w*|now|went|go|going)\b"
    r"|升|换|改|迁|切|到|现在",
    re.I,
)
_VERSION_RE = re.compile(r"(?<![\w.])(?P<v>\d+(?:\.\d+)+|\d+)(?![\w.]|\s*(?:%|岁|个|spaces?))")


_STACK_CHANGE_RE = re.compile(
    r"\b(?:rewr\w*|port\w*|replac\w*|rebuil\w*|upgrad\w*|mov\w*|switch\w*|migrat\w*|now)\b"
    r"|重写|重构|升|换|改|迁|切|现在",
    re.I,
)


_ALSO_RE = re.compile(r"\b(?:also|too|as\s+well|alongside|plus)\b|也|还有|另外|同时", re.I)


def _of_key(name: str, key: str) -> bool:
    """Whether the technology `name` can be the value of `key` (a tool's key, or a project's
    frontend or backend framework)."""
    if key.startswith("stack:"):
        return f"stack:{stack_side(name)}" == key
    if key == "language:primary" or key.startswith("framework:"):
        return primary_key(name) == key
    tech = lookup_tech(name)
    return tech is not None and tech.subject == key


def _switched(new: str, known: ExtractedMemory, ctx: Ctx, *, zh: bool) -> str:
    if known.type != "project":
        return f"用户换成了{new}" if zh else f"User switched to {new}"
    owner = ctx.session.project or ("用户的项目" if zh else "User's project")
    return f"{owner}换成了{new}" if zh else f"{owner} now uses {new}"


def _tool(text: str, known: ExtractedMemory, ctx: Ctx) -> ExtractedMemory | None:
    zh = bool(CJK_RE.search(text))
    named = techs_in(text, english=not zh)
    if known.subject.startswith("stack:") and (
        not _STACK_CHANGE_RE.search(text) or _ALSO_RE.search(text)
    ):
        return None  # "we now have a Django service too" adds a framework, replaces none
    new = [
        n for n in named
        if _of_key(n, known.subject)
        and split_version(n)[0].casefold() not in known.content.casefold()
    ]  # fmt: skip
    if new:
        return ctx.mem(_switched(new[0], known, ctx, zh=zh), known.type,
                       max(known.importance, IMP_SWITCH), subject=known.subject,
                       topic=known.topic)  # fmt: skip
    return _version(text, named, known, ctx)


def _version(
    text: str, named: Sequence[str], known: ExtractedMemory, ctx: Ctx
) -> ExtractedMemory | None:
    """A new version of the tool the known memory names with a version ("Ubuntu 22.04" →
    "Just upgraded to 24.04", "MySQL 5.7" → "数据库已经升到 8.0 了")."""
    held = next((split_version(w) for w in _known_items(known.content)), None)
    if held is None or not held[1]:
        return None
    tool, old = held
    # "前端已经升级到 Vue 3 了" names the held tool again, with its new version.
    others = [n for n in named if split_version(n)[0].casefold() != tool.casefold()]
    if others or not (_CHANGE_RE.search(text) or tool.casefold() in text.casefold()):
        return None
    after = text[text.casefold().find(tool.casefold()) + len(tool) :] if tool.casefold() in (
        text.casefold()) else text  # fmt: skip
    m = _VERSION_RE.search(after)
    if m is None or m.group("v") == old:
        return None
    if "." not in m.group("v") and "." in old:
        return None  # "3 times" after "Python 3.9" is no version
    zh = bool(CJK_RE.search(text))
    if known.type == "project":
        content = _switched(f"{tool} {m.group('v')}", known, ctx, zh=zh)
    else:
        content = (
            f"用户换成了{tool} {m.group('v')}" if zh else f"User upgraded to {tool} {m.group('v')}"
        )
    return ctx.mem(content, known.type, max(known.importance, IMP_SWITCH),
                   subject=known.subject, topic=known.topic)  # fmt: skip


_ITEM_RE = re.compile(r"[A-Za-z][\w.+#\-]*(?:\s+\d+(?:\.\d+)*)?")


def _known_items(content: str) -> list[str]:
    """The tool names of a memory with their versions: "User uses Ubuntu 22.04" → ["Ubuntu
    22.04"]."""
    return [m.group(0) for m in _ITEM_RE.finditer(content) if split_version(m.group(0))[1]
            and lookup_tech(split_version(m.group(0))[0]) is not None]  # fmt: skip


# -- working style ----------------------------------------------------------------------------
def _style(text: str, known: ExtractedMemory, ctx: Ctx) -> ExtractedMemory | None:
    if style_topic(text) != known.subject:
        return None
    said = clean(text)
    if CJK_RE.search(said):
        return ctx.mem(f"用户希望{said}", "preference", known.importance, subject=known.subject)
    said = said[:1].lower() + said[1:] if not said.split()[0].isupper() else said
    return ctx.mem(f"User asks to {said}", "preference", known.importance, subject=known.subject)


# -- reply language ---------------------------------------------------------------------------
_EN_LANGUAGE_RE = re.compile(
    r"\b(?P<lang>English|Chinese|Mandarin|Japanese|Korean|French|German|Spanish|Portuguese"
    r"|Russian|Italian|Vietnamese)\b"
)
_ZH_LANGUAGE_RE = re.compile(r"(?P<lang>简体中文|繁体中文|中文|英文|英语|日语|日文|韩语)")


def _reply_language(text: str, known: ExtractedMemory, ctx: Ctx) -> ExtractedMemory | None:
    """ "English is fine again", "还是中文吧": another language named where the session holds the
    language of the replies is its new value (a clause of its own request reads as a style)."""
    if (asked := _style(text, known, ctx)) is not None:
        return asked
    if style_topic(text):
        return None  # "commit message 还是用中文写吧": the language of another thing
    zh = bool(CJK_RE.search(text))
    named = [m.group("lang") for m in (_ZH_LANGUAGE_RE if zh else _EN_LANGUAGE_RE).finditer(text)]
    # "You can stop with the German, English is easier": the language not held is the new one.
    lang = next((n for n in named if n.casefold() not in known.content.casefold()), "")
    if not lang:
        return None
    content = f"用户希望用{lang}回答" if zh else f"User wants replies in {lang}"
    return ctx.mem(content, "preference", known.importance, subject=known.subject)


# -- theme ------------------------------------------------------------------------------------
_THEME_RE = re.compile(
    r"\b(?P<en>(?:dark|light)\s+(?:mode|theme))\b|(?P<zh>深色|浅色|暗色|亮色)", re.I
)


def _theme(text: str, known: ExtractedMemory, ctx: Ctx) -> ExtractedMemory | None:
    """ "I switched to dark theme", "现在用浅色了": the light or dark theme the user uses now."""
    m = _THEME_RE.search(text)
    if m is None or m.group(0).casefold() in known.content.casefold():
        return None
    if m.group("zh"):
        return ctx.mem(
            f"用户喜欢{m.group('zh')}主题", "preference", known.importance, subject="theme"
        )
    return ctx.mem(f"User prefers {m.group('en').lower()}", "preference", known.importance,
                   subject="theme")  # fmt: skip


_Reader = Callable[[str, ExtractedMemory, Ctx], "ExtractedMemory | None"]


def _reader(key: str) -> _Reader | None:
    if key in _READERS:
        return _READERS[key]
    if key.startswith("date:"):
        return dated
    if key.startswith("decision:"):
        return revised
    if key.startswith(("tool:", "version:", "stack:", "framework:")) or key in ("editor", "os", "browser",
                                                         "language:primary"):  # fmt: skip
        return _tool
    if key.startswith("style:"):
        return _style
    return None


_READERS: dict[str, _Reader] = {
    "age": _age,
    "theme": _theme,
    "city": _city,
    "employer": _employer,
    "role": _role,
    "reply-language": _reply_language,
    "schedule": schedule,
    "diet": diet,
    "pet": pet,
}


# -- clauses ----------------------------------------------------------------------------------
# An order to the assistant ("Rewrite this in Kotlin", "convert it to 2.7") states no fact of
# the user's; for a working-style key it is the request itself.
_EN_ORDER_RE = re.compile(
    r"^(?:please\s+)?(?:rewrite|convert|change|use|make|write|add|fix|port|translate|show|give|run"
    r"|try|migrate|move|update|upgrade|rename|refactor|create|generate|explain|help|set|put|turn"
    r"|replace|switch|install|build|deploy|test|check|send|tell|let|keep|format)\b",
    re.I,
)


def _en_texts(body: str, *, style: bool) -> list[str]:
    """The clauses about the user or their team, the parts of them not negated; for a
    working-style key, requests too."""
    out: list[str] = []
    for clause in en_clauses(body):
        # "You can stop with the German, …" speaks to the assistant: a request, read for a style.
        if clause.subject == "other" and (not style or someone_else(clause.text)):
            continue
        if clause.unsure or clause.label == "task":
            continue
        if not style and clause.subject == "none" and _EN_ORDER_RE.match(clause.text):
            continue
        text = before_instead(clause.text)
        if clause.negated or text != clause.text:
            # "we finished migrating off Mongo, it's all Postgres now": the part not negated;
            # "I've been using NestJS instead of Express": the part before "instead of".
            out += [p for p in re.split(r",\s*", text) if not _NEGATED_PART_RE.search(p)]
        else:
            out.append(clause.text)
    return out


_NEGATED_PART_RE = re.compile(
    r"\b(?:not|never|no\s+longer|no\s+more|any\s*more|don't|didn't|without|off|away\s+from|dropped|ditched|quit|left"
    r"|gone|used\s+to|instead\s+of|rather\s+than)\b",
    re.I,
)


def _zh_texts(body: str, *, style: bool) -> list[str]:
    """The clauses about the user, their team or project; for a working-style key, requests
    too ("改一下，缩进统一用 2 个空格吧")."""
    texts = [c.strip() for c in _ZH_CLAUSE_RE.split(body) if c.strip()]
    subjects = ("I", "we", "project", "none", "ask") if style else ("I", "we", "project")
    return [
        c.text
        for c in zh_clauses(texts, carried=True)
        if c.subject in subjects and not _ZH_NOT_RE.search(c.text)
    ]


def carried_updates(
    sentence: str, ctx: Ctx, said: Sequence[ExtractedMemory]
) -> Iterator[ExtractedMemory]:
    """New values of the keys the session holds, stated in `sentence` (see the module); `said`
    are the memories the sentence gave already (their keys are not read again)."""
    held = {k: m for k, m in ctx.session.values.items() if m.source_turn_ids != (ctx.turn_id,)}
    given = {m.subject for m in said if m.subject}
    keys = [k for k in held if k not in given and _reader(k) is not None]
    if not keys or is_question(sentence):
        return
    body = sentence.strip().rstrip(".!?。！？；;")
    if _HYPOTHETICAL_RE.search(body) or re.match(r"^(?:如果|假如|假设|要是|万一)", body):
        return
    zh = bool(CJK_RE.search(body))
    texts = {style: (_zh_texts if zh else _en_texts)(body, style=style) for style in (False, True)}
    for key in keys:
        read = _reader(key)
        assert read is not None
        # A date and the event it is for are often in two clauses ("launch slipped, it's June 2"),
        # a pet and the one it replaces too ("Nibbles died :( the kids picked out a bunny …").
        whole = read in (dated, pet)
        said_in = [body] if whole else texts[read in (_style, _reply_language)]
        memory = next((m for t in said_in if (m := read(t, held[key], ctx)) is not None), None)
        if memory is not None:
            yield memory
