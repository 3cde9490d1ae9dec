"""The user's household and origins read by structure, wherever they stand in a sentence: their
children and pets named by their possessive, the languages they speak as "my nth language", the
home they go back to.

A message often names these on the way to something else: "My son's school sends everything as
PDFs", "With three kids under ten at home I …", "Our cat, Kumquat, walked across the keyboard",
"家里那只柯基叫馒头，刚才它把网线咬断了", "过年要回贵州遵义老家，那边网不好". The clause's subject
is then the child, the pet or a trip, so the clause readers see someone else or a plan; the
possessive (my/our, 我/我的/我家/家里) or the shape ("回X老家") still says what the user has or
where they are from:

- `family:children`: how many children ("I have two kids", "a dad of two", 我有两个孩子);
- `kin:<who>`: a child named by the user's possessive ("my daughter", 我女儿, a message that
  opens with 孩子); someone else's ("my sister's son", 我同事的女儿) gives nothing;
- `pet`: an animal named beside its kind ("Our dog, Pretzel", 家里那只橘猫叫团子);
- `spoken-language`: "English is my third language after Amharic and Italian";
- `hometown`: 回X老家, "fly home to X".

A question gives nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memd.core.models import ExtractedMemory
from memd.extraction.rules.common import (
    IMP_FAMILY,
    IMP_HOMETOWN,
    SPOKEN_LANGUAGES,
    Ctx,
    is_question,
)
from memd.extraction.rules.places import is_place
from memd.extraction.rules.subjects import ANIMALS

_COUNT = r"(?:a|an|one|two|three|four|five|six|\d)"
_EN_CHILDREN_RES = (
    re.compile(
        r"\b(?:I|we)(?:'ve|\s+have)?\s+(?:got|have|has)\s+(?P<n>"
        + _COUNT
        + r"\s+(?:(?:young|little"
        r"|small|grown(?:-up)?|teenage|wonderful|lovely)\s+)?(?:kids?|children|child|sons?|daughters?"
        r"|boys|girls|toddlers?|teenagers?|teens))\b",
        re.I,
    ),
    re.compile(
        r"\bI(?:'m|\s+am)\s+an?\s+(?:(?:single|working|stay-at-home|proud|busy)\s+)?(?P<n>(?:mum|mom"
        r"|dad|father|mother|parent)\s+(?:of|to)\s+" + _COUNT + r")\b",
        re.I,
    ),
    re.compile(
        r"^with\s+(?P<n>(?:two|three|four|five|\d)\s+(?:(?:young|little|small)\s+)?(?:kids|children"
        r"|boys|girls))\b",
        re.I,
    ),
)
_ZH_CHILDREN_RES = (
    re.compile(
        r"^我(?:家|们家)?(?:有|养了?)(?P<n>[一两二三四五六\d]个(?:孩子|娃|小孩|儿子|女儿|闺女))"
    ),
    re.compile(r"^我是(?P<n>[一两二三四五六\d]个(?:孩子|娃|小孩)的(?:妈妈|爸爸|妈|爸|母亲|父亲))"),
)
# "my daughter", "our two boys": not "my sister's son" (a possessive between).
_EN_MY_CHILD_RE = re.compile(
    r"\b(?:my|our)\s+(?:(?:little|youngest|oldest|eldest|older|younger|baby|teenage|two|three"
    r"|[\w]+-year-old)\s+)?(?P<who>daughters?|sons?|kids?|children|toddler|twins)\b(?!-in-law)",
    re.I,
)
_ZH_MY_CHILD_RE = re.compile(
    r"^(?:我|我的|我家|我们家|家里)(?:那个|的)?(?P<who>女儿|儿子|闺女|孩子|娃|小孩|大宝|二宝)"
    r"|^(?P<who2>孩子|女儿|儿子|闺女)(?=刚|今年|在|上|已经|才)"
)
# A child the user looks after, as the object of the verb: no rule reads it as a family fact.
_ZH_CARE_RE = re.compile(
    r"^(?:我)?(?:[^，,我他她]{0,4})(?:要|得)?(?:陪|接|送|带|哄)(?:我)?(?P<who>女儿|儿子|孩子|闺女|娃)"
)
_EN_CARE_RE = re.compile(
    r"\bI\s+(?:(?:usually|always|often|have\s+to|need\s+to)\s+)?(?:take|pick\s+up|drop\s+off|drive"
    r"|walk|bring)\s+(?:my|our)\s+(?P<who>daughters?|sons?|kids?|children|twins)\b",
    re.I,
)
_EN_PET_NAMED_RE = re.compile(
    r"\b(?:my|our)\s+(?P<pet>(?:[\w\-]+\s+)?" + ANIMALS + r"),\s+(?-i:(?P<name>[A-Z][\w'\-]+)),",
    re.I,
)
_ZH_ANIMALS = r"(?:[\u4e00-\u9fff]{0,2}?(?:猫|狗|柯基|泰迪|金毛|哈士奇|柴犬|布偶|英短|美短|兔子|仓鼠|鹦鹉|龟))"
_ZH_PET_NAMED_RE = re.compile(
    r"(?:家里|我家|我的|我们家)(?:的)?(?:那|这)?(?:只|条|头)?(?P<pet>" + _ZH_ANIMALS + r")"
    r"(?:叫|名叫|名字叫)(?P<name>[\u4e00-\u9fffA-Za-z]{1,4})"
)
# "家里养了两只布偶猫，一只叫汤圆一只叫年糕": pets counted, then named (two pets: no key).
_ZH_PETS_RE = re.compile(
    r"(?:^|(?<=[，,]))(?:家里|我家|我们家|我)(?:养了|有)(?:[两二三四\d])只"
    + _ZH_ANIMALS
    + r"[^。]*?叫"
)
_LANGUAGE_WORD_RE = re.compile(r"[A-Z][a-z]+")
_EN_NTH_LANGUAGE_RE = re.compile(
    r"\bis\s+my\s+(?:first|second|third|fourth|native|home|mother)\s+(?:language|tongue)\b"
    r"|^at\s+home\s+(?:it's|it\s+is|we\s+speak)\b",
    re.I,
)
# "我英语一般，日语还行": a language and how well the user speaks it.
_ZH_LANGUAGES = r"英语|日语|韩语|法语|德语|西班牙语|俄语|粤语|普通话|闽南语|上海话|四川话|客家话|意大利语|葡萄牙语"
_ZH_SPEAKS_RE = re.compile(
    r"^(?:我的?)?(?P<l>" + _ZH_LANGUAGES + r")(?:说得|讲得|水平)?(?:很|还|挺|比较|特别|非常)?"
    r"(?:一般|还行|不错|流利|很好|熟练|凑合|是母语|母语|可以|好)"
)
_ZH_HOMETOWN_RE = re.compile(r"回(?:到)?(?P<p>[\u4e00-\u9fff]{2,6}?)老家")
_EN_HOMETOWN_RE = re.compile(
    r"\b(?:fly|flying|go|going|head|heading|back)\s+home\s+to\s+(?P<p>(?-i:[A-Z])[\w.'\-]*)", re.I
)


def _zh_has_place(text: str) -> bool:
    return any(is_place(text[i : i + n]) for n in (2, 3, 4) for i in range(len(text) - n + 1))


def en_kin(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    """What an English sentence says of the user's household and origins (see the module)."""
    text = sentence.strip().rstrip(".!")
    if not text or is_question(text):
        return
    count = next((m for rx in _EN_CHILDREN_RES if (m := rx.search(text))), None)
    if count is not None:
        yield ctx.mem(f"User has {count.group('n')}", "personal", IMP_FAMILY,
                      subject="family:children")  # fmt: skip
    if (m := _EN_CARE_RE.search(text)) and count is None:
        who = m.group("who").casefold()
        yield ctx.mem(f"User: {text}", "personal", IMP_FAMILY, subject=f"kin:{who.rstrip('s')}")
    if m := _EN_PET_NAMED_RE.search(text):
        yield ctx.mem(f"User has a pet: {m.group('pet')} called {m.group('name')}", "personal",
                      IMP_FAMILY, subject="pet")  # fmt: skip
    if _EN_NTH_LANGUAGE_RE.search(text):
        spoken = [w for w in _LANGUAGE_WORD_RE.findall(text) if w.casefold() in SPOKEN_LANGUAGES]
        if spoken:
            yield ctx.mem(f"User speaks {', '.join(dict.fromkeys(spoken))}", "personal",
                          IMP_FAMILY, subject="spoken-language")  # fmt: skip
    if (m := _EN_HOMETOWN_RE.search(text)) and is_place(m.group("p")):
        yield ctx.mem(f"User is from {m.group('p')}", "personal", IMP_HOMETOWN, subject="hometown")


def zh_kin(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    """What a Chinese sentence says of the user's household and origins (see the module)."""
    text = sentence.strip().rstrip("。！!；;")
    if not text or is_question(text):
        return
    for clause in _zh_clauses(text):
        count = next((m for rx in _ZH_CHILDREN_RES if (m := rx.search(clause))), None)
        if count is not None:
            yield ctx.mem(f"用户{clause.removeprefix('我')}", "personal", IMP_FAMILY,
                          subject="family:children")  # fmt: skip
    if m := _ZH_PET_NAMED_RE.search(text):
        yield ctx.mem(f"用户养了{m.group('pet')}，叫{m.group('name')}", "personal", IMP_FAMILY,
                      subject="pet")  # fmt: skip
    spoken = [m.group("l") for c in _zh_clauses(text) if (m := _ZH_SPEAKS_RE.match(c))]
    if spoken and _ZH_SPEAKS_RE.match(_zh_clauses(text)[0]) and text.startswith("我"):
        yield ctx.mem(f"用户会说{'、'.join(spoken)}：{text}", "personal", IMP_FAMILY,
                      subject="spoken-language")  # fmt: skip
    if m := _ZH_PETS_RE.search(text):
        yield ctx.mem(f"用户{text[m.start() :]}", "personal", IMP_FAMILY, subject="pets")
    for clause in _zh_clauses(text):
        if m := _ZH_CARE_RE.search(clause):
            yield ctx.mem(f"用户{clause}", "personal", IMP_FAMILY, subject=f"kin:{m.group('who')}")
            break
    m = _ZH_HOMETOWN_RE.search(text)
    if m is not None and _zh_has_place(m.group("p")):
        yield ctx.mem(f"用户老家在{m.group('p')}", "personal", IMP_HOMETOWN, subject="hometown")


def _zh_clauses(text: str) -> list[str]:
    return [c.strip() for c in re.split(r"[，,；;：]", text) if c.strip()]


Read = tuple[str, ExtractedMemory]  # a clause and the statement read from it


def en_children(sentence: str, ctx: Ctx) -> Iterator[Read]:
    """A child the user names by their possessive ("My son's school …"), for the clauses no
    other rule read (the general reader's floor): `kin:<who>`."""
    text = sentence.strip().rstrip(".!")
    if not text or is_question(text) or any(rx.search(text) for rx in _EN_CHILDREN_RES):
        return
    if m := _EN_MY_CHILD_RE.search(text):
        who = m.group("who").casefold()
        yield m.group(0), ctx.mem(f"User has {'a ' if not who.endswith('s') else ''}{who}",
                                  "personal", IMP_FAMILY, subject=f"kin:{who.rstrip('s')}")  # fmt: skip


def zh_children(sentence: str, ctx: Ctx) -> Iterator[Read]:
    """The same in Chinese: 我女儿…, a message that opens with 孩子刚上小学."""
    text = sentence.strip().rstrip("。！!；;")
    if not text or is_question(text):
        return
    for clause in _zh_clauses(text):
        if any(rx.search(clause) for rx in _ZH_CHILDREN_RES):
            return
        if m := _ZH_MY_CHILD_RE.search(clause):
            who = m.group("who") or m.group("who2")
            said = clause[m.end() :]
            yield (
                clause,
                ctx.mem(f"用户的{who}{said}", "personal", IMP_FAMILY, subject=f"kin:{who}"),
            )
            return
