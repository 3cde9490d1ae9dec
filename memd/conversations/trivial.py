"""Trivial turns: greetings, thanks and acknowledgements that hold nothing to remember."""

from __future__ import annotations

import re

# One phrase per "|"; a turn made only of these (and punctuation/emoji) is trivial.
_TRIVIAL_EN = """
hi|hello|hey|hiya|yo|howdy|hi there|hello there|hey there|good morning|good afternoon
|good evening|good night|morning|gm|bye|goodbye|bye bye|see you|see ya|later|cya|thanks
|thank you|thx|ty|tks|many thanks|cheers|appreciate it|a lot|so much|very much|again|anyway
|ok|okay|k|kk|okie|alright|all right|sure|of course|yes|yeah|yep|yup|ya|no|nope|nah
|not really|got it|gotcha|understood|i see|makes sense|sounds good|that works|cool|nice
|great|awesome|perfect|good|fine|excellent|amazing|lol|haha|hahaha|lmao|hmm|hm|wow|oh|ah
|oops|done|agreed|right|exactly|indeed|correct|true|continue|go on|go ahead|please|pls|np
|no problem|you're welcome|youre welcome|welcome|you|man|bro|mate|buddy|claude|everyone
|all|there|very|so|too|it|that|this|is|really|just|and|much
"""
_TRIVIAL_ZH = """
你好|您好|嗨|哈喽|哈啰|早|早上好|早安|中午好|下午好|晚上好|晚安|再见|拜拜|回见|谢谢|谢谢你
|谢谢您|谢啦|多谢|感谢|非常感谢|太感谢了|好|好的|好滴|好嘞|好吧|好呀|好啊|行|行吧|可以|可以的
|没问题|嗯|嗯嗯|哦|噢|喔|收到|明白|明白了|知道了|了解|懂了|是的|是|对|对的|没错|哈哈|哈哈哈
|呵呵|不客气|辛苦了|继续|不用了|算了|棒|很好|太好了|厉害|牛|了|啊|呀|吧|啦|哈|你|您|大家
|非常|太|真
"""
_TRIVIAL_PHRASES = frozenset(
    p.strip() for p in (_TRIVIAL_EN + "|" + _TRIVIAL_ZH).replace("\n", "").split("|") if p.strip()
)
_TRIVIAL_LONGEST = max(len(p) for p in _TRIVIAL_PHRASES)
# Longer texts are never trivial.
_TRIVIAL_MAX_CHARS = 80
_WORDCHARS_RE = re.compile(r"[A-Za-z0-9\u00c0-\u024f]|[\u3400-\u9fff\uf900-\ufaff]")
_CJK_RE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_NON_WORD_RE = re.compile(r"[^\w\u3400-\u9fff\uf900-\ufaff']+")
_MIN_MEANINGFUL = 6
# A statement of who the user is, however short: an age or a name ("I'm 33", "I'm Bo",
# "我是Leo"); "I'm in", "I'm ok" stay what they were.
_SELF_STATEMENT_RE = re.compile(
    r"^\s*(?:(?i:i'm|im|i\s+am|call\s+me)\s+(?P<rest>\d{1,3}|[A-Z][\w'\-]*)"
    r"|(?:我是|我叫|叫我)\s*(?P<zh>\w+))\W*$"
)


def is_trivial(text: str) -> bool:
    """True for turns with nothing worth remembering.

    Greetings, thanks and acknowledgements in English or Chinese ("ok", "好的",
    "谢谢", "sounds good 👍"), pure emoji or punctuation, and anything with fewer
    than 6 meaningful characters (a CJK character counts as two).
    """
    normalized = _NON_WORD_RE.sub(" ", text.lower()).strip()
    said = _SELF_STATEMENT_RE.match(text)
    if said is not None and not _made_of_trivial_phrases(
        (said.group("rest") or said.group("zh")).lower()
    ):
        return False  # "I'm 33.", "I'm Bo": short, and who the user is
    weight = 0
    for ch in _WORDCHARS_RE.findall(text):
        weight += 2 if _CJK_RE.match(ch) else 1
    if weight < _MIN_MEANINGFUL:
        return True
    if len(normalized) > _TRIVIAL_MAX_CHARS:
        return False
    return _made_of_trivial_phrases(normalized)


def _made_of_trivial_phrases(text: str) -> bool:
    """Word break over the phrase list: can `text` be cut into trivial phrases only?"""
    n = len(text)
    reachable = [False] * (n + 1)
    reachable[0] = True
    for i in range(n):
        if not reachable[i]:
            continue
        if text[i] == " ":
            reachable[i + 1] = True
            continue
        for j in range(i + 1, min(n, i + _TRIVIAL_LONGEST) + 1):
            # A Latin phrase must end a word ("ok" is not the start of "okra").
            ends_word = j == n or text[j] == " " or bool(_CJK_RE.match(text[j - 1]))
            if ends_word and text[i:j] in _TRIVIAL_PHRASES:
                reachable[j] = True
    return reachable[n]
