"""What the model is asked to answer and how an answer is read, whichever backend asked.

The two JSON shapes (`EXTRACTION_SCHEMA`, `SUMMARY_SCHEMA`), the values an answer becomes
(`ExtractionResult`, `SummaryResult`, what the requests cost in `LLMUsage`), and reading an
answer: `parse_object` finds the JSON object in a model's text — bare, in a code fence, after
a `<think>` block or with prose around it, as small local models write — and the validators
keep only what fits. An answer without the object asked for raises `LLMBadAnswer`: it is never
read in part.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memd.core.errors import LLMBadAnswer
from memd.core.models import MEMORY_TYPES, ExtractedMemory
from memd.core.redact import redact

__all__ = [
    "COMPACT_EXTRACTION_SCHEMA",
    "EXTRACTION_SCHEMA",
    "SIGNAL_KINDS",
    "SUMMARY_SCHEMA",
    "ExtractionResult",
    "LLMUsage",
    "SummaryResult",
    "TurnSignal",
    "parse_object",
    "read_extraction",
    "read_summary",
]

_MEMORY_ITEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "content": {
            "type": "string",
            "description": "One standalone statement in the third person.",
        },
        "type": {"type": "string", "enum": list(MEMORY_TYPES)},
        "importance": {
            "type": "integer",
            "description": "1 (trivial) to 10 (core identity).",
        },
        "source_turn_ids": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Ids of the turns the memory comes from.",
        },
        "subject": {
            "type": "string",
            "description": "Key of a single-valued fact (e.g. employer, city, tool:testing), or empty.",
        },
        "topic": {
            "type": "string",
            "description": "Topic slug for project/decision/knowledge memories, or empty.",
        },
        "due": {"type": "string", "description": "YYYY-MM-DD for tasks, or empty."},
    },
    "required": ["content", "type", "importance", "source_turn_ids", "subject", "topic", "due"],
    "additionalProperties": False,
}
# How the user reacted to the assistant's work in a turn (memd.extraction.rules.SignalKind).
SIGNAL_KINDS = ("thanks", "praise", "frustration", "correction", "revert")
_SIGNAL_ITEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "kind": {"type": "string", "enum": list(SIGNAL_KINDS)},
        "turn_id": {"type": "string", "description": "Id of the user turn."},
        "strength": {"type": "number", "description": "0.1 (faint) to 1 (strong)."},
        "evidence": {"type": "string", "description": "The user's words, a short quote."},
    },
    "required": ["kind", "turn_id", "strength", "evidence"],
    "additionalProperties": False,
}
# Structured outputs reject numeric bounds (`minimum`/`maximum`), so the 1–10 range is
# stated in the description and enforced when the answer is validated.
EXTRACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "memories": {"type": "array", "items": _MEMORY_ITEM_SCHEMA},
        "signals": {"type": "array", "items": _SIGNAL_ITEM_SCHEMA},
    },
    "required": ["memories", "signals"],
    "additionalProperties": False,
}
SUMMARY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "description": "At most 8 words."},
        "summary": {"type": "string", "description": "2 to 5 sentences."},
    },
    "required": ["title", "summary"],
    "additionalProperties": False,
}

# For OpenAI-compatible servers, which may hold a small model to a schema by constrained
# decoding: only what a memory cannot do without is required (ids fall back to the batch's).
_COMPACT_ITEM_SCHEMA: dict[str, Any] = {
    **_MEMORY_ITEM_SCHEMA,
    "properties": {
        k: v for k, v in _MEMORY_ITEM_SCHEMA["properties"].items() if k != "source_turn_ids"
    },
    "required": ["content", "type", "importance"],
}
COMPACT_EXTRACTION_SCHEMA: dict[str, Any] = {
    **EXTRACTION_SCHEMA,
    "properties": {
        "memories": {"type": "array", "items": _COMPACT_ITEM_SCHEMA},
        "signals": {"type": "array", "items": _SIGNAL_ITEM_SCHEMA},
    },
    "required": ["memories"],
}

_MAX_TITLE_CHARS = 120
_MAX_EVIDENCE_CHARS = 200
_ISO_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_FENCE_RE = re.compile(r"```[A-Za-z]*[ \t]*\n?(?P<body>.*?)```", re.DOTALL)
# Reasoning models served locally (qwen3, deepseek-r1) write their thinking into the answer.
_THINK_RE = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)", re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True)
class LLMUsage:
    """What answering cost: tokens billed (0 when a server does not say) and requests made."""

    input_tokens: int
    output_tokens: int
    requests: int = 1

    def __add__(self, other: LLMUsage) -> LLMUsage:
        return LLMUsage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.requests + other.requests,
        )

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


NO_USAGE = LLMUsage(0, 0, 0)


@dataclass(frozen=True)
class TurnSignal:
    """How the user reacted to the assistant's work in one turn, by the model's reading."""

    kind: str  # one of SIGNAL_KINDS
    turn_id: str
    strength: float  # (0, 1]
    evidence: str


@dataclass(frozen=True)
class ExtractionResult:
    """Validated memories and signals proposed by the model, and what the requests cost."""

    memories: list[ExtractedMemory]
    usage: LLMUsage
    signals: list[TurnSignal] = field(default_factory=list)


@dataclass(frozen=True)
class SummaryResult:
    """A session title and summary, and what the requests cost."""

    title: str
    summary: str
    usage: LLMUsage


def bad_answer(message: str, usage: LLMUsage, hint: str = "") -> LLMBadAnswer:
    """An unusable answer, carrying what it cost so the budgets count it."""
    return LLMBadAnswer(
        message,
        hint=hint,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        requests=usage.requests,
    )


def _candidates(text: str) -> list[str]:
    """Where the object may be: the whole text, each fenced block, the text without thinking."""
    body = _THINK_RE.sub("", text).strip()
    found = [body]
    found += [m.group("body").strip() for m in _FENCE_RE.finditer(body)]
    return found


def parse_object(text: str, keys: Sequence[str]) -> dict[str, Any]:
    """The first JSON object in `text` that has every one of `keys`.

    Tolerates what models wrap around it: a code fence, a `<think>` block, prose before or
    after. An object cut off (the answer ran out of tokens) is not one: nothing of it is used.
    Raises `ValueError` with a redacted excerpt when there is none.
    """
    decoder = json.JSONDecoder()
    for body in _candidates(text):
        start = body.find("{")
        while start != -1:
            try:
                data, _end = decoder.raw_decode(body, start)
            except ValueError:
                data = None
            if isinstance(data, dict) and all(k in data for k in keys):
                return data
            start = body.find("{", start + 1)
    excerpt = redact(" ".join(text.split()))[:120]
    raise ValueError(f"no JSON object with {', '.join(keys)} in the answer: {excerpt!r}")


def read_extraction(
    data: dict[str, Any], turns: Sequence[tuple[str, str]], known: Sequence[str], usage: LLMUsage
) -> ExtractionResult:
    """Memories and signals from a parsed answer; `turns` are (turn id, role) of the batch.

    The answer must hold a `memories` list (else `LLMBadAnswer`). Items with an unknown type or
    no text are dropped, importance is clamped to 1–10, source ids that are not among the turns'
    ids fall back to all of them; repeats of `known` memories and of each other are dropped.
    Signals must name a user turn and a known kind (one per turn and kind, the strongest).
    """
    items = data.get("memories")
    if not isinstance(items, list):
        raise bad_answer("malformed JSON from model: no 'memories' list", usage)
    turn_ids = [t for t, _ in turns]
    known_keys = {k.strip().casefold() for k in known}
    memories: list[ExtractedMemory] = []
    seen: set[str] = set()
    for item in items:
        memory = _validate_memory(item, turn_ids)
        if memory is None:
            continue
        key = memory.content.casefold()
        if key in known_keys or key in seen:
            continue
        seen.add(key)
        memories.append(memory)
    user_turns = {t for t, role in turns if role == "user"}
    return ExtractionResult(memories, usage, _validate_signals(data.get("signals"), user_turns))


def read_summary(data: dict[str, Any], usage: LLMUsage) -> SummaryResult:
    """A title and summary from a parsed answer; both must be strings (else `LLMBadAnswer`)."""
    title, summary = data.get("title"), data.get("summary")
    if not isinstance(title, str) or not isinstance(summary, str) or not summary.strip():
        raise bad_answer("malformed JSON from model: 'title' and 'summary' must be strings", usage)
    title = " ".join(redact(title).split())[:_MAX_TITLE_CHARS]
    return SummaryResult(title, redact(summary).strip(), usage)


def _as_importance(value: object) -> int:
    try:
        number = int(float(value)) if isinstance(value, (int, float, str)) else 5
    except (ValueError, OverflowError):
        number = 5
    return max(1, min(10, number))


def _as_text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _validate_memory(item: object, turn_ids: Sequence[str]) -> ExtractedMemory | None:
    """One model item as an `ExtractedMemory`, or None when it cannot be used."""
    if not isinstance(item, dict):
        return None
    content = " ".join(redact(_as_text(item.get("content"))).split())
    type_ = _as_text(item.get("type")).lower()
    if not content or type_ not in MEMORY_TYPES:
        return None
    raw_ids = item.get("source_turn_ids")
    ids = (
        [i for i in raw_ids if isinstance(i, str) and i in turn_ids]
        if isinstance(raw_ids, list)
        else []
    )
    due = _as_text(item.get("due"))
    return ExtractedMemory(
        content=content,
        type=type_,
        importance=_as_importance(item.get("importance")),
        source_turn_ids=tuple(dict.fromkeys(ids)) if ids else tuple(turn_ids),
        subject=_as_text(item.get("subject")).lower(),
        topic=_as_text(item.get("topic")).lower(),
        due=due if _ISO_DATE_RE.fullmatch(due) else "",
    )


def _validate_signals(items: object, user_turns: set[str]) -> list[TurnSignal]:
    """The model's signals that name a user turn and a known kind, strongest per turn and kind."""
    best: dict[tuple[str, str], TurnSignal] = {}
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        kind = _as_text(item.get("kind")).lower()
        turn_id = _as_text(item.get("turn_id"))
        if kind not in SIGNAL_KINDS or turn_id not in user_turns:
            continue
        raw = item.get("strength")
        strength = 0.5
        if isinstance(raw, int | float) and not isinstance(raw, bool) and math.isfinite(raw):
            strength = max(0.05, min(1.0, float(raw)))
        evidence = " ".join(redact(_as_text(item.get("evidence"))).split())[:_MAX_EVIDENCE_CHARS]
        signal = TurnSignal(kind, turn_id, strength, evidence)
        old = best.get((turn_id, kind))
        if old is None or signal.strength > old.strength:
            best[(turn_id, kind)] = signal
    return list(best.values())
