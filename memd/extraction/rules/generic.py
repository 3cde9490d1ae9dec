"""Generic supersession and recall, behind the readers and the learned gate (`learned.py`).

- **generic supersession** (`apply_generic`): a clause of a later turn that says a change
  ("now", "switched", "no longer", "instead", "actually", 现在, 改成, 换成, 不再, 其实 …)
  replaces the user's earlier memory of the same type whose words, the values left out, it
  shares most — one more when the turn names the earlier memory's value and none of its
  memories keeps it, `alone` more when each is the only memory of its type on its side — when
  that score reaches `overlap`: both get one key, so placement marks the earlier one
  superseded; nothing is deleted. A turn that leaves the earlier value by name links it even
  when a reader keyed it or kept both sides;
- **recall** (`recall_left`): a turn that says a change and names a name only an earlier
  sentence of the user's said, kept by no memory ("Travis is history" after "Each push triggers
  a Travis CI build"), keeps that sentence's clause now, from its turn, under the key of the
  turn's new memory most like it.

Both do nothing without the learned layer's data file (`learned.model`); its two numbers
`overlap` and `alone` are theirs.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import replace

from memd.core.models import ExtractedMemory
from memd.extraction.rules import learned
from memd.extraction.rules.common import CJK_RE, is_question
from memd.extraction.rules.general import someone_else_in
from memd.extraction.rules.learned import (
    _EN_NOT_RE,
    _EN_SELF_RE,
    _LEAVING_RE,
    _STOP,
    _WORD_RE,
    _ZH_NOT_RE,
    content_of,
    cut,
    kept,
    says_change,
    values,
)

# How alike a keyed earlier memory and the gate's new one must be for the gate to replace it.
_ALIKE = 0.6
# Types one value can move between: the readers' types of a tool, and a decision on one.
_HELD_TYPES = frozenset({"skill", "preference", "project", "decision"})


def shape_words(content: str) -> set[str]:
    """The words of a memory that carry its shape (Chinese: character pairs), fillers and values
    — capitalised names, numbers — left out."""
    words = _WORD_RE.findall(content)
    latin = {w.casefold() for w in words if w.isascii() and not w[:1].isupper()}
    latin -= _STOP
    cjk = [w for w in words if not w.isascii()]
    pairs = {a + b for a, b in zip(cjk, cjk[1:], strict=False) if not {a, b} <= _STOP}
    return latin | pairs


def similarity(a: str, b: str) -> float:
    """The share of the shorter memory's shape words the other has too."""
    wa, wb = shape_words(a), shape_words(b)
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / min(len(wa), len(wb))


_SUPPOSE_RE = re.compile(r"^(?:if|suppose|imagine|what\s+if)\b|如果|假如|假设|要是|万一", re.I)


_ZH_SELF_RE = re.compile(r"我|咱")


def others_change(text: str) -> bool:
    """Whether the change a turn says is someone else's: a clause that says it names someone
    else ("My brother ditched Sentry; he uses Bugsnag now", "我同事那边 Zabbix 已经淘汰了，现在用
    Prometheus") and none that says it names the user alone ("I took the Intercom offer, so the
    pager is someone else's problem now", "我上个月结婚了，周末得陪老婆")."""
    changes = [c for c in cut(text) if says_change(c)] or [text]
    others = [someone_else_in(c) for c in changes]
    if not any(others):
        return False
    return not any(
        not other and (_ZH_SELF_RE if CJK_RE.search(c) else _EN_SELF_RE).search(c)
        for c, other in zip(changes, others, strict=True)
    )


def _slug(text: str) -> str:
    return re.sub(r"[^\w\u3400-\u9fff]+", "-", text.casefold()).strip("-")[:40]


def _compatible(old: str, new: str, left: bool = False) -> bool:
    """Whether a memory of type `new` can replace one of type `old`: the same type, two types a
    tool moves between, or — when the turn leaves the old value by name — a thing the user holds
    and one they prefer (fish as their shell, then Elvish)."""
    if old == new or {old, new} <= _HELD_TYPES:
        return True
    return left and "task" not in (old, new) and "personal" in (old, new)


# Words of an English memory too common to be a value it leaves ("been", "since", "every").
_PLAIN = frozenset(
    "been being have having does doing done with from into onto over about since every each "
    "this that these those there their them they then than what when where which while will "
    "would could should just also only very really much many more most some time times week "
    "weeks year years days work works working like likes uses using used user user's".split()
)


def _left_words(content: str) -> set[str]:
    """The longer plain English words of a memory, a value a turn can end ("keto", "fish")."""
    plain = {w.casefold() for w in re.findall(r"\b[a-z][a-z\-]{3,}\b", content)}
    return plain - _PLAIN - _STOP


def apply_generic(
    text: str, out: list[ExtractedMemory], start: int, gated: Collection[str] | None = None
) -> None:
    """A turn (`text`, its memories `out[start:]`) that says a change replaces the session's
    earlier memory it is most like: of the same type (or of two types a tool moves between), the
    most alike in words other than values, more so when the turn leaves the earlier one's value
    — names it (a name, a number, a Chinese pair; a plain English word in a clause that ends or
    denies it) and none of the turn's memories keeps it. Both get one key (the new memory's when
    it has one). The gate's new memory takes the earlier one's type, as does one replacing a
    decision; a reader's keeps its own. Left to the readers unless the turn leaves the earlier
    value: a keyed earlier memory or a task (the gate's new memory still replaces one whose words
    it shares most, `_ALIKE`), and, with `gated` (the contents of the memories the gate kept), a
    pair of which the gate kept neither. When the turn leaves the earlier value, a thing the user
    holds and a preference can replace one another. A memory a reader already keyed like an
    earlier one and an earlier one already replaced are left. Someone else's change
    (`others_change`), a question and a hypothesis replace nothing."""
    m = learned.model()
    if m is None or start == 0 or not says_change(text):
        return
    if is_question(text) or _SUPPOSE_RE.search(text):
        return
    if others_change(text):
        return
    done_old: set[int] = set()
    done_new: set[int] = set()
    for score, i, j in sorted(_pairs(text, out, start, gated, m.alone), reverse=True):
        if score < m.overlap or i in done_old or j in done_new:
            continue
        old, new = out[i], out[j]
        key = new.subject or old.subject or f"changed:{_slug(old.content)}"
        # The gate's new memory takes the old one's type, and a changed decision is a decision;
        # a reader's new memory keeps the type the reader gave it.
        gates = gated is None or new.content in gated
        decided = old.type == "decision" and _compatible(old.type, new.type)
        typed = old.type if gates or decided else new.type
        out[i] = replace(old, subject=key)
        out[j] = replace(new, subject=key, type=typed)
        done_old.add(i)
        done_new.add(j)


def _pairs(
    text: str,
    out: Sequence[ExtractedMemory],
    start: int,
    gated: Collection[str] | None,
    alone_score: float,
) -> list[tuple[float, int, int]]:
    """(score, earlier memory, the turn's memory) of every pair `apply_generic` may link."""
    said = text.casefold()
    keys_before = {e.subject for e in out[:start] if e.subject}
    turn = range(start, len(out))
    leaving = {j for j in turn if _LEAVING_RE.search(out[j].content)}
    # A memory a reader replaced by the turn's statement of what ended ("IDEA 我早就不用了") still
    # waits for its new value.
    replaced = _replaced([replace(m, subject="") if k in leaving else m for k, m in enumerate(out)])
    kept_now = " ".join(out[j].content for j in turn if j not in leaving).casefold()
    # The plain words of the turn's clauses that end or deny something ("Keto didn't stick").
    ended = {
        w.casefold()
        for c in cut(text)
        if _LEAVING_RE.search(c) or (_ZH_NOT_RE if CJK_RE.search(c) else _EN_NOT_RE).search(c)
        for w in re.findall(r"[A-Za-z][A-Za-z\-]{3,}", c)
    }
    # One earlier memory of a type and one of the turn's: alike by being alone.
    alone = Counter(out[i].type for i in range(start) if i not in replaced)
    fresh = Counter(out[j].type for j in turn if j not in leaving)
    olds = [i for i in range(start) if i not in replaced]
    news = [
        j
        for j in turn
        if j not in leaving and not (out[j].subject and out[j].subject in keys_before)
    ]
    pairs: list[tuple[float, int, int]] = []
    for i in olds:
        old = out[i]
        # The turn names the old value and none of its memories keeps it: it is left behind.
        left = any(v in said and v not in kept_now for v in values(old.content)) or any(
            v not in kept_now for v in _left_words(old.content) & ended
        )
        # A keyed memory or a task is the readers', unless the turn leaves it or the gate kept
        # a new memory most like it ("the evidence package is now due October 23").
        theirs = not left and (old.type == "task" or bool(old.subject))
        for j in news:
            new = out[j]
            if theirs and not (
                gated is not None
                and new.content in gated
                and new.type == old.type
                and similarity(old.content, new.content) >= _ALIKE
            ):
                continue
            if not _compatible(old.type, new.type, left) or new.content == old.content:
                continue
            if old.subject and new.subject == old.subject:
                continue
            readers = gated is not None and old.content not in gated and new.content not in gated
            if readers and not left:
                continue  # the readers' own pairs are theirs, unless the turn leaves one
            only = alone[old.type] == 1 and fresh[new.type] == 1
            score = similarity(old.content, new.content) + left + alone_score * only
            pairs.append((score, i, j))
    return pairs


def _replaced(memories: Sequence[ExtractedMemory]) -> set[int]:
    """The indexes of memories a later memory shares a key with (a reader replaced them)."""
    last: dict[str, int] = {}
    out: set[int] = set()
    for i, m in enumerate(memories):
        if m.subject:
            if m.subject in last:
                out.add(last[m.subject])
            last[m.subject] = i
    return out


# A name in a sentence: a capitalised word not at its start, or one with a capital or a digit
# inside ("GitHub", "MySQL", "Go 1.19" → "1.19" is no name).
_NAME_RE = re.compile(r"(?<=[^\s.!?。！？:：]\s)[A-Z][\w.+#\-]*[\w+#]|\b[a-z]+[A-Z][\w.+#\-]*")


def names_in(sentence: str) -> set[str]:
    """The names a sentence says (casefolded): its capitalised words but the first."""
    return {n.casefold() for n in _NAME_RE.findall(sentence.strip())} - {"i", "i'm", "user"}


def recall_left(
    text: str,
    out: list[ExtractedMemory],
    start: int,
    earlier: Sequence[tuple[str, str]],
) -> None:
    """A turn that says a change and names a name an earlier sentence of the user's says ("Travis
    is history: we ported the build to GitHub Actions" after "Each push triggers a Travis CI
    build"), kept by none of the session's memories: the earlier clause that says it was a
    statement of the user's the readers never kept. It is kept now, from its turn, with the key
    of the turn's new memory most like it (its type too), so placement marks it replaced.
    `earlier` is (turn id, sentence) of the user's statements in the turns before."""
    if learned.model() is None or not earlier or not says_change(text):
        return
    if is_question(text) or _SUPPOSE_RE.search(text):
        return
    said = text.casefold()
    kept_now = " ".join(m.content for m in out).casefold()
    keys_before = {m.subject for m in out[:start] if m.subject}
    news = [
        j
        for j in range(start, len(out))
        if out[j].type != "task"
        and not _LEAVING_RE.search(out[j].content)
        and not (out[j].subject and out[j].subject in keys_before)
    ]
    if not news:
        return
    if others_change(text):
        return
    for turn_id, sentence in reversed(earlier):
        for name in sorted(names_in(sentence)):
            if not _said_word(name, said) or name in kept_now:
                continue
            clause = next((c for c in cut(sentence) if name in c.casefold()), "")
            if not clause or not kept(clause):
                continue
            content = content_of(clause)
            j = max(news, key=lambda k: similarity(content, out[k].content))
            new = out[j]
            key = new.subject or f"changed:{_slug(content)}"
            old = replace(new, content=content, source_turn_ids=(turn_id,), subject=key, due="")
            out[j] = replace(new, subject=key)
            out.insert(start, old)
            return


def _said_word(word: str, text: str) -> bool:
    return re.search(r"(?<![\w])" + re.escape(word) + r"(?![\w])", text) is not None
