"""The driver: turns → sentences → clauses → the rules of their language."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime, tzinfo

from memd.conversations.trivial import is_trivial
from memd.core.models import ExtractedMemory, Turn
from memd.core.redact import redact
from memd.extraction.rules.common import (
    CJK_RE,
    CLAUSE_SPLIT_RE,
    SENTENCE_RE,
    Ctx,
    Rule,
    is_question,
)
from memd.extraction.rules.en_identity import en_age, en_location, en_name, en_work
from memd.extraction.rules.en_preferences import en_preference
from memd.extraction.rules.en_tasks import en_task
from memd.extraction.rules.en_tools import en_project, en_switch, en_tools
from memd.extraction.rules.zh_identity import zh_age, zh_location, zh_name, zh_work
from memd.extraction.rules.zh_preferences import zh_preference
from memd.extraction.rules.zh_tasks import zh_task
from memd.extraction.rules.zh_tools import zh_project, zh_tools

_EN_SENTENCE_RULES: tuple[Rule, ...] = (
    en_name,
    en_age,
    en_work,
    en_location,
    en_project,
    en_switch,
    en_tools,
    en_preference,
)
_ZH_CLAUSE_RULES: tuple[Rule, ...] = (
    zh_name,
    zh_age,
    zh_work,
    zh_location,
    zh_tools,
    zh_preference,
)


_ZH_SUBJECTS = ("我", "你", "他", "她", "它", "这", "那", "帮", "请")


def _extract_sentence(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    question = is_question(sentence)
    body = sentence.strip().rstrip(".!?。！？；;")
    if CJK_RE.search(body):
        if not question:
            project = list(zh_project(body, ctx))
            yield from project
            clauses = [c.strip() for c in CLAUSE_SPLIT_RE.split(body) if c.strip()]
            # A project's stack clause ("用 Next.js 开发") is not a skill statement.
            user_is_subject = not project and bool(clauses) and clauses[0].startswith("我")
            for i, clause in enumerate(clauses):
                for rule in _ZH_CLAUSE_RULES:
                    yield from rule(clause, ctx)
                # "我在上海工作，用Go写后端": the second clause's subject is still 我.
                if i and user_is_subject and not clause.startswith(_ZH_SUBJECTS):
                    yield from zh_tools("我" + clause, ctx)
        if not question or "提醒我" in body:
            yield from zh_task(body, ctx)
        return
    if not question:
        for rule in _EN_SENTENCE_RULES:
            yield from rule(body, ctx)
    yield from en_task(body, ctx, question)


def extract_rules(turns: Sequence[Turn], *, tz: tzinfo | None = None) -> list[ExtractedMemory]:
    """Extract memories from the user turns of a conversation with patterns only.

    Each memory's `source_turn_ids` is the one turn it came from. Relative dates in
    tasks ("by Friday", "明天") are resolved against the turn's `ts` in `tz` (the
    local zone when None) and returned as an ISO `due`. Text is redacted first, so
    a secret never becomes part of a memory. Identical statements are returned once.
    """
    out: list[ExtractedMemory] = []
    seen: set[str] = set()
    for turn in turns:
        if turn.role != "user" or is_trivial(turn.text):
            continue
        today = datetime.fromtimestamp(turn.ts, tz).date()
        ctx = Ctx(turn_id=turn.turn_id, today=today)
        for sentence in SENTENCE_RE.findall(redact(turn.text)):
            if not sentence.strip():
                continue
            for memory in _extract_sentence(sentence, ctx):
                key = memory.content.casefold()
                if key not in seen:
                    seen.add(key)
                    out.append(memory)
    return out
