"""A standing request read by its structure: how the user wants the assistant to work from now on.

The preference rules read the requests whose phrasing they know ("keep your answers short from
now on", "别用表情"). This reader is their floor, like `general` is for statements: a sentence
addressed to the assistant — an imperative ("Stick to English in your replies", "Please assume
Eastern time for anything I schedule"), a wish about its answers ("I'd like your replies in
Japanese"), a rule for what it gives ("Any commands you give me should be PowerShell"; "回答用繁体字
写吧", "每次改代码都把完整的文件贴给我", "只给 diff 就行") — that says it lasts (from now on, always,
any/every, in your replies; 以后, 每次, 一律, 都 …) or names a setting that lasts by nature (a
reply language, a time zone, a script), is kept as "User asks: …".

Its key is its topic: a spoken language with replies → `reply-language`, a time zone →
`timezone`, a script → `style:script`, else the style topic (`style:length`, `style:format`, …),
else a technology's key, so a later request on the topic replaces it. A time zone is a fact
about the user (`personal`); the rest are preferences.

An edit asked of one thing ("Add a column to the accounts table", "把这段代码改成异步的"), a
question, a hypothetical, someone else's words and a request with nothing lasting give nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memd.core.models import ExtractedMemory
from memd.extraction.rules.common import (
    IMP_PREFERENCE,
    SPOKEN_LANGUAGES,
    Ctx,
    is_question,
)
from memd.extraction.rules.style import style_topic
from memd.extraction.rules.tech import lookup_tech
from memd.extraction.rules.zh_clauses import ZH_OTHER_RE

# -- topics --------------------------------------------------------------------------------------
_LANGUAGE_RE = re.compile(
    r"\b(?:" + "|".join(sorted(SPOKEN_LANGUAGES)) + r")\b|中文|英文|英语|日语|日文|韩语|法语|德语"
    r"|粤语|普通话",
    re.I,
)
_REPLIES_RE = re.compile(
    r"\b(?:repl(?:y|ies)|answers?|responses?|respond|answer|write|explanations?)\b"
    r"|回答|回复|回我|交流|解释",
    re.I,
)
_TIMEZONE_RE = re.compile(
    r"\b(?:Eastern|Central|Mountain|Pacific|Atlantic|Alaska|Hawaii)\s+time\b|\btime\s*zone\b"
    r"|\b(?:UTC|GMT|CET|CEST|EST|EDT|PST|PDT|JST|IST)(?:[+-]\d+)?\b|\b[A-Z][a-z]+\s+time\b"
    r"|时区|[\u4e00-\u9fff]{2}时间(?!.*(?:短|长))",
)
_SCRIPT_RE = re.compile(
    r"繁体|简体|繁體|\b(?:Traditional|Simplified)\s+(?:Chinese|characters)\b", re.I
)
# "entire file", "完整的文件": what a code answer gives, as a format.
_WHOLE_RE = re.compile(r"\b(?:full|whole|entire|complete)\s+files?\b|完整的?文件|整个文件", re.I)


def topic_of(text: str) -> tuple[str, str]:
    """The key and type of a standing request's topic, ("", "") for none."""
    if _LANGUAGE_RE.search(text) and _REPLIES_RE.search(text):
        return "reply-language", "preference"
    if _TIMEZONE_RE.search(text):
        return "timezone", "personal"
    if _SCRIPT_RE.search(text):
        return "style:script", "preference"
    if _WHOLE_RE.search(text):
        return "style:diff", "preference"
    topic = style_topic(text)
    if topic and topic != "schedule":
        return topic, "preference"
    for word in re.findall(r"[A-Za-z][\w.+#\-]*[\w+#]", text):
        tech = lookup_tech(word)
        if tech is not None and tech.subject:
            return tech.subject, "preference"
    return "", ""


# -- English ------------------------------------------------------------------------------------
_EN_LASTING_RE = re.compile(
    r"\b(?:from\s+now\s+on|from\s+here\s+on(?:\s+out)?|going\s+forward|by\s+default|always"
    r"|every\s+time|whenever|any(?:thing)?\s+(?:\w+\s+)?(?:I|you)\b|any\s+\w+\s+you|every\s+\w+"
    r"|in\s+your\s+(?:repl(?:y|ies)|answers?|responses?)|for\s+anything|per\s+answer"
    r"|for\s+me)\b",
    re.I,
)
# Addressed to the assistant: an imperative, a wish about its answers, a rule for what it gives.
_EN_ADDRESSED_RE = re.compile(
    r"^(?:please\s+)?(?:stick|use|keep|leave|assume|give|write|answer|reply|respond|format"
    r"|default|switch|go|stay|put|show|send|treat|make|avoid|skip|drop|include)\b"
    r"|\bI'd\s+(?:like|prefer|rather)\s+(?:your|you\s+to|it|them|the)\b"
    r"|\bI\s+(?:want|need)\s+(?:your|you\s+to)\b"
    r"|^(?:any|all|every)\s+(?:[\w\-]+\s+){0,2}?(?:you|the\s+assistant)\s+\w+"
    # "Replies in plain text please", "Short, scannable answers help me a lot", "No markdown …"
    r"|\bplease$|\bhelps?\s+me\b|\bwork(?:s)?\s+(?:best|better)\s+for\s+me\b|^no\s+\w+"
    r"|^go\s+easy\s+on\b",
    re.I,
)
_EN_NOT_STANDING_RE = re.compile(
    r"\b(?:if|suppose|imagine|pretend|this(?!\s+(?:repo|project|codebase)\b)|these|here|above|below"
    r"|today|just\s+this|for\s+now"
    r"|the\s+(?:\w+\s+)?(?:table|column|field|file|function|class|test|model|repo|branch|PR))\b"
    r"|\b(?:he|she|they|my\s+(?:boss|manager|team|colleague|friend|partner|wife|husband))\b|[\"“”`]",
    re.I,
)
_EN_LEAD_RE = re.compile(
    r"^(?:(?:ok(?:ay)?|so|also|and|actually|on\s+second\s+thought|let's\s+flip\s+that)\b[\s,:;]*)+",
    re.I,
)


def en_standing(sentence: str, ctx: Ctx) -> Iterator[tuple[str, ExtractedMemory]]:
    """The standing requests of an English sentence's clauses (see the module), with their text."""
    text = sentence.strip().rstrip(".!")
    if not text or is_question(text):
        return
    # A sentence that opens with its scope ("Going forward, …", "Whenever you show me SQL, …")
    # gives it to the requests that follow.
    scoped = False
    for clause in re.split(r"[,;:]\s+|\s+[—–]\s+", text):
        clause = _EN_LEAD_RE.sub("", clause.strip())
        if _EN_SCOPE_RE.match(clause):
            scoped = True
            continue
        if not clause or _EN_NOT_STANDING_RE.search(clause) or _EN_ONE_THING_RE.match(clause):
            continue
        key, type_ = topic_of(clause)
        lasting = scoped or bool(_EN_LASTING_RE.search(clause))
        addressed = _EN_ADDRESSED_RE.search(clause) or (
            lasting and not _EN_SUBJECT_RE.match(clause) and key.startswith("style:")
        )  # "two or three sentences per answer from now on": the request without its verb
        if not addressed or not (key or scoped or _EN_STRONG_RE.search(clause)):
            continue
        if not (lasting or _lasts(clause, key, zh=False)):
            continue
        content = "User asks: " + clause[:1].lower() + clause[1:]
        yield clause, ctx.mem(content, type_ or "preference", IMP_PREFERENCE, subject=key)


# A clause that is the scope of the requests after it: "Going forward", "From now on", "Whenever
# you give me shell commands", "Every time you write a test".
_EN_SCOPE_RE = re.compile(
    r"^(?:from\s+now\s+on|from\s+here\s+on(?:\s+out)?|going\s+forward|by\s+default"
    r"|(?:whenever|every\s+time|any\s+time)\s+(?:you|I)\b.*)$",
    re.I,
)
# The scope of an order for this once: "Just for this reply", "For this answer only", "this
# time", 这次回答, 这个回答, 本次.
_ONE_OFF_RE = re.compile(
    r"\b(?:(?:just|only)\s+)?for\s+(?:this|the\s+next)\s+(?:one|reply|answer|response|message"
    r"|question|time)\b|\b(?:this|that)\s+(?:time|once)\b|\b(?:in|for)\s+this\s+(?:reply|answer"
    r"|response)\b|\bjust\s+this\s+once\b"
    r"|这次|这回|本次|这一次|此次|这个回答|这条回答|这条回复|这个回复",
    re.I,
)
_LASTING_SCOPE_RE = re.compile(
    r"\b(?:from\s+now\s+on|from\s+here\s+on|going\s+forward|by\s+default|always|whenever"
    r"|every\s+time|any\s+time)\b|以后|今后|往后|每次|总是|一律|默认|一直",
    re.I,
)


def one_off(sentence: str) -> bool:
    """Whether a sentence scopes what it asks to this once ("Just for this reply, skip the
    explanation", 这次回答用表格) and says nothing lasting: a request for one answer, no preference
    to keep."""
    return bool(_ONE_OFF_RE.search(sentence)) and not _LASTING_SCOPE_RE.search(sentence)


# "Write the summary in Spanish": one thing asked for now (not "the answers" in general).
_EN_ONE_THING_RE = re.compile(
    r"^(?:please\s+)?\w+\s+(?:me\s+)?(?:the|this|that|these|those)\s+(?!answers?\b|repl(?:y|ies)\b)",
    re.I,
)
_EN_SUBJECT_RE = re.compile(r"^(?:I|I'm|I've|we|we're|my|our|he|she|they|it)\b", re.I)
# Words that say a request lasts whatever it is about.
_EN_STRONG_RE = re.compile(
    r"\b(?:from\s+now\s+on|from\s+here\s+on|going\s+forward|by\s+default|always|whenever"
    r"|every\s+time)\b",
    re.I,
)


# Topics that last by nature: a reply language, a time zone, a script, the conventions of the
# user's code and of the answers' markup.
_LASTING_KEYS = frozenset(
    {"reply-language", "timezone", "style:script", "style:naming", "style:comments", "style:markup"}
)


def _lasts(clause: str, key: str, zh: bool) -> bool:
    """Whether a request lasts by its topic: a convention, or the length of answers in general
    ("回答尽量简短", "Keep answers brief"; not "this answer")."""
    if key in _LASTING_KEYS:
        return True
    general = not re.search(r"\bthis\b|\bthat\b|这|那", clause, re.I)
    return key == "style:length" and general and bool(_REPLIES_RE.search(clause))


# -- Chinese ------------------------------------------------------------------------------------
_ZH_LASTING_RE = re.compile(r"以后|今后|每次|一律|统一|默认|总是|一直|都|的时候|就行|就好")
_ZH_ADDRESSED_RE = re.compile(r"回答|回复|回我|给我|贴给|发给|写给|你|按|用|只给|别|不要|尽量|请")
_ZH_NOT_STANDING_RE = re.compile(
    r"^(?:把|帮|请帮|麻烦)|这段|这个|这里|下面|上面|一下|如果|假如|要是|[“”\"'「」]|吗|呢|？|\?"
)
_ZH_LEAD_RE = re.compile(r"^(?:算了|好吧|改主意了|对了|还是|那就|嗯)[，,\s]*")


def zh_standing(sentence: str, ctx: Ctx) -> Iterator[tuple[str, ExtractedMemory]]:
    """The standing requests of a Chinese sentence's clauses (see the module), with their text."""
    text = sentence.strip().rstrip("。！!；;")
    if not text or is_question(text) or ZH_OTHER_RE.search(text.replace("你", "")):
        return
    for clause in re.split(r"[，,；;]", text):
        clause = _ZH_LEAD_RE.sub("", clause.strip())
        if not clause or _ZH_NOT_STANDING_RE.search(clause) or clause.startswith("我"):
            continue
        strong = bool(_ZH_STRONG_RE.search(clause))
        if not (_ZH_ADDRESSED_RE.search(clause) or strong):
            continue
        key, type_ = topic_of(clause)
        if not (key or strong) or not (
            _ZH_LASTING_RE.search(clause) or _lasts(clause, key, zh=True)
        ):
            continue
        memory = ctx.mem("用户要求：" + clause, type_ or "preference", IMP_PREFERENCE, subject=key)
        yield clause, memory


# Words that say a request lasts whatever it is about: "写 SQL 的时候关键字一律大写".
_ZH_STRONG_RE = re.compile(r"以后|今后|每次|一律|统一|默认|总是|的时候")
