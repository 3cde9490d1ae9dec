"""The driver: turns → the user's own words → sentences → clauses → the rules of their language."""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from datetime import datetime, tzinfo

from memd.conversations.trivial import is_trivial
from memd.core.models import ExtractedMemory, Turn
from memd.core.redact import redact
from memd.extraction.rules.carried import carried_updates
from memd.extraction.rules.clauses import (
    en_clauses,
    restore_subject,
    someone_else,
    strip_lead,
    subject_of,
)
from memd.extraction.rules.common import (
    CJK_RE,
    CLAUSE_SPLIT_RE,
    IMP_DECISION,
    IMP_SKILL,
    SENTENCE_RE,
    SPOKEN_LANGUAGES,
    Ctx,
    Rule,
    Session,
    is_question,
    join_en,
)
from memd.extraction.rules.corrections import apply_corrections
from memd.extraction.rules.decisions import en_decision, zh_decision
from memd.extraction.rules.en_identity import en_age, en_family, en_location, en_name, en_work
from memd.extraction.rules.en_preferences import (
    en_preference,
    en_standing_request,
    is_standing_request,
)
from memd.extraction.rules.en_tasks import en_task
from memd.extraction.rules.en_tools import (
    en_project,
    en_project_stack,
    en_switch,
    en_tool_mentions,
    en_tools,
)
from memd.extraction.rules.general import covered, en_general, zh_general
from memd.extraction.rules.generic import apply_generic, recall_left
from memd.extraction.rules.holds import apply_holds
from memd.extraction.rules.kin import en_children, en_kin, zh_children, zh_kin
from memd.extraction.rules.learned import (
    IMPORTANCE,
    learned_statements,
    reader_type,
    shares_value,
)
from memd.extraction.rules.life import en_life, zh_life
from memd.extraction.rules.links import apply_links, first_statements
from memd.extraction.rules.mentions import (
    en_dropped,
    en_labelled,
    en_mentions,
    en_stack,
    zh_mentions,
)
from memd.extraction.rules.message import normalise_chat, own_words
from memd.extraction.rules.moved import apply_moved
from memd.extraction.rules.moves import en_moves, zh_moves
from memd.extraction.rules.named import apply_named
from memd.extraction.rules.passing import en_passing, zh_passing
from memd.extraction.rules.replaced import apply_changes
from memd.extraction.rules.sameness import same_fact
from memd.extraction.rules.slots import apply_slots
from memd.extraction.rules.standing import en_standing, one_off, zh_standing
from memd.extraction.rules.subjects import en_subjects, zh_schedule, zh_subjects
from memd.extraction.rules.tech import mentioned_tech
from memd.extraction.rules.traits import account, en_condition, zh_condition
from memd.extraction.rules.units import units
from memd.extraction.rules.zh_clauses import zh_clauses
from memd.extraction.rules.zh_identity import zh_age, zh_family, zh_location, zh_name, zh_work
from memd.extraction.rules.zh_preferences import zh_preference
from memd.extraction.rules.zh_tasks import zh_task
from memd.extraction.rules.zh_tools import zh_project, zh_tools

_EN_RULES: tuple[Rule, ...] = (
    en_name,
    en_age,
    en_work,
    en_location,
    en_family,
    en_condition,
    account,
    en_project,
    en_project_stack,
    en_switch,
    en_tools,
    en_tool_mentions,
    en_preference,
    en_decision,
)
# Rules for the user's own tools: a clause about the project states the project's (`mentions`).
_EN_TOOL_RULES = frozenset({en_tools, en_tool_mentions, en_switch})
# Rules for what a clause whose subject is someone else may still say of the user: their family.
_EN_FAMILY_RULES = frozenset({en_family})
_ZH_CLAUSE_RULES: tuple[Rule, ...] = (
    zh_name,
    zh_age,
    zh_work,
    zh_location,
    zh_family,
    zh_condition,
    account,
    zh_tools,
    zh_preference,
    zh_schedule,
)

# Clauses of an English sentence: "I'm 34 and I live in Toronto", "Hannah here — I lead ...".
_EN_CLAUSE_RE = re.compile(
    r"\s*(?:[;:—–]|\s-\s|,\s+|\s+(?:and|but|so)\s+(?=(?:I|I'm|I've|I'll|my|we|we're|we've|our)\b))\s*"
)
# A sentence about what might be, not what is.
_EN_HYPOTHETICAL_RE = re.compile(
    r"^(?:(?:just\s+)?(?:if|suppose|supposing|imagine|assuming|hypothetically|what\s+if|say)\b"
    r"|let's\s+say\b)|\bif\s+I\s+were\b|\bwould\s+I\b",
    re.I,
)
_ZH_HYPOTHETICAL_RE = re.compile(
    r"^(?:如果|假如|假设|要是|万一|比如说)|^(?:我们?|咱们)?(?:正在|还在|在)?(?:考虑|纠结)"
)
_ZH_GREETING_RE = re.compile(r"(?:你好|您好|嗨|哈喽|hi|hello|hey)[呀啊!！~]*", re.I)
_LATIN_START_RE = re.compile(r"^(?:I\b|I'm\b|[a-z]+ing\b|based\b|my\b|an?\s)", re.I)


def _en_sentence(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    text = normalise_chat(sentence).strip()
    question = is_question(text)
    # "Actually, could you reply in Spanish from now on?": a lead-in does not make it a question.
    asked = strip_lead(text)
    if question and is_standing_request(asked):
        # "can you give me code without explanations from now on?" asks for a standing rule.
        yield from en_standing_request(asked.rstrip("?"), ctx)
        return
    body = text.rstrip(".!?")
    if _EN_HYPOTHETICAL_RE.search(body):
        return
    if not question:
        # Yielded as found: the driver notes at once that the user said who they are.
        said: list[str] = []
        clauses = [strip_lead(c) for c in _EN_CLAUSE_RE.split(body) if c.strip()]
        parts = [body, *clauses] if len(clauses) > 1 else [strip_lead(body)]
        for part in restore_subject(parts):
            whose = subject_of(part)
            third = whose == "other" and someone_else(part)
            for rule in _EN_RULES:
                if whose == "project" and rule in _EN_TOOL_RULES:
                    continue  # "the codebase I maintain is a Laravel app": the project's stack
                if third and rule not in _EN_FAMILY_RULES:
                    continue  # "my uncle left Oracle and joined Google": his job, not the user's
                yield from _noted(rule(part, ctx), said)
        for structural in (en_labelled, en_stack, en_dropped, en_subjects):
            yield from _noted(structural(body, ctx), said)
        yield from en_mentions(body, ctx, " ".join(said))
    yield from _en_tasks(body, ctx, question)


def _noted(memories: Iterable[ExtractedMemory], said: list[str]) -> Iterator[ExtractedMemory]:
    for m in memories:
        said.append(m.content)
        yield m


def _en_tasks(body: str, ctx: Ctx, question: bool) -> Iterator[ExtractedMemory]:
    """The tasks a sentence states, clause by clause ("I've got a flight on Friday, so I'll be
    offline" is about the flight; "the report is due Sept 30, which means the export has to
    ship before then" states two), a date said in another clause still counting; the whole
    sentence when no clause states one. After a first task, "so I'll be offline" borrows no date
    of it: only what has to be done does."""
    clauses = en_clauses(body)
    found = False
    for clause in clauses if len(clauses) > 1 or clauses and clauses[0].label else []:
        text = f"TODO: {clause.text}" if clause.label == "task" else clause.text
        for memory in en_task(text, ctx, question, context=body, another=found):
            found = True
            yield memory
    if not found:
        yield from en_task(body, ctx, question)


# "Please 用中文解释": an English "please" before a Chinese request is 请.
_ZH_PLEASE_RE = re.compile(r"^(?i:please|pls|plz|kindly)[\s,，]*(?=[\u3400-\u9fff])")


def _zh_sentence(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    question = is_question(sentence)
    body = _ZH_PLEASE_RE.sub("请", sentence.strip().rstrip(".!?。！？；;"))
    if _ZH_HYPOTHETICAL_RE.search(body):
        return
    if not question:
        project = list(zh_project(body, ctx))
        said: list[str] = []
        yield from _noted(project, said)
        yield from _noted(zh_decision(body, ctx), said)
        if not project:
            yield from _noted(zh_subjects(body, ctx), said)
        yield from _noted(_zh_clauses(body, ctx, bool(project)), said)
        if not project:
            # A project's stack clause ("用 Next.js 开发") is not a skill statement.
            yield from zh_mentions(body, ctx, " ".join(said))
    if not question or "提醒我" in body:
        yield from zh_task(body, ctx)


def _zh_clauses(body: str, ctx: Ctx, project: bool) -> Iterator[ExtractedMemory]:
    texts = [c.strip() for c in CLAUSE_SPLIT_RE.split(body) if c.strip()]
    while texts and _ZH_GREETING_RE.fullmatch(texts[0]):
        texts.pop(0)
    for clause in zh_clauses(texts, carried=ctx.session.spoke):
        text = clause.text
        if _ZH_HYPOTHETICAL_RE.search(text):
            continue
        if clause.subject == "other":
            # "我女朋友在腾讯上班" is hers; only what it says of the user's family counts.
            yield from zh_family(text, ctx)
            continue
        # "我在上海工作，用Go写后端", "上个月搬到广州了": a clause without a subject is still
        # about 我 (not in a sentence naming a project: "用 Next.js 开发" is the project's stack).
        implied = clause.implied and not project
        for rule in _ZH_CLAUSE_RULES:
            if implied:
                said = list(rule(text, ctx))
                yield from said or rule("我" + text, ctx)
            else:
                yield from rule(text, ctx)
        if _LATIN_START_RE.match(text):
            # Mixed messages: "I'm 陈浩, working at 字节跳动 as an SRE".
            yield from _en_sentence(text, ctx)


def _extract_sentence(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    if CJK_RE.search(sentence):
        yield from _zh_sentence(sentence, ctx)
    else:
        yield from _en_sentence(sentence, ctx)


# Types a tool can be stated as: the user's skill, their preference, their project's stack.
_HELD_TYPES = frozenset({"skill", "preference", "project"})
# Subjects of the lexicon's preferences: "VS Code with the Vim plugin" names one editor.
_ONE_PER_SENTENCE = frozenset({"editor", "os", "browser"})


# "I use npm — actually pnpm now", "回答详细点，不对，简短点": a later value of the sentence corrects
# the earlier one.
_CORRECTION_RE = re.compile(
    r"\b(?:actually|I\s+mean|scratch\s+that|no\s+wait|wait\s+no|correction|make\s+that|or\s+rather)\b"
    r"|其实|不对|哦不|应该是|更正|说错了|我是说",
    re.I,
)


def _one_value(
    memory: ExtractedMemory, earlier: Sequence[ExtractedMemory], sentence: str
) -> ExtractedMemory:
    """A second value of one key in one sentence says more of the first ("回答简短点，不要长篇大论"),
    unless the sentence corrects itself: it keeps its words but not the key, so it does not
    replace the first."""
    if not memory.subject or _CORRECTION_RE.search(sentence):
        return memory
    if any(e.subject == memory.subject for e in earlier):
        return replace(memory, subject="")
    return memory


def _repeats(
    memory: ExtractedMemory, earlier: Sequence[ExtractedMemory], sentence: str = ""
) -> bool:
    """Whether an earlier memory of the same sentence already says this (or more)."""
    text = memory.content.casefold()
    corrected = bool(_CORRECTION_RE.search(sentence))
    for e in earlier:
        # One sentence states one employer, one editor...: a second one is a misreading.
        single = (
            memory.type in ("personal", "skill")
            or memory.subject.startswith(("tool:", "version:", "stack:"))
            or memory.subject in _ONE_PER_SENTENCE
        )
        # "现在统一用 pnpm 了" read as the user's tool and as their wish: one value of one key,
        # whatever type each reading gave it (a second would replace the first).
        one_kind = e.type == memory.type or {e.type, memory.type} <= _HELD_TYPES
        if single and memory.subject and e.subject == memory.subject and one_kind:
            # "I use npm — actually pnpm now": the corrected value is kept and replaces it.
            return not corrected or same_fact(memory.content, e.content)
        if e.type == memory.type and text in e.content.casefold():
            return True
        # "我喜欢用 Neovim 写代码" read by two rules: one fact, in two wordings.
        if e.type == memory.type and same_fact(memory.content, e.content):
            return True
    return False


def extract_rules(turns: Sequence[Turn], *, tz: tzinfo | None = None) -> list[ExtractedMemory]:
    """Extract memories from the user turns of a conversation with patterns only.

    Each memory's `source_turn_ids` is the one turn it came from. Relative dates in
    tasks ("by Friday", "明天") are resolved against the turn's `ts` in `tz` (the
    local zone when None) and returned as an ISO `due`. Text is redacted first, so
    a secret never becomes part of a memory; quoted passages, code and text given to be
    translated or corrected are not the user's words and are skipped. Identical
    statements are returned once.
    """
    out: list[ExtractedMemory] = []
    seen: set[str] = set()
    session = Session()
    gated: set[str] = set()  # the memories the learned gate kept
    for turn in turns:
        if turn.role != "user" or is_trivial(turn.text):
            continue
        today = datetime.fromtimestamp(turn.ts, tz).date()
        ctx = Ctx(turn_id=turn.turn_id, today=today, session=session)
        start = len(out)
        words = own_words(redact(turn.text))
        # A sentence that states and asks is read part by part: its statements alone.
        parts = [(u.text, s) for s in SENTENCE_RE.findall(words) if s.strip() for u in units(s)]
        unread: list[str] = []  # the sentences no reader read
        once: set[str] = set()  # those whose whole sentence asks for this once ("this time")
        for sentence, whole in parts:
            if one_off(whole):
                once.add(sentence)
            said: list[ExtractedMemory] = []
            # The sentence's own readings first; then, with what they gave in `said`, the new
            # values it states for keys the session holds (read lazily, once they are known).
            later = carried_updates(sentence, ctx, said)
            # The general reader is the floor: it reads only a sentence no rule read.
            read: list[ExtractedMemory] = []  # every reading, repeats of earlier ones too
            floor = _floor(sentence, ctx, read)
            unread.append(sentence)
            zh = bool(CJK_RE.search(sentence))
            life = itertools.chain(
                (zh_life if zh else en_life)(sentence, ctx),
                (zh_kin if zh else en_kin)(sentence, ctx),
                (zh_passing if zh else en_passing)(sentence, ctx),
            )
            for memory in itertools.chain(life, _extract_sentence(sentence, ctx), later, floor):
                if memory.type == "preference" and sentence in once:
                    continue  # asked for this once: no lasting preference
                learned = _learned_language(memory, whole)
                retyped = "skill" if learned else reader_type(memory, sentence)
                if retyped != memory.type:
                    memory = replace(memory, type=retyped, importance=IMPORTANCE[retyped])
                memory = _as_held(memory, session)
                read.append(memory)
                key = memory.content.casefold()
                if key in seen or _repeats(memory, said, sentence):
                    continue
                memory = _one_value(memory, said, sentence)
                seen.add(key)
                said.append(memory)
                out.append(memory)
                session.spoke = session.spoke or memory.type in ("personal", "skill", "preference")
                if memory.subject:
                    session.values[memory.subject] = memory
                if memory.type == "personal":
                    session.self_turn = turn.turn_id
                    if memory.subject == "name":
                        session.named = memory.content
                if memory.type == "decision" and memory.subject:
                    session.decided.add(memory.subject)
            if read:
                unread.pop()
            if not CJK_RE.search(sentence):
                out += _role_stack(sentence, said, ctx, seen)
        # A change names its old and new values: the new one's memory replaces the old one's.
        if not apply_changes(words, ctx, out, start):
            # A correction or a value left behind in a shape no change phrase has.
            apply_corrections(words, ctx, out, start)
        # A value the turn says now holds replaces the session's earlier one of its class.
        apply_holds(words, ctx, out, start)
        # A change said in other words than its first statement lands on that statement's key.
        first_statements(words, ctx, out, start)
        apply_links(words, ctx, out, start)
        # A change that names the value it ends replaces the user's earlier statement of it.
        apply_named(words, ctx, out, start)
        # Behind them all, the learned gate: in a sentence no reader read, a clause none of the
        # turn's memories covers.
        held = {m.content.casefold() for m in out[start:]}
        for sentence in unread:
            for memory in learned_statements(
                sentence, ctx, functools.partial(_covered_by, out[start:]), later=start > 0
            ):
                if memory.type == "preference" and sentence in once:
                    continue  # asked for this once ("这次回答用表格的形式")
                if memory.content.casefold() not in seen | held:
                    held.add(memory.content.casefold())
                    out.append(memory)
                    gated.add(memory.content)
        # A change no reader linked, one side of it kept by the gate or its old value left by
        # name: the most alike earlier memory is replaced.
        apply_generic(words, out, start, gated)
        # A new version or date said without what it is of: the slot an earlier turn filled.
        apply_slots(words, ctx, out, start)
        # A value the turn leaves by name, or a choice it reverses: the memory naming it.
        apply_moved(words, ctx, out, start)
        # A name the turn leaves that only an earlier sentence said: that sentence was the user's.
        earlier = [(t, s) for t, s in session.sentences if t != turn.turn_id]
        recall_left(words, out, start, earlier)
        _one_of_each(out, start)
        if once:
            # A clause kept as said by a pass after the readers, from a request for this once.
            asked = [s.casefold() for s in once]
            out[start:] = [
                m
                for m in out[start:]
                if m.type != "preference"
                or not any(_AS_SAID_RE.sub("", m.content).casefold() in a for a in asked)
            ]
        seen.update(m.content.casefold() for m in out[start:])
    return out


# A spoken language the user learned to a level ("I'm fluent in Portuguese", "我日语过了 N1", "I'm
# learning German") is a skill; one they were born to ("I speak Dutch at home", 粤语是我的母语)
# is who they are.
_LANGUAGE_NAME_RE = re.compile(
    r"\b(?:" + "|".join(sorted(SPOKEN_LANGUAGES)) + r")\b"
    r"|(?:粤|英|日|韩|法|德|俄|意大利|西班牙|葡萄牙|阿拉伯)语|日文|法文|德文|英文",
    re.I,
)
_LEVEL_RE = re.compile(
    r"\b(?:fluent|fluently|proficient|conversational|learning|studying|intermediate|advanced"
    r"|beginner|certified|passed|JLPT|HSK|TOEFL|IELTS|DELF|DELE|[ABC][12]|N[1-5])\b"
    r"|过了|考了|考过|在学|学了|学过|熟练|流利|专[四八]|[四六]级",
    re.I,
)
_NATIVE_RE = re.compile(
    r"\b(?:native|natively|mother\s+tongue|first\s+language|at\s+home|grew\s+up|growing\s+up)\b"
    r"|母语|老家|在家|从小",
    re.I,
)


def _learned_language(memory: ExtractedMemory, sentence: str) -> bool:
    """Whether a personal memory names a spoken language the sentence says the user learned."""
    return (
        memory.type == "personal"
        and _LANGUAGE_NAME_RE.search(memory.content) is not None
        and _LEVEL_RE.search(sentence) is not None
        and not _NATIVE_RE.search(sentence)
    )


_AS_SAID_RE = re.compile(r"^(?:User(?:'s)?:?\s*|用户：)")


def _one_of_each(out: list[ExtractedMemory], start: int) -> None:
    """A statement the turn gave twice under two keys (a reader's and a change's) is kept once:
    with the key an earlier memory has, so the change still replaces it (placement would keep
    the first of the two and drop the other's key)."""
    before = {m.subject for m in out[:start] if m.subject}
    by_text: dict[str, list[int]] = {}
    for j in range(start, len(out)):
        by_text.setdefault(out[j].content.casefold(), []).append(j)
    drop: set[int] = set()
    for group in by_text.values():
        if len(group) < 2:
            continue
        keep = next((j for j in group if out[j].subject in before), group[0])
        drop.update(j for j in group if j != keep)
    if drop:
        out[start:] = [m for j, m in enumerate(out[start:], start) if j not in drop]


def _covered_by(read: Sequence[ExtractedMemory], clause: str) -> bool:
    return covered(clause, read) or shares_value(clause, read)


def _floor(sentence: str, ctx: Ctx, read: list[ExtractedMemory]) -> Iterator[ExtractedMemory]:
    """The general reader's statements of the clauses of a sentence the rules before it did not
    read (`read`, their readings, is looked at once they have run)."""
    zh = bool(CJK_RE.search(sentence))
    moves = list((zh_moves if zh else en_moves)(sentence, ctx))
    requests = list((zh_standing if zh else en_standing)(sentence, ctx))
    statements = (zh_general if zh else en_general)(sentence, ctx)
    children = (zh_children if zh else en_children)(sentence, ctx)
    for clause, memory in itertools.chain(moves, requests, children, statements):
        if not covered(clause, read):
            read.append(memory)  # a clause read as a request is not read again as a statement
            yield memory


def _as_held(memory: ExtractedMemory, session: Session) -> ExtractedMemory:
    """A new value of a key the session holds is the same fact changed, so it keeps the held
    fact's type: "I'm on Python 3.9" then "I meant 3.12", "前端项目用 yarn" then "现在统一用
    pnpm 了" (however each sentence's wording reads alone); a new tool for something decided
    earlier is that decision revised."""
    if memory.subject in session.decided and memory.type in _HELD_TYPES:
        return replace(memory, type="decision", importance=IMP_DECISION)
    held = session.values.get(memory.subject) if memory.subject else None
    if held is not None and held.type != memory.type and {held.type, memory.type} <= _HELD_TYPES:
        return replace(memory, type=held.type)
    return memory


_NEGATION_RE = re.compile(r"\b(?:never|not|don't|haven't|no|without|can't)\b", re.I)
_TECH_WORD_RE = re.compile(r"[A-Za-z][\w.+#\-]*\w(?:\+\+|#)?|[A-Z]")


def _role_stack(
    sentence: str, said: Sequence[ExtractedMemory], ctx: Ctx, seen: set[str]
) -> list[ExtractedMemory]:
    """ "I'm the only frontend dev, so all the React + Tailwind work lands on me": the tools
    named where the user states their role are the user's tools."""
    if not any(m.subject == "role" for m in said) or any(m.type == "skill" for m in said):
        return []
    names: list[str] = []
    for clause in _EN_CLAUSE_RE.split(sentence):
        if _NEGATION_RE.search(clause):
            continue
        for word in _TECH_WORD_RE.findall(clause):
            tech = mentioned_tech(word)
            if tech is not None and tech.category in ("language", "framework", "platform", "tool"):
                names.append(tech.name)
    names = list(dict.fromkeys(names))
    if not names:
        return []
    memory = ctx.mem(f"User works with {join_en(names)}", "skill", IMP_SKILL)
    if memory.content.casefold() in seen:
        return []
    seen.add(memory.content.casefold())
    return [memory]
