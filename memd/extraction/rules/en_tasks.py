"""English: what the user has to do, with a due date when one is given."""

from __future__ import annotations

import re
from collections.abc import Iterator

from memd.core.models import ExtractedMemory
from memd.extraction.rules.common import IMP_TASK, Ctx, clean, third_person, topic_slug
from memd.extraction.rules.dates import due_en, find_date

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_EN_TASK_RES = (
    (
        "remind",
        re.compile(
            # "remind me to ...", not "these photos remind me of that day"
            r"(?:^|\bplease\s+|\bpls\s+|\byou\s+|\band\s+|[,:;]\s*)remind\s+me\s+(?!of\b)"
            r"(?:to\s+|about\s+|that\s+)?(?P<act>[^.;!?]+)",
            re.I,
        ),
    ),
    (
        "remind",
        re.compile(
            r"\b(?:don't|do\s+not)\s+(?:let\s+me\s+)?forget\s+(?:to\s+|about\s+)?(?P<act>[^.;!?]+)",
            re.I,
        ),
    ),
    (
        "todo",
        re.compile(
            r"^\s*(?:TODO|To-?do)(?:\s+(?:for|by)\s+[\w ]{1,20}?)?\s*:?\s+(?P<act>[^.;!?]+)", re.I
        ),
    ),
    (
        # "my manager asked me to finish the review before May 3": work given to the user.
        "asked",
        re.compile(
            r"\b(?:asked|told|wants|needs|reminded|expects)\s+me\s+to\s+(?P<act>[^.;!?]+)", re.I
        ),
    ),
    (
        "need",
        re.compile(
            # a chat message may drop its "I": "Need to renew my passport before June"
            r"(?:\bI|^(?=(?:need|have|gotta|got)\s+to\b))(?P<modal>'ll|\s+will|\s*need\s+to|\s*have\s+to"
            r"|\s+must|\s+should"
            r"|(?:'m|\s+am)\s+going\s+to|\s+plan\s+to|\s+gotta|(?:'ve|\s+have)\s+got\s+to"
            r"|\s*got\s+to|\s+want\s+to|\s*gotta)\s+(?P<act>[^.;!?]+)",
            re.I,
        ),
    ),
    (
        "have",
        re.compile(
            r"\bI(?:'ve|\s+have)\s+(?:got\s+)?(?P<act>(?:an?|my|the)\s+(?:[\w\-]+\s+){0,4}?"
            r"(?:meeting|appointment|interview|exam|test|deadline|call|presentation|demo|flight|trip"
            r"|review|standup|release|launch|class|lecture|dinner|party)s?\b[^.;!?]*)",
            re.I,
        ),
    ),
    (
        # "the launch got pushed to April 1", "the demo is scheduled for Friday", "the beta ships
        # on October 3"
        "when",
        re.compile(
            r"(?P<act>\b(?:my|the|our)\s+(?:[\w\-]+\s+){0,4}?[\w\-]+)\s+"
            r"(?:(?:got\s+|was\s+|has\s+been\s+|is\s+|are\s+|'s\s+)?(?P<verb>moved|pushed|postponed"
            r"|delayed|rescheduled|bumped|scheduled|set|planned|slated)\s+(?:back\s+|out\s+)?"
            r"(?:to|for|until|on)"
            # "The beta ships on October 3", "the release is on June 5": the event's date itself
            r"|(?:ships|ship|lands|launches|goes\s+(?:live|out)|kicks\s+off|is|'s)\s+on"
            r"(?=\s+(?:\w+\s+)?\d)"
            # "the launch is January 15", "the cutover is 3 May": a calendar date as the predicate
            # of the team's event (not "my birthday is March 3")
            r"|(?P<copula>is|'s)(?=\s+(?:" + _MONTH + r"\.?\s+\d{1,2}(?:st|nd|rd|th)?"
            r"|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r")(?:,?\s+\d{4})?"
            r"\s*(?:$|[,.;!:)—–-]|\s(?:so|and|but|which)\b)))\b",
            re.I,
        ),
    ),
    (
        # "I need the audit report finished by December 12", "I still owe finance the Q3 breakdown
        # by Friday", "my manager wants the runbook finished by Thursday": a thing to deliver by a
        # date.
        "deliver",
        re.compile(
            r"(?:\bI|^(?=need|owe)|\b(?:my|our|the)\s+(?:[\w\-]+\s+){0,2}?[\w\-]+)\s+(?:still\s+)?"
            r"(?:need|needs|owe|owes|want|wants|expects?)\s+(?:(?!the|my|our)[\w\-]+\s+)?"
            r"(?P<act>(?:the|my|our|a|an)\s+(?:[\w\-]+\s+){0,6}?[\w\-]+)\s+"
            r"(?P<verb>(?:done|finished|ready|completed|submitted|written|reviewed|sent|delivered)\s+)?"
            r"(?:by|before)\b",
            re.I,
        ),
    ),
    (
        # "the migration script has to be done before Friday", "the export feature has to ship by then"
        "must",
        re.compile(
            r"(?P<act>\b(?:my|the|our|this|that)\s+(?:[\w\-]+\s+){0,5}?[\w\-]+)\s+"
            r"(?P<modal>has\s+to|have\s+to|needs?\s+to|must|should)\s+"
            r"(?P<verb>be\s+(?:done|finished|ready|shipped|merged|deployed|released|submitted|fixed"
            r"|completed|live|out|in)|ship|land|launch|go\s+(?:out|live)|be\s+\w+ed)\b",
            re.I,
        ),
    ),
    (
        "due",
        re.compile(
            r"\b(?P<act>(?:my|the|our)\s+(?:[\w\-]+\s+){0,5}?[\w\-]+)\s+(?:is|are)\s+due\b[^.;!?]*",
            re.I,
        ),
    ),
)


def _modal_phrase(modal: str | None) -> str:
    words = " ".join((modal or "").lower().replace("'", " ").split())
    if words in ("ll", "will", "am going to", "m going to"):
        return "will"
    if words == "plan to":
        return "plans to"
    if words == "want to":
        return "wants to"
    if words == "should":
        return "should"
    return "needs to"


_OWNER_RE = re.compile(r"^(?:my|their|the|our)\s+", re.I)


def _owned(thing: str) -> str:
    """ "their report" → "User's report", "the launch" → "The launch"."""
    if re.match(r"(?:their|our|my)\s", thing, re.I):
        return "User's " + thing.split(None, 1)[1]
    return thing[:1].upper() + thing[1:]


def _strip_span(text: str, span: tuple[int, int]) -> str:
    return re.sub(r"\s{2,}", " ", text[: span[0]] + text[span[1] :])


# Kinds that take a date from another clause of their sentence even after a first task: "the
# report is due Sept 30, which means the export has to ship before then" — but not "I've got a
# flight on Friday, so I'll be offline", which is one task.
_BORROWING = frozenset({"must", "due", "remind", "todo", "asked"})


def en_task(
    sentence: str, ctx: Ctx, question: bool, *, context: str = "", another: bool = False
) -> Iterator[ExtractedMemory]:
    """The task `sentence` states; a date is looked for in `context` (the whole sentence a
    clause comes from) when the clause names none — when `another` task of the sentence came
    first, only for the kinds that say something must be done."""
    for kind, rx in _EN_TASK_RES:
        if question and kind != "remind":
            continue
        m = rx.search(sentence)
        if m is None:
            continue
        if kind == "when" and m.group("copula") and m.group("act").lower().startswith("my"):
            continue  # "my birthday is March 3": the user's date, left to the other readers
        found = find_date(sentence, ctx.today)
        after = find_date(sentence[m.end() :], ctx.today) if kind == "when" else None
        if after is not None:  # "March 3 is off, the cutover moved to March 17": the new date
            found = after[0], (after[1][0] + m.end(), after[1][1] + m.end())
        own_date = found is not None
        if found is None and context and (not another or kind in _BORROWING):
            found = find_date(context, ctx.today)
        if found is None and kind not in ("remind", "todo"):
            continue
        act = m.group("act")
        due = ""
        if found is not None:
            when, span = found
            due = when.isoformat()
            start = m.start("act")
            if own_date and span[0] >= start:
                act = _strip_span(act, (span[0] - start, span[1] - start))
        act = clean(re.sub(r"\s+(?:please|pls|thanks|thank\s+you)$", "", act.strip(), flags=re.I))
        if not act:
            continue
        act = third_person(act)
        suffix = f" (due {due_en(found[0])})" if found is not None else ""
        subject = ""
        if kind == "when":
            if found is None:
                continue
            thing = _OWNER_RE.sub("", act)
            # One current date per event: a later "moved to" replaces the earlier date.
            subject = f"date:{topic_slug(thing)}"
            content = f"{_owned(act)} is scheduled for {due_en(found[0])}"
        elif kind == "must":
            verb = " ".join(m.group("verb").lower().split())
            modal = " ".join(m.group("modal").lower().split())
            content = f"{_owned(act)} {modal} {verb}{suffix}"
            subject = f"date:{topic_slug(_OWNER_RE.sub('', act))}" if found is not None else ""
        elif kind == "deliver":
            verb = " ".join((m.group("verb") or "").lower().split())
            content = f"User has to deliver {' '.join((act, verb)).strip()}{suffix}"
        elif kind == "have":
            content = f"User has {act}{suffix}"
        elif kind == "due":
            thing = _OWNER_RE.sub("", act)
            content = f"User's {thing} is due{suffix}"
            # one date per deadline: "the beta slipped to June 26" replaces it
            subject = f"date:{topic_slug(thing)}" if found is not None else ""
        elif kind == "remind":
            content = f"User wants to be reminded to {act}{suffix}"
        else:
            content = f"User {_modal_phrase(m.groupdict().get('modal'))} {act}{suffix}"
        yield ctx.mem(content, "task", IMP_TASK, due=due, subject=subject)
        return
