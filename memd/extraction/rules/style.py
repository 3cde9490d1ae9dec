"""How the user wants the assistant to work: the topics of such requests and their subject keys.

A request about one topic replaces the earlier request about the same topic ("be more
detailed" after "keep your answers short"), so each topic has one `subject` key. Topics are
recognised in English and Chinese; a text naming none has no key (and replaces nothing).
"""

from __future__ import annotations

import re

# Chinese verbs of changing what something is written in: "以后注释都改成中文吧".
_ZH_CHANGE = r"改成|换成|改用|换用|改为|转成"
_ANSWER = r"(?:answers?|replies|reply|responses?|explanations?|messages?|summar(?:y|ies)|it|things)"
_LENGTH_WORDS = (
    r"(?:short(?:er)?|brief(?:er)?|concise|terse|succinct|to\s+the\s+point|long(?:er)?|detailed"
    r"|verbose|in[ -]depth|thorough|elaborate)"
)

# (pattern, subject), first match wins: specific topics before general ones.
STYLE_TOPICS: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(
            r"\b(?:answer|reply|respond|talk|write|speak|communicate)\s+(?:(?:to\s+|with\s+)?(?:me|us)\s+)?in\s+"
            r"(?:English|Chinese|Mandarin|Japanese|Korean|French|German|Spanish)\b"
            r"|(?:用|使用|" + _ZH_CHANGE + r")(?:简体中文|繁体中文|中文|英文|英语|日语)(?:来)?"
            r"(?:回答|回复|交流|沟通|说)",
            re.I,
        ),
        "reply-language",
    ),
    (re.compile(r"\bemojis?\b|\bemoticons?\b|表情|颜文字", re.I), "style:emoji"),
    (
        re.compile(
            r"\bcomments?\b[^.;!?]{0,30}\bin\s+(?:English|Chinese)\b"
            r"|注释[^，。]{0,6}(?:用|写|" + _ZH_CHANGE + r")(?:英文|中文|英语)",
            re.I,
        ),
        "style:comment-language",
    ),
    (
        re.compile(
            r"\b(?:commit\s+messages?|commits)\b[^.;!?]{0,30}\b(?:in\s+(?:English|Chinese)"
            r"|conventional|imperative)\b|\bconventional\s+commits?\b|\bcommit\s+messages?\b"
            r"|commit[^，。]{0,12}(?:用|写|" + _ZH_CHANGE + r")(?:英文|中文|英语)",
            re.I,
        ),
        "style:commits",
    ),
    (re.compile(r"\b(?:tabs|spaces)\b|\bindent|缩进|制表符|空格", re.I), "style:indent"),
    # the conventions of the user's code: naming, how much to comment
    (
        re.compile(
            r"\b(?:snake_case|snake\s+case|camel\s*case|camelCase|PascalCase|pascal\s+case"
            r"|kebab[\s-]case|variable\s+names?|naming)\b|驼峰|下划线|命名",
            re.I,
        ),
        "style:naming",
    ),
    (re.compile(r"\b(?:code\s+)?comments?\b|\bcommenting\b|注释", re.I), "style:comments"),
    (
        re.compile(
            r"\b(?:British|American|US|UK|Canadian|Australian)\s+(?:English|spelling)\b|\bspelling\b",
            re.I,
        ),
        "style:spelling",
    ),
    (re.compile(r"\b(?:single|double)[ -]quotes?\b|单引号|双引号", re.I), "style:quotes"),
    (re.compile(r"\bsemicolons?\b|分号", re.I), "style:semicolons"),
    (re.compile(r"\b(?:dark|light)\s+(?:mode|theme)\b|深色|浅色|暗色|亮色", re.I), "theme"),
    (
        re.compile(
            _ANSWER
            + r"\s+(?:\w+\s+){0,3}?"
            + _LENGTH_WORDS
            + r"\b|\b"
            + _LENGTH_WORDS
            + r"\s+(?:\w+\s+)?"
            + _ANSWER
            + r"\b|\bkeep\s+(?:it|them|things|answers?)\s+"
            + _LENGTH_WORDS
            + r"|\bmore\s+(?:detail|details|detailed|concise|brief)\b"
            + r"|\b"
            + _LENGTH_WORDS
            + r",\s+\w+\s+"
            + _ANSWER
            + r"\b"
            + r"|[\d一二两三四五六七八九十]+\s*行以内|不超过[\d一二两三四五六七八九十]+\s*行"
            + r"|\b(?:a\s+(?:couple|few)\s+(?:of\s+)?|one\s+|two\s+|three\s+|\d+\s+)(?:sentences?|lines?"
            + r"|paragraphs?|words|bullets?)\b"
            + r"|\bless\s+(?:verbose|wordy)\b"
            + r"|(?:回答|回复|解释|说明|讲)[^，。]{0,6}(?:简短|简洁|短一点|精简|详细|啰嗦|长一点|具体)"
            + r"|(?:简短|简洁|精简|详细|具体)(?:一点|一些|些)?(?:地|的)?(?:回答|回复|解释|说)"
            + r"|直接(?:给|说|回答|上)|别绕弯子|不要绕弯子|开门见山|长篇大论|\bstraight\s+to\s+the\s+point",
            re.I,
        ),
        "style:length",
    ),  # fmt: skip
    (
        re.compile(r"\bbullet(?:\s+points?|s)\b|\bparagraphs\b|\btables?\b|列表|表格|分点", re.I),
        "style:format",
    ),  # fmt: skip
    # how answers are marked up: Markdown, headers, plain text, code blocks
    (
        re.compile(
            r"\bmarkdown\b|\bheaders?\b|\bheadings?\b|\bplain\s+text\b|\bcode\s+blocks?\b"
            r"|\bsyntax\s+highlighting\b|代码块|高亮|纯文本|标题",
            re.I,
        ),
        "style:markup",
    ),
    (
        re.compile(
            r"\bjargon\b|\bplain\s+(?:English|language|words)\b|\bsimple\s+(?:terms|words|language)\b"
            r"|\bELI5\b|\blayman|术语|通俗|大白话",
            re.I,
        ),
        "style:jargon",
    ),
    (
        re.compile(r"\bexplain\w*|\bexplanations?\b|\bline\s+by\s+line\b|解释|讲解|原理", re.I),
        "style:explanations",
    ),
    (re.compile(r"\bdiffs?\b|改动|差异", re.I), "style:diff"),
    (re.compile(r"\bexamples?\b|例子|示例|举例", re.I), "style:examples"),
    (
        re.compile(
            r"\b(?:late\s+at\s+night|at\s+night|late\s+nights?|(?:early\s+)?mornings?|evenings?"
            r"|weekends?)\b|熬夜|深夜|晚上|半夜|早上|凌晨|周末",
            re.I,
        ),
        "schedule",
    ),
)


def style_topic(text: str) -> str:
    """The subject key of the working-style topic `text` is about, or "" for none."""
    for rx, subject in STYLE_TOPICS:
        if rx.search(text):
            return subject
    return ""
