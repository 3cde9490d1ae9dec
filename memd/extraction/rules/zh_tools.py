"""Chinese: the tools and languages the user works with, switches, projects."""

from __future__ import annotations

import re
from collections.abc import Iterator

from memd.core.models import ExtractedMemory
from memd.extraction.rules.common import (
    IMP_PROJECT,
    IMP_PROJECT_DETAIL,
    IMP_SKILL,
    Ctx,
    clean,
    join_zh,
    topic_slug,
)
from memd.extraction.rules.life import is_device
from memd.extraction.rules.tech import tech_items, tool_memories
from memd.extraction.rules.zh_clauses import ZH_OTHER_WORDS

_ASCII_NAME = r"[A-Za-z.][A-Za-z0-9_.+#\-]*(?:\s+[A-Z][A-Za-z0-9_.+#\-]*)?"
_ZH_ITEMS = (
    r"(?P<items>"
    + _ASCII_NAME
    + r"(?:\s*(?:[、,，/+]|和|与|跟|及|以及|还有)\s*"
    + _ASCII_NAME
    + r")*)"
)
_ZH_USE_RE = re.compile(
    r"我(?P<adv>(?:主要|平时|一般|通常|经常|日常|现在|目前|一直|基本|都|也|最常|常)*)"
    # "我平时终端用 tmux": a short topic may stand before the verb.
    r"(?:(?!觉得|想|打算|不|没|别|要|会|在做|是)[\u3400-\u9fff]{1,3}?)?"
    r"(?:在)?(?P<verb>用的是|使用的是|用|使用|采用|写|会用|会)\s*" + _ZH_ITEMS
)
# "日常 stack 是 React + TypeScript", "技术栈：Go、Redis".
_ZH_STACK_IS_RE = re.compile(
    r"(?:技术栈|stack|栈)\s*(?:是|用的是|主要是|[:：])\s*" + _ZH_ITEMS, re.I
)
# "PyTorch 用的比较多": the tool first.
_ZH_USED_MUCH_RE = re.compile(
    _ZH_ITEMS + r"\s*(?:用的|用得|写的|写得)(?:比较|最|挺|很|非常|特别)?多"
)
# "最近在自学 Rust": learning, said with or without 我.
_ZH_LEARN_RE = re.compile(
    r"^(?:我)?(?:最近|现在|目前|正在|在|开始|也)*(?:自学|学习|在学|学)\s*" + _ZH_ITEMS
)
_ZH_SWITCH_RE = re.compile(
    r"我?(?:已经|最近|刚|现在)*(?:从\s*(?P<old>[A-Za-z][A-Za-z0-9_.+#\-]*)\s*)?"
    r"(?:换成了?|改用了?|改写了?|改学了?|转用了?|换到了?|转到了?|切换到了?|切到了?|迁移到了?|转向了?"
    r"|换用了?|改成了?)\s*" + _ZH_ITEMS
)
_ZH_ITEM_SPLIT_RE = re.compile(r"\s*(?:[、,，/]|(?<!\+)\+(?!\+)|和|与|跟|及|以及|还有)\s*")


def _zh_items(raw: str) -> list[str]:
    items = tech_items(", ".join(p for p in _ZH_ITEM_SPLIT_RE.split(raw) if p.strip()))
    return [i for i in items if not is_device(i)]  # a phone is not a tool one works with


# "帮我把这段代码改成 Kotlin", "老板让我们都用 Teams": asked of someone, not what the user uses.
_ZH_ASKED_OF_RE = re.compile(r"帮我|帮忙|麻烦|请你|给我|把|能不能|可以|让|叫|要求|逼")


def zh_tools(clause: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    m = _ZH_SWITCH_RE.search(clause) or _ZH_USE_RE.search(clause)
    if m is not None and _ZH_ASKED_OF_RE.search(clause[: m.start("items")]):
        return
    m = _ZH_SWITCH_RE.search(clause)
    if m:
        new = _zh_items(m.group("items"))
        old = _zh_items(m.group("old")) if m.group("old") else []
        if new:
            since = f"（之前用{join_zh(old)}）" if old else ""
            yield from tool_memories(
                new,
                ctx,
                render=lambda names: f"用户换成了{join_zh(names)}{since}",
                main=True,
                switch=True,
            )
            return
    lm = _ZH_LEARN_RE.search(clause)
    if lm is not None and (learning := _zh_items(lm.group("items"))):
        yield ctx.mem(f"用户正在学习{join_zh(learning)}", "skill", IMP_SKILL)
        return
    sm = _ZH_STACK_IS_RE.search(clause)
    if sm is not None and (stack := _zh_items(sm.group("items"))):
        yield from tool_memories(stack, ctx, render=lambda names: f"用户的技术栈包括{join_zh(names)}",
                                 main=False)  # fmt: skip
        return
    um = _ZH_USED_MUCH_RE.search(clause)
    if um is not None and (much := _zh_items(um.group("items"))):
        yield from tool_memories(much, ctx, render=lambda names: f"用户经常使用{join_zh(names)}",
                                 main=False)  # fmt: skip
        return
    m = _ZH_USE_RE.search(clause)
    if m is None:
        return
    items = _zh_items(m.group("items"))
    if not items:
        return
    adv = m.group("adv").replace("都", "").replace("也", "")
    yield from tool_memories(
        items,
        ctx,
        render=lambda names: f"用户{adv}使用{join_zh(names)}",
        main=any(a in adv for a in ("主要", "最常", "基本")),
        switch="现在" in adv,
    )


_ZH_PROJECT_RE = re.compile(
    r"(?:我|我们|(?:^|(?<=[，,]))(?:最近|现在|目前|正在|在)+)[^，,。]{0,8}?(?:做|开发|写|搞|维护|负责)(?:一个|个|一款|款|一套|套)?(?:叫|名为|叫做|名叫)\s*"
    r"[\"“「《]?(?P<name>[^，,。\"”」》]{1,30}?)[\"”」》]?\s*的(?P<kind>[^，,。]{0,12}?"
    r"(?:项目|应用|工具|产品|网站|App|app|APP|库|平台|系统|插件|游戏|小程序|程序|服务|网页|机器人|框架"
    r"|脚本|扩展|命令行工具|CLI|cli|bot|Bot))"
)
# "我们组在做一个内部的日志检索平台，叫「鹰眼」": the name after the kind.
_ZH_PROJECT_THEN_NAME_RE = re.compile(
    r"(?:我|我们)[^，,。]{0,20}?(?:做|开发|写|搞|维护|负责)(?:一个|个)?(?P<kind>[^，,。]{0,16}?"
    r"(?:项目|应用|工具|产品|网站|App|app|APP|库|平台|系统|插件|游戏|小程序|程序|服务|网页|机器人|框架"
    r"|脚本|扩展|命令行工具|CLI|cli|bot|Bot))[，,]?\s*(?:叫做|叫|名叫|名为|名字叫)\s*"
    r"[\"“「《]?(?P<name>[^，,。\"”」》]{1,30}?)[\"”」》]?(?=$|[，,。])"
)
_ZH_STACK_RE = re.compile(r"(?:用的是|用的|使用的是|用|使用|基于|采用|拿)\s*" + _ZH_ITEMS)


# "我在做一个开源的 Markdown 编辑器，叫「墨痕」": a name in quotes after what the user makes,
# whatever kind of thing it is.
_ZH_PROJECT_QUOTED_RE = re.compile(
    r"(?:我|我们)[^，,。]{0,20}?(?:做|开发|写|搞|维护|负责)(?:一个|个|一款|款)(?P<kind>[^，,。]{1,16}?)"
    r"[，,]?\s*(?:叫做|叫|名叫|名为|名字叫)\s*[“「《\"](?P<name>[^，,。\"”」》]{1,30}?)[\"”」》]"
)


# "我们这个项目叫“青鸟”", "我的小程序叫「早睡打卡」": the user's own thing and its name.
_ZH_PROJECT_NAMED_RE = re.compile(
    r"^(?:我们|我)(?:这个|的|那个)?(?P<kind>项目|产品|应用|App|app|APP|系统|工具|小程序|游戏|网站|插件|平台)"
    r"(?:名字)?(?:叫做|叫|名叫|名为)\s*[“「《\"](?P<name>[^，,。\"”」》]{1,30}?)[\"”」》]"
)
_RELATION_RE = re.compile(r"^(?:我的?|我们的?)(?:" + ZH_OTHER_WORDS + r")")


def zh_project(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    m = (
        _ZH_PROJECT_RE.search(sentence)
        or _ZH_PROJECT_THEN_NAME_RE.search(sentence)
        or _ZH_PROJECT_QUOTED_RE.search(sentence)
        or _ZH_PROJECT_NAMED_RE.search(sentence)
    )
    if m is None or _RELATION_RE.match(m.group(0)):
        return  # "我朋友在做一个游戏，叫「星海」" is the friend's
    name = clean(m.group("name"))
    if not name:
        return
    topic = topic_slug(name)
    ctx.session.project = name
    kind = m.group("kind").strip()
    yield ctx.mem(f"用户正在做一个名为{name}的{kind}", "project", IMP_PROJECT, topic=topic)
    stack = list(
        dict.fromkeys(
            i for s in _ZH_STACK_RE.finditer(sentence, m.end()) for i in _zh_items(s.group("items"))
        )
    )
    if stack:
        yield ctx.mem(
            f"{name}使用{join_zh(stack)}构建",
            "project",
            IMP_PROJECT_DETAIL,
            topic=topic,
        )
