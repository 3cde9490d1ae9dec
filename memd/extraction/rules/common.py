"""Shared pieces of the offline extractor: sentences, questions, pronouns, importances, `Ctx`."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date

from memd.core.models import ExtractedMemory

CJK_RE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")

# Importance on the seed-004 scale.
IMP_NAME = 9
IMP_EMPLOYER = 8
IMP_ROLE = 8
IMP_CITY = 7
IMP_AGE = 6
IMP_HOMETOWN = 6
IMP_FAMILY = 6
IMP_SKILL_MAIN = 7
IMP_SKILL = 6
IMP_PROJECT = 7
IMP_PROJECT_DETAIL = 6
IMP_DECISION = 6
IMP_SWITCH = 6
IMP_PREFERENCE = 5
IMP_TOOL_HABIT = 5
IMP_TASK = 3

# ---------------------------------------------------------------------------
# Sentences, questions, pronouns

# "." ends a sentence only before whitespace, so "Next.js" and "3.11" stay whole; "!" not before a
# word character ("Pop!_OS").
SENTENCE_RE = re.compile(r"(?:[^.!?。！？；;\n]|\.(?=\S)|!(?=\w))+[.!?。！？；;]*")
# A colon inside a name ("python:3.12", "10:30", "https://") is no clause break.
CLAUSE_SPLIT_RE = re.compile(r"[，,、：]|:(?![A-Za-z0-9/])")
_EN_QUESTION_START_RE = re.compile(
    r"^\s*(?:what|who|whom|whose|where|when|why|how|which|do|does|did|is|are|am|was|were"
    r"|can|could|would|will|should|shall|may|might|have|has)\b",
    re.I,
)
ZH_QUESTION_RE = re.compile(
    r"[吗呢么嘛][\s。.！!]*$|(?<![不没])什么(?![都也])|(?<![不没])怎么|为什么|哪|谁|几岁|多少|是否|有没有|是不是|对吗"
)
PRONOUN_START_RE = re.compile(
    r"^(?:it|its|it's|this|that|these|those|you|your|yours|him|her|them|what|how|why|which|who"
    r"|there|here|one|some|something|anything|everything|nothing)\b",
    re.I,
)
_FIRST_PERSON = {
    "my": "their",
    "me": "them",
    "mine": "theirs",
    "myself": "themselves",
    "i": "they",
    "i'm": "they're",
    "i've": "they've",
    "i'll": "they'll",
    "i'd": "they'd",
    "am": "are",
}
_FIRST_PERSON_RE = re.compile(r"\b(?:my|me|mine|myself|I'm|I've|I'll|I'd|I)\b(?:\s+am\b)?")


def third_person(text: str) -> str:
    def swap(m: re.Match[str]) -> str:
        words = m.group(0).split()
        return " ".join(_FIRST_PERSON.get(w.lower(), w) for w in words)

    return _FIRST_PERSON_RE.sub(swap, text)


def is_question(sentence: str) -> bool:
    s = sentence.strip()
    if s.endswith(("?", "？")):
        return True
    if CJK_RE.search(s):
        return bool(ZH_QUESTION_RE.search(s))
    return bool(_EN_QUESTION_START_RE.match(s))


def clean(text: str) -> str:
    return text.strip().strip(" \t\"'“”‘’「」《》()（）.,;:!?。，；：！？、~—-")


def topic_slug(name: str) -> str:
    slug = re.sub(r"[^\w\u3400-\u9fff]+", "-", name.lower()).strip("-_")
    return slug or "project"


def join_en(items: Sequence[str]) -> str:
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def join_zh(items: Sequence[str]) -> str:
    if len(items) <= 2:
        return "和".join(items)
    return "、".join(items[:-1]) + "和" + items[-1]


def article(phrase: str) -> str:
    word = phrase.split()[0] if phrase.split() else ""
    if len(word) > 1 and word.isupper():  # an acronym is read letter by letter: "an SRE"
        return "an" if word[0] in "AEFHILMNORSX" else "a"
    return "an" if phrase[:1].lower() in "aeiou" else "a"


# ---------------------------------------------------------------------------
# Extraction context


@dataclass(slots=True)
class Session:
    """What the rules remember across the turns of one conversation."""

    project: str = ""  # the project the user last named ("it's Python" is about it)
    self_turn: str = ""  # the last turn in which the user said who they are
    decided: set[str] = field(default_factory=set)  # subjects of the decisions stated so far
    named: str = ""  # the name the user gave ("I'd prefer Alexandra" then restates it)
    spoke: bool = False  # the user has said something of themselves (later clauses go on)
    # The last memory of each subject key ("age", "employer", "tool:ci" …): a later turn that
    # names only a new value of one of them replaces it (`carried`).
    values: dict[str, ExtractedMemory] = field(default_factory=dict)
    # (turn id, sentence) of the user's earlier statements: a later turn that ends a value one of
    # them names shows it was a statement of the user's (`named`).
    sentences: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Ctx:
    """The turn a sentence comes from and its local day; `mem` builds a memory from it."""

    turn_id: str
    today: date
    session: Session = field(default_factory=Session)

    def about_user(self) -> bool:
        """Whether the user has been describing themselves in this turn (so a subjectless
        "backend engineer at Stripe" is about them)."""
        return self.session.self_turn == self.turn_id

    def mem(
        self,
        content: str,
        type_: str,
        importance: int,
        *,
        subject: str = "",
        topic: str = "",
        due: str = "",
    ) -> ExtractedMemory:
        return ExtractedMemory(
            content=content,
            type=type_,
            importance=importance,
            source_turn_ids=(self.turn_id,),
            subject=subject,
            topic=topic,
            due=due,
        )


Rule = Callable[[str, Ctx], Iterator[ExtractedMemory]]

# What the slot of an employer can hold in Chinese that names none: a span of time ("入职一周"),
# a change ("在改成十点上班") and a clock time.
ZH_NOT_ORG_RE = re.compile(
    r"^[一二两三四五六七八九十半几\d]+(?:个)?(?:天|周|星期|礼拜|月|年|小时)|^(?:改|换|调|转)"
    r"|[\d一二两三四五六七八九十]点"
)

# Capitalised words that start a sentence but never name an organisation or place.

# Languages people speak: a course or a reply language, never an employer ("started Japanese").
SPOKEN_LANGUAGES = frozenset(
    "english chinese mandarin cantonese japanese korean french german spanish portuguese russian"
    " italian vietnamese arabic hindi dutch swedish polish turkish greek hebrew thai tagalog"
    " filipino cebuano swahili urdu bengali bangla punjabi tamil telugu marathi gujarati malay"
    " indonesian persian farsi ukrainian czech hungarian romanian finnish danish norwegian catalan"
    " basque welsh irish yoruba igbo hausa amharic zulu afrikaans hokkien hakka taiwanese"
    " shanghainese serbian croatian bulgarian slovak lithuanian latvian estonian icelandic nepali"
    " sinhala khmer burmese lao mongolian kazakh uzbek georgian armenian albanian".split()
)
NOT_ORGS = frozenset(
    "i home the a an night nights weekends weekend monday tuesday wednesday thursday friday "
    "saturday sunday it this that my our".split()
)
