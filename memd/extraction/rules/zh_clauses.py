"""Who a Chinese clause is about: the structure the Chinese rules read before their patterns.

Chinese drops its subject freely: "上个月搬到广州了" after "我住在北京" is the user moving,
"老家是成都的" is the user's hometown, "平时写代码主要用 TypeScript" the user's language. A
clause is about:

- `I` — it opens with 我 (not 我们), or has no subject of its own and follows a clause about
  the user, or opens a message without one and reports on its writer ("平时…", "上个月…",
  "老家…") or goes on from an earlier turn about the user;
- `we` — 我们, 咱们, 团队, 组里, 公司 …: the user's team, read like the user;
- `other` — a relation or another person is its subject: "我女朋友在腾讯上班", "同事说…",
  "他们都用 Go"; what it states is that person's, not the user's;
- `project` — the project or repository the user works in: "项目用的是 Vue 3";
- `ask` — a request to the assistant ("帮我…", "请…", "把…改成…") or a demonstrative ("这个
  正则…"): about no one;
- `none` — a message's first clause without a subject that does not report on its writer
  ("用 Python 写一个快排", "看起来是 Nginx 的配置问题"), and what continues it.

`implied` marks a clause whose `I`/`we` was carried or dropped: the rules read it as it stands
first and with 我 put back only when that finds nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# Relations and other people: what follows them is theirs ("我女朋友在腾讯上班").
ZH_OTHER_WORDS = (
    r"同事|朋友|老婆|老公|妻子|丈夫|太太|爱人|女朋友|男朋友|对象|老板|领导|上司|爸|妈|父母"
    r"|孩子|儿子|女儿|哥|姐|弟|妹|他|她|别人|大家|有人|很多人|有些人|你们|客户|同学|室友|队友|导师"
    r"|邻居|亲戚"
    # kin beyond the household: "我舅舅在银行上班，今年五十了" is his age, not the user's
    r"|舅|叔|姨|姑姑|伯伯|伯父|爷爷|奶奶|外公|外婆|姥姥|姥爷|岳父|岳母|公公|婆婆|侄|外甥|孙子|孙女"
    r"|舍友|实习生|下属|组员|新人"
)
# "新来的同事", "隔壁组的那个实习生", "表哥": a relation or colleague named with who they are.
_WHICH = (
    r"(?:新来的|刚来的|刚入职的|那个|这个|隔壁组?的?|组里的?|公司的?|团队的?|大学|高中|初中|小学"
    r"|研究生|以前的?|之前的?|前|老|好"
    # kin by side and by rank: 表哥, 堂妹, 大舅, 二姨, 小叔
    r"|表|堂|大|二|三|小)*"
)
ZH_OTHER_RE = re.compile(ZH_OTHER_WORDS)
_WE_RE = re.compile(r"^(?:我们|咱们|本团队|团队|我们组|我们团队|组里|公司里?|我司)")
_I_RE = re.compile(r"^(?:我|本人)")
# A relation named right after 我/我的/我们 makes the clause that person's.
RELATION_RE = re.compile(
    r"^(?:我的?|我们的?|我家)?"
    + _WHICH
    + r"(?:"
    + ZH_OTHER_WORDS
    + r"|经理|主管|组长|总监|老大|合伙人)"
)
_ASK_RE = re.compile(
    r"^(?:你|您|请|帮|麻烦|把|给我|能不能|能否|可不可以|可以|怎么|如何|为什么|这|那|它|此)"
)
# Words a Chinese self-report opens with when it leaves out 我: time, habit, home.
_SELF_REPORT_RE = re.compile(
    r"^(?:平时|平常|日常|主要|一般|通常|经常|偶尔|一直|现在|目前|最近|近来|这[两几]年|这半年|这段时间|这阵子|之前|以前"
    r"|刚刚?|已经|去年|今年|前年|上个?月|上周|这个?月|这周|本来|原来|后来|老家|家里|家在|工作上|上班|下班"
    r"|业余|周末|体检)"
)
# A clause that opens with a verb asks for something: "用 Python 写一个快排", "改成异步的".
_ORDER_RE = re.compile(
    r"^(?:用(?!的是|了)|写|给|帮|把|改|加|删|去掉|生成|实现|解释|翻译|运行|跑|看|查|修|重写|优化|换个|试试|说说"
    r"|讲讲|列出|总结|检查)"
)
_SIDE_SAYS = r"(?:前端|后端|服务端|客户端)(?=是|用|已经|现在|目前|基于|采用|重写|改|换|迁)"
_PROJECT_RE = re.compile(
    r"^(?:(?:这个|我们的?|我的)?(?:前端|后端|服务端|客户端)?(?:项目|工程|仓库|代码库|代码仓库|repo"
    r"|monorepo|代码)(?:里|中)?"
    # "我们的后端是用 Django 写的": a side of the product, owned, as the subject of what it is
    # built with (not "后端开发", a kind of work).
    r"|(?:这个|我们的|我的)" + _SIDE_SAYS + ")",
    re.I,
)


# A time the clause opens with: 这 here is "this (period)", not a thing pointed at.
_TIME_LEAD_RE = re.compile(r"^这(?:[两几些]?年|半年|段时间|阵子|个?月|周|礼拜|星期)")


@dataclass(frozen=True, slots=True)
class ZhClause:
    """One Chinese clause and who it is about (see the module)."""

    text: str
    subject: str  # "I" | "we" | "other" | "project" | "ask" | "none"
    implied: bool  # the subject was carried from before or left out

    @property
    def about_user(self) -> bool:
        """Whether the clause states something of the user or their team."""
        return self.subject in ("I", "we")


def _own_subject(text: str) -> str:
    """The subject a clause names itself, or "" when it names none."""
    if RELATION_RE.match(text):
        return "other"
    if _PROJECT_RE.match(text):
        return "project"  # before 我们: "我们的项目前端用的是 Vue 2" states the project's stack
    if _WE_RE.match(text):
        return "we"
    if _I_RE.match(text):
        return "I"
    if _TIME_LEAD_RE.match(text):
        # "这两年基本都在写 Kotlin 了": a time, not a demonstrative — no subject of its own.
        return ""
    if _ASK_RE.match(text):
        return "ask"
    if ZH_OTHER_RE.search(text[:4]):
        return "other"  # "领导让我们…", "大家都说…"
    return ""


def zh_clauses(texts: Sequence[str], *, carried: bool = False) -> tuple[ZhClause, ...]:
    """The clauses of a Chinese sentence (already cut), each with its subject (see the module);
    `carried`: the session's earlier turns were about the user, so a first clause without a
    subject goes on about them."""
    out: list[ZhClause] = []
    first = texts[0] if texts else ""
    # A first clause without a subject is the writer's when it reports on them ("平时…",
    # "上个月…", "老家…") or goes on from an earlier turn; "用 Python 写一个快排" is an order.
    reports = _SELF_REPORT_RE.match(first) or carried and not _ORDER_RE.match(first)
    previous = "I" if reports else "none"
    for text in texts:
        own = _own_subject(text)
        if own:
            out.append(ZhClause(text, own, False))
            previous = own
            continue
        # A clause without a subject continues the one before: "我同事特别喜欢用 Emacs，天天安利".
        out.append(ZhClause(text, previous, previous in ("I", "we")))
    return tuple(out)
