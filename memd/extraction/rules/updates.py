"""New values of keys whose values are open-ended: working hours and where the user works, diets,
and the date of an event — read in a later turn against the key the session holds.

`carried` reads a later value of a key a lexicon knows (a city, an employer, a tool) by its
value. The keys here have no list of values: `schedule` (from `subjects`: "I work nights", "我每天
九点上班") and `date:<event>` (from the task rules: "The launch is set for May 12"). A later turn
often gives only the new value, with no verb a first statement would use:

- `schedule`: a clause with hours, a shift, a time of day or a place of work ("Normal 9 to 5
  from this week on", "现在换成早上写代码了", "I'm hybrid now") — the new working hours;
- `date:<event>`: a date in a sentence that names the event or says it moved ("launch slipped,
  it's June 2 now", "上线时间改到下个月20号了") — the event's new date;
- `pet`: an animal with a name, in a sentence whose subject is the user or their household, or
  that says the held pet died or is gone ("Nibbles died over the weekend :( the kids picked out
  a bunny named Clover") — the new pet.

Each reader gets one clause about the user (or, for a date, the sentence) and the held memory,
and returns the new memory under the same key, so placement supersedes the old one; a clause
that only repeats the held value gives nothing.
"""

from __future__ import annotations

import re

from memd.core.models import ExtractedMemory
from memd.extraction.rules.clauses import someone_else
from memd.extraction.rules.common import CJK_RE, IMP_PREFERENCE, Ctx, clean, third_person
from memd.extraction.rules.dates import due_en, due_zh, find_date
from memd.extraction.rules.subjects import ANIMALS, THEIRS_RE
from memd.extraction.rules.zh_clauses import RELATION_RE

# -- working hours and place ----------------------------------------------------------------------
_HOUR = r"\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)?"
_EN_WHEN_RE = re.compile(
    r"\b" + _HOUR + r"\s*(?:to|-|–|until|till)\s*" + _HOUR + r"(?!\d)"
    r"|\b(?:night|late|early|day|morning|evening|graveyard|swing)\s+shifts?\b"
    r"|\b(?:nights|mornings|evenings|weekends)\b|\bremote(?:ly)?\b|\bfrom\s+home\b|\bhybrid\b"
    r"|\b(?:in|to|at|into)\s+the\s+office\b|\bon[- ]site\b|\bpart[- ]time\b|\bfull[- ]time\b",
    re.I,
)
_ZH_WHEN_RE = re.compile(
    r"(?:早上|上午|中午|下午|晚上|夜里|半夜|凌晨|白天)|(?:\d{1,2}|[一二三四五六七八九十两]{1,3})\s*点"
    r"|夜班|早班|晚班|白班|倒班|弹性|远程|在家办公|居家办公|坐班|办公室|去公司|回公司|到公司"
)
# What makes a clause with a time one about the user's work, not an appointment.
_ZH_WORK_RE = re.compile(
    r"上班|下班|工作|办公|值班|写代码|开工|打卡|到岗|坐班|远程|办公室|去公司|到公司|回公司"
)
# A clause that only says the old hours are over ("I'm off nights now") states no new value.
_EN_OVER_RE = re.compile(r"\b(?:off|no\s+longer|not|quit|stopped|done\s+with)\b", re.I)
_ZH_OVER_RE = re.compile(r"不|没|别|以前|之前|原来")


def schedule(text: str, known: ExtractedMemory, ctx: Ctx) -> ExtractedMemory | None:
    """A clause that gives the user's new working hours or place of work."""
    said = clean(text)
    if not said or said.casefold() in known.content.casefold():
        return None
    if CJK_RE.search(said):
        if not _ZH_WHEN_RE.search(said) or not _ZH_WORK_RE.search(said) or _ZH_OVER_RE.search(said):
            return None
        body = said.removeprefix("我们").removeprefix("我")
        return ctx.mem(f"用户{body}", "personal", IMP_PREFERENCE, subject="schedule")
    if not _EN_WHEN_RE.search(said) or _EN_OVER_RE.search(said):
        return None
    said = said[:1].lower() + said[1:] if not said.startswith("I ") else said
    return ctx.mem(f"User's working hours: {third_person(said)}", "personal", IMP_PREFERENCE,
                   subject="schedule")  # fmt: skip


_EVENT_WORD_RE = re.compile(r"[a-z][a-z\-]{3,}|[\u4e00-\u9fff]{2,}")
_NOT_EVENT_WORDS = frozenset("the for with from that this done ready".split())
# A move said of "it" or with no event at all ("it slipped to June 2", "推迟到下周五了").
_BARE_MOVE_RE = re.compile(
    r"^(?:it|that|this|which|and|but|so)?\b|^(?:推迟|延期|延后|改到|挪到)", re.I
)


def _names_part(event: str, text: str) -> bool:
    """Whether `text` names a word of the event ("Lantern's beta slipped" for "beta for
    lantern"), or names none at all and only says something moved."""
    words = {w for w in _EVENT_WORD_RE.findall(event.casefold()) if w not in _NOT_EVENT_WORDS}
    low = text.casefold()
    if any(w in low for w in words):
        return True
    head = re.split(r"\s+(?:slipped|slips|pushed|postponed|delayed|moved|rescheduled|got|was|is)\b",
                    text.strip(), maxsplit=1, flags=re.I)[0]  # fmt: skip
    return bool(re.fullmatch(r"(?:it|that|this|which|the\s+date|the\s+deadline)?", head.strip(),
                             re.I)) or bool(CJK_RE.search(text) and _BARE_MOVE_RE.match(text))  # fmt: skip


# -- the date of an event -------------------------------------------------------------------------
_MOVED_RE = re.compile(
    r"\b(?:slipped|slips|pushed|postponed|delayed|moved|rescheduled|bumped|shifted|brought"
    r"\s+forward|pulled\s+in)\b|推迟|延期|延后|延到|推到|改到|改成|挪到|提前到?|调到",
    re.I,
)


def dated(text: str, known: ExtractedMemory, ctx: Ctx) -> ExtractedMemory | None:
    """A sentence that names the event of a `date:<event>` key (or says it moved) and a new date."""
    event = known.subject.removeprefix("date:").replace("-", " ")
    moved = _MOVED_RE.search(text)
    # "March 3 is off, the cutover moved to March 17": the date after the move is the new one
    found = (find_date(text[moved.end() :], ctx.today) if moved else None) or find_date(
        text, ctx.today
    )
    if found is None or not event:
        return None
    names = event.casefold() in text.casefold()
    if not (names or moved and _names_part(event, text)):
        return None
    when = found[0]
    if when.isoformat() in known.content:
        return None
    if CJK_RE.search(text):
        content = f"{event}改到{due_zh(when)}"
    else:
        content = f"The {event} is scheduled for {due_en(when)}"
    return ctx.mem(
        content, known.type, known.importance, subject=known.subject, due=when.isoformat()
    )


# -- diet -------------------------------------------------------------------------------------------
# "现在正常吃饭", "又开始吃肉了", "I'm back on meat", "eating everything again": what the user eats
# now, said against a diet the session holds.
_ZH_EATS_RE = re.compile(r"(?:现在|目前|已经|又|恢复|开始|正常)[^，,。]{0,6}吃")
_EN_EATS_RE = re.compile(
    r"\b(?:eat|eating|back\s+on)\b[^,.;]{0,30}\b(?:now|again|these\s+days|anymore)\b"
    r"|\b(?:eat|eating)\s+(?:everything|anything|meat|fish|normally)\b",
    re.I,
)


def diet(text: str, known: ExtractedMemory, ctx: Ctx) -> ExtractedMemory | None:
    """A clause that says what the user eats now, in place of the diet the session holds."""
    said = clean(text)
    if not said or said.casefold() in known.content.casefold():
        return None
    if CJK_RE.search(said):
        if not _ZH_EATS_RE.search(said) or _ZH_OVER_RE.search(said):
            return None
        body = said.removeprefix("我")
        return ctx.mem(f"用户{body}", "personal", known.importance, subject="diet")
    if not _EN_EATS_RE.search(said) or re.search(r"\b(?:don't|do\s+not|never|not)\b", said, re.I):
        return None
    return ctx.mem(f"User's diet: {third_person(said)}", "personal", known.importance,
                   subject="diet")  # fmt: skip


# -- pets -------------------------------------------------------------------------------------------
_EN_NAMED_PET_RE = re.compile(
    r"\b(?:an?|new|little)\s+(?:[\w\-]+\s+)?(?P<animal>" + ANIMALS + r")\s*,?\s*(?:named|called)\s+"
    r"(?-i:(?P<name>[A-Z][\w'\-]+))",
    re.I,
)
# The held pet is gone: "Nibbles died", "we lost Biscuit", "rehomed the hamster".
_GONE_RE = re.compile(
    r"\b(?:died|passed(?:\s+away)?|is\s+gone|put\s+down|ran\s+away|rehomed|lost|buried)\b", re.I
)
# Children and a partner are the household: "the kids picked out a bunny" is the user's pet.
_HOUSEHOLD_RE = re.compile(
    r"^(?:the|my|our)\s+(?:kids?|children|son|daughter|wife|husband|partner|family)\b", re.I
)


# "咪咪送人了，现在养了条狗叫旺财": a clause that keeps a named animal.
_ZH_NAMED_PET_RE = re.compile(
    r"(?:新|又|现在|如今)*(?:养了|领养了|收养了|抱了|抱回|买了|接回了?)(?:一|两)?[只条个]?"
    r"(?P<animal>[\u4e00-\u9fff]{1,4}?)[，,]?\s*(?:叫|名叫|取名叫?)(?P<name>[\u4e00-\u9fffA-Za-z]{1,6})"
)


def _zh_pet(text: str, known: ExtractedMemory, ctx: Ctx) -> ExtractedMemory | None:
    for clause in re.split(r"[，,。；;！!]", text):
        m = _ZH_NAMED_PET_RE.search(clause)
        if m is None or m.group("name") in known.content or RELATION_RE.match(clause.strip()):
            continue
        body = clause[m.start() :].strip()
        return ctx.mem(f"用户{body}", "personal", known.importance, subject="pet")
    return None


def pet(text: str, known: ExtractedMemory, ctx: Ctx) -> ExtractedMemory | None:
    """A sentence that names the household's new pet, against the pet the session holds."""
    if CJK_RE.search(text):
        return _zh_pet(text, known, ctx)
    m = _EN_NAMED_PET_RE.search(text)
    if m is None or THEIRS_RE.search(text) or m.group("name") in known.content:
        return None
    before = text[: m.start()]
    clause = re.split(r"[,;:—–(]|\s-\s|:\(", before)[-1].strip()
    gone = _GONE_RE.search(before) is not None and any(
        w in before for w in re.findall(r"[A-Z][\w'\-]+", known.content) if w != "User"
    )
    if not gone and (someone_else(clause) and not _HOUSEHOLD_RE.match(clause)):
        return None
    words = f"{m.group('animal').lower()} called {m.group('name')}"
    return ctx.mem(f"User has a pet: {words}", "personal", known.importance, subject="pet")
