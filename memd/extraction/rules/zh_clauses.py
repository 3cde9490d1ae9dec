"""Who a Chinese clause is about: the structure the Chinese rules read before their patterns.

Chinese drops its subject freely: "上个月搬到广州了" after "我住在北京" is the user moving,
"老家是成都的" is the user's hometown, "平时写代码主要用 TypeScript" the user's language. A
clause is about:

- `I` — it opens with 我 (not 我们), or has no subject of its own and follows a clause about
  the user, or opens a message without one (the subject a chat message leaves out is its
  writer's);
- `we` — 我们, 咱们, 团队, 组里, 公司 …: the user's team, read like the user;
- `other` — a relation or another person is its subject: "我女朋友在腾讯上班", "同事说…",
  "他们都用 Go"; what it states is that person's, not the user's;
- `project` — the project or repository the user works in: "项目用的是 Vue 3";
- `ask` — a request to the assistant ("帮我…", "请…", "把…改成…") or a demonstrative ("这个
  正则…"): about no one.

`implied` marks a clause whose `I`/`we` was carried or dropped: the rules read it as it stands
first and with 我 put back only when that finds nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# Relations and other people: what follows them is theirs ("我女朋友在腾讯上班").
ZH_OTHER_WORDS = (
    r"同事|朋友|老婆|老公|妻子|丈夫|太太|先生|爱人|女朋友|男朋友|对象|老板|领导|上司|经理|爸|妈|父母"
    r"|孩子|儿子|女儿|哥|姐|弟|妹|他|她|别人|大家|有人|很多人|有些人|你们|客户|同学|室友|队友|导师"
    r"|老师|邻居|亲戚"
)
ZH_OTHER_RE = re.compile(ZH_OTHER_WORDS)
_WE_RE = re.compile(r"^(?:我们|咱们|本团队|团队|我们组|我们团队|组里|公司里?|我司)")
_I_RE = re.compile(r"^(?:我|本人)")
# A relation named right after 我/我的/我们 makes the clause that person's.
_RELATION_RE = re.compile(r"^(?:我的?|我们的?|我家)?(?:" + ZH_OTHER_WORDS + r")")
_ASK_RE = re.compile(
    r"^(?:你|您|请|帮|麻烦|把|给我|能不能|能否|可不可以|可以|怎么|如何|为什么|这|那|它|此)"
)
_PROJECT_RE = re.compile(
    r"^(?:(?:这个|我们的?|我的)?(?:项目|工程|仓库|代码库|代码仓库|repo|monorepo|代码)(?:里|中)?)",
    re.I,
)


@dataclass(frozen=True, slots=True)
class ZhClause:
    """One Chinese clause and who it is about (see the module)."""

    text: str
    subject: str  # "I" | "we" | "other" | "project" | "ask"
    implied: bool  # the subject was carried from before or left out

    @property
    def about_user(self) -> bool:
        """Whether the clause states something of the user or their team."""
        return self.subject in ("I", "we")


def _own_subject(text: str) -> str:
    """The subject a clause names itself, or "" when it names none."""
    if _RELATION_RE.match(text):
        return "other"
    if _WE_RE.match(text):
        return "we"
    if _I_RE.match(text):
        return "I"
    if _PROJECT_RE.match(text):
        return "project"
    if _ASK_RE.match(text):
        return "ask"
    if ZH_OTHER_RE.search(text[:4]):
        return "other"  # "领导让我们…", "大家都说…"
    return ""


def zh_clauses(texts: Sequence[str]) -> tuple[ZhClause, ...]:
    """The clauses of a Chinese sentence (already cut), each with its subject (see the module)."""
    out: list[ZhClause] = []
    previous = "I"  # a message that names no subject first is its writer's
    for text in texts:
        own = _own_subject(text)
        if own:
            out.append(ZhClause(text, own, False))
            previous = own
            continue
        # A clause without a subject continues the one before: "我同事特别喜欢用 Emacs，天天安利".
        out.append(ZhClause(text, previous, previous in ("I", "we")))
    return tuple(out)
