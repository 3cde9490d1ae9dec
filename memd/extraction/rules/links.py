"""One key per subject: a later change lands on the key of the first statement it changes.

The readers before this one key a statement by what their own shape knows ("I live in X" →
`city`; a general statement → `about:<head>`; a routine → `routine:exercise`), so a first
statement and its change, said in other words, could land on two keys and the change would
replace nothing. Here the key comes from the class of the value and the subject, not from the
verb:

- a value's class is read from a small lexicon of the classes a person's statement has (a diet,
  a sport or pastime, the language answers come in, the length, form or tone of answers) and
  from the lexicons the other readers share (a technology's kind, a place, an organisation after
  "at"/在);
- a later turn's clause about the user that says something changed (now, no longer, instead,
  switched, moved, gave up, take that back; 现在, 改, 换, 不再, 停了, 放弃, 以后, 从今天起, 说错了)
  and names a value of the class of a statement the session holds, and not that statement's value,
  gives the turn's memory naming the new value the held statement's key and type (a memory is made
  from the clause when no reader read it), so placement marks the held one superseded.

Someone else's change, a question, a hypothetical, a plan or a request to edit something
(`replaced.usable`) links nothing; a value said as an addition ("also", 还, 也) replaces nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import replace

from memd.core.models import ExtractedMemory
from memd.extraction.rules.clauses import someone_else
from memd.extraction.rules.common import CJK_RE, SENTENCE_RE, SPOKEN_LANGUAGES, Ctx, is_question
from memd.extraction.rules.holds import PREFERENCE_KEYS, memory_class, tech_class
from memd.extraction.rules.mentions import techs_in
from memd.extraction.rules.moves import is_org
from memd.extraction.rules.places import is_place
from memd.extraction.rules.replaced import names_value, usable
from memd.extraction.rules.units import cut
from memd.extraction.rules.zh_clauses import RELATION_RE

# The classes of a person's statements no technology lexicon holds, each with its English and its
# Chinese words (a value is the word as said).
_LEXICON: tuple[tuple[str, str, str], ...] = (
    (
        "diet",
        r"vegetarian|vegan|pescatarian|plant[\s-]based|keto(?:genic)?|paleo|carnivore"
        r"|intermittent\s+fasting|low[\s-]carb|gluten[\s-]free|halal|kosher|mediterranean",
        r"吃素|素食|纯素|全素|生酮|轻断食|断食|地中海饮食|低碳水?|清真|无麸质|控糖",
    ),
    (
        "routine:exercise",
        r"swim(?:s|ming)?|run(?:s|ning)?|jogging|cycl(?:e|es|ing)|climb(?:s|ing)?|bouldering"
        r"|tennis|badminton|squash|yoga|pilates|rowing|boxing|football|basketball|volleyball"
        r"|golf|hik(?:e|es|ing)|gym|crossfit|dancing|skiing|surfing|piano|guitar|violin|drums"
        r"|cello|saxophone|chess",
        r"跑步|夜跑|晨跑|游泳|骑行|攀岩|网球|羽毛球|乒乓球|瑜伽|普拉提|划船|拳击|足球|篮球|排球"
        r"|高尔夫|徒步|爬山|健身|跳舞|滑雪|冲浪|钢琴|吉他|小提琴|架子鼓|大提琴|萨克斯|古筝|围棋|书法",
    ),
    (
        "tool:version-manager",
        r"nvm|fnm|volta|pyenv|rbenv|rvm|asdf|mise|sdkman|jenv|goenv|nodenv",
        r"(?<![A-Za-z])(?:nvm|fnm|volta|pyenv|rbenv|rvm|asdf|mise|sdkman|jenv|goenv|nodenv)(?![A-Za-z])",
    ),
    (
        "style:length",
        r"short|shorter|brief|briefer|concise|terse|long|longer|detailed|in[\s-]depth|lengthy"
        r"|one[\s-]liners?"
        r"|(?:one|two|three|four|five|a\s+few)\s+(?:or\s+\w+\s+)?lines|walk\s+me\s+through",
        r"简短|简洁|简单点|详细|长篇|展开|[一二两三四五]{1,2}行|几行|一两句|一句话",
    ),
    (
        "style:format",
        r"prose|paragraphs|bullet(?:\s+points|s)?|numbered\s+(?:steps|lists?)|lists?|tables?"
        r"|step[\s-]by[\s-]step",
        r"列表|分点|要点|段落|表格|一段话|编号|分步骤",
    ),
    (
        "style:tone",
        r"blunt|direct|harsh|gentle|gently|soft|diplomatic|kind|polite|formal|casual|friendly"
        r"|encouraging|patient|supportive",
        r"直接|直白|犀利|委婉|温和|客气|正式|随意|严厉|耐心|友好|鼓励",
    ),
)
_EN_CLASS_RES = tuple((k, re.compile(r"\b(?:" + en + r")\b", re.I)) for k, en, _ in _LEXICON)
_ZH_CLASS_RES = tuple(
    (k, re.compile(zh + "|" + r"\b(?:" + en + r")\b", re.I)) for k, en, zh in _LEXICON
)
_ZH_LANGUAGES = r"中文|简体中文|繁体中文|英语|英文|日语|日文|韩语|韩文|法语|德语|西班牙语|俄语|粤语|葡萄牙语|意大利语"
_EN_LANGUAGE_RE = re.compile(r"\b(?:" + "|".join(sorted(SPOKEN_LANGUAGES)) + r")\b", re.I)
_ZH_LANGUAGE_RE = re.compile(_ZH_LANGUAGES)
# Words that make a clause about answers: a language there is the language answers come in.
_ANSWERS_RE = re.compile(
    r"\b(?:repl(?:y|ies)|answer(?:s)?|respond|responses?|talk|speak|explain)\b"
    r"|回复|回答|回我|跟我说|和我说|说话|解释|交流",
    re.I,
)

# Words that make a clause about how answers are given: their length, form or tone.
_ANSWER_NOUN_RE = re.compile(
    r"\b(?:repl(?:y|ies)|answers?|responses?|explanations?|reviews?)\b|回复|回答|解释|说话", re.I
)
_ANSWER_LATER_RE = re.compile(r"^(?:以后|之后|往后|今后|从今天起|从现在起)?(?:都)?(?:可以|就)")
# A clause that says something changed, or corrects what was said.
_EN_CHANGE_RE = re.compile(
    r"\b(?:now|no\s+longer|any\s*more|instead|switch(?:ed)?|mov(?:ed|ing)|relocated|changed"
    r"|these\s+days|since|take\s+that\s+back|second\s+thought|actually|scratch\s+that"
    r"|gave\s+up|given\s+up|stopped|ended|dropped|quit|left|gone|from\s+now\s+on|reversed"
    r"|went|become|became|retitled|rather|joined|joining|uninstalled|removed|retired|as\s+of"
    r"|decommissioned)\b|\b(?:day|week|month)\s+(?:\w+\s+)?(?:at|with)\b",
    re.I,
)
_ZH_CHANGE_RE = re.compile(
    r"现在|如今|目前|改|换|不再|其实|说错|更正|停了|放弃|已经|以后|从今天起|从现在起|离职|搬到|跳槽"
    r"|不[\u4e00-\u9fff]{1,2}了|太[少多长短]了|入职|(?:月|周|年|天|号|日)起"
)
# A value said as an addition replaces nothing: "I also swim", "我还在学吉他".
_ADDED_RE = re.compile(r"\b(?:also|too|as\s+well|another|on\s+top)\b|还(?!是)|也", re.I)
_EN_PLACE_RE = re.compile(r"(?-i:[A-Z])[\w'\-]+(?:\s+(?-i:[A-Z])[\w'\-]+)?")
_EN_ORG_RE = re.compile(
    r"\b(?:at|with|joined|joining|to|left|quit)\s+(?P<v>(?-i:[A-Z])[\w&.\-]*(?:\s+(?-i:[A-Z])[\w&.\-]*)?)"
)
_ZH_ORG_RE = re.compile(
    r"(?:现在在|如今在|入职|加入了?|跳槽到|跳到|去了|从)\s*(?P<v>[A-Za-z][\w&.\-]*|[\u4e00-\u9fff]{2,4}?)"
    r"(?=了|，|,|。|$|上班|工作|做|当|写|负责|离职|辞职|出来|\s)"
)
_ZH_PLACE_RE = re.compile(
    r"(?:搬到|搬去|住在|在|到|去)\s*(?P<v>[\u4e00-\u9fff]{2,3}?)(?=了|住|定居|，|,|。|$|\s)"
)


# A team the user is on: "the search team", "the platform squad", 搜索组, 风控团队.
_EN_TEAM_RE = re.compile(
    r"\b(?:on|in|to|joined|with)\s+(?:the\s+)?(?P<v>(?:(?!(?:my|our|a|an|this|that|same|whole|new)\b)"
    r"[A-Za-z][\w\-]*\s+){1,2}(?:team|squad|pod|tribe|group|folks|crew|department))\b",
    re.I,
)
_ZH_TEAM_RE = re.compile(
    r"(?:在|到|去了?|加入了?|转到了?|调到了?|进了?)\s*(?P<v>(?!我们|他们|你们|这个|那个)[\u4e00-\u9fffA-Za-z]{2,4}?"
    r"(?:组|团队|小组|部门))"
)


def lexicon_classes(text: str) -> list[tuple[str, str, int]]:
    """The (class, value, position) of the values of a person's statement `text` names."""
    zh = bool(CJK_RE.search(text))
    found: list[tuple[str, str, int]] = []
    for key, rx in _ZH_CLASS_RES if zh else _EN_CLASS_RES:
        found += [(key, m.group(0), m.start()) for m in rx.finditer(text)]
    if _ANSWERS_RE.search(text):
        rx = _ZH_LANGUAGE_RE if zh else _EN_LANGUAGE_RE
        found += [("reply-language", m.group(0), m.start()) for m in rx.finditer(text)]
    team = _ZH_TEAM_RE if zh else _EN_TEAM_RE
    found += [("team", m.group("v"), m.start()) for m in team.finditer(text)]
    return found


def _named_values(text: str) -> Iterator[tuple[str, str, int]]:
    """Every (class, value, position) a clause names: the lexicon's, a technology's kind, a place,
    an organisation."""
    zh = bool(CJK_RE.search(text))
    yield from lexicon_classes(text)
    for name in techs_in(text, english=not zh):
        key = tech_class(name)
        if key:
            yield key, name, max(text.find(name), 0)
    for m in (_ZH_PLACE_RE if zh else _EN_PLACE_RE).finditer(text):
        value = m.group("v") if zh else m.group(0)
        if is_place(value):
            yield "city", value, m.start()
    for m in (_ZH_ORG_RE if zh else _EN_ORG_RE).finditer(text):
        value = m.group("v")
        if zh and not is_place(value) or not zh and is_org(value):
            yield "employer", value, m.start()


def classes_of(memory: ExtractedMemory) -> set[str]:
    """The classes a memory's value can be of: its key's, the technology's, the lexicon's."""
    own = memory_class(memory)
    found = {own} if own else set()
    found.update(k for k, _, _ in lexicon_classes(memory.content))
    return found


def _keyed(memory: ExtractedMemory) -> bool:
    return bool(memory.subject) and not memory.subject.startswith(("about:", "changed:"))


def _held(out: Sequence[ExtractedMemory], start: int, key: str, value: str) -> int | None:
    """The session's last earlier statement of class `key` that does not name `value`."""
    for i in range(start - 1, -1, -1):
        m = out[i]
        if m.type in ("task", "decision"):
            continue
        if key in classes_of(m):
            return None if _loosely_named(m.content, value) else i
    return None


def _said(out: Sequence[ExtractedMemory], start: int, value: str) -> int | None:
    for j in range(len(out) - 1, start - 1, -1):
        if out[j].type not in ("task", "decision") and names_value(out[j].content, value):
            return j
    return None


def _linked(out: Sequence[ExtractedMemory], start: int, held: ExtractedMemory) -> bool:
    """Whether a memory of the turn already replaces `held` (a reader keyed it)."""
    return bool(held.subject) and any(m.subject == held.subject for m in out[start:])


def _changes(text: str) -> Iterator[tuple[str, str, str]]:
    """The (class, value, clause) of each new value a turn's clauses about the user state as a
    change."""
    for sentence in (s for s in SENTENCE_RE.findall(text) if s.strip()):
        zh = bool(CJK_RE.search(sentence))
        if not _own(sentence, zh) or not (_ZH_CHANGE_RE if zh else _EN_CHANGE_RE).search(sentence):
            continue
        whole = usable(sentence) or bool(_MOVED_ME_RE.search(sentence))
        for clause in cut(sentence, zh=zh):
            # one clause that plans or wonders ("我在准备 N2 考试") leaves the others standing
            if _ADDED_RE.search(clause) or not _usable_clause(clause, whole, zh):
                continue
            for key, value, _ in _named_values(clause):
                yield key, value, clause


# Someone moved the user: "they moved me to the platform squad", "management made me a lead".
_MOVED_ME_RE = re.compile(
    r"\b(?:they|they've|management|my\s+(?:boss|manager))\s+(?:\w+\s+)?me\b", re.I
)


def _own(sentence: str, zh: bool) -> bool:
    """Whether a sentence is a statement of the user's own: no question, no one else's."""
    if is_question(sentence):
        return False
    if zh:
        return not RELATION_RE.match(sentence.strip())
    return not someone_else(sentence) or bool(_MOVED_ME_RE.search(sentence))


def _usable_clause(clause: str, whole: bool, zh: bool) -> bool:
    """Whether a clause of a sentence about the user states a change made (`whole`: the sentence
    as a whole does)."""
    if usable(clause) or _zh_ask(clause, zh):
        return True
    return whole and not (_ZH_UNSURE_RE if zh else _EN_UNSURE_RE).search(clause)


def _zh_ask(clause: str, zh: bool) -> bool:
    """ "以后可以写详细点": a request of how to answer from now on, said with 可以."""
    return zh and bool(_ANSWER_LATER_RE.search(clause)) and not _ZH_UNSURE_RE.search(clause)


def _loosely_named(content: str, value: str) -> bool:
    """Whether `content` names `value` or a form of it ("swim" for "swimming")."""
    if names_value(content, value):
        return True
    if CJK_RE.search(value):
        return False
    stem = value.casefold()[:4]
    return len(stem) >= 3 and any(
        w.startswith(stem) for w in re.findall(r"\w+", content.casefold())
    )


def apply_links(text: str, ctx: Ctx, out: list[ExtractedMemory], start: int) -> None:
    """Give each new value a turn states as a change (`out[start:]` are the turn's memories) the
    key of the session's earlier statement of its class; `out` is changed in place."""
    done: set[str] = set()
    changes = list(_changes(text))
    for key, value, clause in changes:
        if key in done or _LEAVING_RE.search(clause):
            continue  # a value left behind is no new value
        held = _held(out, start, key, value)
        if held is None:
            held = _left(changes, key, value, ctx, out, start)
        if held is None:
            held = _earlier(key, value, ctx, out, start)
        if held is None or _linked(out, start, out[held]):
            continue
        _link(held, key, value, clause, ctx, out, start)
        done.add(key)


def _left(
    changes: Sequence[tuple[str, str, str]],
    key: str,
    value: str,
    ctx: Ctx,
    out: list[ExtractedMemory],
    start: int,
) -> int | None:
    """When the session holds no statement of class `key` and the turn leaves another value of it
    behind ("从滴滴离职了，现在在快手", "I left Atlassian; I'm with Canva now"), that value's
    statement, recorded from the clause that leaves it (so the new value replaces it)."""
    if any(key in classes_of(m) for m in out[:start]):
        return None
    for other, old, clause in changes:
        if other != key or old == value or not _LEAVING_RE.search(clause):
            continue
        if names_value(clause, value):
            continue
        zh = bool(CJK_RE.search(clause))
        kind = _kind(key)
        content = ("用户：" if zh else "User: ") + clause.strip(" ，,。.;；")
        out.insert(start, ctx.mem(content, kind, 6))
        return start
    return None


def _earlier(key: str, value: str, ctx: Ctx, out: list[ExtractedMemory], start: int) -> int | None:
    """When the session holds no statement of class `key`, the user's earlier statement that names
    another value of it in a shape no reader kept ("Xshell 是公司采购的" before "现在改用 Termius
    了"): recorded from its turn as its clause said it, so the new value replaces it."""
    if key.startswith("style:") or any(key in classes_of(m) for m in out[:start]):
        return None
    for turn, sentence in reversed(ctx.session.sentences):
        zh = bool(CJK_RE.search(sentence))
        for clause in cut(sentence.strip(), zh=zh):
            if _LEAVING_RE.search(clause) or _ADDED_RE.search(clause) or names_value(clause, value):
                continue
            if any(k == key for k, _, _ in _named_values(clause)):
                content = ("用户：" if zh else "User: ") + clause.strip(" ，,。.;；!！")
                memory = ctx.mem(content, _kind(key), 6)
                out.insert(start, replace(memory, source_turn_ids=(turn,)))
                return start
    return None


def _kind(key: str) -> str:
    """The type a statement of class `key` has when no reader gave it one."""
    if key in _PERSONAL or key in ("employer", "city", "team"):
        return "personal"
    return "preference" if key in PREFERENCE_KEYS or key in _ASKED else "skill"


def _link(
    held: int, key: str, value: str, clause: str, ctx: Ctx, out: list[ExtractedMemory], start: int
) -> None:
    old = out[held]
    said = _said(out, start, value)
    if said is None:
        zh = bool(CJK_RE.search(clause))
        content = ("用户：" if zh else "User: ") + clause.strip(" ，,。.;；")
        out.append(
            replace(old, content=content, source_turn_ids=(ctx.turn_id,), subject="", due="")
        )
        said = len(out) - 1
    new = out[said]
    subject = old.subject if _keyed(old) else new.subject if _keyed(new) else key
    out[held] = replace(old, subject=subject)
    # a person's statement stays one; a tool keeps the type the held statement gave it
    kind = "personal" if _kind(key) == "personal" else old.type
    out[said] = replace(
        new, subject=subject, type=kind, importance=max(old.importance, new.importance)
    )
    ctx.session.values[subject] = out[said]


# -- first statements of the lexicon's classes ----------------------------------------------------
_PERSONAL = frozenset({"diet", "routine:exercise"})
_ASKED = frozenset({"reply-language", "style:length", "style:format", "style:tone"})
_EN_OWN_RE = re.compile(r"^(?:I|I'm|I've|I'd|my|me)\b|\b(?:I|I'm|I've|my)\b", re.I)
_EN_REQUEST_RE = re.compile(
    r"^(?:please\s+)?(?:keep|write|give|make|reply|answer|respond|be|use)\b"
    r"|^(?:you\s+can|feel\s+free\s+to|just)\s+be\b",
    re.I,
)
# How the assistant is to treat the user: "blunt with me", "one-liners are plenty for me".
_EN_TO_ME_RE = re.compile(r"\b(?:with|for|to)\s+me\b", re.I)
_ZH_OWN_RE = re.compile(
    r"^(?:我|请|跟我|给我|和我|回答|回复|解释|讲)|^(?:平时|业余|每天|每周|一直|最近|工作|日常|天天|写|用)"
    r"|我(?:一般|平时|都|常|习惯|一直)?(?:用|开)"
)
_OTHER_RE = re.compile(
    r"我(?:的)?(?:爸|妈|老婆|老公|女朋友|男朋友|同事|朋友|儿子|女儿|孩子|哥|姐|弟|妹|室友|师兄|师姐)"
)
_LEAVING_RE = re.compile(
    r"\b(?:no\s+longer|stopped|ended|gave\s+up|given\s+up|quit|dropped|used\s+to|anymore|not|n't|never"
    r"|uninstalled|removed|retired|decommissioned)\b"
    r"|\bleft\b|停了|放弃|不再|不[\u4e00-\u9fff]了|以前|之前|没|别|不要|不用|离职|辞职|卸了|下线|不碰",
    re.I,
)
_EN_UNSURE_RE = re.compile(
    r"^(?:if|suppose|imagine|assuming|what\s+if)\b|\b(?:thinking\s+(?:about|of)|considering|might"
    r"|maybe|should\s+I|would\s+(?!rather)|could|plan(?:ning)?\s+to|want\s+to|going\s+to|says|said)\b",
    re.I,
)
_ZH_UNSURE_RE = re.compile(
    r"如果|假如|假设|要是|万一|打算|准备|考虑|想要?|计划|可能|也许|是否|要不要|听说|据说"
)
_EN_AGAIN_RE = re.compile(
    r"\b(?:every|each|usually|often|regularly|daily|weekly|twice|\w+\s+times\s+a|a\s+week"
    r"|mornings|evenings|weekends|learning|practi[sc]ing|training|I\s+do|I\s+play)\b",
    re.I,
)
_PRIMARY_RE = re.compile(
    r"\b(?:mostly|most\s+of|main(?:ly)?|primar(?:y|ily)|day\s+to\s+day|daily\s+driver)\b"
    r"|最多|主要|平时|天天|一直",
    re.I,
)
_ZH_AGAIN_RE = re.compile(r"每天|每周|每晚|经常|平时|一般|周末|在(?:学|练|做|打|玩|跳)")


def _first_value(clause: str, zh: bool) -> tuple[str, str]:
    """The (class, value) a clause about the user states of the lexicon's classes, or ("", "")."""
    if _LEAVING_RE.search(clause) or _ADDED_RE.search(clause):
        return "", ""
    own = (
        _ZH_OWN_RE.search(clause) and not (_OTHER_RE.search(clause) or RELATION_RE.match(clause))
        if zh
        else (
            _EN_OWN_RE.search(clause) or _EN_REQUEST_RE.match(clause) or _EN_TO_ME_RE.search(clause)
        )
        and not someone_else(clause)
    )
    if not own:
        return "", ""
    names = techs_in(clause, english=not zh)
    # "在 Windows 下面我一般开 Windows Terminal": the longer name is the one said as the tool
    names = [n for n in names if not any(o != n and o.startswith(n) for o in names)]
    tools = [(tech_class(n), n) for n in names]
    mine = [(k, n) for k, n in tools if k in PREFERENCE_KEYS]
    if len(mine) == 1:
        return mine[
            0
        ]  # "写 Python 用的是 Spyder": the editor, the terminal, the browser of the user
    if _PRIMARY_RE.search(clause):
        # "工作里写得最多的是 Ruby", "most of my code is Kotlin": the main one of its kind
        classes = [(tech_class(n), n) for n in techs_in(clause, english=not zh)]
        main = [(k, n) for k, n in classes if k]
        if len(main) == 1:
            return main[0]
    for key, value, _ in lexicon_classes(clause):
        if key == "team" and not zh:
            continue  # the English identity readers read a team ("User is on the identity team")
        answers = bool(_ANSWER_NOUN_RE.search(clause)) or _to_me(clause, value, zh)
        if key.startswith("style:") and not answers:
            continue
        if key == "routine:exercise" and not (_ZH_AGAIN_RE if zh else _EN_AGAIN_RE).search(clause):
            continue
        return key, value
    return "", ""


def _to_me(clause: str, value: str, zh: bool) -> bool:
    """Whether a clause says how the assistant is to answer the user without naming answers: a
    request ("You can be blunt with me", "Be gentle with me") or the value as its subject
    ("One-liners are plenty for me"); 解释得越详细越好."""
    if zh:
        return bool(re.match(r"^(?:解释|讲)", clause))
    if not _EN_TO_ME_RE.search(clause):
        return False
    return bool(_EN_REQUEST_RE.match(clause)) or clause.casefold().startswith(value.casefold())


def _words(content: str) -> set[str]:
    return {w for w in re.findall(r"\w{4,}", content.casefold()) if w != "user"}


def _free(out: Sequence[ExtractedMemory], start: int, j: int) -> bool:
    """Whether the turn's memory `j` can take a class's key: it has none, is no task or decision,
    and no keyed memory of the turn says part of it ("User works at Atlassian" beside "User: I
    work at Atlassian on the Jira team" already keys that statement)."""
    m = out[j]
    if _keyed(m) or m.type in ("task", "decision"):
        return False
    words = _words(m.content)
    return not any(_keyed(o) and words & _words(o.content) for o in out[start:] if o is not m)


def first_statements(text: str, ctx: Ctx, out: list[ExtractedMemory], start: int) -> None:
    """A first statement of one of the lexicon's classes no reader read ("我在做生酮饮食", "Please
    write answers as prose"): kept as the clause says it, keyed by its class, when the session
    holds no statement of that class. In place."""
    for sentence in (s for s in SENTENCE_RE.findall(text) if s.strip()):
        zh = bool(CJK_RE.search(sentence))
        if is_question(sentence) or (_ZH_UNSURE_RE if zh else _EN_UNSURE_RE).search(sentence):
            continue
        for clause in cut(sentence, zh=zh):
            key, value = _first_value(clause, zh)
            if not key or any(key in classes_of(m) for m in out[:start]):
                continue
            said = [j for j in range(start, len(out)) if _loosely_named(out[j].content, value)]
            if said:
                j = said[0]
                if _free(out, start, j):
                    out[j] = replace(
                        out[j], subject=key
                    )  # the general reader's, keyed by its class
                continue
            if any(key in classes_of(m) for m in out[start:]):
                continue
            if any(_keyed(m) and _words(clause) & _words(m.content) for m in out[start:]):
                continue  # the clause is read already ("User works at Atlassian")
            kind = _kind(key)
            content = ("用户：" if zh else "User: ") + clause.strip(" ，,。.;；")
            out.append(ctx.mem(content, kind, 6 if kind == "personal" else 5, subject=key))
