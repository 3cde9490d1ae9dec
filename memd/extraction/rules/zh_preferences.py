"""Chinese: what the user likes, dislikes and asks for."""

from __future__ import annotations

import re
from collections.abc import Iterator

from memd.core.models import ExtractedMemory
from memd.extraction.rules.common import IMP_PREFERENCE, Ctx, clean
from memd.extraction.rules.tech import lookup_tech, style_subject

_ZH_PREF_RE = re.compile(
    # "我配色喜欢 Solarized": a short topic may stand before the verb.
    r"我(?P<topic>(?!不|没|也|很|比较|更|最|还|一|非|特|超|挺|真|都|们|就|会|要|想|同事|朋友|老婆|老公|爸|妈"
    r"|家人|室友|同学|老板|领导|女朋友|男朋友|孩子|儿子|女儿)[\u3400-\u9fff]{2,3}?)?"
    r"(?P<adv>(?:比较|很|非常|特别|更|最|还是|一般|通常|也|超|挺|真的|一直)*)"
    r"(?P<verb>不太喜欢|不是很喜欢|不喜欢|不太习惯|不习惯|讨厌|反感|受不了|喜欢|偏好|偏爱|倾向于|爱用|习惯)"
    r"(?P<obj>.+)$"
)
_ZH_DONT_RE = re.compile(
    r"^(?:请|你|千万|以后|也|就|都|尽量|记得)*(?P<neg>不要|别|请勿|避免|不用|总是|始终|一定要|务必)(?P<obj>.+)$"
)
_ZH_DONT_SKIP_RE = re.compile(r"^(?:人|的|处|忘|客气|担心|着急|急|了|介意|管|说了)")


# "以后注释都改成中文吧": a change of what something is written in asks for the new one.
_ZH_CHANGE = r"改成|换成|改用|换用|改为|转成"
_ZH_LANGS = r"(?P<lang>简体中文|繁体中文|中文|英文|英语|日语|日文|韩语|法语|德语)"
_ZH_REPLY_LANG_RES = (
    re.compile(
        r"(?:用|使用|"
        + _ZH_CHANGE
        + r")"
        + _ZH_LANGS
        + r"(?:来)?(?:回答|回复|交流|沟通|和我说话|跟我说话|写)"
    ),
    re.compile(
        r"(?:回答|回复|交流)(?:我)?(?:请|都|时|的时候|的|一律|统一)*(?:用|使用|"
        + _ZH_CHANGE
        + r")"
        + _ZH_LANGS
    ),
)


# "代码里的注释用英文就行", "commit message 都用英文写", "formatter 一律用 black 就好".
_ZH_THING_IN_LANG_RE = re.compile(
    r"^(?:以后|之后|今后|请|都)*(?P<thing>[^，,。]{1,16}?)(?:都|一律|统一|也|请|全部)*(?:用|使用|写成|"
    + _ZH_CHANGE
    + r")\s*"
    r"(?:" + _ZH_LANGS + r"|(?P<tool>[A-Za-z][\w.+#\-]*))"
    r"\s*(?:来)?(?:写)?(?:就行|就好|就可以|即可|吧|了)?$"
)
_ZH_ASKED_RE = re.compile(r"以后|之后|今后|请|都|一律|统一|全部|就行|就好|就可以|即可|吧")
# What other people use is not the user's preference; answers have their own rule; an order
# about a text at hand ("把这段注释改成英文") is done once, not a standing wish.
_ZH_NOT_A_THING_RE = re.compile(
    r"回答|回复|交流|我|^(?:别人|他|她|它|同事|朋友|大家|有人|很多人|有些人|你们|老板|领导|队友|团队)"
    r"|^(?:帮|麻烦)?(?:把|将)|这|那"
)
# "写 Python 的时候请一律加上类型注解": a request said to hold every time.
_ZH_PLEASE_ALWAYS_RE = re.compile(
    r"(?:请|麻烦)(?:你)?(?:以后)?(?=一律|总是|始终|每次|永远|都要|统一|务必|一定)"
)
# "直接给结论和代码就行": a request about how to answer.
_ZH_JUST_DO_RE = re.compile(r"^(?:你)?(?P<obj>.{2,30}?)(?:就行|就好|就可以|即可)(?:了)?$")
# "以后回答简短一点", "请多给例子": a request about how the assistant works, said to last.
_ZH_REQUEST_RE = re.compile(
    r"^(?:(?:以后|之后|今后|请|麻烦|你|尽量|最好)+(?P<obj>.{2,30})"
    # "回答简短一点", "解释详细些": how to answer, said as it stands.
    r"|(?P<how>(?:回答|回复|解释|说明|语气|代码)[^，,。]{1,12}(?:一点|一些|些|点))"
    # "回复的时候多用代码示例": when answering, do so.
    # "给我写代码的时候用 4 个空格缩进": said for the user, the same.
    r"|(?:给我|帮我|为我|你)?(?P<when>(?:回答|回复|解释|写代码|给代码)(?:我)?(?:的时候|时)[^，,。]{2,20}))$"
)


# "我经常熬夜写代码", "我一般晚上才有空": when the user works.
_ZH_HABIT_RE = re.compile(
    r"我(?P<adv>经常|一般|通常|习惯|总是|平时|基本上?|大多)(?P<act>(?:在)?(?:熬夜|深夜|半夜|凌晨|晚上|早上|周末)"
    r"[^，,。！!；;]{0,12})"
)


# "缩进用两个空格", "缩进改成四个空格", "commit message 写英文": a working-style topic and its
# value, said alone — a standing setting (an order about a text at hand names it: 把/这段).
_ZH_TOPIC_VALUE_RE = re.compile(
    r"^(?:以后|之后|今后)?(?P<topic>[^，,。把将这那帮]{1,16}?)(?:都|一律|统一|全部|也|还是)*"
    r"(?:用|使用|写|" + _ZH_CHANGE + r"|统一成)\s*(?P<value>[^，,。]{1,12})$"
)


def _topic_value(clause: str) -> str:
    """The style key of a clause that sets a working-style topic to a value, or ""."""
    m = _ZH_TOPIC_VALUE_RE.match(clause.strip())
    if m is None or re.match(r"^(?:我|你|请|帮|麻烦|现在|目前|已经)", m.group("topic")):
        return ""
    subject = style_subject(clause)
    return subject if subject.startswith("style:") else ""


def zh_preference(clause: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    habit = _ZH_HABIT_RE.search(clause)
    if habit is not None:
        yield ctx.mem(f"用户{habit.group('adv')}{clean(habit.group('act'))}", "preference",
                      IMP_PREFERENCE, subject="schedule")  # fmt: skip
        return
    m_lang = _ZH_THING_IN_LANG_RE.match(clause.strip())
    if m_lang is not None and not _ZH_NOT_A_THING_RE.search(m_lang.group("thing")):
        thing = clean(m_lang.group("thing"))
        tool = m_lang.group("tool") or ""
        known = lookup_tech(tool) if tool else None
        # "前端用 React" states a fact; "formatter 一律用 black 就好" asks for one.
        asked = tool == "" or _ZH_ASKED_RE.search(m_lang.group(0)) is not None
        if thing and asked and (known is not None or not tool):
            value = m_lang.group("lang") or tool
            subject = style_subject(clause) if not tool else (known.subject if known else "")
            yield ctx.mem(f"用户希望{thing}用{value}", "preference", IMP_PREFERENCE,
                          subject=subject)  # fmt: skip
            return
    if _ZH_PLEASE_ALWAYS_RE.search(clause):
        obj = clean(re.sub(r"(?:请|麻烦)(?:你)?", "", clause, count=1))
        yield ctx.mem(f"用户希望{obj}", "preference", IMP_PREFERENCE, subject=style_subject(obj))
        return
    just = _ZH_JUST_DO_RE.match(clause.strip())
    if just is not None and not clause.startswith("我") and (subject := style_subject(clause)):
        yield ctx.mem(f"用户希望{clean(just.group('obj'))}", "preference", IMP_PREFERENCE,
                      subject=subject)  # fmt: skip
        return
    # "commit message 用中文写" is the language of the commits, not of the answers.
    other_topic = style_subject(clause) not in ("", "reply-language")
    for rx in _ZH_REPLY_LANG_RES:
        lang_m = None if other_topic else rx.search(clause)
        if lang_m:
            yield ctx.mem(
                f"用户希望用{lang_m.group('lang')}回答",
                "preference",
                IMP_PREFERENCE,
                subject="reply-language",
            )
            return
    m = _ZH_PREF_RE.search(clause)
    if m:
        obj = clean(m.group("obj")).replace("我的", "自己的")
        if obj and not re.match(r"^(?:这|那|它|你)", obj):
            adv = "".join(a for a in re.findall(r"更|最|比较|很|非常|特别", m.group("adv")))
            yield ctx.mem(
                f"用户{m.group('topic') or ''}{adv}{m.group('verb')}{obj}",
                "preference",
                IMP_PREFERENCE,
                subject=style_subject(obj),
            )
        return
    m = _ZH_DONT_RE.match(clause.strip())
    if m is None and (topic := _topic_value(clause)):
        yield ctx.mem(f"用户希望{clean(clause)}", "preference", IMP_PREFERENCE, subject=topic)
        return
    if m is None:
        req = _ZH_REQUEST_RE.match(clause.strip())
        said = (
            (req.group("obj") or req.group("how") or req.group("when")) if req is not None else ""
        )
        if said and (subject := style_subject(said)):
            obj = clean(said)
            yield ctx.mem(f"用户希望{obj}", "preference", IMP_PREFERENCE, subject=subject)
        return
    obj = clean(m.group("obj"))
    neg = m.group("neg")
    if not obj or len(obj) < 2 or _ZH_DONT_SKIP_RE.match(obj) or neg == "不用" and len(obj) < 3:
        return
    if neg == "不用" and re.fullmatch(r"[A-Za-z][\w.+#\-]*(?:\s+[A-Za-z][\w.+#\-]*)*\s*了?", obj):
        return  # "不用 Memcached 了": a tool no longer used, said beside a decision
    lead = {"别": "不要", "请勿": "不要", "不用": "不用"}.get(neg, neg)
    yield ctx.mem(f"用户希望{lead}{obj}", "preference", IMP_PREFERENCE, subject=style_subject(obj))
