"""Rules over clause structure: what a clause about the user names, whatever verb says it.

The pattern rules (`en_tools`, `en_identity` …) read particular phrasings. These read the
structure of `clauses` instead, so a new phrasing of a known shape still counts:

- `en_mentions`: a clause about the user or their team, neither negated nor unsure, that names
  known technologies (the lexicon of `tech`, Pygments' language names) says the user works with
  them — "I mostly live in the CDK and TypeScript", "For anything infra-related I reach for
  Terraform", "Our shop is all-in on AWS", "I'm fluent in Go, rusty in Java". A clause about
  someone else ("my manager uses Emacs"), a question, or "I'm thinking about trying Rust" names
  nothing of the user's.
- `en_dropped`: a tool the user stopped using and, in the same sentence, another of the same
  kind (same subject key) — "Dropped Poetry, I'm all in on uv now", "we ripped out Jest, Vitest is
  way faster" — is a switch, which supersedes the old tool.
- `en_labelled`: a clause under a label — "Preference: 2-space indentation everywhere",
  "Stack: Rails + Hotwire".
- `zh_mentions`: the same for Chinese clauses about the user (`zh_clauses`: 我/我们/团队, a clause
  continuing one, or a message's first clause without a subject) naming technologies, not
  negated (不/没/别), not unsure (想/打算/考虑/听说 …); a clause about the project ("项目用的是
  Vue 3") gives the project's stack.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from memd.core.models import ExtractedMemory
from memd.extraction.rules.clauses import before_instead, en_clauses
from memd.extraction.rules.common import (
    IMP_PREFERENCE,
    IMP_PROJECT_DETAIL,
    Ctx,
    clean,
    join_en,
    join_zh,
    third_person,
    topic_slug,
)
from memd.extraction.rules.tech import (
    cjk_tech_names,
    is_language,
    lookup_tech,
    mentioned_tech,
    stack_key,
    style_subject,
    tool_memories,
)
from memd.extraction.rules.zh_clauses import ZH_OTHER_RE, zh_clauses

_WORD_RE = re.compile(r"[A-Za-z][\w.+#!\-]*[\w+#]|[A-Za-z]")
_USED_CATEGORIES = frozenset({"language", "framework", "platform", "tool", "editor", "os", "shell"})
# "MySQL 5.7", "Vue 3": the version said right after a name is part of what is used.
_VERSION_AFTER_RE = re.compile(r"\s*v?(?P<v>\d+(?:\.\d+)*)(?![\w.%]|\s*(?:个|岁|spaces?|years?)\b)")
_AFTER_RE = re.compile(r",\s*|\s+(?:for|in\s+favou?r\s+of)\s+", re.I)
_STOPPED_RE = re.compile(
    r"\b(?:dropped|ditched|ripped\s+out|got\s+rid\s+of|moved\s+(?:off|away\s+from)|(?:gave|given)\s+up\s+on"
    r"|stopped\s+using|no\s+longer\s+use|quit|abandoned|killed|removed|replaced)\b",
    re.I,
)


def techs_in(text: str, *, english: bool = True) -> list[str]:
    """The technologies `text` names, in order, once each, by their names (one to three words:
    "VS Code", "GitHub Actions"). In English running text "go" and "make" are verbs."""
    words = [(m.group(0), m.start()) for m in _WORD_RE.finditer(text)]
    if not english:
        # names written in Chinese script ("达梦", "人大金仓") are words of their own
        words = sorted(words + cjk_tech_names(text), key=lambda w: w[1])

    found: list[str] = []
    i = 0
    while i < len(words):
        for n in (3, 2, 1):
            if i + n > len(words):
                continue
            phrase = " ".join(w for w, _ in words[i : i + n])
            tech = (mentioned_tech if english else lookup_tech)(phrase)
            if tech is not None and tech.category in _USED_CATEGORIES:
                end = words[i + n - 1][1] + len(words[i + n - 1][0])
                v = _VERSION_AFTER_RE.match(text, end)
                found.append(f"{tech.name} {v.group('v')}" if v else tech.name)
                i += n
                break
            if n == 1 and tech is None and phrase[:1].isupper() and is_language(phrase):
                found.append(phrase)
        else:
            i += 1
    return list(dict.fromkeys(found))


def _works_with(names: Sequence[str]) -> str:
    return f"User works with {join_en(names)}"


def _new(names: Sequence[str], named: str) -> list[str]:
    """The names not already in `named` (what the sentence's other memories say)."""
    low = named.casefold()
    return [n for n in names if n.casefold() not in low]


def en_mentions(sentence: str, ctx: Ctx, named: str = "") -> Iterator[ExtractedMemory]:
    """Technologies named in the clauses about the user (see the module) that `named` (the
    sentence's memories so far) does not name yet."""
    for clause in en_clauses(sentence):
        if clause.label == "task":
            continue
        if clause.subject == "project" and not (clause.negated or clause.unsure):
            if names := _new(techs_in(clause.text), named):
                yield from _project_uses(names, ctx)
                named += " " + " ".join(names)
        elif clause.about_user and (names := _new(techs_in(before_instead(clause.text)), named)):
            yield from tool_memories(names, ctx, render=_works_with, main=False)


def en_dropped(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    """A tool dropped and one of the same kind taken up, in one sentence: a switch."""
    if _STOPPED_RE.search(sentence) is None:
        return
    clauses = en_clauses(sentence)
    if any(c.subject == "other" for c in clauses):
        return
    # "Ditched npm, pnpm all the way now": what follows a comma or "for" came next.
    parts = [(p, c.unsure) for c in clauses for p in _AFTER_RE.split(c.text) if p.strip()]
    old = [t for p, _ in parts if _STOPPED_RE.search(p) for t in techs_in(p)]
    keys = {k.subject for t in old if (k := lookup_tech(t)) is not None and k.subject}
    new = [
        t
        for p, unsure in parts
        if not _STOPPED_RE.search(p) and not unsure
        for t in techs_in(p)
        if t not in old and (k := lookup_tech(t)) is not None and k.subject in keys
    ]
    if new:
        since = f" from {join_en(old)}"
        yield from tool_memories(new[:1], ctx, render=lambda n: f"User switched to {join_en(n)}{since}",
                                 main=True, switch=True)  # fmt: skip


def en_labelled(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    """ "Preference: tabs over spaces", "Stack: Rails + Hotwire"."""
    for clause in en_clauses(sentence):
        if clause.label == "preference" and clause.subject != "other":
            obj = clean(clause.text)
            if obj and len(obj.split()) <= 15:
                yield ctx.mem(f"User prefers {third_person(obj)}", "preference", IMP_PREFERENCE,
                              subject=style_subject(obj))  # fmt: skip
        elif clause.label == "stack" and (names := techs_in(clause.text)):
            yield from _stack(names, ctx)


_STACK_IS_RE = re.compile(r"^(?:(?:the|our|my)\s+)?(?:tech\s+)?stack\s+is\s+(?P<rest>.+)$", re.I)


def en_stack(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    """ "Stack is Rails + Hotwire": the stack of the project the user is talking about, else
    what the user works with."""
    if "stack" not in sentence.lower():
        return
    for clause in en_clauses(sentence):
        m = _STACK_IS_RE.match(clause.text)
        if m is not None and (names := techs_in(m.group("rest"))):
            yield from _stack(names, ctx)


def _stack(names: Sequence[str], ctx: Ctx) -> Iterator[ExtractedMemory]:
    project = ctx.session.project
    if project:
        yield ctx.mem(f"{project} uses {join_en(names)}", "project", IMP_PROJECT_DETAIL,
                      subject=stack_key(names), topic=topic_slug(project))  # fmt: skip
    else:
        yield from tool_memories(names, ctx, render=_works_with, main=False)


# -- Chinese ---------------------------------------------------------------------------------
_ZH_NOT_RE = re.compile(r"不|没|别|弃用|放弃|以前|之前|曾经|很少|几乎不|删掉|卸了|卸载")
_ZH_UNSURE_RE = re.compile(
    r"想|打算|准备|考虑|要不要|是否|如果|假如|要是|听说|推荐|建议|或者|还是|还没|学习|在学|试试|尝试|评估"
    # tried once, read about, a plan for next week: no use of it yet
    r"|试了|试用|一本|书|文章|教程|视频|下周|下个月|明天"
)
_ZH_CLAUSE_RE = re.compile(r"[，,；;：]|:(?![A-Za-z0-9/])")


def zh_mentions(sentence: str, ctx: Ctx, named: str = "") -> Iterator[ExtractedMemory]:
    """Technologies named in Chinese clauses about the user or their project (see the module)
    that `named` does not name yet."""
    texts = [c.strip() for c in _ZH_CLAUSE_RE.split(sentence) if c.strip()]
    for clause in zh_clauses(texts, carried=ctx.session.spoke):
        text = clause.text
        if clause.subject not in ("I", "we", "project") or ZH_OTHER_RE.search(text):
            continue
        if _ZH_NOT_RE.search(text) or _ZH_UNSURE_RE.search(text):
            continue
        names = _new(techs_in(text, english=False), named)
        if not names:
            continue
        if clause.subject == "project":
            yield from _project_uses(names, ctx, zh=True)
        else:
            yield from tool_memories(names, ctx, render=lambda n: f"用户使用{join_zh(n)}",
                                     main=False)  # fmt: skip
        named += " " + " ".join(names)


_USERS_PROJECT = "User's project"


def _project_uses(names: Sequence[str], ctx: Ctx, *, zh: bool = False) -> Iterator[ExtractedMemory]:
    """ "项目用的是 Vue 3", "the repo is a Django monolith": the stack of the user's project.

    A tool of a kind that has one value at a time (the CI service, the database, the package
    manager: a `subject` key) is stated as the user's or their team's would be ("我们把 CI 迁到
    GitHub Actions 了"), with the same type and key, so either phrasing replaces the other."""
    project = ctx.session.project
    owner = project or ("用户的项目" if zh else _USERS_PROJECT)
    keyed = [n for n in names if (t := lookup_tech(n)) is not None and t.subject]
    if keyed:
        yield from tool_memories(keyed, ctx, main=False, render=lambda n: (
            f"{owner}使用{join_zh(n)}" if zh else f"{owner} uses {join_en(n)}"))  # fmt: skip
    rest = [n for n in names if n not in keyed]
    if not rest:
        return
    content = f"{owner}使用{join_zh(rest)}" if zh else f"{owner} uses {join_en(rest)}"
    yield ctx.mem(content, "project", IMP_PROJECT_DETAIL, subject=stack_key(rest),
                  topic=topic_slug(project) if project else "")  # fmt: skip
