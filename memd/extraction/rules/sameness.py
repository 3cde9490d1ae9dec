"""Whether two statements state the same fact in other words or another language.

"用户使用Neovim", "用户喜欢用 Neovim 写代码" and "User uses Neovim" say one thing: the same
named things (their *anchors*: tools, languages, numbers, other Latin-script names, with the
lexicon's short forms resolved, so "nvim" is Neovim), the same polarity, and around them only
*light* words — the user, use, like, write code, mainly, 使用, 喜欢, 写代码. A word that carries
meaning of its own ("switched", "from", "dislikes", "键位", a second tool) makes them two
facts. Word overlap cannot see this: the bigrams of the Chinese statements barely meet, and
the English one shares only the name.
"""

from __future__ import annotations

import functools
import re

from memd.extraction.rules.tech import lookup_tech

_LATIN_RE = re.compile(r"[A-Za-z0-9][\w.+#\-]*(?:\+\+|#)?|[A-Za-z]")
_CJK_RUN_RE = re.compile(r"[\u3400-\u9fff]+")
# Words that say how the user relates to a named thing without adding to it.
_LIGHT_EN = frozenset(
    """
    user user's users the a an and to for with in on at of as by is are was be
    use uses used using like likes liked love loves prefer prefers preferred enjoy enjoys
    work works working write writes writing code codes coding program programs programming
    develop develops developing development build builds building run runs running
    mainly mostly primarily usually often always generally daily regularly typically now
    currently still also really all day every everything things stuff projects project
    """.split()
)
# Longest first: removed from a CJK run until nothing (a light run) or something is left.
_LIGHT_ZH = tuple(
    sorted(
        """
        用户 使用 在用 用来 用于 用 喜欢 偏好 偏爱 爱用 习惯 常用 写代码 代码 编程 开发 写 做 来
        平时 主要 一般 通常 经常 日常 现在 目前 一直 基本 都 也 的 在 了 是 比较 很 更 最 最常
        """.split(),
        key=len,
        reverse=True,
    )
)
_NEGATION_RE = re.compile(
    r"\b(?:not|no|never|don't|doesn't|dislikes?|hates?|avoids?|without|stopped)\b"
    r"|不|没|别|讨厌|反感|受不了|避免",
    re.I,
)
# A change is its own statement (and what supersession reads): never folded into a repeat.
_CHANGE_RE = re.compile(
    r"\b(?:switch\w*|mov\w*|migrat\w*|replac\w*|from|instead|chang\w*|left|joined)\b"
    r"|换|改用|迁移|切换|转到|不再|从",
    re.I,
)


@functools.lru_cache(maxsize=4096)
def _shape(text: str) -> tuple[frozenset[str], bool, bool] | None:
    """(anchors, negated, light): the named things, the polarity, and whether every other word
    is light; None when the text states a change."""
    if _CHANGE_RE.search(text):
        return None
    anchors: set[str] = set()
    light = True
    for word in _LATIN_RE.findall(text):
        low = word.lower().rstrip(".")
        if low in _LIGHT_EN:
            continue
        tech = lookup_tech(word)
        if tech is not None:
            anchors.add(tech.name.lower())
        elif low[:1].isdigit() or word[:1].isupper() or not low.isalpha():
            anchors.add(low)
        else:
            light = False  # an ordinary English word that says more than "uses"
    for run in _CJK_RUN_RE.findall(text):
        rest = run
        for w in _LIGHT_ZH:
            rest = rest.replace(w, "")
        if rest:
            light = False
    return frozenset(anchors), bool(_NEGATION_RE.search(text)), light


def same_fact(a: str, b: str) -> bool:
    """Whether `a` and `b` state the same fact about the same named things (see the module)."""
    sa, sb = _shape(a), _shape(b)
    if sa is None or sb is None:
        return False
    (anchors_a, neg_a, light_a), (anchors_b, neg_b, light_b) = sa, sb
    return bool(anchors_a) and anchors_a == anchors_b and neg_a == neg_b and light_a and light_b
