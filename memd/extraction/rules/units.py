"""A sentence that asks, cut into what it states and what it asks: each part read alone.

A message often states a fact and goes on to ask in the same sentence: "I'm allergic to peanuts,
can you suggest a snack?", "我在用 Arch，怎么装 Docker？". Read whole, the sentence is a question
and states nothing; read clause by clause, its first clause is a plain statement. `units(sentence)`
cuts a sentence at its clause marks (commas, semicolons, dashes, colons, and "so"/"but"/"and then",
，；：) and judges each clause alone:

- a clause that asks: a question (a question word, 吗/呢, 什么/怎么/哪), a request to the
  assistant (can/could/would you …, please, any tips, suggest, recommend, 请/帮/麻烦/能不能/推荐,
  求), anything addressed to "you"/你, or a clause that goes on from one ("or do I keep X");
- any other clause states.

Consecutive stating clauses stay together ("I'm 40, single and living in Berlin"), so the rules
read them as one sentence with their subject; the asking clauses are one part that keeps the
sentence's end mark, so a question is read as the question it is. A sentence with a hypothetical clause ("If I
move to Leeds, what would rent be?", "如果我搬到杭州，社保怎么转？") or with no clause that states
is left whole: what it says holds only in the case it asks about. A condition after a statement
that is not the writer's ("…, if that changes anything") is part of what is asked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memd.extraction.rules.common import CJK_RE, ZH_QUESTION_RE

# Where an English sentence's clauses meet: punctuation, a connective that opens a new one, or
# "and" before a new subject of the user's ("…, and I need …", "… and we moved …"). The
# connective stays with the clause it opens.
_EN_CUT_RE = re.compile(
    r"\s*(?:,|;|:|\s[—–-]\s|—|–)\s*|\s+(?=(?:so|but|and\s+then|anyway|btw)\s)"
    r"|\s+(?=and\s+(?:I|I'm|I've|we|we're|we've|my|our)\b)",
    re.I,
)
_ZH_CUT_RE = re.compile(
    r"\s*(?:[，,；;：]|:(?![A-Za-z0-9/]))\s*|(?<=[\u3400-\u9fff])(?=(?:然后|不过|所以|但是)[\u3400-\u9fff])"
)


def cut(text: str, *, zh: bool) -> list[str]:
    """The clauses of a sentence, in order, as every clause-by-clause reader cuts them: at
    punctuation (commas, semicolons, colons, dashes; ，；：) and before a connective that opens a
    new clause ("so", "but", "and then", "anyway", "btw", "and I/we/my/our"; 然后, 不过, 所以,
    但是), which stays with its clause."""
    return [c.strip() for c in (_ZH_CUT_RE if zh else _EN_CUT_RE).split(text) if c and c.strip()]


def without_lead(clause: str) -> str:
    """An English clause without the connectives it opens with ("so", "but", "and" …)."""
    return _EN_LEAD_RE.sub("", clause.strip())


_EN_LEAD_RE = re.compile(
    r"^(?:(?:so|but|and|then|also|anyway|btw|oh|ok|okay|well|now|just|quick\s+question)\b[\s,]*)+",
    re.I,
)
_ZH_LEAD_RE = re.compile(r"^(?:然后|不过|所以|但是|那|那么|另外|顺便|对了|话说)+")
# A clause that asks: a question word or auxiliary first, a request to the assistant, "you".
# A question word opens a relative clause too ("…, which means"): it asks only in a question.
_EN_QUESTION_WORD_RE = re.compile(
    r"^(?:what|who|whom|whose|where|when|why|how|which|do|does|did|is|are|am|was|were|have|has"
    r"|what's|how's|where's|who's|isn't|aren't|don't|doesn't)\b",
    re.I,
)
_EN_ASKS_RE = re.compile(
    r"^(?:can|could|would|will|should|shall|may|might|any|anything|please|pls|kindly|suggest"
    r"|recommend|help|tell|give|show|explain|thoughts|ideas|tips|advice|or|wondering|curious"
    r"|need\s+(?:help|advice|ideas|tips|suggestions)|I\s+(?:was\s+)?wonder(?:ing)?"
    r"|I'm\s+(?:wondering|curious)|I'd\s+(?:like|love)\s+(?:some|a|to\s+know)|can't|won't"
    r"|shouldn't)\b"
    r"|\b(?:you|your|you're|yours|you've|you'd)\b",
    re.I,
)
_ZH_ASKS_RE = re.compile(
    r"^(?:你|您|请|帮|麻烦|能不能|能否|可不可以|可以|怎么|如何|为什么|求|有没有|有什么|想问|请问|问一下"
    r"|推荐|建议|给我|告诉我|还是|或者|是不是|要不要|该不该|应该|会不会)|你|您"
)
# A clause that says what might be: the sentence's statements hold only in that case.
_EN_IF_RE = re.compile(
    r"^(?:if|suppose|supposing|imagine|assuming|hypothetically|what\s+if|say|in\s+case|let's"
    r"\s+say|unless|once|when|whenever|should\s+I)\b|\bif\s+I\s+were\b",
    re.I,
)
_ZH_IF_RE = re.compile(r"^(?:如果|假如|假设|要是|万一|比如说|比如|等|一旦|倘若)|的话$")


# "As a nurse on night shifts, …", "As someone who's written C for years, …", "作为一个前端，…": a
# lead that says who the writer is, restated as the statement it is.
_EN_AS_RE = re.compile(
    r"^(?:as\s+(?P<a>an?\s+)(?P<what>(?!matter\b|result\b|reminder\b|side\b|rule\b|heads\b)[^,]+)"
    r"|as\s+someone\s+who(?P<has>'s|\s+has|\s+is)?\s+(?P<did>[^,]+))(?=,)",
    re.I,
)
# "As a lifelong Vim user I don't want …": the same lead without its comma, up to the "I".
_EN_AS_BARE_RE = re.compile(
    r"^as\s+(?P<a>an?\s+)(?P<what>(?!matter\b|result\b|reminder\b|side\b|rule\b|heads\b)"
    r"(?:[\w\-]+\s+){0,3}?(?:user|developer|dev|engineer|programmer|admin|fan|nerd|person|coder"
    r"|maintainer|designer|manager|parent|mum|mom|dad|teacher|student|nurse|doctor))"
    r"(?=\s+(?:I|I'm|I've|I'd|we|we're)\b)",
    re.I,
)
# "As the only QA engineer here, …", "As tech lead I review …": a role noun after "as" with "the" or
# no article, up to its comma or the "I" after it.
_EN_AS_ROLE_RE = re.compile(
    r"^as\s+(?P<a>the\s+(?:only\s+|sole\s+|lone\s+|resident\s+|new\s+)?)?"
    r"(?P<what>(?:[\w\-]+\s+){0,3}?(?:engineer|developer|dev|programmer|designer|manager|lead"
    r"|architect|analyst|scientist|admin|maintainer|founder|owner|tester|qa|sre|intern|cto|ceo"
    r"|teacher|student|nurse|doctor|researcher|consultant|contractor|freelancer|director|head"
    r"(?:\s+of\s+[\w\-]+)?)(?:\s+(?:here|on\s+(?:the|my|our)\s+team|on\s+[\w\-]+))?)"
    r"(?=\s*,|\s+(?:I|I'm|I've|I'd|we|we're)\b)",
    re.I,
)
# "Being coeliac, I …", "Being a night owl myself, …": a lead that says what the writer is.
_EN_BEING_RE = re.compile(
    r"^being\s+(?P<what>(?:an?\s+)?[\w\-]+(?:\s+[\w\-]+){0,2}?)(?:\s+myself)?(?=,)", re.I
)
_ZH_AS_RE = re.compile(r"^作为(?P<what>(?:一[个名位])?[^，,]{1,20})(?=[，,])")


def restate_lead(sentence: str) -> str:
    """`sentence` with a lead that says who the writer is ("As a nurse, …") said as a statement
    ("I'm a nurse, …"); any other sentence as it is."""
    text = sentence.lstrip()
    if CJK_RE.search(text[:3]):
        m = _ZH_AS_RE.match(text)
        return "我是" + m.group("what") + text[m.end() :] if m else sentence
    m = _EN_AS_RE.match(text)
    if m is None and (bare := _EN_AS_BARE_RE.match(text)) is not None:
        return f"I'm {bare.group('a')}{bare.group('what')},{text[bare.end() :]}"
    if m is None and (being := _EN_BEING_RE.match(text)) is not None:
        return f"I'm {being.group('what')}{text[being.end() :]}"
    if m is None and (role := _EN_AS_ROLE_RE.match(text)) is not None:
        rest = text[role.end() :]
        a = role.group("a") or "a "
        return f"I'm {a}{role.group('what')}{rest if rest.startswith(',') else ',' + rest}"
    if m is None:
        return sentence
    if m.group("what"):
        return f"I'm {m.group('a')}{m.group('what')}{text[m.end() :]}"
    has = {"'s": "'ve", " has": "'ve", " is": "'m"}.get((m.group("has") or "").lower(), "")
    return f"I{has} {m.group('did')}{text[m.end() :]}"


@dataclass(frozen=True, slots=True)
class Unit:
    """A part of a sentence read as one: what it states, or what it asks."""

    text: str
    asks: bool


def _clauses(sentence: str, zh: bool) -> list[tuple[int, int]]:
    """The (start, end) spans of a sentence's clauses, end punctuation left out."""
    body = sentence.rstrip()
    body_end = len(body.rstrip(".!?。！？；;"))
    spans: list[tuple[int, int]] = []
    start = 0
    for m in (_ZH_CUT_RE if zh else _EN_CUT_RE).finditer(body[:body_end]):
        if m.start() > start:
            spans.append((start, m.start()))
        start = m.end()
    if body_end > start:
        spans.append((start, body_end))
    return spans


def _asks(clause: str, zh: bool, question: bool) -> bool:
    """Whether a clause asks; `question`: the sentence ends with a question mark."""
    if zh:
        text = _ZH_LEAD_RE.sub("", clause.strip())
        # 么/呢 end statements too ("我是在饿了么"): only 吗, or a question mark, asks by its end
        return bool(
            _ZH_ASKS_RE.search(text)
            or re.search(r"吗[\s。.！!]*$", text)
            or question
            and ZH_QUESTION_RE.search(text)
        )
    text = _EN_LEAD_RE.sub("", clause.strip())
    return bool(_EN_ASKS_RE.search(text) or question and _EN_QUESTION_WORD_RE.match(text))


# A clause that states something of the writer names them: "Give me detailed, long answers" is a
# request whose parts state nothing.
_EN_SELF_RE = re.compile(r"\b(?:I|I'm|I've|I'd|me|my|mine|we|we're|we've|our|us)\b", re.I)
_ZH_SELF_RE = re.compile(r"我|咱们|家里")


_EN_RELEVANCE_RE = re.compile(
    r"^(?:if|in\s+case)\s+(?:that|it|this)\s+(?:matters|helps|changes|makes|is\s+relevant)\b", re.I
)


def _supposes(clause: str, zh: bool) -> bool:
    if zh:
        return bool(_ZH_IF_RE.search(_ZH_LEAD_RE.sub("", clause.strip())))
    return bool(_EN_IF_RE.search(_EN_LEAD_RE.sub("", clause.strip())))


def units(sentence: str) -> list[Unit]:
    """The parts of a sentence to read alone (see the module): the sentence itself when it does
    not both state and ask, else its runs of stating clauses and one part of its asking ones."""
    zh = bool(CJK_RE.search(sentence))
    sentence = restate_lead(sentence)
    spans = _clauses(sentence, zh)
    texts = [sentence[a:b] for a, b in spans]
    question = sentence.rstrip().endswith(("?", "？"))
    asking = [_asks(t, zh, question) for t in texts]
    own = _ZH_SELF_RE if zh else _EN_SELF_RE
    supposing = [_supposes(t, zh) for t in texts]
    if any(
        s and (i == 0 or own.search(t))
        for i, (t, s) in enumerate(zip(texts, supposing, strict=True))
    ):
        return [Unit(sentence, False)]  # "If I move to Leeds, …": nothing holds but in that case
    # a condition on what matters ("…, if that matters for the VPN") asks about the statement
    relevance = [bool(_EN_RELEVANCE_RE.match(t.strip())) for t in texts]
    if not any(asking) and not any(relevance):
        return [Unit(sentence, False)]
    # "…, if that changes anything": a condition on what is asked, no statement
    asking = [a or s for a, s in zip(asking, supposing, strict=True)]
    stating = [t for t, a in zip(texts, asking, strict=True) if not a]
    if not stating or not any(asking) or not any(own.search(t) for t in stating):
        return [Unit(sentence, False)]
    out: list[Unit] = []
    i = 0
    while i < len(spans):
        j = i
        while j + 1 < len(spans) and asking[j + 1] == asking[i]:
            j += 1
        text = sentence[spans[i][0] : spans[j][1]].strip()
        if not asking[i]:
            out.append(Unit(text, False))
        i = j + 1
    asked = ("，" if zh else ", ").join(t.strip() for t, a in zip(texts, asking, strict=True) if a)
    end = sentence.rstrip()[len(sentence.rstrip().rstrip(".!?。！？；;")) :]
    out.append(Unit(asked + end, True))
    return out
