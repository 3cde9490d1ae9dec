"""How a session went, from the user's side: thanks, praise, frustration, corrections, reverts.

`session_signals(turns)` reads the user turns of one or more sessions and returns, per session,
the signals it found, each with the turn it came from and a strength in (0, 1]. Only the
user's own words count: quoted passages, code and quoted lines are removed first, and a
phrase counts only where it is said, not mentioned — "thanks!" is thanks, "how do I say
thanks in Japanese?" and 'the button reads "thank you"' are not; "revert that" is a revert,
"how do I revert a commit?" is not.

Strength: the pattern's base (a plain "thanks" 0.5, "thank you so much" 0.8, "no, that's
wrong" 0.7 ...), +0.15 for each intensifier (exclamation marks, "really", "so much", capitals,
"again"), at most 1.0. One signal per kind per turn: the strongest.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass

from memd.core.models import Turn
from memd.core.redact import redact
from memd.extraction.rules.common import SENTENCE_RE


class SignalKind(enum.StrEnum):
    """What a user turn says about the assistant's work."""

    THANKS = "thanks"
    PRAISE = "praise"
    FRUSTRATION = "frustration"
    CORRECTION = "correction"
    REVERT = "revert"


@dataclass(frozen=True, slots=True)
class Signal:
    """One signal: its kind, the turn it is in, how strong it is (0–1] and the words it rests on."""

    kind: SignalKind
    turn_id: str
    strength: float
    evidence: str


@dataclass(frozen=True, slots=True)
class SessionSignals:
    """The signals of one session, in turn order."""

    session_id: str
    agent_id: str
    signals: tuple[Signal, ...]

    def count(self, kind: SignalKind) -> int:
        """How many turns carried a signal of this kind."""
        return sum(1 for s in self.signals if s.kind is kind)

    def strength(self, kind: SignalKind) -> float:
        """The sum of the strengths of this kind's signals."""
        return sum(s.strength for s in self.signals if s.kind is kind)


# (kind, base strength, pattern). Patterns for thanks, praise and corrections must stand at the
# start of a sentence or clause: in the middle of one they are usually mentioned, not said.
_START = r"(?:^|[,;:—–]\s*|\b(?:ok|okay|ah|oh|hmm|well|and|but|also)\b[,\s]*)"
_RULES: tuple[tuple[SignalKind, float, re.Pattern[str]], ...] = (
    (
        SignalKind.THANKS,
        0.8,
        re.compile(
            _START + r"(?:thank\s+you\s+(?:so|very)\s+much|thanks\s+(?:so|very)\s+much|thanks\s+a\s+(?:lot|ton|million)"
            r"|many\s+thanks|(?:I\s+)?really\s+appreciate\s+(?:it|this|that|your\s+help)|much\s+appreciated)\b",
            re.I,
        ),
    ),
    (
        SignalKind.THANKS,
        0.5,
        re.compile(_START + r"(?:thanks|thank\s+you|thx|ty|cheers|appreciate\s+it)\b(?![\s-]+(?:page|note|card|email|message)s?\b)", re.I),
    ),
    (SignalKind.THANKS, 0.8, re.compile(r"(?:^|[，,])\s*(?:非常感谢|太感谢了|多谢多谢|谢谢你啊|辛苦了)")),
    (SignalKind.THANKS, 0.5, re.compile(r"(?:^|[，,])\s*(?:谢谢|多谢|感谢|谢啦|谢了|3q)", re.I)),
    (
        SignalKind.PRAISE,
        0.8,
        re.compile(
            _START + r"(?:(?:that's\s+|this\s+is\s+|it's\s+)?(?:perfect|brilliant|amazing|awesome|fantastic|excellent"
            r"|exactly\s+what\s+I\s+(?:wanted|needed|meant))|great\s+job|well\s+done|nice\s+work|good\s+job"
            r"|you(?:'re|\s+are)\s+(?:a\s+)?(?:genius|lifesaver|the\s+best|amazing|great))\b",
            re.I,
        ),
    ),
    (
        SignalKind.PRAISE,
        0.5,
        re.compile(
            _START + r"(?:(?:(?:that|this|it)\s+)?(?:works|worked)(?:\s+(?:now|great|perfectly|like\s+a\s+charm))?"
            r"|(?:that's\s+|this\s+is\s+)?(?:great|nice|cool|neat)(?:\s+(?:work|job|answer|solution))?"
            r"|looks\s+good|love\s+it|nailed\s+it)(?=\s*(?:[!.,;]|$))",
            re.I,
        ),
    ),
    (SignalKind.PRAISE, 0.8, re.compile(r"(?:^|[，,])\s*(?:太棒了|太好了|完美|牛逼|牛啊|厉害|正是我要的|就是我要的)")),
    (SignalKind.PRAISE, 0.5, re.compile(r"(?:^|[，,])\s*(?:不错|很好|好用|可以了|搞定了|成功了|跑通了|没问题了)(?=[!！。，,~]|$)")),
    (
        SignalKind.CORRECTION,
        0.7,
        re.compile(
            r"^(?:no+|nope)\b(?![\s-]+(?:worries|problem|thanks|rush|need|idea|pressure|way)\b)"
            r"|" + _START + r"(?:that's\s+(?:not\s+(?:right|correct|it|what\s+I\s+(?:asked|meant|wanted))|wrong|incorrect)"
            r"|(?:this|that|it)\s+is\s+(?:wrong|incorrect|not\s+right)|you(?:'re|\s+are)\s+wrong"
            r"|not\s+what\s+I\s+(?:asked|meant|wanted)|you\s+misunderstood|wrong\s+(?:file|function|answer|one))\b",
            re.I,
        ),
    ),
    (SignalKind.CORRECTION, 0.5, re.compile(_START + r"(?:I\s+meant|what\s+I\s+meant\s+(?:is|was)|actually,\s+I\s+(?:said|asked))\b", re.I)),
    (SignalKind.CORRECTION, 0.7, re.compile(r"^(?:不对|不是这样|不是这个|错了|你错了|搞错了|理解错了|你理解错了)|[，,](?:不对|错了)(?=[，,。！!]|$)")),
    (SignalKind.CORRECTION, 0.5, re.compile(r"^(?:我说的是|我的意思是|我是说)")),
    (
        SignalKind.REVERT,
        0.8,
        re.compile(
            r"(?:^|[,;:]\s*|\bplease\s+|\bjust\s+)(?:revert|undo|roll\s+back|rollback|back\s+out)\s+"
            r"(?:that|this|it|everything|all\s+(?:of\s+)?(?:that|those|your\s+\w+)|your\s+(?:last\s+)?(?:change|edit|commit)s?"
            r"|the\s+(?:last|previous|latest)\s+(?:change|edit|commit)s?|what\s+you\s+(?:did|changed|wrote))\b"
            r"|(?:^|[,;:]\s*|\bplease\s+)(?:put\s+it\s+back|roll\s+(?:it|that|this|them)\s+back|go\s+back\s+to\s+(?:the\s+)?(?:previous|old|original)\s+(?:version|code)"
            r"|restore\s+the\s+(?:old|original|previous)\s+(?:version|code|file))\b",
            re.I,
        ),
    ),
    (SignalKind.REVERT, 0.8, re.compile(r"(?:^|[，,]|请|帮我|给我)(?:撤回|撤销|回滚|还原|改回去|改回来|恢复原来的|恢复到之前)")),
    (
        SignalKind.FRUSTRATION,
        0.7,
        re.compile(
            r"\b(?:wtf|ffs|ugh+|argh+|come\s+on|seriously|useless|waste\s+of\s+time|I\s+(?:already|just)\s+told\s+you"
            r"|how\s+many\s+times\s+(?:do\s+I\s+have\s+to|have\s+I\s+(?:told|said|asked)|must\s+I)|for\s+the\s+(?:third|fourth|fifth|nth|last)\s+time|you\s+keep\s+\w+ing"
            r"|(?:it|this|that)\s+still\s+(?:doesn't|does\s+not|won't|isn't)\s+work|still\s+(?:broken|not\s+working)"
            r"|stop\s+(?:doing|adding|changing|ignoring)|are\s+you\s+even\s+(?:reading|listening))\b",
            re.I,
        ),
    ),
    (SignalKind.FRUSTRATION, 0.5, re.compile(r"\b(?:doesn't|does\s+not|didn't)\s+work(?:\s+(?:again|either))?\b|\bnot\s+working\b", re.I)),
    (SignalKind.FRUSTRATION, 0.7, re.compile(r"又错了|又不对|还是不行|还是不对|还是报错|怎么又|说了多少次|我都说了|我说过了|能不能认真|太差了|没用|浪费时间|烦死了|无语|搞什么|气死")),
)  # fmt: skip

# Everything in quotes goes, however short: 'the label says "thanks"' thanks no one.
_QUOTED_RE = re.compile(
    r"```.*?(?:```|\Z)|`[^`\n]*`|^[ \t]*>[^\n]*|“[^”]*”|「[^」]*」|『[^』]*』|\"[^\"\n]*\""
    r"|(?<![\w])'[^'\n]*'(?![\w])",
    re.S | re.M,
)
_QUESTION_WORD_RE = re.compile(
    r"^\s*(?:how|what|why|when|where|which|who|is|are|do|does|did|can|could|should|would)\b"
    r"|怎么|如何|什么|为什么|吗[？?]?\s*$",
    re.I,
)
_INTENSIFIER_RE = re.compile(
    r"!{2,}|！{2,}|(?i:\b(?:really|so\s+much|very|again|totally|absolutely)\b)|\b[A-Z]{4,}\b|真的|太|非常|又"
)
# Questions that mention a phrase do not say it (thanks, corrections and reverts alike).
_SAID_IN_QUESTIONS = frozenset({SignalKind.FRUSTRATION})


def _strength(base: float, sentence: str) -> float:
    return min(1.0, base + 0.15 * len(_INTENSIFIER_RE.findall(sentence)))


def turn_signals(turn: Turn) -> list[Signal]:
    """The signals of one user turn (none for assistant turns), strongest per kind."""
    if turn.role != "user":
        return []
    text = _QUOTED_RE.sub(" ", redact(turn.text))
    best: dict[SignalKind, Signal] = {}
    for raw in SENTENCE_RE.findall(text):
        sentence = raw.strip()
        if not sentence:
            continue
        question = sentence.endswith(("?", "？")) and _QUESTION_WORD_RE.search(sentence) is not None
        for kind, base, rx in _RULES:
            m = rx.search(sentence)
            if m is None or (question and kind not in _SAID_IN_QUESTIONS and m.start() > 0):
                continue
            if question and kind is SignalKind.REVERT:
                continue  # "how do I revert this?" asks about reverting, it does not revert
            rest = (
                sentence[: m.start()] + sentence[m.end() :]
            )  # the words of the pattern count once
            signal = Signal(kind, turn.turn_id, _strength(base, rest), m.group(0).strip(" ,;:"))
            if kind not in best or signal.strength > best[kind].strength:
                best[kind] = signal
    return sorted(best.values(), key=lambda s: list(SignalKind).index(s.kind))


def session_signals(turns: Sequence[Turn]) -> list[SessionSignals]:
    """The signals of the user turns, grouped by session (in the order sessions first appear)."""
    order: list[str] = []
    found: dict[str, list[Signal]] = {}
    agents: dict[str, str] = {}
    for turn in turns:
        if turn.session_id not in found:
            order.append(turn.session_id)
            found[turn.session_id] = []
        agents.setdefault(turn.session_id, turn.agent_id)
        found[turn.session_id] += turn_signals(turn)
    return [SessionSignals(sid, agents[sid], tuple(found[sid])) for sid in order]
