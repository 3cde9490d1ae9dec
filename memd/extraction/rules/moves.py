"""A move of the user's read by its shape: where they went, whatever the words around it.

People tell a new job, place, role or team in shapes the identity rules do not read: a clause
that opens with "since" ("Since starting at Monzo in September I …") or a bare "Started at Monzo", "joined Monzo" in a sentence that goes on about "they", someone else as the
grammatical subject ("they made me head of mobile engineering"), a bare new value after one
the session holds ("And now Barcelona", "as of this week I'm on fraud detection"), 自从调到合肥
分公司, 下周一去快手报到, 今年转岗做产品经理了. The destination's class says which key it fills:
a place (the place gazetteer) → `city`, an organisation → `employer`, a role → `role`, a team
→ `team` (only when the session holds one). A question, a hypothetical, a plan with "if", or a
relation as the subject gives nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memd.core.models import ExtractedMemory
from memd.extraction.rules.clauses import someone_else
from memd.extraction.rules.common import (
    IMP_CITY,
    IMP_EMPLOYER,
    IMP_ROLE,
    SPOKEN_LANGUAGES,
    ZH_NOT_ORG_RE,
    Ctx,
    article,
    is_question,
)
from memd.extraction.rules.places import is_place
from memd.extraction.rules.tech import lookup_tech
from memd.extraction.rules.zh_clauses import RELATION_RE

_NAME = r"(?-i:[A-Z])[A-Za-z0-9&.\-]*(?:\s+(?-i:[A-Z])[A-Za-z0-9&.\-]*){0,2}"
_NOT_ORG = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march april may"
    " june july august september october november december noon".split()
)
_EN_UNSURE_RE = re.compile(
    r"\b(?:if|would|might|maybe|considering|thinking|hope|want|plan|planning|my\s+(?:wife|husband"
    r"|partner|brother|sister|friend|mom|dad|mum))\b",
    re.I,
)
# "Started at Wealthsimple on Monday", "I joined Stripe in May": an organisation the user joined
# ("joined the SRE team" is a team, not an employer).
_EN_STARTED_AT_RE = re.compile(
    r"\b(?:(?:starting|started)\s+(?:at|with)|joined|joining)\s+(?P<org>" + _NAME + r")"
    r"(?!\s+(?:team|squad|group|org|department|crew|project|channel|call|meeting)\b)",
    re.I,
)
_EN_MADE_ME_RE = re.compile(
    r"\b(?:(?:made|promoted|named|appointed|bumped)\s+me(?:\s+up)?|(?:moved|switched|transferred)\s+me\s+"
    r"(?:over\s+|across\s+)?to)\s+(?:the\s+|a\s+|an\s+|to\s+)?"
    r"(?P<role>[a-z][a-z\- ]{2,40}?)(?=\s+(?:last|this|in|at|on|as\s+of|yesterday|today)\b|[,.;]|$)",
    re.I,
)
_EN_NOW_ON_RE = re.compile(
    r"\bI'm\s+(?:now\s+)?on\s+(?:the\s+)?(?P<team>[a-z][a-z\- ]{2,30}?)(?:\s+(?:team|squad))?"
    r"(?:\s+now)?(?=[,.;]|$)",
    re.I,
)
# "I transferred to the identity squad": a team the user moved to, whatever the session holds.
_EN_MOVED_TO_TEAM_RE = re.compile(
    r"\bI(?:'ve|\s+have|\s+just|\s+recently)?\s+(?:transferred|moved|switched|rotated|been\s+moved"
    r"|got\s+moved)\s+(?:over\s+|across\s+)?to\s+(?:the\s+)?(?P<team>[a-z][a-z\- ]{1,30}?)\s+"
    r"(?P<unit>team|squad|group|pod|tribe)\b",
    re.I,
)
_EN_AND_NOW_RE = re.compile(
    r"^(?i:and\s+|but\s+)?(?i:now)\s+(?:it's\s+|I'm\s+in\s+)?(?P<place>" + _NAME + r")\b"
)


def en_moves(sentence: str, ctx: Ctx) -> Iterator[tuple[str, ExtractedMemory]]:
    """The user's moves an English sentence states (see the module), with their text."""
    text = sentence.strip().rstrip(".!")
    if not text or is_question(text) or _EN_UNSURE_RE.search(text):
        return
    held = ctx.session.values
    m = _EN_STARTED_AT_RE.search(text)
    if m is not None and is_org(m.group("org")) and not _someone_elses(text, m.start()):
        yield m.group(0), ctx.mem(f"User works at {m.group('org')}", "personal", IMP_EMPLOYER,
                                  subject="employer")  # fmt: skip
    m = _EN_MADE_ME_RE.search(text)
    if m is not None:
        role = m.group("role").strip()
        yield m.group(0), ctx.mem(f"User works as {article(role)} {role}", "personal", IMP_ROLE,
                                  subject="role")  # fmt: skip
    m = _EN_MOVED_TO_TEAM_RE.search(text)
    if m is not None:
        team = f"{m.group('team').strip()} {m.group('unit').lower()}"
        yield m.group(0), ctx.mem(f"User is on the {team}", "personal", IMP_ROLE, subject="team")
    m = _EN_NOW_ON_RE.search(text)
    if m is not None and "team" in held:
        team = m.group("team").strip()
        yield m.group(0), ctx.mem(f"User is on the {team} team", "personal", IMP_ROLE,
                                  subject="team")  # fmt: skip
    m = _EN_AND_NOW_RE.match(text)
    if m is not None and "city" in held and is_place(m.group("place")):
        place = m.group("place")
        yield m.group(0), ctx.mem(f"User lives in {place}", "personal", IMP_CITY, subject="city")


def _someone_elses(text: str, at: int) -> bool:
    """Whether the words of a sentence before `at` make someone else its subject ("My girlfriend
    just joined Spotify", "A former colleague, Rahul, just joined Canva"; not "Started at
    Wealthsimple on Monday", "Heads up, I joined Stripe")."""
    before = text[:at].strip()
    return bool(before) and someone_else(before + " joined")


def is_org(name: str) -> bool:
    """Whether a capitalised name can be an employer: not a day, a month, a place, a language or
    a technology."""
    low = name.casefold()
    return not (low in _NOT_ORG or low in SPOKEN_LANGUAGES or is_place(name) or lookup_tech(name))


_ZH_VALUE = r"(?P<x>[A-Za-z][A-Za-z0-9&.\-]*(?:\s+[A-Z][A-Za-z0-9&.\-]*)?|[\u4e00-\u9fff]{2,6}?)"
_ZH_SENT_RE = re.compile(
    r"(?:调到|调去|调回|外派到|派到|去|到)\s*" + _ZH_VALUE + r"\s*"
    r"(?P<kind>分公司|总部|办公室|总部|报到|入职|上班|工作)"
)
_ZH_ROLE_RE = re.compile(
    r"(?:转岗|转行|改行|转型)(?:做|当|成|去做|成了|为)了?\s*(?P<role>[\u4e00-\u9fffA-Za-z ]{2,10}?)"
    r"(?=了|，|,|$)"
)
_ZH_UNSURE_RE = re.compile(r"如果|假如|要是|打算|准备|考虑|想|可能|也许|听说|据说|吗|呢")


def zh_moves(sentence: str, ctx: Ctx) -> Iterator[tuple[str, ExtractedMemory]]:
    """The user's moves a Chinese sentence states (see the module), with their text."""
    text = sentence.strip().rstrip("。！!；;")
    if not text or is_question(text) or _ZH_UNSURE_RE.search(text) or RELATION_RE.match(text):
        return
    m = _ZH_SENT_RE.search(text)
    if m is not None and not RELATION_RE.match(text[: m.start()].split("，")[-1] or "我"):
        x = m.group("x").strip()
        if is_place(x):
            yield m.group(0), ctx.mem(f"用户在{x}工作", "personal", IMP_CITY, subject="city")
        elif m.group("kind") != "分公司" and not lookup_tech(x) and not ZH_NOT_ORG_RE.search(x):
            yield m.group(0), ctx.mem(f"用户在{x}工作", "personal", IMP_EMPLOYER,
                                      subject="employer")  # fmt: skip
    m = _ZH_ROLE_RE.search(text)
    if m is not None:
        role = m.group("role").strip()
        yield m.group(0), ctx.mem(f"用户担任{role}", "personal", IMP_ROLE, subject="role")
