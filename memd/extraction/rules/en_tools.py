"""English: the tools and languages the user works with, switches between tools, projects."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence

from memd.core.models import ExtractedMemory
from memd.extraction.rules.clauses import subject_of
from memd.extraction.rules.common import (
    IMP_DECISION,
    IMP_PROJECT,
    IMP_PROJECT_DETAIL,
    IMP_SKILL,
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
    is_language,
    lookup_tech,
    mentioned_tech,
    stack_key,
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
    "know": "knows",
    "on": "uses",
    "run": "runs",
    "learn": "is learning",
}
# Verbs too common to take an unknown proper noun as a tool ("I write Chapter 3").
_KNOWN_ONLY_VERBS = frozenset({"write", "code", "know", "on", "learn", "run"})
_GERUNDS = {
    "using": "use",
    "writing": "write",
    "coding in": "code in",
    "working with": "work with",
    "working in": "work with",
    "programming in": "program in",
    "developing in": "develop in",
    "developing with": "develop with",
    "learning": "learn",
}
_EN_USE_RE = re.compile(
    r"(?P<subj>\bI(?:'ve|\s+have)?\s+(?:been\s+)?|\bI'm\s+|\bI\s+am\s+|^been\s+|(?:^|,\s*|\band\s+))"
    r"(?P<adv>(?:" + EN_ADVERBS + r"\s+){0,2})"
    r"(?P<verb>use|work\s+with|code\s+in|program\s+in|develop\s+(?:with|in)|write(?:\s+code)?\s+in"
    r"|rely\s+on|am\s+using|'m\s+using|write|code|using|writing|coding\s+in|working\s+(?:with|in)"
    r"|programming\s+in|developing\s+(?:in|with)|know|learning|learn|run"
    # "I'm on Cursor full time", "been on Neovim for 6 years", "I do everything in VS Code"
    r"|on|(?:do|write)\s+(?:everything|all\s+(?:of\s+)?my\s+\w+"
    r"|most\s+of\s+my\s+\w+|my\s+\w+)\s+in)\s+(?=(?P<items>(?:[^.;!?]|\.(?=\d))+))",
    re.I,
)
# "For testing I use jest": the purpose stands before the verb.
_FRONT_PURPOSE_RE = re.compile(r"^\s*for\s+(?P<purpose>(?:[\w\-]+\s*){1,3}?),?\s+I\s", re.I)


# "my editor is Sublime Text", "my test runner is vitest".
_EN_MY_TOOL_RE = re.compile(
    r"\bmy\s+(?:(?:go-to|main|daily|favou?rite|current|primary|usual)\s+)?(?P<kind>editor|ide|shell|terminal"
    r"|browser|os|test\s+runner|package\s+manager|bundler|language|stack)\s+(?:is|are|of\s+choice\s+is)\s+"
    r"(?P<items>(?:[^.;!?]|\.(?=\d))+)",
    re.I,
)
# "most of my pipelines are written in Scala", "I maintain a couple of Rust crates".
_EN_WRITTEN_IN_RE = re.compile(
    r"\bmy\s+(?:[\w\-]+\s+){0,3}?(?:is|are)\s+(?:mostly\s+|all\s+|usually\s+)?(?:written|built|implemented"
    r"|coded|done)\s+(?:in|with|using)\s+(?P<items>[^.;!?]+)",
    re.I,
)
# "I always run the test suite with pytest -x", "we deploy everything via Terraform".
_EN_RUN_WITH_RE = re.compile(
    r"\b(?:I|we)\s+(?P<adv>\w+\s+)?(?:run|test|build|deploy|lint|format|bundle|host|manage|provision)\s+"
    r"[^.;!?]{0,30}?\b(?:with|using|via|through|on)\s+(?P<items>(?:[^.;!?]|\.(?=\d))+)",
    re.I,
)
_EN_MAKES_RE = re.compile(
    r"\bI(?:'ve\s+been|\s+have\s+been|'m|\s+am)?\s+(?:\w+\s+)?(?:maintain(?:ing)?|build(?:ing)?|ship(?:ping)?"
    r"|develop(?:ing)?|creat(?:e|ing)|doing|do|contribut(?:e|ing)\s+to)\b(?P<obj>[^.;!?]{0,60})",
    re.I,
)


# "I've been a Django developer for eight years": the tool in the title.
_EN_ROLE_TECH_RE = re.compile(
    r"\bI(?:'m|\s+am|'ve\s+been|\s+have\s+been|\s+was)\s+(?:an?|the)\s+(?:\w+\s+)?(?P<tech>[\w.+#]+)\s+"
    r"(?:developer|dev|engineer|programmer|consultant|expert|specialist)s?\b",
    re.I,
)


def en_tool_mentions(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    """Tools named in what the user makes or writes with: "I maintain some Rust crates"."""
    m = _EN_MY_TOOL_RE.search(sentence)
    if m is not None and (items := tech_items(ITEM_STOP_RE.sub("", m.group("items")))):
        yield from tool_memories(items, ctx, render=lambda names: f"User uses {join_en(names)}",
                                 main=m.group("kind").lower() == "language")  # fmt: skip
        return
    m = _EN_WRITTEN_IN_RE.search(sentence)
    if m is not None and (items := tech_items(ITEM_STOP_RE.sub("", m.group("items")))):
        yield ctx.mem(f"User works with {join_en(items)}", "skill", IMP_SKILL)
        return
    m = _EN_RUN_WITH_RE.search(sentence)
    if m is not None and (names := [i for i in tech_items(ITEM_STOP_RE.sub("", m.group("items")))
                                    if lookup_tech(i) is not None]):  # fmt: skip
        main = (m.group("adv") or "").strip().lower() in ("mainly", "mostly", "primarily")
        yield from tool_memories(names, ctx, render=lambda n: f"User uses {join_en(n)}", main=main)
        return
    m = _EN_ROLE_TECH_RE.search(sentence)
    if m is not None and (tech := mentioned_tech(m.group("tech"))) is not None:
        yield ctx.mem(f"User works with {tech.name}", "skill", IMP_SKILL, subject=tech.subject)
        return
    m = _EN_MAKES_RE.search(sentence)
    if m is not None and (names := _stack_names(m.group("obj"))):
        yield ctx.mem(f"User works with {join_en(names)}", "skill", IMP_SKILL)


def _render_use(lead: str, purpose: str, names: Sequence[str]) -> str:
    return f"{lead} {join_en(names)}{purpose}"


_AT_WORK_RE = re.compile(
    r"\s*\b(?:at\s+work|at\s+my\s+(?:day\s+)?job|for\s+work|professionally|for\s+a\s+living"
    r"|day[- ]to[- ]day|at\s+the\s+office)\b",
    re.I,
)


def en_tools(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    for m in _EN_USE_RE.finditer(sentence):
        verb = " ".join(m.group("verb").lower().split())
        if verb.startswith(("do ", "write ")):
            verb = "write in" if verb.startswith("write ") else "use"
        subj = m.group("subj").strip()
        if subj.lower() == "been":
            subj = "I've been"
        said_by_user = subj.startswith("I") or bool(re.search(r"\bI\b", sentence[: m.start()]))
        if verb in _GERUNDS:
            # "mostly writing Rust these days": a fragment, about the user only when the user
            # is the subject ("I've been writing") or has just been describing themselves.
            if not (subj.startswith("I") or ctx.about_user() or said_by_user):
                continue
            verb = _GERUNDS[verb]
        elif verb == "on":
            if not re.fullmatch(r"I'm|I\s+am|I've\s+been|I\s+have\s+been", subj):
                continue  # "I'm on it" has no tool; "on" needs "I'm" or "been" before it
        elif not said_by_user or (subj.startswith("I") and subj != "I" and verb != "using"):
            continue  # "Use pytest." is an instruction, not a fact about the user
        raw = m.group("items")
        purpose_m = _PURPOSE_RE.match(raw[len(ITEM_STOP_RE.sub("", raw)) :])
        items = tech_items(ITEM_STOP_RE.sub("", raw))
        if verb in _KNOWN_ONLY_VERBS:
            items = [i for i in items if lookup_tech(i) is not None or is_language(i)]
        if not items:
            continue
        if purpose_m is None:
            purpose_m = _FRONT_PURPOSE_RE.match(sentence)
        adverbs = m.group("adv").split()
        verb3 = _USE_VERBS.get(verb, "uses")
        adv = " ".join(a.lower() for a in adverbs if a.lower() not in {"also", "really", "just"})
        purpose = f" for {purpose_m.group('purpose').strip()}" if purpose_m else ""
        lead = f"User {adv + ' ' if adv else ''}{verb3}"
        # "I write mostly Ruby": the adverb after the verb says the same as before it.
        main = any(a.lower() in {"mainly", "mostly", "primarily"} for a in adverbs) or bool(
            re.match(r"\s*(?:mostly|mainly|primarily)\b", raw, re.I)
        )
        # "I write Go at work": the language of the user's job is their main one.
        main = main or bool(_AT_WORK_RE.search(raw) or _AT_WORK_RE.match(sentence[m.end() :]))
        yield from tool_memories(
            items,
            ctx,
            render=functools.partial(_render_use, lead, purpose),
            main=main,
            switch=any(a.lower() == "now" for a in adverbs),
        )


_EN_SWITCH_RE = re.compile(
    r"(?:\b(?P<who>I|we)(?:'ve|'re|'m|\s+have|\s+are|\s+am)?\s+|^(?:(?:finally|just|so)\s+)?"
    r"(?:gave\s+in\s+and\s+)?)(?:just\s+|recently\s+|finally\s+|now\s+|also\s+)?(?P<verb>switched|moved|migrated|changed"
    r"|converted|went|switching|moving|migrating)\s+(?P<what>(?:the|our|my|all|everything)\b[\w\- ]{0,40}?\s+"
    r"|(?-i:[A-Za-z]{2,12})\s+(?=from\b))?"
    r"(?:(?:over\s+)?(?:from|off(?:\s+of)?|away\s+from)\s+(?P<old>[\w.+#\- ]+?)\s+)?(?:over\s+)?to\s+(?:an?\s+)?(?P<new>[\w.+#\-]+(?-i:\s+[A-Z][\w.+#\-]*)?)"
    r"(?:\s+(?:from|instead\s+of)\s+(?P<old2>[\w.+#\-]+))?",
    re.I,
)
# "we replaced jest with vitest", "I ditched Webpack for Vite".
_EN_REPLACE_RE = re.compile(
    r"\b(?P<who>I|we)(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+)?"
    r"(?:replaced|swapped(?:\s+out)?|dropped|ditched|traded)\s+(?P<old>[\w.+#\-]+(?-i:\s+[A-Z][\w.+#\-]*)?)"
    r"\s+(?:with|for)\s+(?P<new>[\w.+#\-]+(?-i:\s+[A-Z][\w.+#\-]*)?)",
    re.I,
)


def en_switch(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    m = _EN_SWITCH_RE.search(sentence) or _EN_REPLACE_RE.search(sentence)
    if m is None:
        return
    new = tech_items(m.group("new"))
    if not new:
        return
    known = lookup_tech(new[0]) is not None
    if not known and (m.groupdict().get("what") or m.re is _EN_REPLACE_RE):
        return  # "we moved the meeting to Friday": only a known tool makes it a switch
    if not known and (m.re is not _EN_SWITCH_RE or m.group("who") is None):
        return  # without "I"/"we" only a known tool makes a sentence a switch
    if not known and m.group("verb").lower() in ("moved", "moving", "went"):
        return  # "I moved to Berlin" is a location, handled there
    old_raw = m.group("old") or m.groupdict().get("old2") or ""
    old = tech_items(old_raw) if old_raw else []
    since = f" from {join_en(old)}" if old else ""
    verb = m.groupdict().get("verb") or ""
    if verb.lower().endswith("ing") and known:
        # "We're migrating our frontend from Angular to React": under way, a decision taken.
        tech = lookup_tech(new[0])
        yield ctx.mem(f"User is {verb.lower()} to {join_en(new)}{since}", "decision",
                      IMP_DECISION, topic=topic_slug(new[0]),
                      subject=tech.subject if tech else "")  # fmt: skip
        return
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
    # "It's for Ember, my weekend project that tracks hikes": the name, then what it is to the user.
    re.compile(
        r"(?P<name>(?-i:[A-Z])[\w\-]+(?:\s+(?-i:[A-Z])[\w\-]+)?),\s+(?i:my|our)\s+"
        r"(?i:(?:[\w\-]+\s+){0,2}?(?:project|side\s+thing|app|tool|library|game|website|site|bot"
        r"|startup|product|plugin|extension|package))\b"
    ),
    re.compile(
        # "I've got a hackathon project called Tidepool": had, as well as made.
        r"(?i:\b(?:working\s+on|building|developing|making|writing|creating|maintaining|started"
        r"|I(?:'ve|\s+have)\s+got|I\s+have)\s+(?:a|an|my|our|the|this)\s+(?:[\w\-]+\s+){0,3}?"
        r"(?:project|app|application|tool|library|game|website|site|service|startup|product"
        r"|framework|plugin|extension|bot|cli|package)\s+(?:called|named))\s+" + _PNAME
    ),
    re.compile(
        r"\b(?i:my\s+(?:side\s+|current\s+|main\s+)?project,?\s+(?:is\s+)?(?:called\s+)?)" + _PNAME
    ),
    # "I'm building a Flutter app for my gym — it's called Crux Log", "the thing I'm building
    # right now is called Tidepool": the name comes later in the sentence.
    re.compile(
        r"(?i:\b(?:building|working\s+on|developing|making|writing|creating|maintaining)\s+"
        r"(?:(?:a|an|my|our|the|this)\s+[^.;!?]{0,40}?(?:project|app|application|tool|library|game"
        r"|website|site|service|startup|product|framework|plugin|extension|bot|cli|package|platform"
        r"|system)\b|right\s+now|at\s+the\s+moment|currently)[^.;!?]{0,60}?"
        r"(?:it's|it\s+is|is|which\s+is)?\s*(?:called|named))\s+" + _PNAME
    ),
    # "The thing I'm building, Driftwood, is …", "My side project, Lumen, is …": the name in
    # apposition after what it is to the user.
    re.compile(
        r"(?i:\b(?:the|my|our)\s+(?:side\s+)?(?:project|app|application|tool|thing|startup|product"
        r"|library|game|site|website|service|bot|plugin|extension)(?:\s+(?:I'm|I\s+am|we're|we\s+are)"
        r"\s+(?:working\s+on|building|making|developing|writing))?\s*,)\s*"
        r"(?P<name>(?-i:[A-Z])[\w.\-]*(?:\s+(?-i:[A-Z])[\w.\-]*){0,2})\s*,"
    ),
    # "the app I'm working on is a fitness tracker called Stride".
    re.compile(
        r"(?i:\b(?:the|my|our)\s+(?:side\s+)?(?:project|app|application|tool|thing|startup|product"
        r"|library|game|site|website|service|bot|plugin|extension)\s+(?:I'm|I\s+am|we're|we\s+are)\s+"
        r"(?:working\s+on|building|making|developing|writing)\s+(?:now\s+|right\s+now\s+)?is\s+"
        r"[^.;!?]{0,60}?(?:called|named))\s+" + _PNAME
    ),
    # "We're building an internal dashboard called Lighthouse": whatever it is, a thing the
    # user makes and names is their project.
    re.compile(
        r"(?i:\b(?:building|build|working\s+on|work\s+on|developing|develop|making|writing|creating"
        r"|maintaining|maintain|running|run|launched|started)\s+(?:a|an|my|our|the|this)\s+"
        r"(?:[\w\-]+\s+){0,5}?(?:called|named))\s+" + _PNAME
    ),
    # "I'm working on Pebble, a tiny static site generator": a name, then what it is.
    re.compile(
        r"(?i:\b(?:working\s+on|building|developing|maintaining|writing|making)\s+)"
        r"(?P<name>[A-Z][\w.\-]*(?:\s+[A-Z][\w.\-]*){0,2})\s*,\s*(?i:an?|my|our)\s+"
        r"(?i:(?:[\w\-]+\s+){0,4}?(?:project|app|application|tool|library|game|website|site|service"
        r"|startup|product|framework|plugin|extension|bot|cli|package|platform|generator|engine|system"
        r"|compiler|editor|server|client|dashboard|api))\b"
    ),
    # "building a scheduling SaaS for dentists (working title: Toothtime)".
    re.compile(
        r"(?i:\b(?:building|working\s+on|developing|making|writing|creating)\s+(?:a|an|my|our|the)\s+"
        r"[^.;!?()]{0,60}?\(?\s*(?:working\s+title|code\s*name|project\s+name)\s*[:\-]?)\s+"
        + _PNAME
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
        if not name or name.lower() in NOT_ORGS or name.split()[0].lower() in ("a", "an", "the"):
            continue  # "my project is a Flask API" names no project
        if subject_of(sentence[: m.start()]) == "other":
            continue  # "my brother is building an app called Crumbs" is his project
        topic = topic_slug(name)
        ctx.session.project = name
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
        elif found := _stack_names(rest):
            # "— it's our feature-flag service, FastAPI on the backend with Postgres underneath"
            yield ctx.mem(f"{name} uses {join_en(found)}", "project", IMP_PROJECT_DETAIL,
                          topic=topic)  # fmt: skip
        return


# After a project was named: "it's Python, using Typer for the CLI and DuckDB for storage".
_EN_STACK_LEAD_RE = re.compile(
    r"^(?:it's|it\s+is|it\s+uses|it's\s+built\s+(?:with|on|in)|it\s+runs\s+on|the\s+stack\s+is"
    r"|(?:the\s+)?(?:backend|frontend|server|client|ui|api)\s+(?:is|uses))\s+",
    re.I,
)
_EN_STACK_ITEM_RE = re.compile(r"(?P<item>[\w.+#\-]*\w(?:\+\+|#)?)")


def _stack_names(text: str) -> list[str]:
    """The technologies a stack description names, in order, once each."""
    found: list[str] = []
    for m in _EN_STACK_ITEM_RE.finditer(text):
        item = m.group("item")
        tech = mentioned_tech(item)
        if tech is not None and tech.category in ("language", "framework", "platform", "tool"):
            found.append(tech.name if item.lower() == item else item)
        elif tech is None and is_language(item):
            found.append(item)
    return list(dict.fromkeys(found))


def en_project_stack(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    name = ctx.session.project
    lead = _EN_STACK_LEAD_RE.match(sentence)
    if not name or lead is None:
        return
    if found := _stack_names(sentence[lead.end() :]):
        yield ctx.mem(f"{name} uses {join_en(found)}", "project", IMP_PROJECT_DETAIL,
                      subject=stack_key(found), topic=topic_slug(name))  # fmt: skip
