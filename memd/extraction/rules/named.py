"""A change that names the value it ends: the user's earlier statement of it is what it replaces.

"I ditched Homebrew after the last update; MacPorts manages the Mac's packages now", "Hazelcast
前年就下掉了", "vivo 那台给我妈了，现在手上是荣耀 Magic6", "We had to rename Kestrel; it's Osprey
from now on": a later turn names the old value itself, in a clause that leaves it (ditched, went
away, rename, reversed, is done, put an end to; 下掉, 不干了, 卖了, 否了, 给…了) or takes it back
(scratch the bit about, misspoke; 说错, 记岔, 说串). That the user now ends the value says the
earlier turn that named it stated something of theirs, whatever shape that statement had — the
readers keep only the shapes they know, so the first statement was often never stored. Here:

- the old value is a name of the leaving clause that an earlier turn of the user's also says:
  a capitalised word or a technology, a value of the statement classes' lexicon, a 「」 name, or
  the longest run of Chinese characters both turns share;
- the old statement is the last earlier memory naming it, else the clause of the earlier turn's
  statement (no question, no one else's) that names it, kept now as said then, from that turn;
- the new value is a memory of the turn that does not name the old value, else the turn's clause
  that says what holds now (now, from now on, instead; 现在, 改, 换, 应该是, 回去) or, failing one,
  the clause after the leaving one that names something;

and both take one key, so placement marks the old statement superseded. Someone else's change, a
question or a hypothetical changes nothing; a turn that names an earlier value without leaving it
("Glasgow is lovely in spring") replaces nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from memd.core.models import ExtractedMemory
from memd.extraction.rules.clauses import someone_else
from memd.extraction.rules.common import CJK_RE, SENTENCE_RE, Ctx, is_question
from memd.extraction.rules.links import lexicon_classes
from memd.extraction.rules.mentions import techs_in
from memd.extraction.rules.replaced import names_value
from memd.extraction.rules.units import cut
from memd.extraction.rules.zh_clauses import RELATION_RE

# A clause that ends a value or takes it back.
_EN_LEAVE_RE = re.compile(
    r"\b(?:ditch(?:ed)?|went\s+away|gone|go(?:t|ne)?\s+rid\s+of|renam(?:e|ed)|reversed|revers(?:e|ing)"
    r"|scrap(?:ped)?|dropp(?:ed)|dumped|retired|killed|sunset|replaced|is\s+done|are\s+done"
    r"|was\b.*\buntil|put\s+an\s+end\s+to|ended|gave\s+up|no\s+longer|misspoke"
    r"|(?:lives|stays)\s+with\s+(?:my|our|a)|rehomed|gave\s+(?:\w+\s+){0,3}away|traded\s+(?:\w+\s+){0,3}in"
    r"|scratch(?:\s+the\s+bit)?|take\s+(?:that|it)\s+back|not\s+\w+\s+anymore|used\s+to)\b"
    # a correction's "…, not 41": the value it takes back
    r"|^\*?\s*not\s+(?=\S+$)",
    re.I,
)
_ZH_LEAVE_RE = re.compile(
    r"不再|不[\u4e00-\u9fff]{1,2}了|停了|放弃|下掉|下线|卖了|否了|弃了|淘汰|退了|离职|辞职|换掉|删了|卸了"
    r"|记岔|说串|说错|打错|给[\u4e00-\u9fff]{1,3}了|没了|不用了|砍了|黄了"
    # a correction's "不是产品经理": the value it takes back
    r"|不是|送(?:到|给|人|走)|回老家"
)
# A clause that says what holds now.
_EN_NOW_RE = re.compile(
    r"\b(?:now|from\s+now\s+on|these\s+days|instead|nowadays|going\s+forward|transferred"
    r"|switched|moved|it's|it\s+is)\b",
    re.I,
)
_ZH_NOW_RE = re.compile(r"现在|如今|目前|改|换|应该是|以后|回去|回到|搬到|转到|调到|成了")
_EN_UNSURE_RE = re.compile(
    r"^(?:if|suppose|imagine|assuming|what\s+if)\b|\b(?:thinking\s+(?:about|of)|considering|might"
    r"|maybe|should\s+I|could|plan(?:ning)?\s+to|want\s+to)\b",
    re.I,
)
_ZH_UNSURE_RE = re.compile(
    r"如果|假如|假设|要是|万一|打算|考虑|想要?|计划|可能|也许|是否|要不要|听说|据说"
)
_EN_ENDED_RE = re.compile(
    r"^(?:the\s+|my\s+|our\s+)?(?P<v>[a-z][\w\-]*(?:\s+[a-z][\w\-]*)?)\s+(?:was|were|is|are|went|got)\b"
    r"|\b(?:ditch(?:ed)?|dropped|dumped|quit|gave\s+up|given\s+up|put\s+an\s+end\s+to|scrap(?:ped)?"
    r"|renam(?:e|ed)|retired|killed|replaced|stopped)\s+(?:the\s+|my\s+|our\s+)?"
    r"(?P<o>[a-z][\w\-]*)",
)
_ZH_THEIRS_RE = re.compile(
    r"^我(?:的)?(?:爸|妈|老婆|老公|女朋友|男朋友|同事|朋友|儿子|女儿|孩子|哥|姐|弟|妹|室友|领导|老板)"
    r"|^[\u4e00-\u9fff]{1,4}(?:让|叫|要求)我"
)
# Words of a clause that say when, not what.
_EN_PLAIN = frozenset(
    "user users from these days instead nowadays going forward with that this there then have "
    "been since onwards anymore just really also work works".split()
)
_NOT_RE = re.compile(r"不是|^\*?\s*not\s+", re.I)
# A clause that gives the corrected value before the one it takes back.
_CORRECTED_RE = re.compile(r"^\*|^(?:我)?是|^(?:I\s+meant|it's|I'm)\b", re.I)
_NUMBER_RE = re.compile(r"(?<![\d.:])\d{2,}(?![\d]|[.:]\d)")
_ENDS_RE = re.compile(r"[。.!！?？]\s*$")
_EN_IT_RE = re.compile(r"\b(?:it|them|that\s+one)\b|它|那个", re.I)
_EN_NAME_RE = re.compile(r"\b(?-i:[A-Z][\w\-]*[A-Za-z0-9]|[A-Z]{2,})\b")
_EN_COMMON = frozenset(
    "i i'm i've the a an we we're my our it it's this that these those they you your can could "
    "would should please ok oh also and but so then now wait sorry thanks hi hey heads-up "
    "scratch monday tuesday wednesday thursday friday saturday sunday".split()
)
_LATIN_RE = re.compile(r"(?<![A-Za-z])[A-Za-z][\w.+\-]*[A-Za-z0-9]")
_QUOTED_RE = re.compile(r"「([^」]{1,12})」|“([^”]{1,12})”|\"([^\"]{1,24})\"")
_ZH_STOP = re.compile(
    r"我|你|他|她|了|的|吗|呢|吧|是|这|那|个|在|就|都|也|还|不|没|有|和|跟|给|把|被|要"
)
# A statement of a project's name: "the project is called Kestrel", 项目代号叫「长风」.
_NAMED_RE = re.compile(r"\b(?:called|named|codenamed?)\b|叫|代号", re.I)


def _zh(text: str) -> bool:
    return bool(CJK_RE.search(text))


def _own(sentence: str) -> bool:
    """Whether a sentence is a statement of the user's own: no question, no hypothesis, no one
    else's."""
    text = sentence.strip()
    if not text or is_question(text):
        return False
    if _zh(text):
        # "组长我不干了" is the user's own: a relation's word first is theirs only without 我
        other = RELATION_RE.match(text) and "我" not in cut(text, zh=True)[0]
        return not (_ZH_UNSURE_RE.search(text) or other or _ZH_THEIRS_RE.match(text))
    return not (_EN_UNSURE_RE.search(text) or someone_else(text))


def _names(clause: str) -> list[str]:
    """The names a clause says that can be a value: capitalised words and technologies, the
    lexicon's values, quoted names, and (Chinese) its runs of content characters."""
    found = [next(g for g in m.groups() if g) for m in _QUOTED_RE.finditer(clause)]
    found += techs_in(clause, english=not _zh(clause))
    found += [v for _, v, _ in lexicon_classes(clause)]
    found += [w for w in _EN_NAME_RE.findall(clause) if w.casefold() not in _EN_COMMON]
    for m in _EN_ENDED_RE.finditer(clause):
        # "design was my job until March", "put an end to sailing": what the clause ends
        found += [
            w
            for w in (m.group("v") or m.group("o")).split()
            if len(w) >= 4 and w.casefold() not in _EN_COMMON
        ]
    found += _NUMBER_RE.findall(clause)
    if _zh(clause):
        found += _LATIN_RE.findall(clause)
        found += [r for r in _ZH_STOP.split(clause) if len(r) >= 2 and CJK_RE.search(r)]
    return list(dict.fromkeys(n.strip() for n in found if n.strip()))


def _leaves(clause: str) -> bool:
    return bool((_ZH_LEAVE_RE if _zh(clause) else _EN_LEAVE_RE).search(clause))


def _shared(name: str, earlier: str) -> str:
    """The part of `name` an earlier sentence also says ("" when none): the whole name, or for a
    run of Chinese characters its longest part of two or more."""
    if not _zh(name):
        return name if names_value(earlier, name) else ""
    for size in range(len(name), 1, -1):
        for i in range(len(name) - size + 1):
            part = name[i : i + size]
            if CJK_RE.fullmatch(part[0]) and part in earlier:
                return part
    return ""


def _old_value(
    clauses: Sequence[str], earlier: Sequence[tuple[str, str]]
) -> tuple[int, str, int] | None:
    """(leaving clause, old value, earlier sentence index) of a turn whose clause leaves a value
    an earlier sentence of the user's says."""
    for i, clause in enumerate(clauses):
        if not _leaves(clause):
            continue
        # "团子不是柯基": what a correction takes back is what follows its "not"
        taken = _NOT_RE.split(clause, maxsplit=1)
        names = _names(taken[-1])
        it = i - 1 if i and _EN_IT_RE.search(clause) else i
        names += _names(clauses[it]) if it != i else []  # "Sentry got too pricey so we ditched it"
        # "Java 8 的镜像下线了" beside "现在全是 Java 21": a name the turn still says is not ended
        kept = [c for j, c in enumerate(clauses) if j not in (i, it) and not _leaves(c)]
        names = [n for n in names if not any(names_value(c, n) for c in kept)]
        for name in names:
            for k in range(len(earlier) - 1, -1, -1):
                value = _shared(name, earlier[k][1])
                if value:
                    return i, value, k
    return None


def _new_clause(clauses: Sequence[str], leaving: int, value: str) -> str:
    """The clauses of the turn that say what holds now: the first that says "now", else the one a
    correction gives before the value it takes back ("*44, not 41"), else the first after the
    leaving one that names something; with the rest of its sentence that leaves nothing
    ("回去写代码，当个普通开发")."""
    others = {
        i: c
        for i, c in enumerate(clauses)
        if i != leaving
        and not names_value(c, value)
        and not _leaves(c)
        and not is_question(c)
        and _own(c)
    }
    now = [i for i, c in others.items() if (_ZH_NOW_RE if _zh(c) else _EN_NOW_RE).search(c)]
    named = [i for i, c in others.items() if i > leaving and _names(c)]
    # "我是项目经理，不是产品经理", "*44, not 41": the correction says its value before
    before = [
        i
        for i in sorted(others, reverse=True)
        if i < leaving and (i == leaving - 1 or _CORRECTED_RE.search(clauses[i]))
    ]
    first = next((i for i in (*now, *before, *named) if _words(others[i])), None)
    if first is None:
        return ""
    said = [others[first]]
    i = first
    while not _ENDS_RE.search(clauses[i]) and i + 1 in others:
        i += 1
        said.append(others[i])
    return ("，" if _zh(said[0]) else ", ").join(c.strip(" ，,。.;；!！") for c in said)


def _kind(old: str, new: str) -> str:
    """The type of a statement no reader typed: a project's name, a technology, else the user's."""
    if _NAMED_RE.search(old) and (_QUOTED_RE.search(old) or _EN_NAME_RE.search(old)):
        return "project"
    if techs_in(old, english=not _zh(old)) or techs_in(new, english=not _zh(new)):
        return "skill"
    return "personal"


def _keyed(memory: ExtractedMemory) -> bool:
    return bool(memory.subject) and not memory.subject.startswith(("about:", "changed:"))


def _new_memories(out: Sequence[ExtractedMemory], start: int, value: str, new: str) -> list[int]:
    """The turn's memories that can be the new value: no task, not naming the old value; when a
    clause says what holds now, those that say it or name what it names."""
    free = [
        j
        for j in range(start, len(out))
        if out[j].type != "task" and not names_value(out[j].content, value)
    ]
    if not new:
        return free
    words = _words(new)
    return [j for j in free if words & _words(out[j].content)]


def _words(text: str) -> set[str]:
    """The words of a text that can say its value: its Chinese runs and longer words."""
    found = {w for w in re.findall(r"[a-z][\w\-]{3,}", text.casefold()) if w not in _EN_PLAIN}
    found.update(_NUMBER_RE.findall(text))
    found.update(r for r in _ZH_STOP.split(text) if len(r) >= 2 and CJK_RE.fullmatch(r[0]))
    found.update(n.casefold() for n in _LATIN_RE.findall(text) if len(n) >= 2 and n[0].isupper())
    return found


def _swapped(held: str, value: str, new: str) -> str:
    """The new value's statement: the held statement with the value swapped when the clause says
    only the value ("*44" for "User is 41 years old"), else the clause."""
    core = new.strip(" *，,。.;；!！")
    if len(core.split()) == 1 and not _zh(core) and names_value(held, value):
        return re.sub(re.escape(value), core, held, count=1)
    return _said(new)


def _said(text: str) -> str:
    return ("用户：" if _zh(text) else "User: ") + text.strip(" ，,。.;；!！")


def _clause_of(sentence: str, value: str) -> str:
    for clause in cut(sentence.strip(), zh=_zh(sentence)):
        if names_value(clause, value):
            return clause
    return sentence.strip()


def apply_named(text: str, ctx: Ctx, out: list[ExtractedMemory], start: int) -> None:
    """Give a turn's change that names an earlier value of the user's (`out[start:]` are the
    turn's memories) the key of that value's statement, kept from its turn when no reader kept
    it. In place; the turn's statements join what the session remembers."""
    own = [s for s in SENTENCE_RE.findall(text) if s.strip() and _own(s)]
    clauses = [c for s in own for c in cut(s.strip(), zh=_zh(s))]
    if clauses:
        _link_turn(clauses, ctx, out, start)
    ctx.session.sentences += [(ctx.turn_id, s) for s in own]


def _link_turn(clauses: Sequence[str], ctx: Ctx, out: list[ExtractedMemory], start: int) -> None:
    found = _old_value(clauses, ctx.session.sentences)
    if found is None:
        return
    leaving, value, k = found
    held = next(
        (
            i
            for i in range(start - 1, -1, -1)
            if out[i].type != "task" and names_value(out[i].content, value)
        ),
        None,
    )
    if (
        held is not None
        and _keyed(out[held])
        and any(m.subject == out[held].subject for m in out[start:])
    ):
        return  # a reader keyed the change already ("我现在不吃素了")
    new_text = _new_clause(clauses, leaving, value)
    said = _new_memories(out, start, value, new_text)
    if not new_text:
        return
    turn, first = ctx.session.sentences[k]
    if held is None:
        old_text = _clause_of(first, value)
        kind = out[said[0]].type if said else _kind(old_text, new_text)
        memory = ctx.mem(_said(old_text), kind, 6 if kind == "personal" else 5)
        out.insert(start, replace(memory, source_turn_ids=(turn,)))
        held, start = start, start + 1
        said = [j + 1 for j in said]
    old = out[held]
    if said:
        j = said[0]
    else:
        out.append(ctx.mem(_swapped(old.content, value, new_text), old.type, old.importance))
        j = len(out) - 1
    new = out[j]
    subject = next((m.subject for m in (old, new) if _keyed(m)), f"named:{value.casefold()}")
    out[held] = replace(old, subject=subject)
    out[j] = replace(new, subject=subject, type=old.type if not said else new.type)
    ctx.session.values[subject] = out[j]
