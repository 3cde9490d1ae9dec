"""Chinese: what the user has to do, with a due date when one is given."""

from __future__ import annotations

import re
from collections.abc import Iterator

from memd.core.models import ExtractedMemory
from memd.extraction.rules.common import IMP_TASK, ZH_QUESTION_RE, Ctx, clean, topic_slug
from memd.extraction.rules.dates import due_zh, find_date

_ZH_REMIND_RE = re.compile(r"提醒我|别忘了|不要忘了|不要忘记|记得")
# Bare 得/前 are left out on purpose: 觉得, 前端.
_ZH_TASK_TRIGGER_RE = re.compile(
    r"(?:提醒我|别忘了|不要忘了|不要忘记|记得)(?:一下)?\s*[:：]?|我得|需要|必须|要|打算|准备|计划|截止"
    r"|之前|以前"
)
# "launch 定在 3月15号", "发布推迟到4月1号": the one current date of an event.
_ZH_WHEN_RE = re.compile(
    r"(?P<thing>[A-Za-z][\w\- ]{0,30}?|[\u3400-\u9fff]{1,10}?)\s*(?:又|已经|被)?"
    r"(?:定在|定于|安排在|约在|改到|改在|改成|推迟到|延期到|延后到|推到|提前到|挪到|移到)(?:了)?\s*$"
)
# "截止日期是3月3号", "上线时间是周五": an event's date named as its 日期/时间.
_ZH_DATE_IS_RE = re.compile(r"(?P<thing>[\u3400-\u9fff]{1,8}?(?:时间|日期))\s*(?:是|为)\s*$")
# "发布会是1月15号": an event whose whole predicate is its date, at the end of the sentence (not
# "我生日是3月3号": the user's; not "deadline 是下周五，我要把…做完": the next clause's).
_ZH_IS_DATE_RE = re.compile(
    r"^\s*(?P<thing>(?![我你他她])[\u3400-\u9fffA-Za-z0-9]{2,8}?)\s*(?:是|在)\s*$"
)
# "项目下个月5号上线", "新版本3月20号发布": a date, then the event it is the date of.
_ZH_EVENT_AFTER_RE = re.compile(
    r"\s*(?P<event>上线|发布|发版|交付|截止|开学|面试|考试|答辩|开工|演示|评审)(?:了|吧)?\s*$"
)
# "上线时间", "截止日期": the event is named without its 时间/日期.
_ZH_EVENT_TAIL_RE = re.compile(r"(?:的)?(?:时间点?|日期|日子)$")
# What follows a date: 得 ("must") — alone it is no trigger, for 觉得's sake — and the act.
_ZH_AFTER_DEADLINE_RE = re.compile(r"\s*(?P<modal>得|必须得?)?\s*(?P<act>[^，,。！!？?]{2,})")
_ZH_BEFORE_RE = re.compile(r"(?:之前|以前|前)\s*$")
_ZH_TASK_SUBJECT_RE = re.compile(r"^(?:我们|我|还|也|就|一定|在|\s)+|(?:\s|还|也|就|一定)+$")


def _event_before(head: str, rest: str) -> re.Match[str] | None:
    """The event named before a date (`head`, its clause up to the date; `rest`, what follows)."""
    wm = _ZH_WHEN_RE.search(head) or _ZH_DATE_IS_RE.search(head)
    if wm is None and not rest.strip(" 了。！!"):
        wm = _ZH_IS_DATE_RE.search(head)
    return wm


def zh_task(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    found = find_date(sentence, ctx.today)
    remind = _ZH_REMIND_RE.search(sentence)
    if found is None and remind is None:
        return
    text = sentence
    due = ""
    if found is not None:
        when, span = found
        due = when.isoformat()
        head = sentence[: span[0]].rsplit("，", 1)[-1].rsplit(",", 1)[-1]
        clause_end = re.split(r"[，,。；;]", sentence[span[1] :], maxsplit=1)[0]
        wm = _event_before(head, sentence[span[1] :])
        if wm is not None and (thing := clean(wm.group("thing"))):
            thing = re.sub(r"^(?:我们的|我的|我们|我)", "", thing)
            key = _ZH_EVENT_TAIL_RE.sub("", thing) or thing
            yield ctx.mem(f"{thing}定在{due_zh(when)}", "task", IMP_TASK, due=due,
                          subject=f"date:{topic_slug(key)}")  # fmt: skip
            return
        em = _ZH_EVENT_AFTER_RE.match(clause_end)
        if em is not None:
            thing = re.sub(r"^(?:我们的|我的|我们|我)", "", clean(head)) + em.group("event")
            yield ctx.mem(f"{thing}定在{due_zh(when)}", "task", IMP_TASK, due=due,
                          subject=f"date:{topic_slug(em.group('event'))}")  # fmt: skip
            return
        text = text[: span[0]] + " " + text[span[1] :]
    trigger = _ZH_TASK_TRIGGER_RE.search(text)
    if trigger is not None:
        # "这个bug明天要修好": what precedes the verb is its object ("修好这个bug").
        before = _ZH_TASK_SUBJECT_RE.sub("", text[: trigger.start()].strip(" ，,"))
        after = text[trigger.end() :]
    elif found is not None and (
        (rest := _ZH_AFTER_DEADLINE_RE.match(text, found[1][0] + 1)) is not None
        and (rest.group("modal") or _ZH_BEFORE_RE.search(sentence[found[1][0] : found[1][1]]))
    ):
        # "下个月15号之前得把初稿交给导师": a deadline, or a date and 得, opens the task.
        before, after = "", rest.group("act")
    else:
        return
    while (lead := _ZH_TASK_TRIGGER_RE.match(after.strip())) is not None:
        after = after.strip()[lead.end() :]
    # The task ends with its clause: "…搭好，老板 wants it for the demo".
    after = re.split(r"[，,]", after.strip(" ，,"), maxsplit=1)[0]
    act = clean(_ZH_TASK_SUBJECT_RE.sub("", after))
    if before and not ZH_QUESTION_RE.search(before):
        act += before
    act = act.replace("我的", "自己的")
    if len(act) < 2:
        return
    suffix = f"（截止 {due_zh(when)}）" if found is not None else ""
    yield ctx.mem(f"用户需要{act}{suffix}", "task", IMP_TASK, due=due)
