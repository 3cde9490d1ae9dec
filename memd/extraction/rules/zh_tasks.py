"""Chinese: what the user has to do, with a due date when one is given."""

from __future__ import annotations

import re
from collections.abc import Iterator

from memd.core.models import ExtractedMemory
from memd.extraction.rules.common import IMP_TASK, ZH_QUESTION_RE, Ctx, clean
from memd.extraction.rules.dates import find_date

_ZH_REMIND_RE = re.compile(r"提醒我|别忘了|不要忘了|不要忘记|记得")
# Bare 得/前 are left out on purpose: 觉得, 前端.
_ZH_TASK_TRIGGER_RE = re.compile(
    r"提醒我|别忘了|不要忘了|不要忘记|记得|需要|必须|要|打算|准备|计划|截止|之前|以前"
)
_ZH_TASK_SUBJECT_RE = re.compile(r"^(?:我们|我|还|也|就|一定|在|\s)+|(?:\s|还|也|就|一定)+$")


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
        text = text[: span[0]] + " " + text[span[1] :]
    trigger = _ZH_TASK_TRIGGER_RE.search(text)
    if trigger is None:
        return
    # "这个bug明天要修好": what precedes the verb is its object ("修好这个bug").
    before = _ZH_TASK_SUBJECT_RE.sub("", text[: trigger.start()].strip(" ，,"))
    after = text[trigger.end() :]
    while (lead := _ZH_TASK_TRIGGER_RE.match(after.strip())) is not None:
        after = after.strip()[lead.end() :]
    act = clean(_ZH_TASK_SUBJECT_RE.sub("", after.strip(" ，,")))
    if before and not ZH_QUESTION_RE.search(before):
        act += before
    act = act.replace("我的", "自己的")
    if len(act) < 2:
        return
    suffix = f"（截止 {due}）" if due else ""
    yield ctx.mem(f"用户需要{act}{suffix}", "task", IMP_TASK, due=due)
