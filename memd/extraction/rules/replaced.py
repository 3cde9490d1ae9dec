"""A change read from its shape: "switched from X to Y", "replaced X with Y", "dropped X, it's all
Y now", "Y now rather than X", "X → Y", "从X换成Y", "不用X了，改用Y" — whatever X and Y are.

The other rules key a fact by what a lexicon knows of its value (a known tool gives `tool:ci`, a
known city `city`). A change names both values, so it says by itself that Y's fact replaces X's,
even for a value no lexicon lists (Bun, Buildkite, a database decided on) or a fact stored under
no key ("User works with Yarn"). `change_pairs(text)` reads the (X, Y) pairs of a turn; the
driver gives them to `apply_changes` with the session's memories so far:

- X is looked up among the memories stored before the turn (the last one that names X and not
  Y). Y's memory is the turn's own memory naming Y, or, when the turn stated none (no rule reads
  "it's all Bun now"), X's memory with X's name replaced by Y's. Both get one key: X's memory's
  subject, or Y's, or one made from X (`changed:<x>`), and X's type, so placement marks X's
  memory superseded by Y's.
- When no memory of the session holds X (the old value was never stated, or in an earlier run)
  and the change says the user had X, X's memory is recorded as well, just before Y's and under
  Y's key (or `changed:<x>`): Y's text with X in its place, or "User used X" when Y's names X
  too. It is superseded at once, so it is never current; an item an earlier run stored is
  either the same text (placement counts it again, it adds nothing) or replaced through the key.
  A comparison ("instead of") records nothing.
- A memory of the turn that names X and not Y is a misreading of the change ("moving CI off
  CircleCI" is not "User works with CircleCI") and is dropped.

A clause about someone else ("my new hire switched from PyCharm to VS Code", "我同事从 Vim 换成了
VS Code"), a question, a hypothetical or a plan ("thinking about moving from X to Y", "打算从 X
换成 Y") gives no pair.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from memd.core.models import ExtractedMemory
from memd.extraction.rules.clauses import someone_else
from memd.extraction.rules.common import CJK_RE, SENTENCE_RE, Ctx, is_question
from memd.extraction.rules.mentions import techs_in
from memd.extraction.rules.tech import lookup_tech, stack_side
from memd.extraction.rules.zh_clauses import RELATION_RE

# A value: a name in Latin script, one to three words (later words capitalised: "VS Code",
# "Google Cloud"), or a short run of Chinese characters.
_WORD = r"[A-Za-z0-9](?:[\w.+#\-]*[\w+#])?"
_EN_VALUE = _WORD + r"(?:\s+(?-i:[A-Z0-9](?:[\w.+#\-]*[\w+#])?)){0,2}"
_ZH_VALUE = _EN_VALUE + r"|[\u4e00-\u9fff]{1,6}?"
_ZH_END = r"(?=$|[了的吧啊呢啦上里，,。！!；;\s]|来|去|做|写|开发|部署)"


def _old(value: str = _EN_VALUE) -> str:
    return f"(?P<old>{value})"


def _new(value: str = _EN_VALUE) -> str:
    return f"(?P<new>{value})"


# Each shape with whether it says the user had the old value (a change does; "Y rather than X"
# only compares).
_EN_SHAPES = tuple(
    (re.compile(p, re.I), "rather" not in p)
    for p in (
        # "switched from jest to vitest", "moving CI off CircleCI onto Buildkite"
        r"\b(?:switch|mov|migrat|chang|transition|port|convert)\w*\b(?:\s+[\w\-]+){0,3}?\s+"
        r"(?:(?:over\s+)?from|off(?:\s+of)?|away\s+from)\s+" + _old() + r"\s+(?:over\s+)?"
        r"(?:to|onto|into)\s+(?:an?\s+|the\s+)?" + _new(),
        # "replaced jest with vitest", "swapped out Webpack for Vite"
        r"\b(?:replac|swapp|swap)\w*(?:\s+out)?\s+(?:the\s+|our\s+|my\s+)?"
        + _old()
        + r"\s+(?:with|for|by)\s+(?:an?\s+|the\s+)?"
        + _new(),
        # "We dropped yarn, it's all Bun now", "Scrap the MongoDB plan — we're going with DynamoDB"
        r"\b(?:dropped|ditched|scrapped|scrap|dumped|abandoned|binned|killed|ripped\s+out)\s+"
        r"(?:the\s+|our\s+|my\s+)?" + _old() + r"(?:\s+(?:plan|idea|approach|setup))?\s*"
        r"(?:[,;:—–]|\s-\s|\band\b)\s*(?:now\s+)?(?:(?:it's|its|it\s+is)\s+(?:all\s+|just\s+|now\s+)?"
        r"|(?:we're|we\s+are|I'm|I\s+am|we|I)\s+(?:now\s+)?(?:going\s+with|using|use|on|switching\s+to"
        r"|moving\s+to|switched\s+to|moved\s+to)\s+|(?:going\s+with|using|switched\s+to|moved\s+to)\s+)"
        + _new(),
        # "Java's behind me, it's all Kotlin now", "Sublime is gone, I'm using Zed"
        _old() + r"(?:'s|\s+is|\s+are)\s+(?:behind\s+(?:me|us)|gone|over|history|dead|done)\s*"
        r"(?:[,;:—–]|\s-\s)\s*(?:and\s+|so\s+)?(?:now\s+)?(?:(?:it's|its|it\s+is)\s+(?:all\s+|just\s+|now\s+)?"
        r"|(?:I'm|I\s+am|we're|we\s+are)\s+(?:now\s+)?(?:on|using|with)\s+|(?:I|we)\s+use\s+)"
        + _new(),
        # "I no longer use Vim, it's Helix now"
        r"\bno\s+longer\s+(?:use|using|on|at|with|in|a|an)?\s*"
        + _old()
        + r"\s*(?:[,;:—–]|\s-\s)\s*"
        r"(?:(?:now|it's|its|I\s+use|we\s+use|I'm\s+on|we're\s+on|I'm\s+at|using|all|mostly)\s+)+"
        + _new(),
        # "so vegetarian now rather than vegan", "Zed instead of VS Code"
        r"\b" + _new(_WORD) + r"(?:\s+now)?\s+(?:instead\s+of|rather\s+than"
        r"|in\s+place\s+of)\s+" + _old(),
        # "npm → pnpm"
        _old() + r"\s*(?:→|->|=>|⇒)\s*" + _new(),
        # "Friday was my last day at Stripe. Starting at Vercel on Monday!", "I left Shopify in
        # March and now I'm at Stripe"
        r"\b(?:last\s+day\s+(?:at|with)|left|quit)\s+"
        + _old()
        + r"\b.{0,40}?(?:\b(?:start(?:ing|ed)?"
        r"|join(?:ing|ed)?)\s+(?:at\s+|with\s+)?|\b(?:now\s+)?(?:I'm|I\s+am)\s+(?:now\s+)?(?:at|with)\s+)"
        + _new(),
        # "We ditched Jira for Linear", "traded Chrome for Firefox"
        r"\b(?:ditched|dropped|dumped|traded|abandoned|left)\s+(?:the\s+|our\s+|my\s+)?"
        + _old()
        + r"\s+(?:for|in\s+favou?r\s+of)\s+(?:an?\s+|the\s+)?"
        + _new(),
    )
)
_ZH_VERB = r"(?:换成|换到|换为|改成|改为|改用|换用|迁到|迁移到|迁去|切到|切换到|转到|转成|替换成|跳到|跳槽到)了?"
# X (那边) 换成了 Y
_ZH_MOVE = _old(_ZH_VALUE) + r"\s*(?:那边|这边)?" + _ZH_VERB + r"\s*" + _new(_ZH_VALUE) + _ZH_END
_ZH_SHAPES = tuple(
    # "把X迁到Y" moves X, which may be the thing moved ("把数据库迁到 PostgreSQL"), not a value.
    (re.compile(p), not p.startswith("把"))
    for p in (
        # "从 Jenkins 迁到了 GitHub Actions"
        r"从\s*" + _ZH_MOVE,
        # "我们把 MySQL 换成了 PostgreSQL"
        r"把\s*" + _ZH_MOVE,
        # "不用 npm 了，改用 pnpm", "不再用 Vim，现在用 Helix"
        r"不(?:再)?用\s*" + _old(_ZH_VALUE) + r"\s*了?[，,]?\s*(?:现在|以后|已经|都|全)*"
        r"(?:改用|换成|换用|用|在用)了?\s*" + _new(_ZH_VALUE) + _ZH_END,
        # "npm → pnpm"
        _old(_ZH_VALUE) + r"\s*(?:→|->|=>|⇒)\s*" + _new(_ZH_VALUE) + _ZH_END,
        # "不在腾讯了，现在在字节"
        r"不在\s*"
        + _old(_ZH_VALUE)
        + r"\s*了[，,]?\s*(?:现在|已经)*(?:在|去了|到了)\s*"
        + _new(_ZH_VALUE)
        + _ZH_END,
    )
)
# A sentence about what might be or what someone plans: it changes nothing yet.
_EN_UNSURE_RE = re.compile(
    r"^(?:if|suppose|imagine|assuming|what\s+if)\b|\b(?:thinking\s+(?:about|of)|considering|consider"
    r"|might|maybe|should\s+(?:I|we)|would|could|plan(?:ning)?\s+to|want\s+to|wants\s+to"
    r"|going\s+to\s+(?:switch|move|migrate|replace)|says|said|read|heard|according\s+to)\b",
    re.I,
)
_ZH_UNSURE_RE = re.compile(
    r"如果|假如|假设|要是|万一|打算|准备|考虑|想要?|计划|可能|也许|是否|要不要|可以|听说|据说|说"
)
# A name in Latin script ends where Latin letters and digits do: "用户使用Yarn" names Yarn.
_BEFORE = r"(?<![A-Za-z0-9_.+#\-])"
_AFTER = r"(?![A-Za-z0-9_+#\-])"
_STOP = frozenset({"it", "that", "this", "them", "those", "these", "one", "something", "a", "the"})


# A request to the assistant: "Replace yarn with pnpm in the Dockerfile", "把 Jest 换成 Vitest".
_EN_ORDER_RE = re.compile(
    r"^(?:please\s+|pls\s+|now\s+|ok\s+|okay\s+)?(?:replace|switch|swap|move|migrate|change"
    r"|convert|port|rewrite|use|drop|ditch|scrap|go|let's|let\s+us)\b|\blet's\b",
    re.I,
)
_EN_FIRST_PERSON_RE = re.compile(r"\b(?:I|I'm|I've|we|we're|we've|our|my)\b", re.I)
_ZH_ORDER_RE = re.compile(r"^(?:你|您)?(?:把|帮|请|麻烦|给我|能不能|可以|可不可以)")


def usable(sentence: str) -> bool:
    """Whether a sentence's change is the user's own and already made: not a plan, a question, a
    request to the assistant ("Replace yarn with pnpm here"; "Scrap the X plan — we're going
    with Y" says what the team does) or someone else's."""
    text = sentence.strip()
    if not text or is_question(text):
        return False
    if CJK_RE.search(text):
        return not (
            _ZH_UNSURE_RE.search(text) or RELATION_RE.match(text) or _ZH_ORDER_RE.match(text)
        )
    if _EN_ORDER_RE.search(text) and not _EN_FIRST_PERSON_RE.search(text):
        return False
    return not (_EN_UNSURE_RE.search(text) or someone_else(text))


def change_pairs(text: str) -> list[tuple[str, str, bool]]:
    """The (old, new, had) values the changes of a turn's text name, in order (see the module);
    `had` says the shape states the user had the old value."""
    sentences = [s for s in SENTENCE_RE.findall(text) if s.strip()]
    if not sentences or not all(usable(s) for s in sentences if _names_change(s)):
        return []
    joined = " ".join(s.strip() for s in sentences)
    pairs: list[tuple[str, str, bool]] = []
    for shape, had in (*_EN_SHAPES, *_ZH_SHAPES):
        for m in shape.finditer(joined):
            old, new = _bare(m.group("old")), _bare(m.group("new"))
            if old.casefold() == new.casefold() or {old.casefold(), new.casefold()} & _STOP:
                continue
            if all((old, new) != p[:2] for p in pairs):
                pairs.append((old, new, had))
    return pairs


# Words a value is said after that are no part of it: "it's been Elixir", "now mostly Go".
_LEAD_RE = re.compile(r"^(?:(?:been|now|all|just|mostly|only|using|on|with|the|an?)\s+)+", re.I)


def _bare(value: str) -> str:
    return _LEAD_RE.sub("", value.strip()) or value.strip()


def _names_change(sentence: str) -> bool:
    return any(s.search(sentence) for s, _ in (*_EN_SHAPES, *_ZH_SHAPES))


def names_value(content: str, value: str) -> bool:
    """Whether a memory's text names `value` (or the lexicon's name for it; a name the lexicon
    does not hold, of four letters or more, said short: "Mongo" for MongoDB)."""
    tech = lookup_tech(value)
    for name in {value, tech.name if tech is not None else value}:
        if CJK_RE.search(name):
            if name in content:
                return True
        elif re.search(_BEFORE + re.escape(name) + _AFTER, content, re.I):
            return True
    if tech is None and len(value) >= 4 and not CJK_RE.search(value):
        return bool(re.search(_BEFORE + re.escape(value) + r"[A-Za-z0-9]+" + _AFTER, content, re.I))
    return False


def _swap(content: str, old: str, new: str) -> str:
    """`content` with the value `old` (or the lexicon's name for it) replaced by `new`."""
    tech = lookup_tech(old)
    for name in sorted({old, tech.name if tech is not None else old}, key=len, reverse=True):
        if CJK_RE.search(name):
            if name in content:
                return content.replace(name, new)
            continue
        pattern = re.compile(_BEFORE + re.escape(name) + _AFTER, re.I)
        if pattern.search(content):
            return pattern.sub(lambda _: new, content)
    if tech is None and len(old) >= 4 and not CJK_RE.search(old):
        # "Mongo" said for MongoDB: a name the lexicon does not hold, said short
        short = re.compile(_BEFORE + re.escape(old) + r"[A-Za-z0-9]+" + _AFTER, re.I)
        return short.sub(lambda _: new, content)
    return content


def key_of_old(old: str) -> str:
    slug = re.sub(r"[^\w]+", "-", old.casefold()).strip("-")
    return f"changed:{slug}"


# A change that names only the new value: "We moved our repos to GitLab", "we rewrote the
# frontend in Svelte", "We're fully on GCP now", "现在全部迁到 GCP 了".
_EN_CHANGED_RE = re.compile(
    r"\b(?:switched|moved|migrated|rewrote|rewritten|ported|replaced|went\s+back|fully\s+on"
    r"|all[- ]in\s+on|entirely\s+on|all\s+on)\b",
    re.I,
)
_ZH_CHANGED_RE = re.compile(r"换成|换到|改用|换用|迁到|迁移到|切到|切换到|转到|重写|全部用|全面")
_ADDED_RE = re.compile(r"\b(?:also|too|as\s+well|another|alongside|plus)\b|也|还", re.I)


# Platforms one has one of at a time; the lexicon's "platform" also holds Docker, Kubernetes,
# Sentry … which sit beside each other.
PLATFORM_GROUPS = {
    "cloud": frozenset(
        "aws gcp azure digitalocean linode hetzner heroku vercel netlify fly.io render railway"
        " cloudflare oracle cloud google cloud ovh ovhcloud vultr scaleway akamai".split()
    ),
    "code-host": frozenset("github gitlab bitbucket gitea codeberg".split()),
}


def _kind(name: str) -> str:
    """The kind a technology is one of, for a change that names only the new one: a framework by
    its side, a platform by its group, else the lexicon's category; "" for a kind too broad to
    have one at a time."""
    tech = lookup_tech(name)
    if tech is None or tech.category == "tool":
        return ""
    if tech.category == "framework":
        side = stack_side(name)
        return f"framework:{side}" if side else ""
    if tech.category == "platform":
        low = tech.name.casefold()
        return next((g for g, names in PLATFORM_GROUPS.items() if low in names), "")
    return tech.category


_NAME_RE = re.compile(r"[A-Za-z][\w.+#\-]*")


# A tool may be stated as the user's skill, their preference or their project's stack: one fact.
_TOOL_TYPES = frozenset({"skill", "preference", "project"})


def _one_kind(a: str, b: str) -> bool:
    return a == b or {a, b} <= _TOOL_TYPES


def _techs(content: str) -> list[str]:
    """The technologies a memory names, apps (Slack, Jira) included."""
    found = techs_in(content, english=not CJK_RE.search(content))
    for word in _NAME_RE.findall(content):
        tech = lookup_tech(word)
        if tech is not None and tech.category == "app" and tech.name not in found:
            found.append(tech.name)
    return found


def implied_pairs(text: str, out: Sequence[ExtractedMemory], start: int) -> list[tuple[str, str]]:
    """(old, new) for a change that names only its new technology: the one held memory without
    a key that names one technology of the same kind (see `_kind`) is the old value."""
    zh = bool(CJK_RE.search(text))
    if not (_ZH_CHANGED_RE if zh else _EN_CHANGED_RE).search(text) or _ADDED_RE.search(text):
        return []
    if not all(usable(s) for s in SENTENCE_RE.findall(text) if s.strip()):
        return []
    pairs: list[tuple[str, str]] = []
    for memory in out[start:]:
        names = _techs(memory.content)
        if memory.subject or len(names) != 1 or not (kind := _kind(names[0])):
            continue
        held = [
            m for m in out[:start]
            if not m.subject and _one_kind(m.type, memory.type)
            and len(n := _techs(m.content)) == 1 and n[0] != names[0] and _kind(n[0]) == kind
        ]  # fmt: skip
        if len({_techs(m.content)[0] for m in held}) == 1:
            pairs.append((_techs(held[-1].content)[0], names[0]))
    return pairs


def apply_changes(text: str, ctx: Ctx, out: list[ExtractedMemory], start: int) -> bool:
    """Apply the changes a turn's `text` names to `out`, the session's memories: `out[start:]`
    are the turn's own (see the module). `out` is changed in place; whether the turn named one."""
    pairs = change_pairs(text)
    if not pairs:
        pairs = [(old, new, False) for old, new in implied_pairs(text, out, start)]
    for old, new, had in pairs:
        apply_pair(old, new, had, ctx, out, start)
    return bool(pairs)


def apply_pair(
    old: str, new: str, had: bool, ctx: Ctx, out: list[ExtractedMemory], start: int
) -> None:
    held = next(
        (i for i in range(start - 1, -1, -1)
         if names_value(out[i].content, old) and not names_value(out[i].content, new)),
        None,
    )  # fmt: skip
    # A memory of the turn that names the old value alone misreads the change.
    out[start:] = [
        m
        for m in out[start:]
        if not (names_value(m.content, old) and not names_value(m.content, new))
    ]
    said = next((j for j in range(start, len(out)) if names_value(out[j].content, new)), None)
    if held is None:
        if had:
            _record_old(old, new, out, said)
        return
    known = out[held]
    key = known.subject or (out[said].subject if said is not None else "") or key_of_old(old)
    out[held] = replace(known, subject=key)
    if said is not None:
        out[said] = replace(out[said], subject=key, type=known.type)
        return
    content = _swap(known.content, old, new)
    if content == known.content:
        return
    out.append(replace(known, content=content, source_turn_ids=(ctx.turn_id,), subject=key, due=""))
    ctx.session.values[key] = out[-1]


def _record_old(old: str, new: str, out: list[ExtractedMemory], said: int | None) -> None:
    """The old value was never stored (in this session): recorded under the new value's key, just
    before it. A memory under a key that names the old value ("User switched to Vitest from
    Jest") keeps it itself: the item stored earlier, if any, is replaced through the key. A tool
    without a key ("User switched to Linear from Jira") gets one made from the old value, and the
    old memory says the user used it."""
    if said is None:
        return
    memory = out[said]
    key = memory.subject or key_of_old(old)
    if names_value(memory.content, old):
        if memory.subject or memory.type not in _TOOL_TYPES:
            return  # a decision to move ("User is moving to FastAPI from Flask") is not done
        zh = bool(CJK_RE.search(memory.content))
        content = f"用户之前用{old}" if zh else f"User used {old}"
    else:
        content = _swap(memory.content, new, old)
    if content != memory.content:
        out[said] = replace(memory, subject=key)
        out.insert(said, replace(memory, content=content, subject=key))
