"""Statements said in passing, in shapes the other readers do not take: a project's name ("The
tool is called Hearth", 项目代号叫「长风」, 排班系统「晨曦」), a native language (粤语是我的母语,
我母语是藏语), years spent at a line of work (干嵌入式十年了, "I've been doing embedded work for
ten years"), what the user is saving for ("I'm saving for a deposit", 在攒钱买房), a business they
run ("I run a small bakery on weekends") and a trip to a known place ("I'll be in Nairobi for a
conference", 下个月去东京出差).

Each is read only in a clause that states (no question, no hypothesis) and is not about someone
else ("my friend's app is called …", 我同事干前端十年了); a project's name is a capitalised word or a
name in 「」 after a word for a thing one makes (project, app, tool, service, site, game, bot,
library; 项目, 系统, 工具, 平台, 小程序, 产品), not a file, a function or a variable.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memd.core.models import ExtractedMemory
from memd.extraction.rules.clauses import someone_else
from memd.extraction.rules.common import IMP_PROJECT, IMP_ROLE, Ctx, is_question
from memd.extraction.rules.places import is_place
from memd.extraction.rules.units import cut

IMP_LANGUAGE = 6
IMP_LIFE = 5

_EN_THING = (
    r"(?:project|app|application|tool|service|site|website|game|bot|library|plugin|extension"
    r"|product|startup|platform|engine|package|cli)"
)
# "The tool is called Hearth", "our app is named Lantern", "we named the service Osprey".
_EN_CALLED_RE = re.compile(
    r"^(?:(?:and|so|but)\s+)?(?:the|our|my)\s+(?:(?:new|little|side|internal|pet|current|main)\s+)*"
    + _EN_THING
    # "the project I'm on", "the app we're building": the one the user works on
    + r"(?:\s+(?:I|we)(?:'m|'re|\s+am|\s+are)?\s+(?:on|building|making|writing|working\s+on|maintain))?"
    + r"(?:'s\s+name)?\s+(?:is|was|'s)\s+(?:now\s+)?(?:called|named|codenamed)\s+"
    r"(?P<name>(?-i:[A-Z])[\w\-]*(?:\s+(?-i:[A-Z])[\w\-]*)?)"
    r"|\bwe\s+(?:named|called|codenamed)\s+(?:the|our|my|it)\s*(?:" + _EN_THING + r")?\s+"
    r"(?P<name2>(?-i:[A-Z])[\w\-]*)",
    re.I,
)
_ZH_THING = r"(?:项目|系统|工具|平台|小程序|产品|应用|App|APP|app|网站|插件|游戏|机器人|服务)"
# "项目代号叫「长风」", "工具名叫「灯塔」", "给养老院做的排班系统「晨曦」".
_ZH_CALLED_RE = re.compile(
    _ZH_THING
    + r"(?:的)?(?:代号|名字|名称|名)?(?:叫做?|是|为)\s*[「“\"](?P<name>[^」”\"]{1,12})[」”\"]"
    r"|" + _ZH_THING + r"\s*[「“\"](?P<name2>[^」”\"]{1,12})[」”\"]"
    # "一个叫「潮汐表」的查询网站", "一款叫「小满」的 App": the name said before the thing
    r"|叫做?\s*[「“\"](?P<name3>[^」”\"]{1,12})[」”\"]\s*的[^，,。]{0,12}?" + _ZH_THING
)
_ZH_THEIRS = r"^(?:我的?)?(?:爸|妈|老婆|老公|女朋友|男朋友|同事|朋友|儿子|女儿|孩子|哥|姐|弟|妹|室友|领导|老板|他|她|他们|她们)"
# A sentence about someone else: its clauses without a subject are theirs ("我爸六十五了，刚退休").
_ZH_THEIRS_RE = re.compile(_ZH_THEIRS)
_ZH_NOT_MINE_RE = re.compile(
    _ZH_THEIRS + r"|如果|假如|要是|万一|打算|准备|考虑|想|可能|也许|听说|据说|别人|人家"
)
# "粤语是我的母语", "Cantonese is my mother tongue".
_ZH_NATIVE_RE = re.compile(r"^(?P<lang>[\u4e00-\u9fff]{1,4}(?:语|话))是我的?母语")
# "干嵌入式十年了", "做运维五年了", "写 Java 八年多了", "搞算法三年了".
_ZH_YEARS_RE = re.compile(
    r"^(?:我)?(?:已经)?(?:干|做|搞|写)(?P<field>[\u4e00-\u9fffA-Za-z+#.\s]{1,8}?)"
    r"(?:也|都|已经)?(?P<n>[一二两三四五六七八九十\d]{1,3})(?:多)?年(?:多)?了"
)
_EN_YEARS_RE = re.compile(
    r"\bI(?:'ve|\s+have)\s+been\s+(?:doing|working\s+(?:in|on))\s+(?P<field>[\w\-+#]+(?:\s+[\w\-+#]+)?)"
    r"(?:\s+work)?\s+for\s+(?P<n>\w+(?:\s+\w+)?)\s+years\b",
    re.I,
)
# "I'm saving for a deposit on a flat", 我在攒钱买房.
_EN_SAVING_RE = re.compile(
    r"\bI(?:'m|\s+am)\s+(?:currently\s+|still\s+)?saving\s+(?:up\s+)?(?:for|to\s+buy)\s+"
    r"(?P<goal>[^,.;!]+?)(?=\s*(?:[,.;!]|$|\s+so\b|\s+which\b))",
    re.I,
)
_ZH_SAVING_RE = re.compile(
    r"(?:在|正在|一直在)?攒钱(?P<goal>(?:买|换|装修|付|还|结婚|留学|旅游|出国)[\u4e00-\u9fff]{0,6})"
)
# "I run a small bakery on weekends", "I own a food truck".
_EN_BUSINESS_RE = re.compile(
    r"\bI\s+(?:also\s+)?(?:run|own)\s+(?:a|an|my\s+own)\s+(?:(?:small|little|tiny|local)\s+)?"
    r"(?P<what>bakery|caf[eé]|coffee\s+shop|shop|store|restaurant|bar|pub|business|company|farm"
    r"|studio|agency|consultancy|food\s+truck|bookshop|bookstore|salon|gym|podcast|newsletter"
    r"|youtube\s+channel|blog|etsy\s+shop|meetup|online\s+shop|side\s+business)\b",
    re.I,
)
# "I'll be in Nairobi for a conference", 下个月去东京出差.
_EN_TRIP_RE = re.compile(
    r"\bI(?:'ll|\s+will)\s+be\s+(?:in|at)\s+(?P<place>(?-i:[A-Z])[\w\-]+(?:\s+(?-i:[A-Z])[\w\-]+)?)"
    r"\s+(?:for|from|until|till|next|this|on|over|all)\b",
    re.I,
)
_ZH_TRIP_RE = re.compile(
    r"(?:去|到)(?P<place>[\u4e00-\u9fff]{2,4}?)(?:出差|旅游|开会|参会|度假|培训|交流)"
)
# Studies under way and a life event just past: 在读在职研究生, 刚领证, "we just had our first baby".
_ZH_STUDY_RE = re.compile(
    r"(?:在读|正在读|在念|读)(?P<what>在职研究生|研究生|博士|硕士|MBA|本科|大[一二三四]|研[一二三])"
)
_EN_STUDY_RE = re.compile(
    r"\bI(?:'m|\s+am)\s+(?:doing|studying\s+for|working\s+on|finishing|taking)\s+(?:a|an|my)\s+"
    r"(?:(?:part-time|evening|online|night)\s+)?(?P<what>master's|masters|MBA|PhD|degree|bootcamp)\b",
    re.I,
)
_ZH_EVENT_RE = re.compile(
    r"(?:刚|刚刚|上个月|上周|今年)(?P<what>领证|结婚|订婚|生了?(?:孩子|宝宝|娃|儿子|女儿|二胎)"
    r"|当了?(?:爸爸|妈妈|爸|妈)|退休)"
)
_EN_EVENT_RE = re.compile(
    r"(?:^|(?<=[,;:]\s))(?:and\s+)?(?:(?:my\s+\w+\s+and\s+)?I|we)\s+(?:just\s+|recently\s+)?(?:had\s+(?:our|my|a)\s+"
    r"(?:first\s+|second\s+|third\s+)?(?P<kid>baby|son|daughter|kid|child)"
    r"|got\s+(?P<got>married|engaged)|became\s+a\s+(?P<became>dad|mum|mom|parent|grandparent))\b",
    re.I,
)
_ZH_NATIVE_AFTER_RE = re.compile(r"我的?母语是(?P<lang>[\u4e00-\u9fff]{1,5}?(?:语|话|文))")
_EN_UNSURE_RE = re.compile(
    r"^(?:if|suppose|imagine|assuming|what\s+if)\b|\b(?:might|maybe)\b", re.I
)


def en_passing(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    """A project's name and years at a line of work said in an English sentence's clauses."""
    text = sentence.strip()
    if not text or is_question(text) or _EN_UNSURE_RE.search(text):
        return
    if m := _EN_EVENT_RE.search(text):
        # "My wife and I just had our first baby": theirs and the user's
        what = m.group("kid") or m.group("got") or m.group("became")
        yield ctx.mem(_event(what), "personal", IMP_LIFE)
    for clause in cut(text.rstrip(".!"), zh=False):
        if someone_else(clause):
            continue
        m = _EN_CALLED_RE.search(clause)
        if m is not None:
            name = m.group("name") or m.group("name2")
            yield ctx.mem(f"User's project is called {name}", "project", IMP_PROJECT)
        m = _EN_YEARS_RE.search(clause)
        if m is not None:
            field = m.group("field").strip()
            content = f"User has been doing {field} for {m.group('n')} years"
            yield ctx.mem(content, "personal", IMP_ROLE)
        yield from _en_life(clause, ctx)


def _en_life(clause: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    """What the user is saving for, the business they run, a trip they will make."""
    if m := _EN_SAVING_RE.search(clause):
        yield ctx.mem(f"User is saving for {m.group('goal').strip()}", "personal", IMP_LIFE)
    if m := _EN_BUSINESS_RE.search(clause):
        yield ctx.mem(f"User runs a {m.group('what').lower()}", "personal", IMP_LIFE)
    if (m := _EN_TRIP_RE.search(clause)) and is_place(m.group("place")):
        yield ctx.mem(f"User will be in {m.group('place')}", "personal", IMP_LIFE)
    if m := _EN_STUDY_RE.search(clause):
        yield ctx.mem(f"User is doing a {m.group('what')}", "personal", IMP_LIFE)


def _event(what: str) -> str:
    word = what.lower()
    if word in ("married", "engaged"):
        return f"User got {word}"
    if word in ("dad", "mum", "mom", "parent", "grandparent"):
        return f"User became a {word}"
    return f"User just had a {word}"


def zh_passing(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    """A project's name, a native language said first and years at a line of work in a Chinese
    sentence's clauses."""
    text = sentence.strip()
    if not text or is_question(text):
        return
    if _ZH_THEIRS_RE.search(text):
        return
    for clause in cut(text.rstrip("。！!"), zh=True):
        if _ZH_NOT_MINE_RE.search(clause):
            continue
        m = _ZH_CALLED_RE.search(clause)
        if m is not None:
            name = m.group("name") or m.group("name2") or m.group("name3")
            yield ctx.mem(f"用户的项目叫「{name}」", "project", IMP_PROJECT)
        m = _ZH_NATIVE_RE.search(clause)
        if m is not None:
            content = f"用户的母语是{m.group('lang')}"
            yield ctx.mem(content, "personal", IMP_LANGUAGE, subject="spoken-language")
        m = _ZH_YEARS_RE.search(clause)
        if m is not None:
            field = m.group("field").strip()
            yield ctx.mem(f"用户做{field}{m.group('n')}年了", "personal", IMP_ROLE)
        yield from _zh_life(clause, ctx)


def _zh_life(clause: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    """A native language said after 母语, what the user is saving for, a trip they will make."""
    if m := _ZH_NATIVE_AFTER_RE.search(clause):
        content = f"用户的母语是{m.group('lang')}"
        yield ctx.mem(content, "personal", IMP_LANGUAGE, subject="spoken-language")
    if m := _ZH_SAVING_RE.search(clause):
        yield ctx.mem(f"用户在攒钱{m.group('goal')}", "personal", IMP_LIFE)
    if (m := _ZH_TRIP_RE.search(clause)) and is_place(m.group("place")):
        yield ctx.mem("用户：" + clause.strip(" ，,。"), "personal", IMP_LIFE)
    if m := _ZH_STUDY_RE.search(clause):
        yield ctx.mem(f"用户在读{m.group('what')}", "personal", IMP_LIFE)
    if m := _ZH_EVENT_RE.search(clause):
        yield ctx.mem("用户：" + clause.strip(" ，,。"), "personal", IMP_LIFE)
