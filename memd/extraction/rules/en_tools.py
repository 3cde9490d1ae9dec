"""English: the tools and languages the user works with, switches between tools, projects."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence

from memd.core.models import ExtractedMemory
from memd.extraction.rules.common import (
    IMP_PROJECT,
    IMP_PROJECT_DETAIL,
    NOT_ORGS,
    Ctx,
    clean,
    join_en,
    third_person,
    topic_slug,
)
from memd.extraction.rules.tech import (
    EN_ADVERBS,
    ITEM_STOP_RE,
    lookup_tech,
    tech_items,
    tool_memories,
)

_PURPOSE_RE = re.compile(r"^\s+for\s+(?P<purpose>(?:[\w\-]+\s*){1,4}?)\s*(?:[,.;!]|$)", re.I)
_USE_VERBS = {
    "use": "uses",
    "work with": "works with",
    "code in": "codes in",
    "program in": "programs in",
    "develop with": "develops with",
    "develop in": "develops in",
    "write in": "writes in",
    "write code in": "writes code in",
    "rely on": "relies on",
    "am using": "uses",
    "'m using": "uses",
    "write": "writes",
    "code": "codes",
}
# Verbs too common to take an unknown proper noun as a tool ("I write Chapter 3").
_KNOWN_ONLY_VERBS = frozenset({"write", "code"})
_EN_USE_RE = re.compile(
    r"(?P<subj>\bI\s+|(?:^|,\s*|\band\s+))(?P<adv>(?:" + EN_ADVERBS + r"\s+){0,2})"
    r"(?P<verb>use|work\s+with|code\s+in|program\s+in|develop\s+(?:with|in)|write(?:\s+code)?\s+in"
    r"|rely\s+on|am\s+using|'m\s+using|write|code)\s+(?=(?P<items>[^.;!?]+))",
    re.I,
)


def _render_use(lead: str, purpose: str, names: Sequence[str]) -> str:
    return f"{lead} {join_en(names)}{purpose}"


def en_tools(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    for m in _EN_USE_RE.finditer(sentence):
        if not m.group("subj").strip().startswith("I") and not re.search(
            r"\bI\b", sentence[: m.start()]
        ):
            continue  # "Use pytest." is an instruction, not a fact about the user
        raw = m.group("items")
        purpose_m = _PURPOSE_RE.match(raw[len(ITEM_STOP_RE.sub("", raw)) :])
        items = tech_items(ITEM_STOP_RE.sub("", raw))
        verb = " ".join(m.group("verb").lower().split())
        if verb in _KNOWN_ONLY_VERBS:
            items = [i for i in items if lookup_tech(i) is not None]
        if not items:
            continue
        adverbs = m.group("adv").split()
        verb3 = _USE_VERBS.get(verb, "uses")
        adv = " ".join(a.lower() for a in adverbs if a.lower() not in {"also", "really", "just"})
        purpose = f" for {purpose_m.group('purpose').strip()}" if purpose_m else ""
        lead = f"User {adv + ' ' if adv else ''}{verb3}"
        main = any(a.lower() in {"mainly", "mostly", "primarily"} for a in adverbs)
        yield from tool_memories(
            items,
            ctx,
            render=functools.partial(_render_use, lead, purpose),
            main=main,
            switch=any(a.lower() == "now" for a in adverbs),
        )


_EN_SWITCH_RE = re.compile(
    r"\bI(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+|now\s+)?"
    r"(?:switched|moved|migrated|changed|converted)\s+"
    r"(?:(?:over\s+)?from\s+(?P<old>[\w.+#\- ]+?)\s+)?(?:over\s+)?to\s+(?P<new>[\w.+#\-]+(?:\s+[A-Z][\w.+#\-]*)?)"
    r"(?:\s+from\s+(?P<old2>[\w.+#\-]+))?",
    re.I,
)


def en_switch(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    m = _EN_SWITCH_RE.search(sentence)
    if m is None:
        return
    new = tech_items(m.group("new"))
    if not new:
        return
    if lookup_tech(new[0]) is None and re.match(r"(?i)moved|relocated", m.group(0).split()[1]):
        return  # "I moved to Berlin" is a location, handled there
    old_raw = m.group("old") or m.group("old2") or ""
    old = tech_items(old_raw) if old_raw else []
    since = f" from {join_en(old)}" if old else ""
    yield from tool_memories(
        new,
        ctx,
        render=lambda names: f"User switched to {join_en(names)}{since}",
        main=True,
        switch=True,
    )


# The first word of a name may be lowercase ("memd"); further words must be capitalised,
# or "memd that indexes notes" would all become the name.
_PNAME = r"[\"“'‘]?(?P<name>[A-Za-z0-9][\w.\-]*(?:\s+[A-Z0-9][\w.\-]*){0,3})[\"”'’]?"
_EN_PROJECT_RES = (
    re.compile(
        r"(?i:\b(?:working\s+on|building|developing|making|writing|creating|maintaining|started)\s+"
        r"(?:a|an|my|our|the|this)\s+(?:[\w\-]+\s+){0,3}?"
        r"(?:project|app|application|tool|library|game|website|site|service|startup|product"
        r"|framework|plugin|extension|bot|cli|package)\s+(?:called|named))\s+" + _PNAME
    ),
    re.compile(
        r"\b(?i:my\s+(?:side\s+|current\s+|main\s+)?project,?\s+(?:is\s+)?(?:called\s+)?)" + _PNAME
    ),
)
_EN_PROJECT_DESC_RE = re.compile(
    r"^,?\s+(?:which|that)\s+(?P<desc>(?:is\s+(?:an?|the)\s+)?[^,.;]+?)"
    r"(?=\s+(?:built|made|written|developed|implemented|powered|using|based)\b|[,.;]|$)",
    re.I,
)
_EN_STACK_RE = re.compile(
    r"\b(?:built|made|written|developed|implemented|powered)\s+(?:with|using|in|on|by)\s+"
    r"(?P<stack>[^.;!?]+)",
    re.I,
)


def en_project(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    for rx in _EN_PROJECT_RES:
        m = rx.search(sentence)
        if m is None:
            continue
        name = clean(m.group("name"))
        if not name or name.lower() in NOT_ORGS:
            continue
        topic = topic_slug(name)
        rest = sentence[m.end() :]
        desc_m = _EN_PROJECT_DESC_RE.match(rest)
        desc = ""
        if desc_m:
            raw_desc = third_person(desc_m.group("desc").strip())
            desc = f", {raw_desc[3:]}" if raw_desc.startswith("is ") else f", which {raw_desc}"
        yield ctx.mem(
            f"User is working on a project called {name}{desc}",
            "project",
            IMP_PROJECT,
            topic=topic,
        )
        stack_m = _EN_STACK_RE.search(rest)
        if stack_m:
            stack = clean(ITEM_STOP_RE.sub("", stack_m.group("stack")))
            if stack and tech_items(stack):
                yield ctx.mem(
                    f"{name} is built with {stack}", "project", IMP_PROJECT_DETAIL, topic=topic
                )
        return
