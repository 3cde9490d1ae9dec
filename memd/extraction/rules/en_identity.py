"""English: who the user is (name, age, employer, role, city, hometown)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from memd.core.models import ExtractedMemory
from memd.extraction.rules.clauses import strip_lead
from memd.extraction.rules.common import (
    IMP_AGE,
    IMP_CITY,
    IMP_EMPLOYER,
    IMP_FAMILY,
    IMP_HOMETOWN,
    IMP_NAME,
    IMP_ROLE,
    NOT_ORGS,
    PRONOUN_START_RE,
    SPOKEN_LANGUAGES,
    Ctx,
    article,
    clean,
    third_person,
)
from memd.extraction.rules.places import is_place
from memd.extraction.rules.tech import TECH

_NAME_WORD = r"(?:[A-Z\u00c0-\u00de][\w'\-]*|[\u3400-\u9fff]{2,4}(?![\u3400-\u9fff]))"
_NOT_NAMES = frozenset(
    """
    american british english chinese japanese korean german french indian canadian australian
    italian spanish russian brazilian mexican vietnamese thai irish scottish dutch swedish polish
    turkish european asian african taiwanese singaporean malaysian filipino indonesian ukrainian
    sorry fine good great okay ok back done here ready sure not just also so still new happy sad
    tired busy free home late early in at on a an the currently now working using trying looking
    going glad curious confused stuck lost retired single married monday tuesday wednesday
    thursday friday saturday sunday tomorrow today tonight bored hungry sick excited new
    same everyone everybody nobody somebody someone all both neither either me us nothing
    something anything everything there this that it
    """.split()
)
_EN_NAME_RES = (
    re.compile(
        r"\b(?i:my\s+name\s+is|my\s+name's|name's)\s+(?P<name>"
        + _NAME_WORD
        + r"(?:\s+"
        + _NAME_WORD
        + r"){0,2})"
    ),
    re.compile(
        r"\b(?i:(?:please\s+|just\s+|you\s+can\s+)?call\s+me|I\s+go\s+by)\s+(?P<name>"
        + _NAME_WORD
        + r")\b"
    ),
    # "I'm Sam" is a name only where an introduction would stand: checked in en_name.
    re.compile(
        r"\b(?:I'm|I\s+am|Im)\s+(?P<name>" + _NAME_WORD + r")"
        r"(?=\s*(?:[,.!;—–]|$|\s+-\s|\s+\((?:she|he|they)/|\s+(?:and|from|here|by|btw)\b))"
    ),
    # "Hannah here — ...", "hi, this is Sam from Acme": introductions at the start of a message.
    re.compile(
        r"^(?i:(?:hi|hello|hey)\b[\s,!]*)?(?P<name>" + _NAME_WORD + r")\s+here"
        r"(?=\s*(?:[,.!;:—–]|$|\s-\s))"
    ),
    re.compile(
        r"^(?i:(?:hi|hello|hey)\b[\s,!]*)?(?i:this\s+is)\s+(?P<name>" + _NAME_WORD + r")"
        r"(?=\s*(?:[,.!;—–]|$|\s+(?:from|at|here)\b))"
    ),
)
_INTRO_PREFIX_RE = re.compile(r"^(?:(?:hi|hello|hey|yo)(?:\s+there)?\b[\s,!]*)?$|[,;:!.]\s*$", re.I)


# Once a name was given, a name asked for in its place restates it: "Call me Alex." …
# "Actually, I'd prefer Alexandra", "use Alexandra instead".
_EN_NAME_AGAIN_RE = re.compile(
    r"^(?:(?i:I(?:'d|\s+would)?\s+(?:much\s+)?(?:prefer|rather)|(?:please\s+)?(?:use|go\s+with)))\s+"
    r"(?P<name>" + _NAME_WORD + r"(?:\s+" + _NAME_WORD + r")?)"
    r"(?=\s*(?:[,.!;—–]|$|\s-\s|\s+(?i:instead|please|actually|now|then|thanks|from\s+now\s+on"
    r"|if\s+that's\s+ok)\b))"
)


# … or corrects it: "everyone calls me Bob", "Bob is fine", "it's Catherine with a C".
_EN_NAME_FIX_RE = re.compile(
    r"^(?:(?i:(?:everyone|everybody|people|most\s+people|my\s+friends|folks|they\s+all)\s+"
    r"calls?\s+me)\s+(?P<name>" + _NAME_WORD + r")(?=\s*(?:[,.!;—–]|$|\s+(?i:anyway|now)\b))"
    r"|(?P<fine>" + _NAME_WORD + r")\s+(?i:is\s+(?:fine|ok|okay|better|good))\b"
    # "Honestly just Kate": the name alone, said as the short form to use
    r"|(?i:just|simply)\s+(?P<just>"
    + _NAME_WORD
    + r")(?=\s*(?:[,.!;—–]|$|\s+(?i:please|is\s+fine)\b))"
    r"|(?i:it's|it\s+is)\s+(?P<spelt>" + _NAME_WORD + r")(?=\s+(?i:with\s+an?\s+\w\b|not\s)))"
)
_PIECES_RE = re.compile(r"\s*(?:[,;:—–]|\s-\s)\s*")


def restated_name(clause: str, ctx: Ctx) -> str:
    """The name a clause asks to be called by, when the session already has the user's name."""
    if not ctx.session.named:
        return ""
    for piece in _PIECES_RE.split(clause):
        m = _EN_NAME_AGAIN_RE.match(strip_lead(piece)) or _EN_NAME_FIX_RE.match(strip_lead(piece))
        if m is None:
            continue
        name = next(g for g in m.groups() if g)
        if name.split()[0].lower() not in _NOT_NAMES and name.lower() not in TECH:
            return name
    return ""


# "my pronouns are they/them", "I go by she/her", "I use he/him pronouns", "Alex (she/her)".
_EN_PRONOUNS_RE = re.compile(
    r"(?:\b(?:my\s+pronouns\s+are|I\s+(?:go\s+by|use))\s+|(?-i:\b[A-Z][a-z]+)\s+\()"
    r"(?P<p>(?:she|he|they|xe|ze|it)/(?:her|hers|him|his|them|theirs|xem|zir|its)"
    r"(?:/(?:hers|his|theirs|xyrs|zirs))?)\b(?:\s+pronouns\b)?",
    re.I,
)


def en_name(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    """The user's name (and the pronouns they give with it or alone)."""
    if m := _EN_PRONOUNS_RE.search(sentence):
        pronouns = m.group("p").lower()
        yield ctx.mem(f"User's pronouns are {pronouns}", "personal", IMP_NAME, subject="pronouns")
    if again := restated_name(sentence, ctx):
        yield ctx.mem(f"User's name is {again}", "personal", IMP_NAME, subject="name")
        return
    for rx in _EN_NAME_RES:
        for m in rx.finditer(sentence):
            name = m.group("name").strip()
            if m.group(0).lower().startswith(("i'm", "i ", "im")) and not _INTRO_PREFIX_RE.search(
                sentence[: m.start()].strip()
            ):
                continue
            first = name.split()[0].lower()
            if first in _NOT_NAMES or name.lower() in TECH:
                continue
            yield ctx.mem(f"User's name is {name}", "personal", IMP_NAME, subject="name")
            return


_EN_AGE_RES = (
    re.compile(
        r"\b(?:I'm|I\s+am|Im)\s+(?P<age>\d{1,3})"
        r"(?:\s*(?:years?|yrs?)(?:\s+|-)old\b|\s*y/?o\b"
        r"|(?=\s*(?:[,.!;]|$|\s+(?:and|but|so|btw|now|this\s+year|as\s+of|since)\b)))",
        re.I,
    ),
    re.compile(r"\bI\s+(?:just\s+)?turned\s+(?P<age>\d{1,3})\b", re.I),
    re.compile(r"\bmy\s+age\s+is\s+(?P<age>\d{1,3})\b", re.I),
    re.compile(r"\b(?:I'm|I\s+am)\s+an?\s+(?P<age>\d{1,3})[- ]years?[- ]old\b", re.I),
)


def en_age(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    for rx in _EN_AGE_RES:
        m = rx.search(sentence)
        if m and 3 <= int(m.group("age")) <= 120:
            age = int(m.group("age"))
            yield ctx.mem(f"User is {age} years old", "personal", IMP_AGE, subject="age")
            return


# Capitalised words even inside a pattern compiled with re.I ("started at Stripe this week").
_ORG = (
    r"(?-i:(?P<org>[A-Z0-9][\w&.'\-]*(?:\s+(?:of\s+)?[A-Z0-9&][\w&.'\-]*){0,4}"
    r"|[\u3400-\u9fff]{2,8}(?![\u3400-\u9fff])))"
)
# "for a small fintech startup called Paystack": the organisation is the name after "called".
_CALLED = r"(?:(?i:an?\s+(?:[\w\-]+\s+){0,4}?(?:called|named))\s+)?"
_ROLE_STOP = (
    r"(?=\s*(?:[,.;!()]|$|\s+(?:at|in|for|and|since|with|on|where|but|who|from|based|here"
    r"|there|now|currently|today|which|because|so|working|doing|building|mostly|mainly|focusing"
    r"|been|by)\b))"
)
_ROLE = r"(?P<role>[A-Za-z][\w+#/&\-]*(?:\s+[\w+#/&\-]+){0,5}?)" + _ROLE_STOP
_ROLE_NOUNS = (
    r"(?:engineer|developer|dev|programmer|designer|manager|scientist|analyst|architect|lead"
    r"|director|intern|consultant|researcher|student|teacher|professor|founder|co-founder|cto|ceo"
    r"|cfo|coo|vp|head|officer|specialist|administrator|admin|writer|editor|artist|doctor|nurse"
    r"|lawyer|accountant|marketer|product owner|pm|sre|devops|tester|qa|freelancer|contractor"
    r"|owner|entrepreneur|maintainer|technician|journalist|economist|physicist|chemist"
    r"|mathematician|statistician|librarian|musician|photographer|recruiter)s?"
)
_EN_WORK_RE = re.compile(
    r"(?:\bI\s+(?:currently\s+|now\s+|still\s+)?work|\bI(?:'m|\s+am)\s+(?:currently\s+|now\s+)?working"
    r"|\bI(?:'ve|\s+have)\s+been\s+working|(?:^|(?<=,\s)|(?<=\band\s))(?:currently\s+|now\s+)?working)"
    r"(?:\s+(?:remotely|full[\s-]time|part[\s-]time|freelance|mostly|mainly))?"
    # "for the NHS", "for the Guardian": a name after "the".
    r"\s+(?:at|for)\s+(?:the\s+(?-i:(?=[A-Z])))?"
    + _CALLED
    + _ORG
    + r"(?:,?\s+as\s+(?:an?\s+|the\s+)?"
    + _ROLE
    + r")?"
)
_EN_WORK_AS_RE = re.compile(
    r"\bI(?:\s+(?:currently\s+|now\s+)?work|(?:'m|\s+am)\s+(?:currently\s+)?working)\s+as\s+"
    r"(?:an?\s+|the\s+)?" + _ROLE + r"(?:\s+(?:at|for)\s+" + _ORG + r")?"
)
_EN_ROLE_AT_RE = re.compile(
    r"\bI(?:'m|\s+am|'ve\s+been|\s+have\s+been)\s+(?:currently\s+|now\s+)?(?:an?|the)\s+(?P<role>(?:[\w+#/&\-]+\s+){0,4}?"
    r"(?i:" + _ROLE_NOUNS + r"))(?:\s+(?:at|for|with)\s+" + _ORG + r")?" + _ROLE_STOP
)
_EN_JOINED_RE = re.compile(
    r"\bI(?:'ve|\s+have)?\s+(?:just\s+|recently\s+)?(?:joined|started\s+at|started\s+working\s+at)\s+"
    + _CALLED
    + _ORG
    + r"(?:,?\s+as\s+(?:an?\s+|the\s+)?"
    + _ROLE
    + r")?"
)
# "I lead the platform team at Atlassian", "I'm on the payments team at Stripe".
_EN_TEAM_RE = re.compile(
    r"\bI(?:'m|\s+am)?\s+(?:currently\s+|now\s+)?(?P<verb>lead|manage|run|head|on|in|work\s+on"
    r"|part\s+of)\s+(?:the\s+|a\s+|our\s+)?(?P<team>(?:[\w\-]+\s+){0,3}?)team\b"
    r"(?:\s+(?:at|for|in)\s+" + _ORG + r")?"
)
# "I start at Datadog on Monday", "I left Deloitte and joined Canva".
_EN_START_RE = re.compile(
    r"(?:\bI(?:'ll|'m|\s+will|\s+am|'ve|\s+have)?\s+|\band\s+|,\s*|^)(?:just\s+|recently\s+|then\s+)?"
    r"(?:start|starting|started|joined|join)\s+(?:(?:a\s+new\s+(?:job|role|position)|work(?:ing)?)\s+)?"
    r"(?:at|with)?\s*" + _ORG,
    re.I,
)
# Without a subject, right after the user introduced themselves: "backend engineer at Stripe".
_EN_ROLE_FRAGMENT_RE = re.compile(
    r"^(?:(?:an?|the)\s+)?(?P<role>(?:[\w+#/&\-]+\s+){0,3}?(?i:" + _ROLE_NOUNS + r"))"
    r"(?:\s+(?:at|@|for)\s+" + _ORG + r")?" + _ROLE_STOP
)
# "I do mostly data engineering": a line of work stated without a title.
_EN_FIELD_RE = re.compile(
    r"\bI\s+(?:mostly\s+|mainly\s+|primarily\s+)?do\s+(?:mostly\s+|mainly\s+|primarily\s+)?"
    r"(?P<field>(?:[\w\-]+\s+){0,2}?(?:engineering|development|design|research|science|devops"
    r"|security|analytics|frontend|backend|front-end|back-end|full-stack|fullstack|infra"
    r"|infrastructure|consulting|ML|AI|QA|testing|ops))\b",
    re.I,
)
# "I teach computer science at a high school": the subject taught is the job.
_EN_TEACH_RE = re.compile(
    r"\bI\s+(?:currently\s+|now\s+)?(?:teach|lecture\s+in|lecture)\s+(?P<what>[\w\- ]{2,40}?)"
    r"(?=\s+(?:at|in|to|for)\b|\s*[,.;!]|$)"
)
# "I'm now at a startup called Linear", "I'm now at Stripe": where the user works now.
_EN_NOW_AT_RE = re.compile(
    r"\bI(?:'m|\s+am)\s+(?:now\s+at\s+(?:a\s+\w+\s+(?:called|named)\s+)?|(?:now\s+)?at\s+(?:a|an)\s+"
    r"(?:startup|company|firm|agency|bank|studio|consultancy|lab|scale-?up|nonprofit)\s+(?:called"
    r"|named)\s+)" + _ORG
)
# "I'm in charge of the data platform at Klarna": a responsibility at an organisation.
_EN_CHARGE_AT_RE = re.compile(
    r"\bI(?:'m|\s+am)\s+(?:currently\s+|now\s+)?(?i:in\s+charge\s+of|responsible\s+for|leading|running"
    r"|heading|managing)\s+[^.;!?,]{1,40}?\s+at\s+" + _ORG
)
_EN_EMPLOYED_RE = re.compile(
    r"\b(?:I(?:'m|\s+am)\s+employed\s+(?:at|by)|my\s+(?:current\s+)?employer\s+is)\s+" + _ORG,
    re.I,
)
# "Got promoted to senior developer last week": the new title replaces the old one.
_EN_PROMOTED_RE = re.compile(
    r"\b(?i:promoted\s+to)\s+(?:an?\s+|the\s+)?(?P<role>(?:[\w+#/&\-]+\s+){0,3}?(?i:"
    + _ROLE_NOUNS
    + r"))\b"
)
_EN_ROLE_IS_RE = re.compile(
    r"\bmy\s+(?:job\s+title|title|role|position|job)\s+is\s+(?:an?\s+)?" + _ROLE, re.I
)


def _org(raw: str | None) -> str:
    if not raw:
        return ""
    org = re.sub(r"\s+of$", "", raw.strip()).rstrip(".'")
    tech = TECH.get(org.lower())
    # Platforms and apps are also companies ("I work for GitLab"); a language is not.
    if org.lower() in NOT_ORGS or org.lower() in SPOKEN_LANGUAGES:
        return ""
    if tech is not None and tech.category not in ("platform", "app"):
        return ""
    if org.split()[0].lower() in NOT_ORGS or org[:1].islower() or org[:1].isdigit():
        return ""  # "started the migration", "start at 9": a name is not lower case nor a time
    return org


# A degree or a quality is no role: "my job is really stressful", "my job is boring".
_QUALITY_RE = re.compile(
    r"^(?:(?:really|very|so|too|quite|pretty|super|kind\s+of|kinda|a\s+bit|a\s+lot|extremely"
    r"|incredibly|fairly|rather|somewhat|way|honestly|totally|absolutely|not|mostly|more|less"
    r"|much|insanely|crazy|seriously)\b|[a-z]+(?:ful|ing|ous|ive|ible|able|less|y)$)",
    re.I,
)


def _role(raw: str | None) -> str:
    if not raw:
        return ""
    role = re.sub(r"^(?:only|sole|one)\s+", "", clean(raw), flags=re.I)
    if not role or PRONOUN_START_RE.match(role) or len(role.split()) > 6:
        return ""
    if _QUALITY_RE.match(role):
        return ""
    return role


def en_work(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    org = role = ""
    for rx in (_EN_WORK_RE, _EN_WORK_AS_RE, _EN_ROLE_AT_RE, _EN_JOINED_RE, _EN_EMPLOYED_RE,
               _EN_CHARGE_AT_RE, _EN_NOW_AT_RE):  # fmt: skip
        m = rx.search(sentence)
        if m is None:
            continue
        groups = m.groupdict()
        org = org or _org(groups.get("org"))
        role = role or _role(groups.get("role"))
    m = _EN_TEAM_RE.search(sentence)
    if m is not None and (team := m.group("team").strip()):
        verb = " ".join(m.group("verb").lower().split())
        lead = {"lead": "leads", "manage": "manages", "run": "runs", "head": "heads"}.get(verb)
        role = role or (f"{lead} the {team} team" if lead else f"is on the {team} team")
        org = org or _org(m.group("org"))
    if not org and (m := _EN_START_RE.search(sentence)) is not None:
        org = _org(m.group("org"))
    if not role and (m := _EN_TEACH_RE.search(sentence)) is not None:
        role = "teaches " + m.group("what").strip()
    if not role and (m := _EN_FIELD_RE.search(sentence)) is not None:
        role = "does " + " ".join(m.group("field").split())
    if not role and ctx.about_user():
        m = _EN_ROLE_FRAGMENT_RE.match(sentence)
        if m is not None:
            role = _role(m.group("role"))
            org = org or _org(m.group("org"))
    if not role and (m := _EN_PROMOTED_RE.search(sentence)) is not None:
        role = _role(m.group("role"))
    if not role:
        m = _EN_ROLE_IS_RE.search(sentence)
        if m:
            role = _role(m.group("role"))
    if org:
        yield ctx.mem(f"User works at {org}", "personal", IMP_EMPLOYER, subject="employer")
    if role.startswith(("leads ", "manages ", "runs ", "heads ", "is on ", "does ", "teaches ")):
        yield ctx.mem(f"User {role}", "personal", IMP_ROLE, subject="role")
    elif role:
        yield ctx.mem(f"User works as {article(role)} {role}", "personal", IMP_ROLE, subject="role")


# Capitalised words, in a pattern compiled with re.I too ("moved to Vancouver in 2022").
_PLACE = (
    r"(?-i:(?P<place>[A-Z][\w.'\-]*(?:\s+[A-Z][\w.'\-]*){0,3}"
    r"(?:,\s*[A-Z][\w.'\-]+(?:\s+[A-Z][\w.'\-]+)?)?"
    # a place written in Chinese in an English sentence: "based in 上海"
    r"|[\u3400-\u9fff]{2,8}(?![\u3400-\u9fff])))"
)
_EN_CITY_RE = re.compile(
    r"\bI(?:\s+(?:currently\s+|now\s+|still\s+)?live|(?:'m|\s+am)\s+(?:currently\s+|now\s+)?"
    r"(?:based|located|living|staying))\s+(?:in|(?:just\s+)?(?:outside(?:\s+of)?|near|around"
    r"|close\s+to))\s+" + _PLACE
)
_EN_MOVED_RE = re.compile(
    r"\b(?:I|we)(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+)?(?:moved|relocated)"
    r"(?:\s+(?:back|over|out))?(?:\s+from\s+[A-Z][\w.'\-]*(?:\s+[A-Z][\w.'\-]*)?)?\s+to\s+"
    + _PLACE,
    re.I,
)
# "I'm in Austin, so ...": a bare place after "in" must end the clause to count.
_EN_IN_PLACE_RE = re.compile(
    r"\b(?:I(?:'m|\s+am)|we(?:'re|\s+are))\s+(?:currently\s+|now\s+|still\s+)?"
    r"(?:in|out\s+of|based\s+out\s+of)\s+"
    + _PLACE
    + r"(?=\s*(?:[,.;!—–]|$|\s+(?:so|and|but|now)\b|\s+(?:for\s+(?:the\s+foreseeable\s+future|now"
    r"|good|the\s+time\s+being)|these\s+days|nowadays|at\s+the\s+moment|right\s+now)\b))"
)
# Words that follow "I'm in" without naming a place.
_NOT_PLACES = frozenset(
    """
    january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday q1 q2 q3 q4 pst est utc cet gmt
    """.split()
)
_EN_HOMETOWN_RE = re.compile(
    r"\b(?:I(?:'m|\s+am)\s+(?:originally\s+)?from|I\s+grew\s+up\s+in|my\s+home\s*town\s+is)\s+"
    + _PLACE
)


def _place(raw: str) -> str:
    place = re.sub(r"\s+(?:Time|Timezone|Office|HQ)$", "", raw.strip().rstrip(".'"))
    first = place.split()[0].lower()
    if first in NOT_ORGS or place.lower() in TECH:
        return ""
    return place


# "I teach at a high school in Leeds", "I work for a startup in Berlin".
_EN_WORKPLACE_IN_RE = re.compile(
    r"\bI\b[^.;!?]{0,60}?\b(?:at|for|run|own|founded|started|co-founded)\s+(?:a|an|the|my)\s+"
    r"[\w\- ]{1,30}?\s+in\s+" + _PLACE
)
# "We're a small team in Nairobi".
_EN_WE_IN_RE = re.compile(
    r"\b(?:I'm|I\s+am|(?i:we're|we\s+are))\s+(?:a|an|the)\s+[\w\- ]{1,30}?\s+(?:in|from)\s+"
    + _PLACE
)
# "..., based in Lisbon" right after the user said who they are.
_EN_PLACE_FRAGMENT_RE = re.compile(
    r"^(?:(?:and|currently|now)\s+|(?:an?|the)\s+[\w\- ]{1,30}?\s+)?(?:based|living|located"
    r"|working|coding)\s+(?:in|out\s+of|from)\s+" + _PLACE
)


# "I'm working from Berlin", "I work remotely out of Lisbon": where the user works from is where
# they are, when it is a known place (not "from home", "from Monday").
_EN_WORKING_FROM_RE = re.compile(
    r"\bI(?:'m|\s+am)?\s+(?:currently\s+|now\s+|mostly\s+)?(?:working|work|coding)"
    r"\s+(?:remotely\s+|remote\s+)?(?:from|out\s+of)\s+" + _PLACE
)


def en_location(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    m = _EN_CITY_RE.search(sentence) or _EN_MOVED_RE.search(sentence)
    if m is None and (w := _EN_WORKING_FROM_RE.search(sentence)) and is_place(w.group("place")):
        m = w
    if m is None and ctx.about_user():
        m = _EN_PLACE_FRAGMENT_RE.match(sentence)
        if m is not None and m.group("place").split()[0].lower() in _NOT_PLACES:
            m = None  # "working from Monday"
    if m is None:
        m = _EN_WORKPLACE_IN_RE.search(sentence) or _EN_WE_IN_RE.search(sentence)
    if m is None and (m := _EN_IN_PLACE_RE.search(sentence)) is not None:
        m = None if m.group("place").split()[0].lower() in _NOT_PLACES else m
    if m and (place := _place(m.group("place"))):
        yield ctx.mem(f"User lives in {place}", "personal", IMP_CITY, subject="city")
    m = _EN_HOMETOWN_RE.search(sentence)
    if m and (place := _place(m.group("place"))):
        yield ctx.mem(f"User is from {place}", "personal", IMP_HOMETOWN, subject="hometown")


_FAMILY = (
    r"(?:wife|husband|partner|spouse|fianc[eé]e?|girlfriend|boyfriend|daughter|son|kids?|child"
    r"|children|baby|toddler|twins|mom|mum|mother|dad|father|parents|brother|sister|dog|cat)"
)
# Who depends on the user: what happens to them is part of the user's life ("My daughter is
# three"); an adult relation's news is theirs unless the sentence says what it means for the
# user ("…, so I'm offline on Fridays").
_DEPENDANT_RE = re.compile(
    r"\b(?:daughter|son|kids?|child|children|baby|toddler|twins|pregnant|dog|cat)\b", re.I
)
_BEARS_ON_USER_RE = re.compile(r"\bso\s+(?:I|I'm|I'll|my|we)\b", re.I)
# "My daughter just started kindergarten": the user's family is part of who they are.
_EN_FAMILY_RE = re.compile(
    r"^(?:(?:so|and|also|btw|fyi|oh)\s+)?my\s+(?P<who>(?:(?:little|older|younger|eldest|youngest"
    r"|oldest|new(?:born)?|two|three)\s+)?"
    + _FAMILY
    + r")\s+(?P<rest>(?:just\s+|recently\s+|finally\s+)?"
    r"(?:is|are|was|were|has|had|just|started|starts|turned|turns|got|gets|goes|go|was\s+born"
    r"|arrived|moved|graduated|lives|live|works|passed|'s)\b[^.;!?]*)",
    re.I,
)


_EN_WITH_FAMILY_RE = re.compile(
    r"^(?:(?:so|and|also|btw|fyi|oh)\s+)?my\s+(?P<who>" + _FAMILY + r")\s+and\s+I\s+"
    r"(?P<rest>(?:just\s+|recently\s+|finally\s+)?[a-z]+ed\b[^.;!?]*)",
    re.I,
)


# "My cat's name is Biscuit", "my daughter is called Mia".
_EN_FAMILY_NAME_RE = re.compile(
    r"\bmy\s+(?P<who>" + _FAMILY + r")(?:'s\s+name\s+is|\s+is\s+(?:called|named))\s+"
    r"(?-i:(?P<name>[A-Z][\w'\-]*))",
    re.I,
)


# Where a relation works or lives, what they use or think, where they moved and whom they work
# for: their facts ("my wife works at Google", "my brother lives in Leeds"), not the user's.
_EN_THEIRS_RE = re.compile(
    r"(?:(?:just|recently|now|still|also)\s+)*(?:works?|lives?|'s\s+(?:working|living)|is\s+(?:working|living)"
    r"|uses?|says?|said|thinks?|swears|is\s+(?:an?\s+)?(?:[\w\-]+\s+){0,2}"
    + _ROLE_NOUNS
    # their own switches and diets: "my sister just went vegan", "my dad switched to Linux"
    + r"|switched|(?:went|is|'s|became)\s+(?:fully\s+|now\s+)?(?:vegan|vegetarian|pescatarian"
    r"|keto|gluten-free)"
    # and where they moved, whom they work for, their career: "my brother just moved to Toronto"
    r"|moved|relocated|(?:is|'s)\s+moving|retired|joined|left|quit|got\s+(?:promoted|hired"
    r"|a\s+(?:new\s+)?job)|started\s+(?:at|working|a\s+(?:new\s+)?job))\b",
    re.I,
)


def en_family(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    n = _EN_FAMILY_NAME_RE.search(sentence)
    if n is not None:
        who = n.group("who").lower()
        key = "pet" if who in ("dog", "cat") else ""  # one pet changed is one key (`subjects`)
        yield ctx.mem(f"User's {who} is called {n.group('name')}", "personal", IMP_FAMILY,
                      subject=key)  # fmt: skip
        return
    w = _EN_WITH_FAMILY_RE.match(sentence)
    if w is not None:
        rest = clean(re.split(r",?\s+(?:so|but|because|which)\b", w.group("rest"))[0])
        who = w.group("who").lower()
        yield ctx.mem(f"User and their {who} {third_person(rest)}", "personal", IMP_FAMILY)
        return
    m = _EN_FAMILY_RE.match(sentence)
    if m is None or _EN_THEIRS_RE.match(m.group("rest")):
        return
    if not _DEPENDANT_RE.search(sentence) and not _BEARS_ON_USER_RE.search(sentence):
        return  # "My mom turned 70 yesterday": an adult's news is theirs, not a fact of the user
    rest = clean(re.split(r",?\s+(?:so|but|because|which|and\s+I)\b", m.group("rest"))[0])
    if len(rest.split()) < 2:
        return
    yield ctx.mem(f"User's {m.group('who').lower()} {third_person(rest)}", "personal", IMP_FAMILY)
