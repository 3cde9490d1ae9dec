"""PURE: the format of `agents/<id>/relationship.md` and the two sections memd keeps current.

    # Agent Relationship

    ## Basic Status
    <!-- memd: kept by memd from your conversations; … -->
    - Trust Level: 62/100
    - Familiarity: 40/100
    - Total Interactions: 12 sessions, 230 turns
    - First Interaction: 2026-01-03
    - Last Interaction: 2026-03-02

    ## Current Mood
    <!-- memd: … -->
    - Status: pleased
    - Notes: 2026-03-02 "Fix the parser": 2 thanks; "thanks, works now"

    ## Memory Points
    - User asks to keep the assistant's answers short <!-- memd id=m_… -->

memd owns the lines of `## Basic Status` and `## Current Mood` that start with one of their keys
(`Trust Level:`, `Familiarity:`, … `Status:`, `Notes:`), and the marker comment under each
heading. `update_status(old_text, update) -> new_text` rewrites those lines and nothing else:
other lines in the two sections, every other section (`## Memory Points` included, which gets
items like any memory file) and the front matter are kept byte for byte. The trust value and the
mood are read back from the file before each update, so a value edited by hand is where memd
goes on from (`read_relationship`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass

from memd.core.models import Item, ParsedFile
from memd.memory.parse import parse_markdown

TITLE = "Agent Relationship"
STATUS = "Basic Status"
MOOD = "Current Mood"
POINTS = "Memory Points"
OWNED = (STATUS, MOOD)
TRUST_START = 50
STATUS_MARK = (
    "<!-- memd: kept by memd from your conversations. Edit the Trust Level as you like:"
    " memd goes on from your value. -->"
)
COUNTS_MARK = "<!-- memd: kept by memd from your conversations. -->"
MOOD_MARK = "<!-- memd: the mood of the latest finished session; yours to edit until the next. -->"

_TRUST, _FAMILIARITY, _TOTAL, _FIRST, _LAST = (
    "Trust Level",
    "Familiarity",
    "Total Interactions",
    "First Interaction",
    "Last Interaction",
)
_STATUS_KEYS = (_TRUST, _FAMILIARITY, _TOTAL, _FIRST, _LAST)
_MOOD_STATUS, _MOOD_NOTES = "Status", "Notes"
_MOOD_KEYS = (_MOOD_STATUS, _MOOD_NOTES)
# "- Trust Level: 62/100" (the list marker optional); "Trust:" is read as the trust line too.
_KEY_LINE = re.compile(
    r"^(?P<prefix>[ \t]*(?:[-*+][ \t]+)?)(?P<key>[^:：\n]+?)"
    r"[ \t]*[:：][ \t]*(?P<value>.*?)[ \t]*$"
)
_ALIASES = {"trust": _TRUST}
_NUMBER = re.compile(r"^(?P<n>-?\d{1,3}(?:\.\d+)?)[ \t]*(?:/[ \t]*100|%)?$")
_MARK = re.compile(r"^[ \t]*<!--[ \t]*memd:")
_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*\r?$")


@dataclass(frozen=True, slots=True)
class Standing:
    """What memd counts for an agent: sessions and turns, first and last day, familiarity."""

    sessions: int
    turns: int
    first: dt.date | None
    last: dt.date | None
    familiarity: int


@dataclass(frozen=True, slots=True)
class Mood:
    """A session's mood: one word and a one-line note."""

    status: str
    note: str


@dataclass(frozen=True, slots=True)
class StatusUpdate:
    """What one update writes: the standing, a trust step, a new mood (None keeps the file's).

    `trust_start` is the trust of a file without a trust line; `with_trust` False leaves trust
    out (sub-agents: the user never speaks to them, so nothing moves it).
    """

    standing: Standing
    trust_step: int = 0
    trust_start: int = TRUST_START
    with_trust: bool = True
    mood: Mood | None = None


@dataclass(frozen=True, slots=True)
class Relationship:
    """What a relationship file says.

    `trust` is None when the file has no trust line or one memd cannot read (`trust_text`
    then holds what it says); counts are as last written. `points` are the live items of
    `## Memory Points` (superseded ones left out).
    """

    trust: int | None = None
    trust_text: str = ""
    familiarity: int | None = None
    interactions: str = ""
    first: str = ""
    last: str = ""
    mood: str = ""
    mood_note: str = ""
    points: tuple[Item, ...] = ()
    notes: tuple[str, ...] = ()  # other lines of the two status sections, as written


def read_trust(value: str) -> int | None:
    """`62`, `62/100`, `62 %` → 62 (clamped to 0–100); None when it is not a number."""
    m = _NUMBER.match(value.strip())
    if m is None:
        return None
    return max(0, min(100, round(float(m.group("n")))))


def _key(raw: str) -> str:
    k = " ".join(raw.split()).lower()
    k = _ALIASES.get(k, k)
    for known in (*_STATUS_KEYS, *_MOOD_KEYS):
        if known.lower() == k.lower():
            return known
    return ""


def owned_key(heading: str, line: str) -> str:
    """The key of `line` when it is one memd keeps under `## heading` of a relationship file
    (`Trust Level` in `## Basic Status`, `Status` in `## Current Mood`…), else ""."""
    name = heading.strip().lower()
    keys = _STATUS_KEYS if name == STATUS.lower() else _MOOD_KEYS if name == MOOD.lower() else ()
    m = _KEY_LINE.match(line)
    key = _key(m.group("key")) if m else ""
    return key if key in keys else ""


def _key_values(text: str, keys: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """The first value of each of `keys` in a section's text, and its other non-blank lines."""
    values: dict[str, str] = {}
    other: list[str] = []
    for line in text.split("\n"):
        line = line.rstrip("\r")
        if not line.strip() or _MARK.match(line):
            continue
        m = _KEY_LINE.match(line)
        key = _key(m.group("key")) if m else ""
        if key in keys and key not in values:
            values[key] = m.group("value") if m else ""
        else:
            other.append(line.strip())
    return values, other


def _section(parsed: ParsedFile, heading: str) -> int | None:
    for i, s in enumerate(parsed.sections):
        if s.level == 2 and s.heading.strip().lower() == heading.lower():
            return i
    return None


def read_relationship(text: str) -> Relationship:
    """The values of a relationship file (any text: missing parts are left empty)."""
    parsed = parse_markdown(text)
    status: dict[str, str] = {}
    mood: dict[str, str] = {}
    notes: list[str] = []
    points: tuple[Item, ...] = ()
    for s in parsed.sections:
        if s.level != 2:
            continue
        name = s.heading.strip().lower()
        if name == STATUS.lower() and not status:
            status, other = _key_values(s.text, _STATUS_KEYS)
            notes += other
        elif name == MOOD.lower() and not mood:
            mood, other = _key_values(s.text, _MOOD_KEYS)
            notes += other
        elif name == POINTS.lower():
            points += tuple(it for it in s.items if not it.meta.get("superseded"))
    trust_text = status.get(_TRUST, "")

    def number(v: str) -> int | None:
        return read_trust(v) if v else None

    return Relationship(
        trust=number(trust_text),
        trust_text=trust_text,
        familiarity=number(status.get(_FAMILIARITY, "")),
        interactions=status.get(_TOTAL, ""),
        first=status.get(_FIRST, ""),
        last=status.get(_LAST, ""),
        mood=mood.get(_MOOD_STATUS, ""),
        mood_note=mood.get(_MOOD_NOTES, ""),
        points=points,
        notes=tuple(notes),
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _day(d: dt.date | None) -> str:
    return d.isoformat() if d else "none yet"


def new_trust(text: str, update: StatusUpdate) -> int | None:
    """The trust `update_status` writes into `text`: the file's value (or the start value when
    it has none) moved by the step, within 0–100; None when the file's value is unreadable."""
    rel = read_relationship(text)
    if rel.trust_text and rel.trust is None:
        return None
    base = rel.trust if rel.trust is not None else update.trust_start
    return max(0, min(100, base + update.trust_step))


def _status_values(text: str, update: StatusUpdate) -> dict[str, str]:
    st = update.standing
    values = {
        _FAMILIARITY: f"{st.familiarity}/100",
        _TOTAL: f"{_plural(st.sessions, 'session')}, {_plural(st.turns, 'turn')}",
        _FIRST: _day(st.first),
        _LAST: _day(st.last),
    }
    if update.with_trust:
        trust = new_trust(text, update)
        if trust is not None:  # an unreadable value stays as the user wrote it
            values = {_TRUST: f"{trust}/100", **values}
    return values


def update_status(text: str, update: StatusUpdate) -> str:
    """`text` with memd's lines of `## Basic Status` (and, with a mood, `## Current Mood`)
    brought up to date; sections missing are added after the title. Everything else is kept
    byte for byte. Pure: the same text and update give the same result."""
    crlf = "\r\n" in text
    if not text.strip():
        text = f"# {TITLE}\n"
    lines = text.split("\n")
    mark = STATUS_MARK if update.with_trust else COUNTS_MARK
    lines = _put_section(lines, STATUS, mark, _status_values(text, update), None, crlf)
    if update.mood is not None:
        mood = {_MOOD_STATUS: update.mood.status, _MOOD_NOTES: update.mood.note}
        lines = _put_section(lines, MOOD, MOOD_MARK, mood, STATUS, crlf)
    return "\n".join(lines)


def _put_section(
    lines: list[str],
    heading: str,
    mark: str,
    values: dict[str, str],
    after: str | None,
    crlf: bool,
) -> list[str]:
    eol = "\r" if crlf else ""
    parsed = parse_markdown("\n".join(lines))
    i = _section(parsed, heading)
    if i is None:
        body = [f"## {heading}{eol}", mark + eol]
        body += [f"- {k}: {v}{eol}" for k, v in values.items()]
        return _insert(lines, parsed, body + [eol], after, eol)
    s = parsed.sections[i]
    head, end = s.start_line - 1, s.end_line
    if head + 1 < end and _SETEXT.match(lines[head + 1]):
        head += 1  # "Basic Status" underlined: the body starts after the underline
    section = lines[head + 1 : end]
    if not any(_MARK.match(line) for line in section):
        section.insert(0, mark + eol)
    seen: dict[str, int] = {}
    for idx, line in enumerate(section):
        m = _KEY_LINE.match(line.rstrip("\r"))
        key = _key(m.group("key")) if m else ""
        if m and key in values and key not in seen:
            seen[key] = idx
            section[idx] = f"{m.group('prefix') or '- '}{key}: {values[key]}{eol}"
    missing = [f"- {k}: {v}{eol}" for k, v in values.items() if k not in seen]
    if missing:
        at = max(seen.values(), default=next(j for j, x in enumerate(section) if _MARK.match(x)))
        section[at + 1 : at + 1] = missing
    return [*lines[: head + 1], *section, *lines[end:]]


def _insert(
    lines: list[str], parsed: ParsedFile, body: list[str], after: str | None, eol: str
) -> list[str]:
    """Lines with a new section: after section `after` when the file has it, else before the
    first `##` section, else at the end."""
    j = _section(parsed, after) if after else None
    if j is not None:
        at = parsed.sections[j].end_line
    else:
        first = next((s for s in parsed.sections if s.level == 2), None)
        at = first.start_line - 1 if first is not None else len(lines)
    before = lines[:at]
    while at == len(lines) and before and not before[-1].strip():
        before.pop()  # appending at the end: one blank line before the new heading
    sep = [eol] if before and before[-1].strip() else []
    rest = lines[at:]
    if not rest or rest == [""]:
        body = body[:-1] + [""] if body and not body[-1].strip() else body
    return [*before, *sep, *body, *rest]


def compact(status_text: str, mood_text: str) -> str:
    """The two status sections as two lines, for an agent's context block.

    "Trust 62/100 · familiarity 40/100 · 12 sessions, 230 turns (first 2026-01-03, last
    2026-03-02)" and "Mood: pleased — <note>", then any other lines the user wrote there.
    """
    status, other = _key_values(status_text, _STATUS_KEYS)
    mood, more = _key_values(mood_text, _MOOD_KEYS)
    parts = []
    if status.get(_TRUST):
        parts.append(f"Trust {status[_TRUST]}")
    if status.get(_FAMILIARITY):
        parts.append(f"familiarity {status[_FAMILIARITY]}")
    if status.get(_TOTAL):
        days = [
            f"{w} {status[k]}" for w, k in (("first", _FIRST), ("last", _LAST)) if status.get(k)
        ]
        parts.append(status[_TOTAL] + (f" ({', '.join(days)})" if days else ""))
    out = [" · ".join(parts)] if parts else []
    if mood.get(_MOOD_STATUS) or mood.get(_MOOD_NOTES):
        note = mood.get(_MOOD_NOTES, "")
        out.append(f"Mood: {mood.get(_MOOD_STATUS, '')}" + (f" — {note}" if note else ""))
    out += [*other, *more]
    return "\n".join(out)
