"""Corrections and values left behind, read from their shape whatever the values are.

`replaced` reads a change that names its old and new values in one phrase ("switched from X to
Y"). People also correct what they said and leave a value behind in other shapes:

- a correction that names both: "不是湖南，是湖北", "X不对，是Y", "it's nushell, not fish", "I said
  fish, that's wrong: it's nushell", "it's nushell, I moved off fish", "X is out, Y is in";
- a bare correction that names only the right value: "我记错了，是 33", "我说错了，是在 OPPO",
  "I misspoke: it's tree nuts I'm allergic to". The wrong value is the one of the session's
  last statements that the turn names again outside the correction ("小米是我上一家公司",
  "peanuts are fine"), else the value of the same kind in the last statement (a number for a
  number, a name for a name);
- a value left behind: "I'm not on Arch anymore", "Travis is history", "Deepin 我早就不用了",
  "Jenkins 是以前的", "老的 MySQL 集群已经下线", "钓鱼好久没去了", "烟我已经戒了". The session's
  statement naming it is replaced by the turn's statement of what is there now (it takes the
  old statement's key and type), or, when the turn states nothing else, by the clause that
  leaves it behind.

A correction's new statement is the old one with the wrong value replaced by the right one (the
turn's own readings of the correction are dropped: "用户担任在 OPPO" misreads it). Questions,
plans, requests and someone else's words give nothing (`replaced._usable`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from difflib import SequenceMatcher

from memd.core.models import ExtractedMemory
from memd.extraction.rules.common import CJK_RE, SENTENCE_RE, Ctx
from memd.extraction.rules.dates import cn_number
from memd.extraction.rules.general import head_key
from memd.extraction.rules.places import is_place
from memd.extraction.rules.replaced import apply_pair, key_of_old, names_value, usable
from memd.extraction.rules.tech import lookup_tech

_V = r"[A-Za-z0-9](?:[A-Za-z0-9_.+#\-]*[A-Za-z0-9_+#])?(?:\s+(?-i:[A-Z0-9])(?:[A-Za-z0-9_.+#\-]*[A-Za-z0-9_+#])?){0,2}"
# A lowercase value of one or two words ("tree nuts"), for the bare English correction.
_LOOSE = r"[a-z][\w\-]*(?:\s+(?!I\b|I'm\b|that\b|which\b|not\b)[a-z][\w\-]*)?"
_Z = r"[A-Za-z0-9](?:[A-Za-z0-9_.+#\-]*[A-Za-z0-9_+#])?(?:\s+[A-Z0-9][A-Za-z0-9_.+#\-]*)?|[\u4e00-\u9fff]{1,6}?"
_ZEND = r"(?=$|[，,。！!；;\s了的吧啊呢啦]|我)"

_EN_BOTH = tuple(
    re.compile(p, re.I)
    for p in (
        r"\b(?:it's|it\s+is|its)\s+(?P<new>" + _V + r"),?\s+not\s+(?P<old>" + _V + r")\b",
        # the same the other way round: "it's not Vim, it's Helix", "not Vim but Helix"
        r"\b(?:it's|it\s+is|its)?\s*not\s+(?P<old>"
        + _V
        + r")\s*[,;]?\s+(?:it's|it\s+is|its|but)\s+"
        r"(?P<new>" + _V + r")",
        r"\bI\s+said\s+(?P<old>" + _V + r")\b[^.]*?\b(?:it's|it\s+is|its)\s+(?P<new>" + _V + r")",
        r"\b(?:it's|it\s+is|its)\s+(?P<new>" + _V + r"),?\s+(?:I|we)\s+(?:moved|switched|migrated)"
        r"\s+(?:off(?:\s+of)?|away\s+from)\s+(?P<old>" + _V + r")",
        r"\b(?P<old>" + _V + r")\s+is\s+out\s*[,;]\s*(?P<new>" + _V + r")\s+is\s+in\b",
    )
)
_EN_BARE = re.compile(
    r"\b(?:I\s+misspoke|scratch\s+that|correction|I\s+was\s+wrong|my\s+mistake"
    r"|my\s+bad|got\s+that\s+wrong|that's\s+wrong|I\s+mixed\s+(?:that\s+)?up|typo|misspelled"
    r"|mistyped|oops|sorry)\b[^.]*?"
    # the right value after "it's", "I meant", "should be", or a colon ("Typo on my side: Maarten")
    r"(?:\b(?:it's|it\s+is|its|I\s+meant|I\s+mean|should\s+be)\s+"
    r"|:\s*(?!(?:it|it's|I|I'm|I've|that|this|we|the|my)\b))(?P<new>" + _LOOSE + r"|" + _V + r")",
    re.I,
)
_ZH_BOTH = tuple(
    re.compile(p)
    for p in (
        r"不是\s*(?P<old>"
        + _Z
        + r")\s*[，,]?\s*(?:而|就)?是\s*(?:在\s*)?(?P<new>"
        + _Z
        + r")"
        + _ZEND,
        r"(?P<old>" + _Z + r")\s*不对[，,]\s*(?:应该)?是\s*(?:在\s*)?(?P<new>" + _Z + r")" + _ZEND,
    )
)
_ZH_BARE = re.compile(
    r"(?:记错了|说错了|搞错了|写错了|口误|说反了|^不对)[，,]?\s*(?:应该|其实)?是\s*(?:在\s*)?(?P<new>"
    + _Z
    + r")"
    + _ZEND
)
# A value left behind, with the value in the group `old`.
_EN_GONE = tuple(
    re.compile(p, re.I)
    for p in (
        r"\bnot\s+(?:on|using|in|at|with)\s+(?P<old>" + _V + r")\s+(?:anymore|any\s+more)\b",
        r"\bno\s+longer\s+(?:on|using|use|in|at|with)\s+(?P<old>" + _V + r")",
        r"\b(?P<old>" + _V + r")(?:'s|\s+is|\s+was)\s+(?:history|gone|out|over|dead|retired"
        r"|decommissioned|behind\s+(?:me|us))\b",
        r"\b(?:I|we)\s+(?:\w+\s+)?(?:moved|switched|migrated)\s+(?:off(?:\s+of)?|away\s+from)\s+"
        r"(?P<old>" + _V + r")",
        r"\b(?:uninstalled|dropped|ditched|retired|decommissioned|dumped)\s+(?P<old>" + _V + r")",
        r"\b(?:I've|I\s+have|we've|we\s+have)\s+dropped\s+(?P<old>" + _LOOSE + r")",
    )
)
_ZH_GONE = tuple(
    re.compile(p)
    for p in (
        r"(?P<old>" + _Z + r")\s*(?:我们?)?(?:早就|已经|早已|好久|很久)?(?:都)?"
        r"(?:不(?:再)?(?:用|写|玩|抽|去)了|没(?:再)?(?:用|去|碰|玩)了?|戒了|下线了?|停用了|淘汰了"
        r"|退役了|是以前的|弃用了)",
        r"(?:老的?|旧的?|以前的?)\s*(?P<old>" + _Z + r")\s*(?:集群|服务|系统|那套)?\s*(?:已经)?"
        r"(?:下线|停用|淘汰|不用)",
    )
)
# Where the turn says what is there now: "现在是 Fedora", "now on NixOS".
_ZH_NOW_RE = re.compile(
    r"现在(?:都)?(?:是|用|在用|改用|跑在|换成)\s*(?P<new>[A-Za-z0-9][A-Za-z0-9_.+#\-]*(?:\s+[A-Z0-9][A-Za-z0-9_.+#\-]*)?)"
)
_EN_NOW_RE = re.compile(
    r"\b(?:on|to|using|uses|use|with|it's|is)\s+(?:an?\s+|the\s+)?(?:[\w\-]+\s+)?"
    r"(?P<new>(?-i:[A-Z])[A-Za-z0-9_.+#\-]*[A-Za-z0-9_+#])(?:\s+[a-z]+)?\s+now\b"
    r"|(?:^|[,;]\s*)(?P<since>(?-i:[A-Z])[A-Za-z0-9_.+#\-]*[A-Za-z0-9_+#])\s+(?:since|these\s+days|now)\b",
    re.I,
)


# The user's words about their own earlier words: "I said fish", "我老是说反" are no reported speech.
_OWN_WORDS_RE = re.compile(
    r"\bI\s+(?:said|meant|misspoke)\b|(?:我|老是|又)?(?:说错了?|说反了?|记错了?|搞错了?|口误)"
    r"|(?:之前|刚才|上面|我)说的(?:是)?",
    re.I,
)


def apply_corrections(text: str, ctx: Ctx, out: list[ExtractedMemory], start: int) -> None:
    """Apply the corrections and values left behind a turn's `text` names to `out`, the
    session's memories (`out[start:]` are the turn's own; see the module). In place."""
    sentences = [s for s in SENTENCE_RE.findall(text) if s.strip()]
    if start == 0 or not sentences or not all(usable(_OWN_WORDS_RE.sub("", s)) for s in sentences):
        return
    joined = " ".join(s.strip() for s in sentences)
    zh = bool(CJK_RE.search(joined))
    for old, new in _both(joined, zh):
        if _held(out, start, old) is not None:
            _correct(old, new, ctx, out, start)
            return
    bare = (_ZH_BARE if zh else _EN_BARE).search(joined)
    if bare is not None:
        new = bare.group("new").strip()
        if _ZH_NUMBER_RE.fullmatch(new):
            new = str(cn_number(new))  # "不对，应该是二十七": a number like the one it corrects
        end = re.search(r"[,，。;；]|$", joined[bare.end("new") :])
        cut = (bare.start(), bare.end("new") + (end.start() if end else 0))
        old = _wrong_value(joined, cut, new, out, start)
        if old:
            _correct(old, new, ctx, out, start)
        return
    for shape in _ZH_GONE if zh else _EN_GONE:
        for m in shape.finditer(joined):
            old = m.group("old").strip()
            held = _held(out, start, old)
            if held is not None:
                _left_behind(held, old, m.group(0), joined, ctx, out, start)
                return
    _head_change(joined, zh, ctx, out, start)


# A thing named by its head noun changed to a new value: "手机换成 iPhone 15 了", "my phone is a
# Pixel now", "switched my browser to Vivaldi".
_ZH_HEAD_CHANGE_RE = re.compile(
    r"(?P<head>[\u4e00-\u9fff]{1,4}?)(?:也|都|已经|现在|早就|全)*(?:换成|换到|改成|改用|迁到|迁移到|切到)了?"
    r"\s*(?P<new>[A-Za-z][A-Za-z0-9.+#\-]*(?:\s+[A-Z0-9][A-Za-z0-9.+#\-]*)?|[\u4e00-\u9fff]{2,6}?)"
    r"(?=了|，|,|。|$|\s)"
)
_EN_HEAD_CHANGE_RE = re.compile(
    r"\bmy\s+(?P<head>[a-z]+)\s+is\s+(?:now\s+)?(?:an?\s+)?(?P<new>(?-i:[A-Z])[\w.+#\-]*(?:\s+[A-Z0-9][\w.+#\-]*)?)"
    r"(?=\s+now\b)"
    r"|\b(?:switched|changed|moved)\s+my\s+(?P<head2>[a-z]+)\s+(?:over\s+)?to\s+(?:an?\s+)?"
    r"(?P<new2>(?-i:[A-Z])[\w.+#\-]*(?:\s+[A-Z0-9][\w.+#\-]*)?)",
    re.I,
)


def _head_change(text: str, zh: bool, ctx: Ctx, out: list[ExtractedMemory], start: int) -> None:
    """A change named by the thing's head noun replaces the session's statement under its key."""
    m = (_ZH_HEAD_CHANGE_RE if zh else _EN_HEAD_CHANGE_RE).search(text)
    if m is None:
        return
    head = m.group("head") or m.groupdict().get("head2") or ""
    new = (m.group("new") or m.groupdict().get("new2") or "").strip()
    key = head_key(head, zh=zh)
    held = next((i for i in range(start - 1, -1, -1) if key and out[i].subject == key), None)
    if held is None or not new or names_value(out[held].content, new):
        return
    known = out[held]
    first = new.split()[0]
    said = next((j for j in range(start, len(out)) if names_value(out[j].content, first)), None)
    if said is not None:
        out[said] = replace(out[said], subject=key, type=known.type)
        return
    content = f"用户的{head}换成了{new}" if zh else f"User's {head} is {new}"
    out.append(replace(known, content=content, source_turn_ids=(ctx.turn_id,), subject=key, due=""))


def _both(text: str, zh: bool) -> list[tuple[str, str]]:
    pairs = []
    for shape in _ZH_BOTH if zh else _EN_BOTH:
        for m in shape.finditer(text):
            old, new = m.group("old").strip(), m.group("new").strip()
            if old.casefold() != new.casefold():
                pairs.append((old, new))
    return pairs


def _held(out: Sequence[ExtractedMemory], start: int, value: str) -> int | None:
    """The last memory before the turn that names `value`."""
    return next((i for i in range(start - 1, -1, -1) if names_value(out[i].content, value)), None)


def _correct(old: str, new: str, ctx: Ctx, out: list[ExtractedMemory], start: int) -> None:
    """The statement naming `old` replaced by itself with `new` in its place."""
    out[start:] = [m for m in out[start:] if not names_value(m.content, new)]
    apply_pair(old, new, False, ctx, out, start)


_NUM_RE = re.compile(r"\d+(?:\.\d+)?")
_ZH_NUMBER_RE = re.compile(r"[一二两三四五六七八九十]{1,4}")
_LATIN_RE = re.compile(r"(?<![A-Za-z])[A-Za-z][A-Za-z0-9_.+#\-]*[A-Za-z0-9_+#]")
_FILLER = frozenset("user user's is are a an the to of at in on with and".split())


def _wrong_value(
    text: str, span: tuple[int, int], new: str, out: Sequence[ExtractedMemory], start: int
) -> str:
    """The value a bare correction corrects: one of the last statement's values the turn names
    again outside the correction, else the value of the new one's kind in it."""
    if start == 0:
        return ""
    turn = out[start - 1].source_turn_ids
    last = [m.content for m in out[:start] if m.source_turn_ids == turn][::-1]
    rest = text[: span[0]] + " " + text[span[1] :]
    for content in last:
        named = _named_again(content, rest)
        if named:
            return named
    # a place for a place: "不对，应该是桂林" after "我住在南宁" (a short Chinese name the gazetteer
    # may not hold corrects the one place the last statement names)
    places = [p for content in last[:1] for p in _places(content) if p != new]
    if len(places) == 1 and (is_place(new) or re.fullmatch(r"[\u4e00-\u9fff]{2,4}", new)):
        return places[0]
    kind = _NUM_RE if _NUM_RE.fullmatch(new) else _LATIN_RE if _LATIN_RE.fullmatch(new) else None
    if kind is None:
        return ""
    if kind is _LATIN_RE and (spelt := _spelt_like(new, last) or _same_kind(new, last)):
        return spelt  # "Typo on my side: Maarten" after "I'm Marten"; kitty for Alacritty
    for content in last:
        found: list[str] = [
            w for w in kind.findall(content) if w.casefold() not in _FILLER | {"user"}
        ]
        if len(found) == 1:
            return found[0]
    return ""


def _spelt_like(new: str, contents: Sequence[str]) -> str:
    """The word of `contents` the new one respells (a letter or two apart), or ""."""
    for content in contents:
        for word in _LATIN_RE.findall(content):
            low, other = new.casefold(), word.casefold()
            if (
                low != other
                and len(other) >= 3
                and SequenceMatcher(None, low, other).ratio() >= 0.8
            ):
                return str(word)
    return ""


def _same_kind(new: str, contents: Sequence[str]) -> str:
    """The technology of `contents` of the kind the new one is (a terminal for a terminal)."""
    tech = lookup_tech(new)
    if tech is None or not tech.subject:
        return ""
    for content in contents:
        for word in _LATIN_RE.findall(content):
            other = lookup_tech(word)
            if other is not None and other.subject == tech.subject and other.name != tech.name:
                return str(word)
    return ""


def _places(content: str) -> list[str]:
    """The places a memory's text names (Latin words, or runs of two to four Chinese characters)."""
    found = [w for w in re.findall(r"[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?", content) if is_place(w)]
    for size in (4, 3, 2):
        for i in range(len(content) - size + 1):
            part = content[i : i + size]
            cjk = re.fullmatch(r"[\u4e00-\u9fff]+", part)
            if cjk and is_place(part) and not any(part in f for f in found):
                found.append(part)
    return found


def _named_again(content: str, rest: str) -> str:
    """A value of `content` (a word, or two to four Chinese characters) that `rest` names."""
    for word in _LATIN_RE.findall(content):
        if word.casefold() not in _FILLER | {"user"} and re.search(
            rf"\b{re.escape(word)}\b", rest, re.I
        ):
            return str(word)
    for size in (4, 3, 2):
        for i in range(len(content) - size + 1):
            part = content[i : i + size]
            if re.fullmatch(r"[\u4e00-\u9fff]+", part) and "用户" not in part and part in rest:
                return part
    return ""


_TOOL_TYPES = frozenset({"skill", "preference", "project"})


def _names_only(content: str, value: str) -> bool:
    """Whether a memory names `value` and no other name ("用户使用MySQL", not "User switched to uv
    from Poetry")."""
    if not names_value(content, value):
        return False
    others = [w for w in _LATIN_RE.findall(content) if w.casefold() not in _FILLER | {"user"}]
    return all(names_value(w, value) or value.casefold() in w.casefold() for w in others)


def _now_value(text: str, old: str) -> str:
    """What the turn says is there now instead of `old`: "现在是 Fedora", "NixOS since January"."""
    for rx in (_ZH_NOW_RE, _EN_NOW_RE):
        for m in rx.finditer(text):
            new = (m.group("new") or m.groupdict().get("since") or "").strip()
            if new and new.casefold() != old.casefold():
                return new
    return ""


def _left_behind(
    held: int, old: str, said: str, text: str, ctx: Ctx, out: list[ExtractedMemory], start: int
) -> None:
    """The statement naming `old` (at `held`) replaced by the turn's statement of what is there
    now, or by the words that leave it behind."""
    known = out[held]
    # A reading of the turn that names only the value left behind misreads it ("老的 MySQL 集群
    # 已经下线" is not "用户使用MySQL").
    out[start:] = [m for m in out[start:] if not _names_only(m.content, old)]
    if known.subject and any(m.subject == known.subject for m in out[start:]):
        return  # a rule read the turn's new value of the same key: it replaces the old one
    now = next((j for j in range(start, len(out)) if not names_value(out[j].content, old)), None)
    if now is None and (new := _now_value(text, old)):
        apply_pair(old, new, False, ctx, out, start)
        return
    key = known.subject or key_of_old(old)
    out[held] = replace(known, subject=key)
    if now is not None:
        tool = {known.type, out[now].type} <= _TOOL_TYPES
        out[now] = replace(out[now], subject=key, type=known.type if tool else out[now].type)
        return
    zh = bool(CJK_RE.search(said))
    content = ("用户：" if zh else "User: ") + said.strip(" ，,。.")
    out.append(replace(known, content=content, source_turn_ids=(ctx.turn_id,), subject=key, due=""))
