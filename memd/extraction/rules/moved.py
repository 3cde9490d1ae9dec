"""A later turn that leaves a value by name, or reverses a choice, tied to the earlier memory it
replaces (the readers of `slots`, for values a turn names rather than a slot's shape).

- **a named value moved** (`moved_values`): a stating clause says something moved to a new value
  ("迁到X", "换成X", "moved paging to X", "now it's X") and the sentence leaves a value an earlier
  memory names (after "from"/从, in a clause that denies or ends it, or a Latin name said
  anywhere but in what was moved: not "ported the Spark jobs to Kotlin" for a memory of Spark).
  The turn's memory of the new value, or else the earlier statement with the value replaced,
  gets the earlier memory's key (the project's type when the clause's subject is the team);
- **a choice reversed** (`reversed_decisions`): a turn that says a choice went the other way
  ("went the other way", "reversed that", "changed my mind", 又改了, 推翻, 还是回到): its memory of
  a value the earlier decision does not name (not a denial, not what ended) replaces the
  session's decision whose value the turn names, else the latest, as a decision.

Placement then marks the earlier memory superseded; nothing is deleted. A question, a
hypothesis, a negated clause and someone else's change replace nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from memd.core.models import ExtractedMemory
from memd.extraction.rules.common import CJK_RE, SENTENCE_RE, Ctx, is_question
from memd.extraction.rules.generic import others_change
from memd.extraction.rules.learned import _EN_NOT_RE, _LEAVING_RE, _ZH_NOT_RE, cut, values
from memd.extraction.rules.slots import (
    ASKS_RE,
    SUPPOSE_RE,
    link,
    replaced_before,
    team_clause,
)
from memd.extraction.rules.tech import mentioned_tech

_WORDS_RE = re.compile(r"[a-z0-9][\w.+#\-]*|[\u4e00-\u9fff]{2}")


_NEW = r"[A-Za-z][\w.+#\-]*(?:\s+(?-i:[A-Z0-9])[\w.+#\-]*){0,2}"
_EN_MOVED_TO_RE = re.compile(
    r"\b(?:moved|migrated|switched|ported|changed|went|transitioned|swapped)\b[^,;]{0,40}?\bto\s+"
    r"(?P<x>" + _NEW + r")|\bnow\s+(?:it's|it\s+is|we're\s+on|we\s+use|on)\s+(?P<y>" + _NEW + ")",
    re.I,
)
_ZH_MOVED_TO_RE = re.compile(
    r"(?:迁到|迁移到|换成|换到|改成|改用|切到|切换到|转到|搬到)了?\s*"
    r"(?P<x>[A-Za-z\u4e00-\u9fff][\w.+#\-\u4e00-\u9fff ]{0,14}?)\s*(?=了|上|，|,|。|$)"
)


def _names(content: str) -> tuple[list[str], list[str]]:
    """The values of a memory a turn can name again: its Latin names (not "User"), and the runs
    of two to six Chinese characters of its words (without 用户), longest first."""
    latin = [w for w in re.findall(r"[A-Za-z][\w.+#\-]*[\w+#]", content) if w[:1].isupper()]
    runs = re.findall(r"[\u4e00-\u9fff]{2,}", re.sub(r"用户(?:的)?", " ", content))
    subs = {
        r[a:b] for r in runs for a in range(len(r)) for b in range(a + 2, min(len(r), a + 6) + 1)
    }
    return [w for w in latin if w not in ("User", "User's")], sorted(subs, key=len, reverse=True)


# Where a turn leaves a value: after "from"/从, or in a clause that denies or ends it ("we're not
# on Opsgenie anymore", "Confluence 的许可证没续").
_FROM_RE = re.compile(r"\bfrom\s+|从\s*", re.I)


def _left_value(content: str, sentence: str, moved: str, new: str) -> str | None:
    """The value of an earlier memory the sentence leaves: a name said after "from" or in a
    clause that denies or ends something, or a Latin name said anywhere but in what was moved."""
    latin, cjk = _names(content)
    leaving = [
        c
        for c in cut(sentence)
        if (_ZH_NOT_RE if CJK_RE.search(c) else _EN_NOT_RE).search(c) or _LEAVING_RE.search(c)
    ]
    froms = [sentence[m.end() : m.end() + 20] for m in _FROM_RE.finditer(sentence)]
    for n in [*latin, *cjk]:
        if n in new or n in moved or n not in sentence:
            continue
        if any(f.startswith(n) for f in froms) or any(n in c for c in leaving) or n in latin:
            return n
    return None


def _moves(text: str) -> Iterator[tuple[str, str, str, str]]:
    """(sentence, clause, new value, what was moved) of each stating clause of a turn that says
    something moved to a new value ("迁到腾讯云 TKE", "moved paging to PagerDuty", "now it's pytest")."""
    for sentence in SENTENCE_RE.findall(text):
        clauses = cut(sentence)
        if any(SUPPOSE_RE.search(c) for c in clauses):
            continue
        for clause in clauses:
            zh = bool(CJK_RE.search(clause))
            if is_question(clause) or ASKS_RE.search(clause):
                continue
            m = (_ZH_MOVED_TO_RE if zh else _EN_MOVED_TO_RE).search(clause)
            if m is None or (_ZH_NOT_RE if zh else _EN_NOT_RE).search(clause[: m.start()]):
                continue
            new = (m.group("x") or m.group("y")).strip()
            if not zh and not (new[:1].isupper() or mentioned_tech(new)):
                continue
            # What was moved is no value left: "ported those Spark jobs to Kotlin", "把 GitHub
            # 用户名改成 lfzhou".
            held = clause.find("把")
            moved = clause[held : m.start()] if zh and 0 <= held < m.start() else m.group(0)
            yield sentence, clause, new, moved


def moved_values(text: str, ctx: Ctx, out: list[ExtractedMemory], start: int) -> None:
    """A value the turn names and says moved ("服务已经从阿里云迁到腾讯云 TKE 了", "we're not on
    Opsgenie anymore, we moved paging to PagerDuty", "接口文档我们统一迁到飞书文档了，Confluence 的
    许可证没续"): the earlier memory that names it takes the new one in its place."""
    gone = replaced_before(out, start)
    olds = [i for i in range(start) if i not in gone and out[i].type != "task"]
    for sentence, clause, new, moved in _moves(text) if olds else ():
        for i in reversed(olds):
            old = out[i]
            left = _left_value(old.content, sentence, moved, new)
            if left is None or new.casefold() in old.content.casefold():
                continue
            typed = "project" if team_clause(clause) and old.type != "decision" else old.type
            found = [
                j for j in range(start, len(out)) if new.casefold() in out[j].content.casefold()
            ]
            if found:
                j = next((k for k in found if out[k].type == typed), found[0])
                if not (out[j].subject and out[j].subject == old.subject):
                    link(out, i, replace(out[j], type=typed), j, "moved")
                return
            content = old.content.replace(left, new, 1)
            link(out, i, ctx.mem(content, typed, old.importance), None, "moved")
            return


# A choice made earlier, reversed: "went the other way", "reversed that", "changed my mind",
# "after all", 又改了, 改主意, 推翻, 还是回到.
_REVERSED_RE = re.compile(
    r"\b(?:went\s+the\s+other\s+way|revers(?:ed|ing)|changed\s+(?:my|our)\s+minds?|after\s+all"
    r"|overruled|scrapped\s+that|back\s+to)\b|又改|改主意|推翻|还是回到|改回|又换",
    re.I,
)


def reversed_decisions(text: str, out: list[ExtractedMemory], start: int) -> None:
    """A turn that reverses a choice ("The team vote went the other way — we're building the app
    with React Native", "开会又改了，缓存换成 Redis"): its memory of the new choice replaces the
    session's decision it reverses (the one whose value the turn names, else the latest), as a
    decision."""
    if not _REVERSED_RE.search(text) or is_question(text.strip()):
        return
    gone = replaced_before(out, start)
    olds = [i for i in range(start) if i not in gone and out[i].type == "decision"]
    if not olds:
        return
    said = text.casefold()
    i = next(
        (k for k in reversed(olds) if values(out[k].content) & set(_WORDS_RE.findall(said))),
        olds[-1],
    )
    held = values(out[i].content)
    news = [
        j
        for j in range(start, len(out))
        if out[j].type in ("decision", "skill", "project", "preference")
        and not values(out[j].content) & held
        and not (_ZH_NOT_RE if CJK_RE.search(out[j].content) else _EN_NOT_RE).search(out[j].content)
        and not _LEAVING_RE.search(out[j].content)
    ]
    if not news:
        return
    j = next((k for k in news if out[k].type == "decision"), news[0])
    if out[j].subject and out[j].subject == out[i].subject:
        return
    link(out, i, replace(out[j], type="decision"), j, "decided")


def apply_moved(text: str, ctx: Ctx, out: list[ExtractedMemory], start: int) -> None:
    """A later turn's value left by name, or its reversed choice (see the module)."""
    if start == 0 or others_change(text):
        return
    moved_values(text, ctx, out, start)
    reversed_decisions(text, out, start)
