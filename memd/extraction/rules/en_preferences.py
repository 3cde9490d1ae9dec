"""English: what the user likes, dislikes and asks for."""

from __future__ import annotations

import re
from collections.abc import Iterator

from memd.core.models import ExtractedMemory
from memd.extraction.rules.common import IMP_PREFERENCE, PRONOUN_START_RE, Ctx, clean, third_person
from memd.extraction.rules.en_identity import restated_name
from memd.extraction.rules.tech import EN_ADVERBS, lookup_tech, style_subject

_PREF_VERBS = {
    "'d like": "wants",
    "would like": "wants",
    "'d prefer": "prefers",
    "would prefer": "prefers",
    "'d rather have": "prefers",
    "would rather have": "prefers",
    "prefer": "prefers",
    "like": "likes",
    "love": "loves",
    "enjoy": "enjoys",
    "dislike": "dislikes",
    "hate": "hates",
    "can't stand": "can't stand",
    "cannot stand": "can't stand",
    "don't like": "doesn't like",
    "do not like": "doesn't like",
    "don't want": "doesn't want",
    "do not want": "doesn't want",
    "avoid": "avoids",
}
_EN_PREF_RE = re.compile(
    r"\bI\s*(?:(?:really|strongly|generally|usually|also|much|do|always|definitely|totally|kind\s+of"
    r"|absolutely|personally)\s+)*"
    r"(?P<verb>(?:'d|\s+would)\s+(?:like|prefer|rather\s+have)(?!\s+(?:to|you|it|if|for\s+you)\b)"
    r"|prefer|like|love|enjoy|dislike|hate|can't\s+stand|cannot\s+stand|don't\s+like"
    r"|do\s+not\s+like|don't\s+want|do\s+not\s+want|avoid)\s+(?=(?P<obj>[^.;!?]+))",
    re.I,
)
_OBJ_STOP_RE = re.compile(
    r"(?:\s+and\s+(?:I\s+)?(?:" + EN_ADVERBS + r"\s+)*(?:use|work|code|program|develop|write|live"
    r"|am|'m|have|need|want|enjoy|prefer|like|love|hate)\b|,?\s+(?:but|because|since|although"
    r"|though|so\s+that|whereas)\b|,\s+(?:and\s+)?I\b).*$",
    re.I,
)
_EN_IMPERATIVE_RE = re.compile(
    r"^\s*(?:(?:please|kindly|and|also|but)\s+)*(?P<neg>don't|do\s+not|never|always|avoid)\s+"
    r"(?P<act>[^.;!?]+)",
    re.I,
)
# A plain request ("please indent with tabs") is a lasting preference when it says so, or when
# it is about how the assistant should write (a style topic); "please fix this" is neither.
_EN_PLEASE_RE = re.compile(
    r"^\s*(?:(?:from\s+now\s+on|going\s+forward|in\s+(?:the\s+)?future|by\s+default|also)\s*,?\s+)?"
    r"(?:please|kindly|pls)\s+(?P<act>(?:keep|make|use|write|put|indent|add|give|show|reply|answer"
    r"|respond|format|stick|be|prefer|include|start|explain|go\s+easy\s+on|tone\s+down"
    r"|cut\s+down\s+on)\b[^.;!?]*)",
    re.I,
)
# A question that is a request for a standing rule.
_EN_STANDING_REQUEST_RE = re.compile(
    r"^(?:(?:so|ok|okay|also|and)\s+)?(?:can|could|would|will)\s+you\s+(?:please\s+)?(?P<act>[^?]+?)"
    r"\s*,?\s+(?:from\s+now\s+on|going\s+forward|in\s+(?:the\s+)?future|from\s+here\s+on)\b"
    # "could you always add type hints …?": always/never make it a standing rule too
    r"|^(?:(?:so|ok|okay|also|and)\s+)?(?:can|could|would|will)\s+you\s+(?:please\s+)?"
    r"(?=(?:always|never)\b)(?P<act2>[^?]+)",
    re.I,
)
# "I just want the diff": wanting a kind of answer.
# Not after "if"/"when": "I'll ask if I need more detail" states a condition, not a wish.
_EN_WANT_RE = re.compile(
    r"(?<!\bif\s)(?<!\bwhen\s)(?<!\bunless\s)"
    r"\bI\s+(?:just\s+|only\s+|really\s+)?(?:want|need)\s+(?P<obj>(?:the\s+|a\s+|an\s+)?"
    r"[^.;!?,]{1,40})",
    re.I,
)
# "plain conventional commits pls (feat:, fix:, etc)": a kind of output, then please.
_EN_STYLE_PLEASE_RE = re.compile(r"^(?P<obj>[^.;!?]{2,60}?)\s+please\b(?:\s*\(.*\))?\s*$", re.I)
# "keep your answers short from now on": an imperative about how the assistant works.
_EN_STYLE_IMPERATIVE_RE = re.compile(
    r"^\s*(?:(?:from\s+now\s+on|going\s+forward|in\s+(?:the\s+)?future|also|and)\s*,?\s+)?"
    r"(?P<act>(?:keep|make|use|write|put|give|show|reply|answer|respond|format|stick\s+to|be|include"
    r"|start|explain|stop|skip|add|go\s+easy\s+on|tone\s+down|cut\s+(?:down\s+on|out)|less)\s+[^.;!?]*)",
    re.I,
)
# "I often work late at night": when the user works.
_EN_HABIT_RE = re.compile(
    r"\bI\s+(?P<adv>(?:often|usually|mostly|mainly|always|normally|generally|tend\s+to|typically)\s+)"
    r"(?P<act>(?:work|code|program|am\s+online|am\s+around)\b[^.;!?]*?\b(?:late\s+at\s+night|at\s+night"
    r"|late|in\s+the\s+(?:early\s+)?mornings?|early\s+mornings?|in\s+the\s+evenings?|on\s+weekends)\b)",
    re.I,
)
# "bullet points work much better for me", "I'm allergic to long explanations".
_EN_WORKS_FOR_ME_RE = re.compile(
    r"^(?P<obj>[^.;!?,]{2,40}?)\s+(?:work|works|are|is)\s+(?:much\s+|a\s+lot\s+|way\s+)?better\s+for\s+me\b",
    re.I,
)
_EN_FAN_RE = re.compile(
    r"\bI(?:'m|\s+am)\s+(?P<how>allergic\s+to|not\s+a\s+(?:big\s+)?fan\s+of|a\s+(?:big\s+|huge\s+)?fan\s+of"
    r"|really\s+into|big\s+on)\s+(?P<obj>[^.;!?,—–]{2,50})",
    re.I,
)
_LASTING_RE = re.compile(
    r"\b(?:from\s+now\s+on|going\s+forward|in\s+(?:the\s+)?future|by\s+default|always|never"
    r"|every\s+time|whenever|in\s+general|from\s+here\s+on|for\s+me)\b",
    re.I,
)
# "TS please" at the end of a sentence that says it is a standing choice.
_EN_TECH_PLEASE_RE = re.compile(r"(?:^|[,;:]\s*)(?P<tech>[\w.+#\-]{1,20})\s+please$", re.I)
_IMPERATIVE_SKIP_RE = re.compile(
    r"^(?:worry|forget|know|mind|care|hesitate|be\s+sorry|stop|bother(?!\s+\w+ing\b)|panic|rush|get\s+me"
    r"|you|i|we|they|it|that|this"
    # encouragement, not instructions: "don't give up", "never stop believing"
    r"|give\s+up|quit|lose|let\s+\w+\s+(?:down|stop|get)|get\s+discouraged|be\s+(?:afraid|scared|shy|hard)"
    r"|feel|miss|doubt|underestimate|change|look\s+back)\b"
    # not a verb in its base form: "never saw this coming", "always good to hear"
    r"|^\w+ed\b|^(?:saw|been|was|were|had|did|said|thought|knew|good|great|nice|fun|so|too|the|a|an"
    r"|here|there|happy|glad|ready|say\s+never)\b",
    re.I,
)
_MAX_OBJECT_WORDS = 15


_EN_REPLY_LANG_RE = re.compile(
    r"\b(?:answer|reply|respond|talk|write|speak|communicate)\s+(?:(?:to\s+|with\s+)?(?:me|us)\s+)?in\s+"
    r"(?P<lang>English|Chinese|Mandarin|Japanese|Korean|French|German|Spanish|Portuguese"
    r"|Russian|Italian|Vietnamese)\b",
    re.I,
)


# "I like the second option" is about this conversation, not a lasting preference.
_CONTEXTUAL_OBJ_RE = re.compile(
    r"^(?:the\s+|your\s+)?(?:first|second|third|fourth|last|other|previous|latter|former|above"
    r"|below|new|old|current|original|same|latest)\b|^(?:the|your|this|that|these|those)\s+"
    r"(?:\w+\s+)?(?:option|suggestion|answer|version|proposal|reply|response|idea|one)s?\b",
    re.I,
)
_OBJ_TRAIL_RE = re.compile(r"\s+(?:better|more|most|a\s+lot|very\s+much|so\s+much|too)$", re.I)


def en_preference(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    if restated_name(sentence, ctx):
        return  # "I'd prefer Alexandra" after "Call me Alex" is the name (en_identity)
    lang_m = _EN_REPLY_LANG_RE.search(sentence)
    if lang_m:
        lang = lang_m.group("lang").capitalize()
        yield ctx.mem(
            f"User wants replies in {lang}", "preference", IMP_PREFERENCE, subject="reply-language"
        )
        return
    for m in _EN_PREF_RE.finditer(sentence):
        obj = clean(_OBJ_TRAIL_RE.sub("", clean(_OBJ_STOP_RE.sub("", m.group("obj")))))
        when = re.match(r"it\s+when\s+\S", obj, re.I) is not None  # "I hate it when …"
        if not obj or (PRONOUN_START_RE.match(obj) and not when):
            continue
        if len(obj.split()) > _MAX_OBJECT_WORDS or _CONTEXTUAL_OBJ_RE.search(obj):
            continue
        verb = _PREF_VERBS[" ".join(m.group("verb").lower().split())]
        if verb == "wants" and not (style_subject(obj) or _LASTING_RE.search(sentence)):
            continue  # "I'd like a summary of this file" asks for this answer, not every answer
        yield ctx.mem(
            f"User {verb} {third_person(obj)}",
            "preference",
            IMP_PREFERENCE,
            subject=style_subject(obj),
        )
    yield from _requests(sentence, ctx)


# "Write a commit message for: '…'", "generate a README for this repo": one artefact asked for
# now, not a way of working (unless it says it lasts: "always write a docstring for …").
_ONE_OFF_RE = re.compile(
    r"^(?:please\s+|can\s+you\s+|could\s+you\s+)?(?:write|draft|generate|create|make|compose"
    r"|produce|suggest|give\s+me)\s+(?:me\s+)?(?:a|an|the|this|one)\s+(?:[\w\-]+\s+){0,3}?"
    r"(?:for|about|from|of)\b",
    re.I,
)


# "Add a `timezone` column to the accounts table", "rename the field in this model": an edit
# asked of one thing in the user's code, not a way of working.
_CODE_EDIT_RE = re.compile(
    r"^(?:please\s+|now\s+|ok\s+|okay\s+)?(?:add|rename|remove|delete|drop|fix|update|refactor"
    r"|move|create|backfill|convert|change|replace|insert|split|merge|wrap|extract|bump)\b"
    r".*\b(?:the|this|that|these|our|my)\s+(?:[\w`.\-]+\s+){0,3}?(?:tables?|columns?|fields?"
    r"|models?|functions?|methods?|files?|class(?:es)?|endpoints?|routes?|tests?|components?"
    r"|modules?|scripts?|query|queries|migrations?|schema|config|Dockerfile|README|branch|repo"
    r"|PR|service|handler|view|template|fixtures?|workflow)\b",
    re.I,
)


def _requests(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    """What the user asks of the assistant; the first reading that fits wins."""
    one_off = _ONE_OFF_RE.match(sentence) or _CODE_EDIT_RE.match(sentence)
    if one_off and not _LASTING_RE.search(sentence):
        return
    readers = (_please, _habit, _style_please, _want, _style_imperative, _tech_please, _imperative,
               _stop_doing, _no_thing, _works_for_me, _fan, _rather_you, _prefer, _contrast)  # fmt: skip
    for read in readers:
        memory = read(sentence, ctx)
        if memory is not None:
            yield memory
            return


def _pref(ctx: Ctx, content: str, subject: str) -> ExtractedMemory:
    return ctx.mem(content, "preference", IMP_PREFERENCE, subject=subject)


def _please(sentence: str, ctx: Ctx) -> ExtractedMemory | None:
    """ "please indent with tabs": lasting when it says so or when it is about style."""
    m = _EN_PLEASE_RE.match(sentence)
    if m is None:
        return None
    act = clean(m.group("act"))
    lasting = _LASTING_RE.search(sentence) is not None
    if not act or not (lasting or style_subject(act)) or len(act.split()) > _MAX_OBJECT_WORDS:
        return None
    return _pref(ctx, f"User asks to {_to_assistant(third_person(act))}", style_subject(act))


def _habit(sentence: str, ctx: Ctx) -> ExtractedMemory | None:
    """ "I often work late at night"."""
    m = _EN_HABIT_RE.search(sentence)
    if m is None:
        return None
    adv = " ".join(m.group("adv").split()).lower()
    act = re.sub(r"^am\b", "is", third_person(clean(m.group("act"))))
    if adv == "tend to":
        return _pref(ctx, f"User tends to {act}", "schedule")
    act = re.sub(r"^(work|code|program)\b", r"\1s", act)
    return _pref(ctx, f"User {adv} {act}", "schedule")


def _style_please(sentence: str, ctx: Ctx) -> ExtractedMemory | None:
    """ "plain conventional commits please", "use British spelling please"."""
    m = _EN_STYLE_PLEASE_RE.match(sentence)
    if m is None or not (subject := style_subject(m.group("obj"))):
        return None
    obj = third_person(clean(m.group("obj")))
    if _EN_STYLE_IMPERATIVE_RE.match(obj):
        return _pref(ctx, f"User asks to {_to_assistant(_lower_first(obj))}", subject)
    return _pref(ctx, f"User asks for {obj}", subject)


def _lower_first(text: str) -> str:
    """ "Keep answers short" → "keep answers short" (an acronym stays)."""
    word = text.split(" ", 1)[0]
    return text if word.isupper() else text[:1].lower() + text[1:]


def _want(sentence: str, ctx: Ctx) -> ExtractedMemory | None:
    """ "I just want the diff"."""
    m = _EN_WANT_RE.search(sentence)
    if m is None or not (subject := style_subject(m.group("obj"))):
        return None
    return _pref(ctx, f"User wants {third_person(clean(m.group('obj')))} in answers", subject)


def _style_imperative(sentence: str, ctx: Ctx) -> ExtractedMemory | None:
    """ "keep your answers short from now on"."""
    m = _EN_STYLE_IMPERATIVE_RE.match(sentence)
    if m is None:
        return None
    subject = style_subject(m.group("act"))
    act = clean(m.group("act"))
    if not subject or subject == "schedule" or len(act.split()) > _MAX_OBJECT_WORDS:
        return None
    return _pref(ctx, f"User asks to {_to_assistant(third_person(_lower_first(act)))}", subject)


def _tech_please(sentence: str, ctx: Ctx) -> ExtractedMemory | None:
    """ "whenever there's a choice, TS please"."""
    m = _EN_TECH_PLEASE_RE.search(sentence)
    if m is None or _LASTING_RE.search(sentence) is None:
        return None
    tech = lookup_tech(m.group("tech"))
    return _pref(ctx, f"User prefers {tech.name}", tech.subject) if tech is not None else None


# "please stop adding docstrings everywhere": what to stop doing holds from now on.
_EN_STOP_DOING_RE = re.compile(
    r"^\s*(?:(?:please|pls|and|also|but|can\s+you|could\s+you)\s+)*(?:stop|quit)\s+"
    r"(?P<act>\w+ing\b[^.;!?]*)",
    re.I,
)


# "No emojis in PR descriptions, ever": a ban on a kind of output.
_EN_NO_THING_RE = re.compile(
    r"^\s*(?:(?:please|and|also)\s+)?no\s+(?P<obj>[a-z][^.;!?,]{1,50}?)"
    r"\s*(?:,?\s*(?:please|ever|at\s+all|thanks|thx))*\s*$",
    re.I,
)


def _no_thing(sentence: str, ctx: Ctx) -> ExtractedMemory | None:
    """ "no emojis in PR descriptions, ever": only for a working-style topic."""
    m = _EN_NO_THING_RE.match(sentence)
    if m is None or not (subject := style_subject(m.group("obj"))):
        return None
    return _pref(ctx, f"User asks for no {_to_assistant(third_person(clean(m.group('obj'))))}",
                 subject)  # fmt: skip


def _stop_doing(sentence: str, ctx: Ctx) -> ExtractedMemory | None:
    """ "please stop adding docstrings to every function"."""
    m = _EN_STOP_DOING_RE.match(sentence)
    if m is None or m.group("act").lower().startswith(("being ", "trying ")):
        return None
    act = clean(m.group("act"))
    if not act or len(act.split()) > _MAX_OBJECT_WORDS:
        return None
    return _pref(ctx, f"User asks the assistant to stop {_to_assistant(third_person(act))}",
                 style_subject(act))  # fmt: skip


def _works_for_me(sentence: str, ctx: Ctx) -> ExtractedMemory | None:
    """ "bullet points work much better for me"."""
    m = _EN_WORKS_FOR_ME_RE.match(sentence)
    if m is None or PRONOUN_START_RE.match(m.group("obj")):
        return None
    obj = third_person(clean(m.group("obj")))
    return _pref(ctx, f"User prefers {obj}", style_subject(obj))


def _fan(sentence: str, ctx: Ctx) -> ExtractedMemory | None:
    """ "I'm allergic to long explanations", "I'm a big fan of type hints"."""
    m = _EN_FAN_RE.search(sentence)
    if m is None or PRONOUN_START_RE.match(m.group("obj")):
        return None
    how = " ".join(m.group("how").lower().split())
    verb = "dislikes" if how.startswith(("allergic", "not")) else "likes"
    obj = third_person(clean(m.group("obj")))
    return _pref(ctx, f"User {verb} {obj}", style_subject(obj))


_IMPERATIVE_LEADS = {
    "don't": "not to",
    "do not": "not to",
    "never": "to never",
    "always": "to always",
    "avoid": "to avoid",
}


def _imperative(sentence: str, ctx: Ctx) -> ExtractedMemory | None:
    """ "never commit directly to main", "don't add emojis"."""
    m = _EN_IMPERATIVE_RE.match(sentence)
    if m is None:
        return None
    act = clean(_OBJ_STOP_RE.sub("", m.group("act")))
    if not act or _IMPERATIVE_SKIP_RE.match(act) or len(act.split()) > _MAX_OBJECT_WORDS:
        return None
    if lookup_tech(act.split()[0]) is not None:
        return None  # "…with pytest, never unittest": a tool set against another, not an order
    lead = _IMPERATIVE_LEADS[" ".join(m.group("neg").lower().split())]
    return _pref(ctx, f"User asks {lead} {_to_assistant(third_person(act))}", style_subject(act))


def _to_assistant(text: str) -> str:
    """ "the JS you write for them" → "the JS the assistant writes for them"."""
    text = re.sub(r"\byou\s+(write|give|send|show|generate|produce|make)\b",
                  lambda m: f"the assistant {m.group(1)}s", text, flags=re.I)  # fmt: skip
    return re.sub(r"\byour\b", "the assistant's", re.sub(r"\byou\b", "the assistant", text))


def is_standing_request(question: str) -> bool:
    """Whether a question asks for a standing rule ("could you skip X from now on?")."""
    return _EN_STANDING_REQUEST_RE.search(question) is not None


def en_standing_request(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    """ "can you give me code w/o the explanations from now on": a standing request."""
    m = _EN_STANDING_REQUEST_RE.search(sentence)
    if m is None:
        return
    act = clean(re.sub(r"\bw/o\b", "without", m.group("act") or m.group("act2")))
    if act and len(act.split()) <= _MAX_OBJECT_WORDS:
        yield ctx.mem(f"User asks the assistant to {_to_assistant(third_person(act))}",
                      "preference", IMP_PREFERENCE, subject=style_subject(act))  # fmt: skip


# "I'd rather you didn't use emojis in commit messages": a request, said as a wish.
_EN_RATHER_YOU_RE = re.compile(
    r"\bI(?:'d|\s+would)\s+(?:much\s+)?rather\s+you\s+(?P<neg>didn't|did\s+not|don't|not|never)?\s*"
    r"(?P<act>[^.;!?]+)",
    re.I,
)


def _rather_you(sentence: str, ctx: Ctx) -> ExtractedMemory | None:
    """ "I'd rather you didn't use emojis": lasting when about style or said to last."""
    m = _EN_RATHER_YOU_RE.search(sentence)
    if m is None:
        return None
    act = clean(m.group("act"))
    subject = style_subject(act)
    if not act or not (subject or _LASTING_RE.search(sentence)):
        return None
    if len(act.split()) > _MAX_OBJECT_WORDS:
        return None
    lead = "not to" if m.group("neg") else "to"
    act = re.sub(r"^(\w+?)(?:ed|d)\b", r"\1", act) if not m.group("neg") else act
    return _pref(ctx, f"User asks the assistant {lead} {_to_assistant(third_person(act))}", subject)


# "Prefer async/await over .then() chains": the imperative of a standing choice.
_EN_PREFER_RE = re.compile(
    r"^\s*(?:(?:please|always|generally|also)\s+)*prefer\s+(?P<obj>(?:[^.;!?]|\.(?=\S))+)", re.I
)


def _prefer(sentence: str, ctx: Ctx) -> ExtractedMemory | None:
    """ "Prefer composition over inheritance in what you write for me"."""
    m = _EN_PREFER_RE.match(sentence)
    if m is None:
        return None
    obj = clean(m.group("obj"))
    if not obj or PRONOUN_START_RE.match(obj) or _CONTEXTUAL_OBJ_RE.search(obj):
        return None
    if len(obj.split()) > _MAX_OBJECT_WORDS:
        return None
    return _pref(ctx, f"User prefers {_to_assistant(third_person(obj))}", style_subject(obj))


# "Tabs, not spaces.", "pnpm over npm", "Single quotes, never double": a choice said without a
# verb. It counts when one side is a working-style topic or a known tool.
_EN_CONTRAST_RE = re.compile(
    r"^\s*(?P<a>(?!(?:I|I'm|we|my|our|you|it|this|that|he|she|they)\b)[\w.+#/\- ]{1,30}?)\s*,?\s+"
    r"(?P<how>not|never|no|over|rather\s+than|instead\s+of)\s+(?P<b>[\w.+#/\- ]{1,30}?)"
    r"\s*(?:,?\s*(?:please|pls|thanks|ever|always|everywhere))*\s*$",
    re.I,
)


_SPAN_RE = re.compile(
    r"(?:the\s+)?(?:(?:past|last|next|coming|whole|long)\s+)?(?:weekend|holidays?|summer|winter"
    r"|spring|autumn|fall|break|years?|months?|weeks?|days?|christmas|new\s+year|night)\b",
    re.I,
)


def _contrast(sentence: str, ctx: Ctx) -> ExtractedMemory | None:
    """ "Tabs, not spaces": the first side preferred to the second."""
    m = _EN_CONTRAST_RE.match(sentence)
    if m is None:
        return None
    a, b = clean(m.group("a")), clean(m.group("b"))
    if m.group("how").lower() == "over" and _SPAN_RE.match(b):
        return None  # "Nibbles died over the weekend": a time, not a choice
    subject = style_subject(a) or style_subject(b)
    known = lookup_tech(a) is not None and lookup_tech(b) is not None
    if not a or not b or not (subject or known):
        return None
    return _pref(ctx, f"User prefers {_as_said(a)} over {_as_said(b)}", subject)


def _as_said(name: str) -> str:
    """A tool by its name, anything else in lower case as in running text ("tabs")."""
    tech = lookup_tech(name)
    return tech.name if tech is not None else _lower_first(name)
