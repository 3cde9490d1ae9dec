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
    yield ctx.mem(content, "decision", IMP_DECISION, topic=topic, subject=subject)


def zh_decision(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    m = _ZH_DECISION_RE.search(sentence)
    if m is None or _ZH_NOT_DECIDED_RE.search(sentence[: m.end("what")]):
        return
    what = clean(m.group("what"))
    if len(what) < 3:
        return
    topic, subject = _about(what, english=False)
    yield ctx.mem(f"用户决定{what}", "decision", IMP_DECISION, topic=topic, subject=subject)
