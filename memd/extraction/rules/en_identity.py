"""English: who the user is (name, age, employer, role, city, hometown)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from memd.core.models import ExtractedMemory
from memd.extraction.rules.common import (
    IMP_AGE,
    IMP_CITY,
    IMP_EMPLOYER,
    IMP_HOMETOWN,
    IMP_NAME,
    IMP_ROLE,
    NOT_ORGS,
    PRONOUN_START_RE,
    Ctx,
    article,
    clean,
)
from memd.extraction.rules.tech import TECH

_NAME_WORD = r"[A-Z\u00c0-\u00de][\w'\-]*"
_NOT_NAMES = frozenset(
    """
    american british english chinese japanese korean german french indian canadian australian
    italian spanish russian brazilian mexican vietnamese thai irish scottish dutch swedish polish
    turkish european asian african taiwanese singaporean malaysian filipino indonesian ukrainian
    sorry fine good great okay ok back done here ready sure not just also so still new happy sad
    tired busy free home late early in at on a an the currently now working using trying looking
    going glad curious confused stuck lost retired single married monday tuesday wednesday
    thursday friday saturday sunday tomorrow today tonight bored hungry sick excited new
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
        r"\b(?i:(?:please\s+|just\s+|you\s+can\s+)?call\s+me)\s+(?P<name>" + _NAME_WORD + r")\b"
    ),
    # "I'm Sam" is a name only where an introduction would stand: checked in en_name.
    re.compile(
        r"\b(?:I'm|I\s+am|Im)\s+(?P<name>" + _NAME_WORD + r")"
        r"(?=\s*(?:[,.!;]|$|\s+(?:and|from|here|by)\b))"
    ),
)
_INTRO_PREFIX_RE = re.compile(r"^(?:(?:hi|hello|hey|yo)(?:\s+there)?\b[\s,!]*)?$|[,;:!.]\s*$", re.I)


def en_name(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
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
        r"(?:\s*(?:years?|yrs?)(?:\s+|-)old\b|\s*y/?o\b|(?=\s*(?:[,.!;]|$)))",
        re.I,
    ),
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


_ORG = r"(?P<org>[A-Z0-9][\w&.'\-]*(?:\s+(?:of\s+)?[A-Z0-9&][\w&.'\-]*){0,4})"
_ROLE_STOP = (
    r"(?=\s*(?:[,.;!()]|$|\s+(?:at|in|for|and|since|with|on|where|but|who|from|based|here"
    r"|there|now|currently|today|which|because|so)\b))"
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
    r"\s+(?:at|for)\s+" + _ORG + r"(?:,?\s+as\s+(?:an?\s+|the\s+)?" + _ROLE + r")?"
)
_EN_WORK_AS_RE = re.compile(
    r"\bI(?:\s+(?:currently\s+|now\s+)?work|(?:'m|\s+am)\s+(?:currently\s+)?working)\s+as\s+"
    r"(?:an?\s+|the\s+)?" + _ROLE + r"(?:\s+(?:at|for)\s+" + _ORG + r")?"
)
_EN_ROLE_AT_RE = re.compile(
    r"\bI(?:'m|\s+am)\s+(?:currently\s+|now\s+)?(?:an?|the)\s+(?P<role>(?:[\w+#/&\-]+\s+){0,4}?"
    r"(?i:" + _ROLE_NOUNS + r"))(?:\s+(?:at|for|with)\s+" + _ORG + r")?" + _ROLE_STOP
)
_EN_JOINED_RE = re.compile(
    r"\bI(?:'ve|\s+have)?\s+(?:just\s+|recently\s+)?(?:joined|started\s+at|started\s+working\s+at)\s+"
    + _ORG
    + r"(?:,?\s+as\s+(?:an?\s+|the\s+)?"
    + _ROLE
    + r")?"
)
_EN_EMPLOYED_RE = re.compile(
    r"\b(?:I(?:'m|\s+am)\s+employed\s+(?:at|by)|my\s+(?:current\s+)?employer\s+is)\s+" + _ORG,
    re.I,
)
_EN_ROLE_IS_RE = re.compile(
    r"\bmy\s+(?:job\s+title|title|role|position|job)\s+is\s+(?:an?\s+)?" + _ROLE, re.I
)


def _org(raw: str | None) -> str:
    if not raw:
        return ""
    org = re.sub(r"\s+of$", "", raw.strip()).rstrip(".'")
    if org.lower() in NOT_ORGS or org.lower() in TECH:
        return ""
    return org


def _role(raw: str | None) -> str:
    if not raw:
        return ""
    role = clean(raw)
    if not role or PRONOUN_START_RE.match(role) or len(role.split()) > 6:
        return ""
    return role


def en_work(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    org = role = ""
    for rx in (_EN_WORK_RE, _EN_WORK_AS_RE, _EN_ROLE_AT_RE, _EN_JOINED_RE, _EN_EMPLOYED_RE):
        m = rx.search(sentence)
        if m is None:
            continue
        groups = m.groupdict()
        org = org or _org(groups.get("org"))
        role = role or _role(groups.get("role"))
    if not role:
        m = _EN_ROLE_IS_RE.search(sentence)
        if m:
            role = _role(m.group("role"))
    if org:
        yield ctx.mem(f"User works at {org}", "personal", IMP_EMPLOYER, subject="employer")
    if role:
        yield ctx.mem(f"User works as {article(role)} {role}", "personal", IMP_ROLE, subject="role")


_PLACE = (
    r"(?P<place>[A-Z][\w.'\-]*(?:\s+[A-Z][\w.'\-]*){0,3}"
    r"(?:,\s*[A-Z][\w.'\-]+(?:\s+[A-Z][\w.'\-]+)?)?)"
)
_EN_CITY_RE = re.compile(
    r"\bI(?:\s+(?:currently\s+|now\s+|still\s+)?live|(?:'m|\s+am)\s+(?:currently\s+|now\s+)?"
    r"(?:based|located|living|staying))\s+in\s+" + _PLACE
)
_EN_MOVED_RE = re.compile(
    r"\bI(?:'ve|\s+have)?\s+(?:just\s+|recently\s+)?(?:moved|relocated)\s+to\s+" + _PLACE
)
_EN_HOMETOWN_RE = re.compile(
    r"\b(?:I(?:'m|\s+am)\s+(?:originally\s+)?from|I\s+grew\s+up\s+in|my\s+home\s*town\s+is)\s+"
    + _PLACE
)


def _place(raw: str) -> str:
    place = raw.strip().rstrip(".'")
    first = place.split()[0].lower()
    if first in NOT_ORGS or place.lower() in TECH:
        return ""
    return place


def en_location(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    m = _EN_CITY_RE.search(sentence) or _EN_MOVED_RE.search(sentence)
    if m and (place := _place(m.group("place"))):
        yield ctx.mem(f"User lives in {place}", "personal", IMP_CITY, subject="city")
    m = _EN_HOMETOWN_RE.search(sentence)
    if m and (place := _place(m.group("place"))):
        yield ctx.mem(f"User is from {place}", "personal", IMP_HOMETOWN, subject="hometown")
