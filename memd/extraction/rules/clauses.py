"""English sentences as clauses, each with who it is about: the structure the generic rules read.

A message states facts in clauses ("I'm colorblind, so please don't rely on red/green",
"Our shop is all-in on AWS; I mostly live in the CDK and TypeScript"). A clause is cut at
semicolons, dashes, and commas or conjunctions that open a new subject or a connective. Each
clause keeps:

- its text without the connectives and fillers it opens with ("so", "honestly", "fwiw", "for
  context") and without a label ("Preference: 2-space indentation" → label `preference`);
- its subject: `I` (the user), `we` (the user's team, company, stack), `other` (someone else:
  "my manager", "she", "you"), `project` (the repository or app the user works in: "the repo
  I'm in is a Django monolith"), or `none` — a fragment ("rusty in Java"), which takes the
  subject of the clause before it, or an imperative;
- whether it is negated (not, never, dropped, used to …) or unsure (if, would, thinking about,
  want to …): such a clause states no current fact about a thing it names.

The rules that read this structure are in `mentions`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

_CONNECTIVE_RE = re.compile(
    r"^(?:(?:so|and|but|also|then|plus|honestly|fwiw|btw|ok|okay|oh|well|actually|basically"
    r"|anyway|anyways|yeah|yep|yes|hey|hi|hello|tbh|imo|lol|haha|now|just\s+so\s+you\s+know"
    r"|for\s+context|quick\s+context|heads\s+up|fyi|as\s+for\s+me|for\s+the\s+record)\b[\s,!.:]*)+",
    re.I,
)
# "Preference: …", "Reminder for me: …", "Context — …": a label names what follows.
_LABEL_RE = re.compile(r"^(?P<label>[A-Za-z][A-Za-z '\-]{1,24}?)\s*[:—–]\s*(?P<rest>\S.*)$")
_LABELS = {
    "preference": "preference",
    "preferences": "preference",
    "pref": "preference",
    "style": "preference",
    "reminder": "task",
    "reminder for me": "task",
    "reminder to self": "task",
    "note to self": "task",
    "todo": "task",
    "to do": "task",
    "to-do": "task",
    "action item": "task",
    "stack": "stack",
    "tech stack": "stack",
    "my stack": "stack",
    "our stack": "stack",
    # Only a lead-in: what follows is read as it stands.
    "context": "",
    "quick context": "",
    "some context": "",
    "background": "",
    "about me": "",
    "update": "",
    "fyi": "",
    "heads up": "",
    "note": "",
    "ps": "",
}
_SPLIT_RE = re.compile(
    r"\s*(?:[;—–]|\s-\s|\.\.\.)\s*"
    r"|,\s+(?=(?:so|but|and|because|since|though|although|while|which|plus|not|never|I|I'm|I've|I'd"
    r"|I'll|we|we're|we've|my|our|please|pls)\b)"
    r"|\s+(?:and|but|so|because|since|though|although|while|plus)\s+"
    r"(?=(?:I|I'm|I've|I'd|I'll|we|we're|we've|my|our|please|pls)\b)",
    re.I,
)
_OTHER_NOUNS = (
    r"friends?|manager|boss|colleagues?|co-?workers?|wife|husband|partner|girlfriend|boyfriend"
    r"|brother|sister|mom|mum|dad|mother|father|son|daughter|kids?|lead|cto|ceo|clients?"
    r"|customers?|teacher|professor|room-?mate|flatmate|neighbou?r|cousin|uncle|aunt|team-?mates?"
    r"|users|students?|interns?|mentor|landlord|sibling|parents?"
    # colleagues named by their role: "our new hire Jamal", "the contractor"
    r"|hires?|contractors?|recruits?|trainees?|apprentices?|juniors?|designers?|director|vp"
    r"|founder|co-?founder|competitors?|rivals?|vendors?|suppliers?"
)
# Who a clause is about, by the first subject-like words in it: someone else ("my manager",
# "she", "you"), the user ("I", "my editor"), or the user's team ("we", "our backend").
_SUBJECT_RE = re.compile(
    r"(?P<other>\b(?:my|our|his|her|their)\s+(?:[\w\-]+\s+)?(?:" + _OTHER_NOUNS + r")\b"
    # "the intern", "the new hire": one person named by a role (not "the users" of a product)
    # "A former colleague, Rahul, just joined Canva": a relation named with an article
    r"|^(?:an?|one\s+of\s+my|one\s+of\s+our)\s+(?:[\w\-]+\s+)?(?:colleagues?|co-?workers?"
    r"|friends?|manager|boss|team-?mates?|classmates?|neighbou?rs?|cousin|clients?|customers?"
    r"|mentor|ex-colleague|acquaintance|contact)\b"
    r"|^(?:the)\s+(?:new\s+)?(?:interns?|hires?|contractors?|manager|boss|cto|ceo|trainee|junior"
    r"|guy|girl|designer|lead)\b"
    r"|\b(?:he|she|they|he's|she's|they're|someone|somebody|everyone|everybody|people|you"
    r"|you're|your)\b)"
    r"|(?P<i>\b(?:I|I'm|I've|I'd|I'll|Im|my)\b)"
    r"|(?P<we>\b(?:we|we're|we've|we'll|we'd|our)\b)",
    re.I,
)
# A request to the assistant has no subject of its own: it does not continue "I …".
_ASKS_RE = re.compile(r"^(?:please|pls|kindly|don't|do\s+not|never|always|stop|avoid)\b", re.I)
# A chat message often drops its "I": "Been a Laravel dev for years", "mostly writing Rust".
_DROPPED_I_RE = re.compile(
    r"^(?:been|am|currently|mostly|mainly|working|using|coding|writing|building|doing|based"
    r"|running|living|shipping|maintaining)\b",
    re.I,
)
_NEGATED_RE = re.compile(
    r"\b(?:not|never|no\s+longer|don't|doesn't|didn't|haven't|hasn't|won't|can't|cannot|isn't"
    r"|aren't|wasn't|without|hate|hates|dislike|dislikes|avoid|avoids|stopped|quit|dropped|ditched"
    r"|ripped\s+out|got\s+rid\s+of|moved\s+(?:off|away\s+from)|(?:gave|given)\s+up|used\s+to|left|no"
    # a thing that broke is no longer used: "my MacBook died"
    r"|died|broke|is\s+dead|got\s+stolen"
    # a choice taken back or a thing retired: "we reversed the Celery call", "ClickHouse went away"
    r"|reversed|scrapped|went\s+away|retired|decommissioned|sunset)\b",
    re.I,
)
_UNSURE_RE = re.compile(
    # what someone else said or wrote ("I read that Deno supports npm") is not the user's
    r"\b(?:read|heard|saw|noticed|says|said|claims|apparently|according"
    r"|if|whether|would|could|might|maybe|perhaps|probably|likely|should|thinking\s+(?:about|of)|think"
    r"|considering|consider|wonder|wondering|curious|plan|planning|want|wants|wanted|wanna"
    r"|hope|hoping|try|trying|tried|evaluat\w*|looking\s+(?:into|at)|heard|read\s+about"
    r"|recommend\w*|suggest\w*|(?-i:[Vv]s)(?!\s+Code\b)|versus|or|learn|learning|dream|wish|someday|eventually"
    # reading about a thing is no use of it: "I'm reading a book about Rust"
    r"|reading|book|article|tutorial|video|course)\b",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Clause:
    """One clause of a sentence and what the rules need to know about it."""

    text: str
    subject: str  # "I" | "we" | "other" | "project" | "none"
    label: str  # "preference" | "task" | "stack" | ""
    negated: bool
    unsure: bool

    @property
    def about_user(self) -> bool:
        """Whether the clause states something of the user or their team, as a fact."""
        return self.subject in ("I", "we") and not (self.negated or self.unsure)


# "I've been using NestJS instead of Express": what follows names what the user no longer uses.
INSTEAD_RE = re.compile(r"\s+(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+", re.I)


def before_instead(text: str) -> str:
    """The part of a clause before "instead of …": what the user does."""
    return INSTEAD_RE.split(text, maxsplit=1)[0]


def strip_lead(text: str) -> str:
    """The clause without the connectives and fillers it opens with."""
    return _CONNECTIVE_RE.sub("", text.strip()).strip()


# The project the user works in as a clause's subject: "The repo I'm working in is a Django
# monolith", "it's a monorepo with a Next.js app", "the whole backend is Kotlin on Ktor": what
# it names is the project's stack.
_PROJECT_SUBJECT_RE = re.compile(
    r"^(?:(?:(?:the|this|our|my)\s+(?:[\w\-]+\s+)?(?:repo|repository|codebase|code\s+base"
    r"|monorepo|project|app|application)"
    # "our backend runs on Go" is the team's; "the (whole) backend is Kotlin" the project's.
    r"|(?:the|this)\s+(?:[\w\-]+\s+)?(?:backend|back-end|frontend|front-end|service|api|website"
    r"|site|dashboard|portal|admin\s+panel|server|bot|extension|plugin|library|sdk|widget))\b(?!\s+(?:is\s+)?(?:called|named)\b)"
    r"|(?:it's|it\s+is)\s+(?:a|an)\s+(?:[\w\-]+\s+){0,2}?(?:repo|codebase|monorepo|project)\b)",
    re.I,
)


# Someone and the user together as the subject: "my wife and I", "me and my brother".
_WITH_ME_RE = re.compile(
    r"^(?:(?:my|our)\s+(?:[\w\-]+\s+){1,2}and\s+I\b|me\s+and\s+(?:my|our)\s+)", re.I
)


def subject_of(text: str) -> str:
    """Who a clause is about by its first subject-like words: "I", "we", "other", "project"
    (the project the user works in) or "none"."""
    if _PROJECT_SUBJECT_RE.match(text):
        return "project"
    if _WITH_ME_RE.match(text):
        return "I"  # "my wife and I moved to Porto": the user too
    m = _SUBJECT_RE.search(text)
    if m is None:
        return "none"
    return "other" if m.group("other") else ("I" if m.group("i") else "we")


def someone_else(text: str) -> bool:
    """Whether a clause's subject is a third person ("my brother", "she", "our intern"): what it
    states is theirs. "You" is the assistant, spoken to ("you can call me Kate"), and "everyone"
    or "people" say something of the user ("everyone calls me Bob"): neither is one."""
    if subject_of(text) != "other":
        return False
    m = _SUBJECT_RE.search(text)
    return m is not None and not re.match(r"you|every|people|some", m.group("other"), re.I)


@functools.lru_cache(maxsize=1024)
def en_clauses(sentence: str) -> tuple[Clause, ...]:
    """The clauses of an English sentence, in order (see the module); several rules read one
    sentence's clauses, so they are cut once."""
    out: list[Clause] = []
    previous = "none"
    for raw in _SPLIT_RE.split(sentence):
        text = strip_lead(raw or "")
        label = ""
        m = _LABEL_RE.match(text)
        if m is not None and (kind := _LABELS.get(m.group("label").strip().lower())) is not None:
            label, text = kind, strip_lead(m.group("rest"))
        text = text.strip().rstrip(".!?,")
        if not text:
            continue
        subject = subject_of(text)
        if (
            subject == "none"
            and previous in ("I", "we", "project")
            and not label
            and not _ASKS_RE.match(text)
        ):
            subject = previous  # "I'm fluent in Go, rusty in Java"
        elif subject == "none" and not out and _DROPPED_I_RE.match(text):
            subject = "I"
        negated = bool(_NEGATED_RE.search(text))
        out.append(Clause(text, subject, label, negated, bool(_UNSURE_RE.search(text))))
        previous = subject
    return tuple(out)


# Verbs a chat message opens with when it leaves out its "I": "Moved to Denver last month".
_DROPPED_I_PAST = (
    r"moved|relocated|switched|migrated|joined|started|left|quit|became|changed|finished"
    r"|graduated|transferred|got\s+(?:promoted|hired|a\s+new)"
)
# After a clause about the user a bare verb goes on about them: "I'm Canadian but live in
# Amsterdam now", "I'm from Lagos but moved to Berlin".
_CONTINUING = _DROPPED_I_PAST + r"|live|work|use|prefer|love|like|hate|teach|lead|run|maintain"
_CONTINUE_SPLIT_RE = re.compile(
    r",?\s+(?:but|and|so)\s+(?=(?:(?:now|just|recently|also|then|currently|still|mostly|mainly)\s+)*"
    r"(?:" + _CONTINUING + r")\b)",
    re.I,
)
_OPENS_DROPPED_RE = re.compile(
    r"^(?:(?:just|recently|finally|also|then)\s+)*(?:" + _DROPPED_I_PAST + r")\b", re.I
)


def someone_else_named(parts: list[str]) -> bool:
    """Whether a clause of `parts` has a third person as its subject."""
    return any(someone_else(p) for p in parts)


def restore_subject(parts: list[str]) -> list[str]:
    """Clauses with the "I" a chat message left out put back, for the rules that read "I …":
    "moved to Berlin" → "I moved to Berlin"; "I'm Canadian but live in Amsterdam" → the clause
    as it was and "I live in Amsterdam". A verb after someone else's clause stays theirs."""
    out: list[str] = []
    last = "none"
    for part in parts:
        own = subject_of(part)
        last = last if own == "none" else own
        if _OPENS_DROPPED_RE.match(part):
            # The subject left out is the one before: "A former colleague, Rahul, just joined
            # Canva" is his move, not the user's.
            part = ("They " if last == "other" and someone_else_named(parts) else "I ") + part
        out.append(part)
        head, *rest = _CONTINUE_SPLIT_RE.split(part)
        if rest and subject_of(head) in ("I", "we"):
            out += ["I " + piece for piece in rest]
    return out
