"""The learned layer behind the readers: a clause gate and a type classifier.

The readers read the shapes they were written for. A clause of the user's none of them read is
looked at once more here:

- **the gate** (`statement_score`): a linear model over the clause's words and word pairs
  (Chinese: its characters and character pairs), first-person markers, its place in the
  sentence and its punctuation, giving the probability that the clause is a lasting statement
  of the user about themselves, their work, their preferences or their plans — not a question,
  a hypothesis, someone else's fact, a quote, small talk or a one-off request;
- **the type** (`clause_type`): a second linear model, one weight vector per type (personal,
  skill, preference, project, task, decision), on the same features;
- a clause above the gate's threshold is kept as said, cleaned the way the general reader keeps
  one ("User: …", "User's …", "用户…"), with the type the classifier gives; an English clause
  that does not name the user ("Production is pinned to Node 16") needs a higher threshold
  (`bare`) than one that does;
- **the type of a reader's memory** (`reader_type`): a reader's memory of a tool becomes a
  decision when the classifier is sure the clause that names it states a choice made.

Generic supersession and recall, which use the same data file, are in `generic.py`.

The weights are data (`data/clause_model.json.gz`), written by `bench/clause_model.py` from the
labelled development sets; its README gives the command. They are read once, on first use; the
model is pure Python at run time.
"""

from __future__ import annotations

import functools
import gzip
import json
import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from memd.core.models import ExtractedMemory
from memd.extraction.rules.clauses import someone_else, strip_lead
from memd.extraction.rules.common import (
    CJK_RE,
    IMP_DECISION,
    IMP_PREFERENCE,
    IMP_PROJECT,
    IMP_SKILL,
    Ctx,
    is_question,
)
from memd.extraction.rules.general import not_a_statement
from memd.extraction.rules.tech import cjk_tech_names, mentioned_tech
from memd.extraction.rules.zh_clauses import RELATION_RE, ZH_OTHER_RE

MODEL_PATH = Path(__file__).with_name("data") / "clause_model.json.gz"
TYPES = ("personal", "skill", "preference", "project", "task", "decision")
IMPORTANCE = {
    "personal": 6,
    "skill": IMP_SKILL,
    "preference": IMP_PREFERENCE,
    "project": IMP_PROJECT,
    "task": 3,
    "decision": IMP_DECISION,
}

# -- clauses -------------------------------------------------------------------------------------
_EN_CUT_RE = re.compile(
    r"\s*(?:[;:—–]|\s-\s|\.\.\.|\(|\))\s*"
    r"|,\s+"
    r"|\s+(?:and|but|so|because|since|though|although|while|plus|which)\s+"
    r"(?=(?:I|I'm|I've|I'd|I'll|we|we're|we've|my|our|it|it's|that's|please|pls)\b)",
    re.I,
)
_ZH_CUT_RE = re.compile(r"[，,；;：（）()]|:(?![A-Za-z0-9/])|\s+-\s+|——")


def cut(sentence: str) -> list[str]:
    """The clauses of one sentence, end punctuation and opening connectives left out."""
    body = sentence.strip().rstrip(".!?。！？；;~～ ")
    parts = (_ZH_CUT_RE if CJK_RE.search(body) else _EN_CUT_RE).split(body)
    return [c for c in (strip_lead(p or "") for p in parts) if c]


# -- features ------------------------------------------------------------------------------------
_EN_TOKEN_RE = re.compile(r"[A-Za-z][A-Za-z'\-]*|\d+(?:[.,:]\d+)*|[^\sA-Za-z\d]")
_MIXED_TOKEN_RE = re.compile(r"[A-Za-z][A-Za-z0-9_.+#\-]*|\d+|[\u3400-\u9fff]")
_EN_FIRST = frozenset("i i'm i've i'd i'll im me my mine myself we we're we've our ours us".split())
_EN_OTHER = frozenset(
    "you you're your he she his her him they them their it's friend wife husband son daughter "
    "manager boss colleague coworker mom dad brother sister".split()
)


def _shape(token: str) -> str:
    if token[0].isdigit():
        return "<num>"
    return token.casefold()


def features(clause: str, position: int, count: int, question: bool, lead: str = "") -> list[str]:
    """The features of a clause: its `position` of `count` in its sentence, whether the sentence
    asks, the word its sentence opens with (`lead`, when the clause is not the first)."""
    out = ["bias", f"pos:{min(position, 2)}", f"last:{position == count - 1}", f"q:{question}"]
    if position and lead:
        out.append(f"lead:{lead}")
    zh = bool(CJK_RE.search(clause))
    out.append(f"lang:{'zh' if zh else 'en'}")
    if zh:
        tokens = [_shape(t) for t in _MIXED_TOKEN_RE.findall(clause)]
        out += [f"c:{t}" for t in tokens]
        out += [f"c2:{a}{b}" for a, b in zip(tokens, tokens[1:], strict=False)]
        if tokens:
            out.append(f"f:{tokens[0]}")
            out.append(f"f2:{''.join(tokens[:2])}")
        out.append(f"latin:{any(t.isascii() and t.isalpha() for t in tokens)}")
    else:
        raw = _EN_TOKEN_RE.findall(clause)
        tokens = [_shape(t) for t in raw]
        out += [f"w:{t}" for t in tokens]
        out += [f"b:{a}_{b}" for a, b in zip(tokens, tokens[1:], strict=False)]
        if tokens:
            out.append(f"f:{tokens[0]}")
            out.append(f"f2:{'_'.join(tokens[:2])}")
        out.append(f"first:{any(t in _EN_FIRST for t in tokens)}")
        out.append(f"other:{any(t in _EN_OTHER for t in tokens)}")
        out.append(f"cap:{any(t[:1].isupper() and t != 'I' for t in raw[1:])}")
        out.append(f"len:{min(len(tokens) // 4, 5)}")
    out.append(f"num:{bool(re.search(r'[0-9]', clause))}")
    out.append(f"subj:{subject_class(clause)}")
    out.append(f"decides:{bool(_DECIDES_RE.search(clause))}")
    return out


# Who a clause's subject is: the user ("I", 我), their team or project ("we", "our team", "the
# project", 我们, 团队, 项目), someone else, or nobody named.
_EN_TEAM_RE = re.compile(
    r"^(?:\w+\s+)?(?:we|we're|we've|we'd|our|us|the\s+(?:team|project|company|app|backend"
    r"|frontend|service|codebase|repo))\b",
    re.I,
)
_EN_I_RE = re.compile(r"^(?:\w+\s+)?(?:i|i'm|i've|i'd|i'll|my|me)\b", re.I)
_ZH_TEAM_RE = re.compile(r"^.{0,4}?(?:我们|咱们|团队|项目|公司|组里|部门)")
# A system of the user's or their team's as the subject: "Our backend is a Rails 7 monolith",
# "the API has been on Node 22", 我们项目数据库是 PostgreSQL 14, 我的博客是用 Hugo 搭的.
_EN_SYSTEM_RE = re.compile(
    r"^(?:the|our|my)\s+(?:[\w\-]+\s+)?(?:backend|frontend|app|project|blog|server|site|website"
    r"|service|repo|codebase|api|stack|monolith|pipeline|ci|cluster)s?\b",
    re.I,
)
_ZH_SYSTEM_RE = re.compile(
    r"^(?:我们|我的|我们的|咱们)?(?:的)?(?:项目|博客|仓库|后端|前端|网站|服务|接口|系统|小程序|集群)"
)
# A choice made: "decided", "went with", "chose", 定了, 决定, 选了.
_DECIDES_RE = re.compile(
    r"\b(?:decided|decision|went\s+with|go(?:ing)?\s+with|chose|chosen|picked|settled\s+on"
    r"|opted|agreed\s+on)\b|定了|决定|选了|选定|拍板|敲定",
    re.I,
)


def subject_class(clause: str) -> str:
    """Whose the clause's statement is, by its opening words: "system" (a system of the user's or
    their team's), "team", "self", "other", "none"."""
    text = clause.strip()
    if CJK_RE.search(text):
        if _ZH_SYSTEM_RE.match(text):
            return "system"
        if _ZH_TEAM_RE.match(text):
            return "team"
        if ZH_OTHER_RE.search(text) or RELATION_RE.match(text):
            return "other"
        return "self" if "我" in text[:4] else "none"
    if someone_else(text):
        return "other"  # "my brother uses Vim", "our manager wants …"
    if _EN_SYSTEM_RE.match(text):
        return "system"
    if _EN_TEAM_RE.match(text):
        return "team"
    return "self" if _EN_I_RE.match(text) else "none"


# -- the model -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Model:
    gate: dict[str, float]
    types: dict[str, dict[str, float]]
    threshold: float  # the gate's, for a clause that names the user
    bare: float  # the gate's, for a clause that does not (`own`)
    overlap: float  # the least score of a pair generic supersession links
    alone: float  # what a pair scores when each is the only memory of its type on its side
    retype: float = 1.01  # the classifier's least probability to change a reader's type


@functools.cache
def model() -> Model | None:
    """The shipped weights, or None when the data file is missing (the layer then does nothing)."""
    try:
        raw = (files("memd.extraction.rules") / "data" / MODEL_PATH.name).read_bytes()
    except FileNotFoundError:
        return None
    data = json.loads(gzip.decompress(raw).decode("utf-8"))
    return Model(
        gate=data["gate"],
        types=data["types"],
        threshold=float(data["threshold"]),
        bare=float(data["bare"]),
        overlap=float(data["overlap"]),
        alone=float(data["alone"]),
        retype=float(data.get("retype", 1.01)),
    )


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, x))))


def gate_probability(weights: dict[str, float], feats: Sequence[str]) -> float:
    return _sigmoid(sum(weights.get(f, 0.0) for f in feats))


def type_scores(weights: dict[str, dict[str, float]], feats: Sequence[str]) -> dict[str, float]:
    return {t: sum(w.get(f, 0.0) for f in feats) for t, w in weights.items()}


def statement_score(
    clause: str, position: int = 0, count: int = 1, question: bool = False
) -> float:
    """The gate: how likely `clause` is a lasting statement of the user's (0 without a model)."""
    m = model()
    if m is None:
        return 0.0
    return gate_probability(m.gate, features(clause, position, count, question))


def clause_type(clause: str, position: int = 0, count: int = 1, question: bool = False) -> str:
    """The type of memory `clause` states, by the classifier ("personal" without a model)."""
    m = model()
    if m is None:
        return "personal"
    scores = type_scores(m.types, features(clause, position, count, question))
    return max(TYPES, key=lambda t: scores.get(t, -math.inf))


# The readers' types of a tool the classifier may make a decision ("We went with gRPC …"): not
# a personal fact ("go with Olek" is a name) nor a task.
_RETYPED = frozenset({"skill", "preference", "project"})
# The readers' types of a tool a team's or a system's clause makes the project's.
_OWN_TOOL = frozenset({"skill", "preference"})
# The readers' keys of a tool.
_TOOL_KEYS = ("tool:", "stack:", "version:")


@functools.lru_cache(maxsize=64)
def _sentence_clauses(sentence: str) -> tuple[tuple[str, frozenset[str], str], ...]:
    """The clauses of a sentence, each with the values it names and whose it is: a clause with no
    subject of its own ("… and deploy to Fly.io") is its sentence's previous clause's."""
    out: list[tuple[str, frozenset[str], str]] = []
    whose = "none"
    for clause in cut(sentence):
        own_subject = subject_class(clause)
        whose = own_subject if own_subject != "none" or not out else whose
        words = frozenset(w.casefold() for w in _TECH_WORD_RE.findall(clause))
        words |= {name for name, _ in cjk_tech_names(clause)}
        out.append((clause, frozenset(values(clause)) | words, whose))
    return tuple(out)


def reader_type(memory: ExtractedMemory, sentence: str) -> str:
    """The type of a reader's memory of a tool by the clause of `sentence` that names the
    memory's value:

    - "decision" when the classifier is sure of it (its probability at least the model's
      `retype`): a choice made ("we went with", "decided", 定了, 选了) is a decision, whichever
      reader read it;
    - "project" for a skill or preference of a tool whose clause's subject is the user's team
      or one of their systems ("We use Buildkite for CI", "Our backend is Rails + Sidekiq", 我们组用
      Jenkins, 项目后端用 Go): what a team or a product runs is the project's; what the user
      knows, learns or uses themself stays theirs ("I know Go", 我在学 Rust)."""
    if memory.type not in _RETYPED:
        return memory.type
    clauses = _sentence_clauses(sentence)
    wanted = values(memory.content)
    named = [i for i, (_, names, _) in enumerate(clauses) if wanted & names]
    if named and _decided(clauses[named[0]][0], named[0], len(clauses), sentence, memory.type):
        return "decision"
    if memory.type not in _OWN_TOOL:
        return memory.type
    tools = _tools_of(memory.content)
    if not tools and memory.subject.startswith(_TOOL_KEYS):
        tools = frozenset(wanted)  # a tool the lexicon does not know: 阿里云, a home-grown one
    whose = {w for _, names, w in clauses if tools & names}
    if "team" in whose or "system" in whose and all(w != "self" for _, _, w in clauses):
        return "project"  # not "我是 full-stack，前端 Vue 后端 Node": the user's own part
    if "none" in whose and memory.type == "skill" and _nobodys(sentence):
        return "project"  # "Tests use unittest": nobody's, the system's
    return memory.type


# The user named anywhere in a sentence ("For anything infra-related I reach for Terraform").
_PERSON_RE = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|me|my|mine|myself)\b")
# An English sentence whose subject, the user, is left out: "Been a Laravel dev for years",
# "Mostly Airflow and dbt these days", "Learning Rust on weekends".
_ELIDED_RE = re.compile(
    r"^(?:been|mostly|mainly|largely|just|also|still|currently|usually|always|now|these\s+days"
    r"|day\s+to\s+day|[a-z]+ing)\b",
    re.I,
)


def _nobodys(sentence: str) -> bool:
    """Whether an English sentence names no person, not even the user left out: what it says
    runs is a system's ("Tests run with Mocha", "Staging and prod both live on Google Cloud").
    A Chinese sentence without its subject is the user's (平时主要写 Kotlin)."""
    if CJK_RE.search(sentence) or _PERSON_RE.search(sentence):
        return False
    return not _ELIDED_RE.match(strip_lead(sentence))


def _decided(clause: str, position: int, count: int, sentence: str, type_: str) -> bool:
    """Whether the classifier is sure the clause states a choice made (see `reader_type`). Only
    a decision: on the development folds, the classifier's other types over a reader's lost more
    facts than they gained at every threshold."""
    m = model()
    if m is None or m.retype > 1.0:
        return False
    feats = features(clause, position, count, is_question(sentence), lead_of(sentence))
    scores = type_scores(m.types, feats)
    top = max(TYPES, key=lambda t: scores.get(t, -math.inf))
    if top == type_ or top != "decision":
        return False
    peak = scores[top]
    return 1.0 / sum(math.exp(v - peak) for v in scores.values()) >= m.retype


def _tools_of(content: str) -> frozenset[str]:
    """The technologies a memory names, casefolded."""
    words = _TECH_WORD_RE.findall(content)
    latin = {w.casefold() for w in words if w != "User" and mentioned_tech(w) is not None}
    return frozenset(latin | {name for name, _ in cjk_tech_names(content)})


_TECH_WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9_.+#\-]*[A-Za-z0-9_](?:\+\+|#)?")


# -- kept clauses --------------------------------------------------------------------------------
_EN_POSSESSIVE_RE = re.compile(r"^(?:my|our)\s+", re.I)
# Shapes the gate never keeps, whatever its score: an order to the assistant about this one
# answer, a hypothesis, reported speech.
_EN_NEVER_RE = re.compile(
    r"^(?:can|could|would|will|should|please|pls|let's|let\s+me|if|what\s+if|suppose|imagine"
    r"|assuming|how|why|what|when|where|who|which|do|does|did|is|are|put|rename|remove|delete"
    r"|send|run|open|paste|make|write|give|show|tell|add|fix|set)\b"
    r"|\b(?:said|says|told\s+me|asked\s+me|I\s+think|I\s+thought|I'd|I\s+would|I\s+guess"
    r"|I\s+suppose|I\s+feel\s+like|I\s+wonder|maybe|probably|perhaps)\b",
    re.I,
)
_ZH_NEVER_RE = re.compile(
    r"^(?:如果|假如|假设|要是|万一|帮我|请|麻烦|能不能|可不可以|你)|吗$|呢$|说过|听说|据说|觉得|认为|可能|也许"
    r"|(?:^|顺便|主要是)把|媳妇|老婆|老公"
)
# Someone else as the subject: a person named by their relation to the user ("my nephew is 9").
_EN_PERSON_RE = re.compile(
    r"^(?:my|our)\s+(?:\w+\s+)?(?:nephew|niece|grand\w+|in-laws?|wife|husband|partner|son|daughter"
    r"|kids?|children|brother|sister|mom|mum|dad|mother|father|parents?|cousin|uncle|aunt|friend"
    r"|boss|manager|colleague|coworker|teammate|neighbou?r|roommate|flatmate|girlfriend"
    r"|boyfriend|fianc\w*|baby|toddler|team\s*lead|lead|cto|ceo|client|customer)s?\b",
    re.I,
)


# A negated clause states no current fact of what it names ("I don't use Ruby anymore").
# A clause that leaves a thing ("we ditched conda", "I sold the cello") does not say it holds.
_EN_NOT_RE = re.compile(
    r"\b(?:not|never|no\s+longer|don't|doesn't|didn't|isn't|aren't|wasn't|haven't|hasn't|won't"
    r"|can't|cannot|nobody|nothing)\b|n't\b",
    re.I,
)
_ZH_NOT_RE = re.compile(r"不|没|别|无法|未")
# Quoted words are someone else's.
_QUOTE_RE = re.compile(r"[“”\"「」『』]")
# An English clause says something of the user when it names them or opens with what they do
# ("Living in Leeds means …").
_EN_SELF_RE = re.compile(
    r"\b(?:I|I'm|I've|I'd|I'll|me|my|mine|myself|we|we're|we've|our|us)\b", re.I
)
_EN_GERUND_RE = re.compile(r"^[A-Za-z]+ing\b")
# A sentence that orders a text made ("Write a short bio: a sysadmin from Lagos who …"): what
# follows is the text's, not the user's.
_EN_ORDER_RE = re.compile(
    r"^(?:write|draft|generate|create|make|give|compose|translate|rewrite|summari[sz]e|describe"
    r"|explain|show|tell|list|set|add|fix|convert|format|build|design|help|suggest|pretend"
    r"|act|roleplay|imagine|consider|review|check|proofread)\b",
    re.I,
)


# A state of the moment ("our CI is broken", "I'm 5 minutes late", "我在写代码").
_TRANSIENT_RE = re.compile(
    r"\b(?:broken|down|slow|late|busy|tired|stuck|failing|flaky|crashing|crashed|offline|sick"
    r"|bored|confused|lost)\b|在写|在看|在弄|在改|在调|在跑|挂了|卡了|坏了",
    re.I,
)
# What the readers own by its key: a name, an age ("My name is on the list" is none).
_OWNED_RE = re.compile(r"\b(?:my|our)\s+names?\b|\bI'm\s+\d+\b|名字|叫什么", re.I)
# A question word in a Chinese clause with no question mark: "为啥 Vue 这么慢".
_ZH_ASKS_RE = re.compile(r"为啥|为什么|怎么|什么|哪|多少|几[个点岁]|是否")
# What the team did once ("We moved the standup to Thursday", "We retired the Jenkins box").
_EN_WE_DID_RE = re.compile(r"^(?:we|our\s+team)\s+(?:\w+ly\s+)?[a-z]+ed\b", re.I)
# A clause whose object is a pronoun names nothing ("I like it").
_EN_PRONOUN_END_RE = re.compile(r"\b(?:it|this|that|them|these|those)$", re.I)


def content_of(clause: str) -> str:
    """The clause as the memory says it."""
    text = clause.strip().rstrip(".,;:，。；：")
    if CJK_RE.search(text):
        if text.startswith(("我们", "咱们")):
            return "用户的团队" + text[2:]
        if text.startswith("我"):
            return "用户" + text[1:]
        return "用户：" + text
    if _EN_POSSESSIVE_RE.match(text):
        return "User's " + _EN_POSSESSIVE_RE.sub("", text, count=1)
    return "User: " + text


def kept(clause: str) -> bool:
    """Whether a clause may be kept at all (before its score): long enough, not a shape never
    kept — a question or request, a hypothesis, reported speech, a negation, someone else's."""
    if not_a_statement(clause) or _TRANSIENT_RE.search(clause) or _OWNED_RE.search(clause):
        return False
    if _LEAVING_RE.search(clause):
        return False  # what ended is no statement of what holds
    zh = bool(CJK_RE.search(clause))
    if zh:
        return (
            len(clause) >= 6
            and not _ZH_ASKS_RE.search(clause)
            and not _QUOTE_RE.search(clause)
            and not _ZH_NEVER_RE.search(clause)
            and not _ZH_NOT_RE.search(clause)
            and not RELATION_RE.match(clause)
            and not ZH_OTHER_RE.search(clause)
        )
    return (
        len(clause.split()) >= 5
        and not _EN_WE_DID_RE.match(clause)
        and not _EN_PRONOUN_END_RE.search(clause)
        and not _QUOTE_RE.search(clause)
        and not _EN_NEVER_RE.search(clause)
        and not _EN_NOT_RE.search(clause)
        and not someone_else(clause)
        and not _EN_PERSON_RE.match(clause)
    )


def own(clause: str) -> bool:
    """Whether a clause names the user (I, my, we …; 我, 咱, 家里) or opens with what they do
    ("Living in Leeds means …"): a clause that does not is kept only above a higher threshold
    ("Production is pinned to Node 16")."""
    if CJK_RE.search(clause):
        return True
    text = re.sub(r"^User(?:'s)?:?\s*", "", clause)
    return bool(
        _EN_SELF_RE.search(text) or _EN_GERUND_RE.match(text) or clause.startswith("User's")
    )


def lead_of(sentence: str) -> str:
    """The word a sentence opens with, as a feature names it."""
    tokens = (_MIXED_TOKEN_RE if CJK_RE.search(sentence) else _EN_TOKEN_RE).findall(
        strip_lead(sentence)
    )
    return _shape(tokens[0]) if tokens else ""


def scored_statements(
    sentence: str, ctx: Ctx, covered: Callable[[str], bool]
) -> Iterator[tuple[float, ExtractedMemory]]:
    """Every clause of `sentence` no reader read (`covered` tells) that may be kept, as the
    memory it would give and the gate's probability for it."""
    m = model()
    if m is None:
        return
    if _EN_ORDER_RE.match(strip_lead(sentence)) or is_question(sentence):
        return
    clauses = cut(sentence)
    question = is_question(sentence)
    lead = lead_of(sentence)
    for i, clause in enumerate(clauses):
        if not kept(clause) or covered(clause):
            continue
        feats = features(clause, i, len(clauses), question, lead)
        scores = type_scores(m.types, feats)
        type_ = max(TYPES, key=lambda t: scores.get(t, -math.inf))
        memory = ctx.mem(content_of(clause), type_, IMPORTANCE[type_])
        yield gate_probability(m.gate, feats), memory


def learned_statements(
    sentence: str, ctx: Ctx, covered: Callable[[str], bool], later: bool = False
) -> Iterator[ExtractedMemory]:
    """The clauses of `sentence` no reader read that the gate keeps, typed by the classifier. In
    a `later` turn of the session, a clause that says a change and names a value ("Scratch that,
    the batch jobs actually run under PyPy") is the user's new value: the threshold of a clause
    that names the user holds for it."""
    m = model()
    if m is None:
        return
    for p, memory in scored_statements(sentence, ctx, covered):
        sure = own(memory.content) or (later and _new_value(memory.content))
        if p >= (m.threshold if sure else m.bare):
            yield memory


def _new_value(content: str) -> bool:
    """Whether a memory says a change and names a value (a name, a number)."""
    text = re.sub(r"^User(?:'s)?:?\s*", "", content)
    return says_change(text) and bool(_VALUE_RE.search(text))


# -- generic supersession -------------------------------------------------------------------------
_EN_CHANGE_RE = re.compile(
    r"\b(?:now|nowadays|these\s+days|going\s+forward|from\s+now\s+on|switch\w*|mov(?:ed|ing)"
    r"|chang\w*|no\s+longer|any\s*more|instead|actually|since|lately|recently|replac\w*"
    r"|swapped|upgraded|downgraded|bumped|new|newly|turned|became|become|dropped|ditched|quit"
    r"|sold|stopped|gave\s+up|left|joined|took|migrat\w*|convert\w*|update|updated|typo"
    r"|scratch\s+that|correction|i\s+mean|meant|rather|wrong|mistake|reorg|promoted|finished"
    r"|port(?:ed|ing)|is\s+history)\b",
    re.I,
)
_ZH_CHANGE_RE = re.compile(
    r"现在|改成|改用|换成|换到|换了|转到|搬|挪|不再|其实|已经|如今|最近|目前|改为|变成|调到|升|"
    r"不用|不是|说错|更正|应该是|后来|开始|作废|到期|改主意|更新|转岗|重装|新买|还是|以后|不对|"
    r"结婚|离职|入职|停了|戒了|卖了|没了"
)
# A memory that says what ended ("I quit the orchestra and sold the cello", "荣耀那台摔坏了") is no
# new value.
_LEAVING_RE = re.compile(
    r"\b(?:quit|sold|stopped|ditched|dropped|gave\s+up|got\s+rid\s+of|left|retired|no\s+longer"
    r"|any\s*more|broke|died|ended|cancell?ed|went\s+away|gone|decommissioned|scrapped|reversed"
    r"|shut\s+down|killed|removed)\b"
    r"|卖了|摔坏|坏了|停更|不用|不再|退了|辞职|离职|没了|作废|到期|戒了|停了|弃了|淘汰|下掉|砍了"
    r"|死了|去世",
    re.I,
)
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'\-]*|[\u3400-\u9fff]")
_VALUE_RE = re.compile(r"[A-Z][\w.+#\-]*[\w+#]|[a-z]+[A-Z0-9][\w.+#\-]*|\d+(?:\.\d+)*")
_STOP = frozenset(
    "user user's i i'm my me we our the a an is are was to of in on at for and with as it it's "
    "all now so but just that this asks".split()
    + list("用户我们的了是在有一个现")
)


def values(content: str) -> set[str]:
    """The values a memory names: names in Latin script and numbers (not "User"), and its runs
    of two Chinese characters that are no filler."""
    out = {v.casefold() for v in _VALUE_RE.findall(content) if v not in ("User", "User's")}
    out = {v for v in out if v not in _STOP and (len(v) > 1 or v.isdigit())}
    cjk = [w for w in _WORD_RE.findall(content) if not w.isascii()]
    out |= {a + b for a, b in zip(cjk, cjk[1:], strict=False) if not {a, b} & _STOP}
    return out


def shares_value(clause: str, memories: Sequence[ExtractedMemory]) -> bool:
    """Whether a memory names a value the clause names (a reader read it in other words)."""
    own_values = values(clause)
    return any(own_values & values(m.content) for m in memories)


def says_change(text: str) -> bool:
    """Whether a text says something changed (see the module)."""
    change = _ZH_CHANGE_RE if CJK_RE.search(text) else _EN_CHANGE_RE
    return bool(change.search(text) or _LEAVING_RE.search(text))
