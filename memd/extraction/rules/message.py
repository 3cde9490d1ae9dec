"""What part of a user message is the user's own words, in a spelling the rules can read.

A message often carries text the user is not saying about themselves: a passage to
translate or proofread, a quoted error, a code block, a quoted email. `own_words` removes
those, so "fix the grammar: 'I'm Jordan, I live in Denver'" teaches nothing about the user,
while a short quoted name ("a tool called 「小账本」") stays. `normalise_chat` undoes the
common shortcuts of chat typing ("i'm", "im", "dont", "pls") in English text.
"""

from __future__ import annotations

import re

# Fenced and inline code, and quoted lines ("> ...") of Markdown.
_CODE_RE = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)|`[^`\n]*`|^[ \t]*>[^\n]*", re.S | re.M)
# A short inline span names a thing in the user's own sentence ("prefer `async/await` over
# `.then()`", "I use `uv`"): its text stays, without the backticks.
_SHORT_INLINE_RE = re.compile(
    r"`(?P<code>(?!(?:I|I'm|my|我)\b)[^`\n\s]{1,24}(?:\s[^`\n\s]{1,24})?)`"
)
# A quoted passage: paired quotes around text that holds a clause (a space-separated phrase
# of three words or more, or CJK text with punctuation or a first-person pronoun).
_QUOTE_RE = re.compile(
    r"“[^”]*”|「[^」]*」|『[^』]*』|\"[^\"\n]*\"|(?<![\w])'(?=[^'\n]*\s[^'\n]*\s)[^'\n]*'(?![\w])"
)
_CJK_CLAUSE_RE = re.compile(r"[，。！？、；：,.!?]|我")
# A request to work on a passage: everything after it is the passage, not the user's words.
_PASSAGE_REQUEST_RE = re.compile(
    r"(?:\b(?:translate|proofread|rephrase|reword|rewrite|paraphrase|summari[sz]e|polish|edit"
    r"|correct|fix\s+(?:the\s+)?(?:grammar|spelling|typos|wording))\b"
    r"|翻译|润色|改写|校对|修改一下|改一下|总结一下|概括)[^:：\n]{0,40}[:：]",
    re.I,
)


def _is_passage(quoted: str) -> bool:
    inner = quoted[1:-1].strip()
    if re.search(r"[\u3400-\u9fff]", inner):
        return len(inner) > 6 and bool(_CJK_CLAUSE_RE.search(inner))
    return len(inner.split()) >= 3


def own_words(text: str) -> str:
    """`text` without code (a short inline span stays as words), quoted passages and the passage
    of a translate/proofread request."""
    text = _CODE_RE.sub(" ", _SHORT_INLINE_RE.sub(r"\g<code>", text))
    m = _PASSAGE_REQUEST_RE.search(text)
    if m is not None:
        text = text[: m.start()]
    return _QUOTE_RE.sub(lambda q: " " if _is_passage(q.group(0)) else q.group(0), text)


_CHAT_SPELLINGS = {
    "i": "I",
    "im": "I'm",
    "i'm": "I'm",
    "ive": "I've",
    "i've": "I've",
    "i'll": "I'll",
    "i'd": "I'd",
    "dont": "don't",
    "doesnt": "doesn't",
    "cant": "can't",
    "wont": "won't",
    "pls": "please",
    "plz": "please",
    "thx": "thanks",
}
_CHAT_RE = re.compile(
    r"(?<![\w'])(?:i|im|i'm|ive|i've|i'll|i'd|dont|doesnt|cant|wont|pls|plz|thx)(?![\w'])", re.I
)


def normalise_chat(text: str) -> str:
    """English chat shortcuts in their written form: "i'm 34, pls dont" → "I'm 34, please don't"."""

    def fix(m: re.Match[str]) -> str:
        word = m.group(0)
        if len(word) > 1 and word.isupper():
            return word  # "IM", "PLS": an abbreviation, not chat typing
        return _CHAT_SPELLINGS.get(word.lower(), word)

    return _CHAT_RE.sub(fix, text.replace("’", "'"))
