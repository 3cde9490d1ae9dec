"""Decisions the user states, in English and Chinese: "we decided to drop the ORM", "最后决定用 PostgreSQL".

A decision keeps its reason when one is given in the same sentence. Its topic is the first
technology it names (so it lands next to that topic's notes), else the generic decisions file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memd.core.models import ExtractedMemory
from memd.extraction.rules.common import IMP_DECISION, Ctx, clean, third_person, topic_slug
from memd.extraction.rules.tech import lookup_tech, mentioned_tech

_EN_DECISION_RE = re.compile(
    r"\b(?:I|we)(?:'ve|'re|'ll|'m|\s+have|\s+are|\s+am|\s+will|\s+finally|\s+just|\s+now|\s+all)*\s+"
    r"(?:(?P<verb>decided|agreed|settled|chose|picked|opted)\s+(?P<how>to|on|that|for|with)?"
    r"|(?P<go>(?:went|going|go|sticking|stuck|standardi[sz]ing|standardi[sz]ed)\s+(?:with|on)))"
    r"\s*(?P<what>(?:[^.;!?]|\.(?=\w))+)",
    re.I,
)
_ZH_DECISION_RE = re.compile(
    r"(?<![没未不])(?:最后|最终|还是|已经|刚刚?|终于)*(?:决定|定了用|选了|选择了|敲定了?)\s*(?P<what>[^。！？!?]+)"
)
_EN_NOT_DECIDED_RE = re.compile(r"\b(?:if|whether|not\s+yet|haven't|have\s+not|undecided)\b", re.I)
# "主要是" holds 要是 ("if") by accident: not a condition.
_ZH_NOT_DECIDED_RE = re.compile(r"如果|假如|(?<![主需只重])要是|是否|还没|没有决定|没决定|未决定")
_INSTEAD_RE = re.compile(r"\b(?:instead\s+of|over|rather\s+than)\b", re.I)
_TECH_WORD_RE = re.compile(r"[A-Za-z][\w.+#\-]*")


def _about(text: str, *, english: bool = True) -> tuple[str, str]:
    """(topic, subject) of a decision: the first technology it names, and that tool's key."""
    for word in _TECH_WORD_RE.findall(text):
        # In Chinese text a Latin word is a name; in English "go with" is not the language.
        tech = mentioned_tech(word) if english else lookup_tech(word)
        if tech is not None:
            return topic_slug(tech.name), tech.subject
    return "", ""


def en_decision(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    m = _EN_DECISION_RE.search(sentence)
    if m is None or _EN_NOT_DECIDED_RE.search(sentence[: m.start()] + m.group(0)[:20]):
        return
    what = clean(m.group("what"))
    if len(what.split()) < 2 and lookup_tech(what) is None:
        return
    how = (m.group("how") or "").lower()
    if m.group("go") and not (_about(what)[0] or _INSTEAD_RE.search(what)):
        return  # "I'm going with my wife": only a choice between things is a decision
    if m.group("go"):
        lead = "to go with"
    else:
        lead = {"to": "to", "that": "that", "on": "on", "for": "on", "with": "to go with"}.get(
            how, ""
        )
    content = f"User decided {lead + ' ' if lead else ''}{third_person(what)}"
    topic, subject = _about(what)
    key = _revises(what, topic, ctx) or _keyed(topic, subject)
    yield ctx.mem(content, "decision", IMP_DECISION, topic=topic, subject=key)


def zh_decision(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    m = _ZH_DECISION_RE.search(sentence)
    if m is None or _ZH_NOT_DECIDED_RE.search(sentence[: m.end("what")]):
        return
    what = clean(m.group("what"))
    if len(what) < 3:
        return
    topic, subject = _about(what, english=False)
    key = _revises(what, topic, ctx) or _keyed(topic, subject)
    yield ctx.mem(f"用户决定{what}", "decision", IMP_DECISION, topic=topic, subject=key)


def _keyed(topic: str, subject: str) -> str:
    """The key of a decision: its tool's key, or the choice of that technology itself
    (`decision:redux`), so that a later revision of it ("ripping out Redux, going with Zustand
    instead") replaces it."""
    return subject or (f"decision:{topic}" if topic else "")


def _revises(what: str, topic: str, ctx: Ctx) -> str:
    """The key of a decision the session holds that this one names another tool beside
    ("going with FastAPI instead, Flask is out" after "we decided on Flask"): it is revised."""
    for key, held in ctx.session.values.items():
        if held.type != "decision" or not key.startswith("decision:") or key == f"decision:{topic}":
            continue
        old = key.removeprefix("decision:")
        if any(topic_slug(w) == old for w in _TECH_WORD_RE.findall(what)):
            return key
    return ""


# A revision of a held decision: the choice of another tool ("going with Zustand instead",
# "改用 React 了"), in a sentence that drops the decided one (`carried` reads only its parts not
# negated, so the dropping clause is gone by now).
_EN_CHOICE_RE = re.compile(
    r"\b(?:going|go|went|switching|switched|moving|moved)\s+(?:with|to|over\s+to)\b|\binstead\b",
    re.I,
)
_ZH_CHOICE_RE = re.compile(r"改用|换成|改成|换用|改为|转向")


def revised(text: str, known: ExtractedMemory, ctx: Ctx) -> ExtractedMemory | None:
    """The new choice a clause makes in place of a decision the session holds, or None."""
    zh = bool(re.search(r"[\u4e00-\u9fff]", text))
    if known.type != "decision" or not (_ZH_CHOICE_RE if zh else _EN_CHOICE_RE).search(text):
        return None
    for word in _TECH_WORD_RE.findall(text):
        tech = lookup_tech(word) if zh else mentioned_tech(word)
        if tech is None or tech.name.casefold() in known.content.casefold():
            continue
        content = f"用户决定改用{tech.name}" if zh else f"User decided to go with {tech.name}"
        return ctx.mem(content, "decision", IMP_DECISION, topic=topic_slug(tech.name),
                       subject=known.subject)  # fmt: skip
    return None
