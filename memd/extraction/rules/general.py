"""The floor under the specific rules: a first-person statement read by its structure alone.

The specific rules read facts whose phrasing they know ("I live in Lisbon", "我在小米工作"). A
person also says things no rule was written for: "Home base for me is Rotterdam", "A handful of
DigitalOcean droplets host everything we run", "业务数据都放在一套 MySQL 主从里", "周末我一般去钓鱼".
When no rule read anything in a sentence, this reader keeps a declarative clause about the user
as it stands ("User: home base for me is Rotterdam", "用户：业务数据都放在一套 MySQL 主从里") when:

- its subject is the user or their own team or things: I/me/my/we/our, 我/我们/咱们, or, in
  Chinese, no subject and a lead that reports on the writer (平时, 一般, 周末 …) or a noun of
  their own setup before a verb of use (业务数据都放在…, 打包发布靠…);
- it is not a question, a request, a plan, a hypothetical, reported speech, a negation, nor a
  clause in a sentence about someone else (a relation, he/she/they, you);
- it names something: a proper name or a number, a known technology or place, the head noun
  of "my …"/"我的…" that has a key, or a habit ("in the evenings", "周末").

Its key (the supersession subject, so a later statement on the same thing replaces it) comes
from the clause's structure: the class of the value it names (a place → `city`, a technology
→ the lexicon's key), else the head noun ("my phone" → `phone`, "终端" → `tool:terminal`, a
team → `team`), else `about:<head noun>`. Its type is `preference` for a liking or a setting
one chooses (a terminal, a phone), `skill` for a technology used, else `personal`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from memd.core.models import ExtractedMemory
from memd.extraction.rules.clauses import en_clauses
from memd.extraction.rules.common import (
    CJK_RE,
    IMP_PREFERENCE,
    IMP_SKILL,
    SPOKEN_LANGUAGES,
    Ctx,
    is_question,
)
from memd.extraction.rules.moves import is_org
from memd.extraction.rules.places import is_place
from memd.extraction.rules.replaced import PLATFORM_GROUPS
from memd.extraction.rules.standing import topic_of
from memd.extraction.rules.style import style_topic
from memd.extraction.rules.tech import cjk_tech_names, lookup_tech, split_version
from memd.extraction.rules.zh_clauses import ZH_OTHER_RE

IMP_GENERAL = 5

# -- keys by head noun -------------------------------------------------------------------------
# The thing a clause is about, named by its head noun, and the key a later value of it shares.
_EN_HEADS: tuple[tuple[str, str], ...] = (
    (r"home\s*base|hometown|home\s+town|city|base", "city"),
    (r"terminal(?:\s+emulator)?", "tool:terminal"),
    (r"shell", "tool:shell"),
    (r"editor|ide", "editor"),
    (r"os|distro|operating\s+system|laptop\s+os", "os"),
    (r"phone|smartphone|handset", "phone"),
    (r"browser", "browser"),
    (r"ci|builds?(?:\s+and\s+tests)?|pipelines?|ci/cd", "tool:ci"),
    (r"database|db|data(?:store)?", "tool:database"),
    (
        r"droplets?|servers?|hosting|host|cloud|infra(?:structure)?|boxes|vps|staging|prod"
        r"|production",
        "tool:hosting",
    ),  # fmt: skip
    (r"time\s*zone|timezone|tz", "timezone"),
    (r"team|squad|group|department|org", "team"),
    (r"title|role|job|position", "role"),
    (r"working\s+(?:day|hours)|hours|work\s+week|schedule", "schedule"),
    (r"evenings?", "hobby:evening"),
    (r"weekends?", "hobby:weekend"),
    (r"language|native\s+language|mother\s+tongue", "spoken-language"),
    (r"car|bike|keyboard|font|theme|desk|monitor|laptop|machine|computer", ""),
)
_ZH_HEADS: tuple[tuple[str, str], ...] = (
    (r"老家|家乡", "hometown"),
    (r"常驻|住|base", "city"),
    (r"终端", "tool:terminal"),
    (r"shell|命令行", "tool:shell"),
    (r"编辑器|IDE", "editor"),
    (r"电脑|系统|操作系统|发行版", "os"),
    (r"手机", "phone"),
    (r"浏览器", "browser"),
    (r"打包|发布|发版|流水线|CI|构建|持续集成", "tool:ci"),
    (r"数据库|业务数据|数据", "tool:database"),
    (r"线上机器|服务器|机器|云|部署|托管|线上", "tool:hosting"),
    (r"时区|时间", "timezone"),
    (r"[\u4e00-\u9fff]{1,4}组|团队|部门", "team"),
    (r"职位|岗位|职称", "role"),
    (r"作息|在线|上班时间|工作时间", "schedule"),
    (r"周末", "hobby:weekend"),
    (r"晚上", "hobby:evening"),
    (r"业余", "hobby:spare-time"),
    (r"烟|酒", "habit:smoking"),
    (r"说|母语|粤语|普通话|方言", "spoken-language"),
)
_EN_HEAD_RES = tuple((re.compile(r"^(?:" + p + r")$", re.I), k) for p, k in _EN_HEADS)
_ZH_HEAD_RES = tuple((re.compile(p, re.I), k) for p, k in _ZH_HEADS)
# Heads whose value is a setting the user chose: a preference, not a skill.
_PREFERENCE_KEYS = frozenset({"tool:terminal", "tool:shell", "editor", "os", "phone", "browser"})
# Keys of who the user is and where: a personal fact whatever the verb ("I write … at Klarna").
_PERSONAL_KEYS = frozenset({"employer", "city", "team", "role", "timezone", "hometown"})
# Keys whose value is a technology the user works with.
_SKILL_KEYS = frozenset({"tool:ci", "tool:database", "tool:hosting"})


def _head_key(head: str, heads: tuple[tuple[re.Pattern[str], str], ...]) -> str | None:
    """The key a head noun has, "" when it is known to have none, None when it is unknown; a
    head of two words has its last word's ("day job" → `role`)."""
    for rx, key in heads:
        if rx.search(head):
            return key
    last = head.split()[-1] if " " in head.strip() else ""
    return _head_key(last, heads) if last else None


def head_key(head: str, *, zh: bool) -> str:
    """The key of the thing a head noun names ("phone", "手机" → `phone`), or ""."""
    return _head_key(head, _ZH_HEAD_RES if zh else _EN_HEAD_RES) or ""


def _slug(text: str) -> str:
    return re.sub(r"[^\w\u3400-\u9fff]+", "-", text.casefold()).strip("-")


# -- values -------------------------------------------------------------------------------------
# A proper name in Latin script (not the first word of the clause), a number, a time.
_EN_NAME_RE = re.compile(
    r"(?<!^)(?<![.!?]\s)\b[A-Z][A-Za-z0-9_.+#\-]*(?:\s+[A-Z0-9][A-Za-z0-9_.+#\-]*)*"
)
_NUMBER_RE = re.compile(r"\d")
_LATIN_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_.+#\-]*(?:\s+[A-Z0-9][A-Za-z0-9_.+#\-]*)*")
_NOT_NAMES = frozenset({"I", "I'm", "I've", "I'd", "I'll", "CET", "UTC"})


def _en_names(text: str) -> list[str]:
    return [n for n in _EN_NAME_RE.findall(text) if n not in _NOT_NAMES]


def _value_key(names: list[str]) -> tuple[str, str]:
    """The key and type the first name of a class gives: a technology of the lexicon (its key,
    skill or preference), a place (`city`), a spoken language; ("", "") for none."""
    for name in names:
        tech = lookup_tech(name)
        base, version = split_version(name)
        if tech is not None and version and tech.category in ("language", "os", "platform"):
            return f"version:{base.casefold()}", "skill"  # "Python 3.8": one version at a time
        if tech is not None and tech.category != "app":
            kind = "preference" if tech.subject in _PREFERENCE_KEYS else "skill"
            return tech.subject, kind
        if name.casefold().split()[0] in PLATFORM_GROUPS["cloud"]:
            return "tool:hosting", "skill"
        if is_place(name):
            return "city", "personal"
        if name.casefold() in SPOKEN_LANGUAGES:
            return "spoken-language", "personal"
    return "", ""


# -- English ------------------------------------------------------------------------------------
_EN_FIRST_RE = re.compile(r"\b(?:I|I'm|I've|Im|me|my|mine|we|we're|we've|our|ours)\b", re.I)
# Someone else in the sentence, or the assistant spoken to: the sentence is not a plain
# statement about the user.
_EN_OTHERS_RE = re.compile(
    r"\b(?:he|she|they|him|his|her|hers|them|their|he's|she's|they're|you|your|you're|yours"
    r"|someone|somebody|everyone|everybody|people|folks)\b"
    r"|\b(?:my|our)\s+(?:[\w\-]+\s+)?(?:friends?|manager|boss|colleagues?|co-?workers?|wife"
    r"|husband|partner|girlfriend|boyfriend|brother|sister|mom|mum|dad|mother|father|son"
    r"|daughter|kids?|clients?|customers?|uncle|aunt|cousin|nephew|niece|parents?|family"
    r"|neighbou?rs?|room-?mates?|flatmates?|teammates?|new\s+hire|hires?|intern|interns|lead"
    r"|cto|ceo|students?|grandma|grandpa|grandmother|grandfather)\b",
    re.I,
)
# A plan, a wish, a possibility, a duty, a command: not a fact as it stands.
_EN_NOT_FACT_RE = re.compile(
    r"\b(?:I'll|we'll|will|going\s+to|gonna|need\s+to|needs\s+to|have\s+to|has\s+to|must|should"
    r"|would|could|might|may|maybe|perhaps|probably|if|unless|when|whenever|once|until|hope"
    r"|hoping|wish|want|wanna|plan|planning|thinking|considering|trying|try|let's|please"
    r"|today|tonight|yesterday|tomorrow|right\s+now|this\s+morning|just|again|anymore|any\s+more"
    r"|this\s+week(?:end)?|until|till|on\s+(?:holiday|vacation|a\s+trip|business)"
    r"|for\s+a\s+(?:conference|trip|visit|wedding|funeral|week|weekend)"
    r"|no\s+longer|used\s+to|not|never|don't|doesn't|didn't|isn't|aren't|can't|won't|no"
    r"|says|said|told|tells|heard|read|according|seems|looks\s+like|example|sample|pretend"
    r"|imagine|suppose|like\s+this|thanks|thank|sorry|lol|haha|telling|saying|asking|asked|asks"
    r"|keeps?\s+\w+ing|recommend\w*|suggest\w*|it's|it\s+is|it\s+was|think|guess|believe|bet)\b"
    # what is going on now, not what is: "I'm reading a book", "we're hiring"
    r"|\b(?:I'm|I\s+am|we're|we\s+are)\s+(?!working|living|using|running|based|building|writing"
    r"|maintaining|coding|developing)[a-z]+ing\b|[\"“”`]|(?<![A-Za-z])['‘]|['’](?![A-Za-z])",
    re.I,
)
# An order opens with a verb: "Add a column …", "Use Markdown tables …", "Stick to English".
_EN_ORDER_RE = re.compile(
    r"^(?:please\s+)?(?:add|use|make|write|give|show|tell|keep|stick|stop|start|avoid|put|leave"
    r"|remove|rename|change|fix|move|switch|replace|update|create|run|check|explain|help|let"
    r"|assume|answer|reply|respond|format|include|skip|send|list|pick|go|do|don't|be|always"
    r"|never|note|remember)\b",
    re.I,
)
_EN_THEN_ORDER_RE = re.compile(
    r",\s+(?=(?:please\s+)?(?:use|keep|stick|assume|give|write|answer"
    r"|reply|make|stop|avoid|remember|note)\b)",
    re.I,
)
# "my <head> is/are …", "<head> for me is …", "our <head> runs on …": the thing the clause is
# about, named by the user's possessive.
_EN_MY_HEAD_RE = re.compile(
    r"^(?:my|our)\s+(?:(?:go-to|main|current|daily|usual|own|whole|only|favou?rite|primary)\s+)?"
    r"(?P<head>[a-z][\w\-]*(?:\s+[a-z][\w\-]*)?)\s+(?:is|are|'s|=|runs|run|lives|live|sits|sit"
    r"|goes|go|was)\b",
    re.I,
)
_EN_FOR_ME_RE = re.compile(
    r"^(?P<head>[a-z][\w\-]*(?:\s+[a-z][\w\-]*)?)\s+for\s+(?:me|us)\s+(?:is|are)\b", re.I
)
# "<things> host everything we run", "Builds and tests go through …": a setup's noun as subject.
_EN_SETUP_RE = re.compile(
    r"^(?:an?\s+|the\s+|all\s+|both\s+|a\s+handful\s+of\s+|a\s+couple\s+of\s+|some\s+)?"
    r"(?!(?:I|we|you|he|she|they|it)\b)(?:[\w\-]+\s+){0,2}?(?P<head>[a-z][\w\-]*(?:\s+and\s+[a-z][\w\-]*)?)\s+"
    r"(?:(?:both|all|still|now|mostly|also)\s+)?"
    r"(?:hosts?|runs?|serves?|lives?|live|go(?:es)?\s+through|run\s+on|sits?\s+on)\b",
    re.I,
)
_EN_SUBJECT_VERB_RE = re.compile(
    # a lead that says where or when comes first: "At home we speak …", "On weekdays I …"
    r"^(?:(?:at|in|on|during|outside|after|before|around|these|most)\s+[\w\-]+(?:\s+[\w\-]+)?,?\s+)?"
    r"(?:I|we)(?:'ve|'m|'re)?\s+(?:(?:\w+ly|all|both|still|also|been)\s+)*(?P<verb>[a-z][\w\-]*)",
    re.I,
)
# Verbs of using something: their object is a tool the user works with.
_EN_USE_VERBS = frozenset(
    "use run host deploy build write code develop ship maintain daily-drive keep store".split()
)
# A habit: when the user does it, over and over.
_EN_HABIT_RE = re.compile(
    r"\b(?:in\s+the\s+(?:evenings?|mornings?)|(?:on|at|most|every)\s+(?:the\s+)?weekends?"
    r"|every\s+(?:day|morning|evening|night|week)|most\s+(?:days|evenings|nights)|usually"
    r"|often|regularly|daily|a\s+lot\s+of|(?:all\s+)?my\s+(?:evenings|weekends|mornings|nights))\b",
    re.I,
)
_EN_LIKING_RE = re.compile(
    r"\b(?:like|likes|love|loves|prefer|prefers|enjoy|enjoys|favou?rite|go-to|of\s+choice"
    r"|suits?\s+me|work(?:s)?\s+best\s+for\s+me)\b",
    re.I,
)
_EN_POSSESSIVE_RE = re.compile(r"^(?:my|our)\s+", re.I)


Read = tuple[str, ExtractedMemory]  # a clause and the statement read from it


def en_general(sentence: str, ctx: Ctx) -> Iterator[Read]:
    """The first-person statements of an English sentence (see the module), with their clauses."""
    text = sentence.strip()
    if not text or is_question(text) or _EN_OTHERS_RE.search(text):
        return
    for clause in en_clauses(text.rstrip(".!")):
        if (
            clause.subject in ("other", "project")
            or clause.label
            or clause.negated
            or clause.unsure
        ):
            continue
        # "I'm on Mountain time, use that from now on": a request after it is no part of it
        part = _EN_THEN_ORDER_RE.split(clause.text, maxsplit=1)[0]
        memory = _en_clause(part, ctx)
        if memory is not None:
            yield part, memory


def _en_clause(text: str, ctx: Ctx) -> ExtractedMemory | None:
    if not (_EN_FIRST_RE.search(text) or _EN_SETUP_RE.match(text) or _EN_HOME_RE.match(text)):
        return None
    if _EN_ORDER_RE.match(text) or _EN_NOT_FACT_RE.search(text):
        return None
    head = _en_head(text)
    names = [n for n in _en_names(text) if n.casefold() != head]
    if not _EN_SPEAK_RE.search(text):
        # "I'm Chinese" says where from, not a language spoken (the identity rules read that)
        names = [n for n in names if n.casefold() not in SPOKEN_LANGUAGES]
    key, kind, shaped = _en_value_key(text, names)
    habit = bool(_EN_HABIT_RE.search(text) or _EN_OBJECT_HEAD_RE.search(text))
    if _EN_PAST_RE.search(text) and not key:
        return None  # an event ("we moved the meeting to Friday") naming nothing of a known kind
    if not (names or key or habit or _NUMBER_RE.search(text) or _named_by_head(text, head)):
        return None  # nothing named: "I'm tired", "our CI is broken"
    verb = _EN_SUBJECT_VERB_RE.match(text)
    if not (head or verb or habit or shaped):
        return None
    key = (_head_key(head, _EN_HEAD_RES) if head else None) or key
    key = key or _en_fallback_key(text, head, names)
    type_ = _en_type(text, key, kind, verb.group("verb").casefold() if verb else "")
    return ctx.mem(_en_content(text), type_, _importance(type_), subject=key)


# The complement of "my job is …" that names a thing: a noun phrase, not a quality ("stressful",
# "really busy").
_EN_COMPLEMENT_RE = re.compile(
    r"\b(?:is|'s)\s+(?:an?\s+|the\s+)?(?!(?:\w+ly|very|so|too|quite|pretty|super|kind|a\s+bit|not"
    r"|still|also|just)\b)(?P<what>[a-z][\w\-]*\s+[a-z][\w\-]*)",
    re.I,
)


def _named_by_head(text: str, head: str) -> bool:
    """ "My day job is support engineer": a head noun of who the user is, and a noun phrase."""
    if _head_key(head, _EN_HEAD_RES) not in _PERSONAL_KEYS:
        return False
    return bool(_EN_COMPLEMENT_RE.search(text))


def _en_value_key(text: str, names: list[str]) -> tuple[str, str, bool]:
    """The key and type of what a clause names, and whether its shape alone says what it is
    about (a home, a time zone, a liked style); `names` gets a home's place."""
    key, kind = _value_key(names)
    if key == "city" and not any(_said_as_place(n, text) for n in names if is_place(n)):
        key, kind = "", ""  # "I'm on Victoria's team": a person's name, not a city
    at = _EN_AT_ORG_RE.search(text)
    if not key and at is not None and is_org(at.group("org")):
        key, kind = "employer", "personal"  # "I write checkout services at Klarna"
    home = _EN_HOME_RE.match(text)
    if home is not None and lookup_tech(home.group("place")) is None:
        names.append(home.group("place"))
        return "city", "personal", True  # "Porto has been home for three years"
    if not key and _EN_TIME_RE.search(text):
        key, kind = "schedule", "personal"  # "I start at 6am and log off at 2pm"
    topic, topic_type = topic_of(text)
    if topic in ("timezone", "reply-language") or (topic.startswith("style:") and _liking(text)):
        return topic, topic_type, True  # "I'm on Mountain time", "thorough explanations suit me"
    return key, kind, False


def _said_as_place(name: str, text: str) -> bool:
    """Whether `text` names `name` where a place goes: after in/to/from/near … and not as
    someone's ("Victoria's team")."""
    return bool(
        re.search(
            r"\b(?:in|to|from|near|around|outside|of|based|live|living|moved|home)\s+(?:\w+\s+)?"
            + re.escape(name) + r"\b(?!'s)",
            text,
        )
    )  # fmt: skip


_EN_SPEAK_RE = re.compile(
    r"\b(?:speak|speaks|spoke|native|natively|fluent|mother\s+tongue)\b", re.I
)
# A time of day, a span of hours: when the user works.
_EN_TIME_RE = re.compile(
    r"\b\d{1,2}(?::\d{2})?\s*(?:am|pm)\b|\b\d{1,2}:\d{2}\b|\b\d{1,2}\s+to\s+\d{1,2}\b", re.I
)
_EN_AT_ORG_RE = re.compile(
    r"\b(?:work|works|working|write|build|code|am|I'm|lead|run)\b.*\bat\s+(?P<org>(?-i:[A-Z])[A-Za-z0-9&.\-]+)",
    re.I,
)
# "Porto has been home for three years": a place as the user's home (what is home is a place,
# whether the gazetteer lists it or not).
_EN_HOME_RE = re.compile(
    r"^(?P<place>(?-i:[A-Z])[A-Za-z .\-]+?)\s+(?:has\s+been|is)\s+(?:my\s+)?home\b", re.I
)


def _liking(text: str) -> bool:
    return bool(_EN_LIKING_RE.search(text) or _ZH_LIKING_RE.search(text))


def _en_head(text: str) -> str:
    """The head noun of "my <head> is …", "<head> for me is …", "<things> host …", or ""."""
    for rx in (_EN_MY_HEAD_RE, _EN_FOR_ME_RE, _EN_SETUP_RE):
        m = rx.match(text)
        if m is not None:
            return m.group("head").casefold()
    return ""


# A verb in the past: an event, kept only when it names something of a known kind ("moved it
# all to Hetzner"), not "we moved the meeting to Friday".
_EN_PAST_RE = re.compile(
    r"\b(?:[a-z]+ed|went|got|had|did|made|took|bought|left|came|saw|met|was|were|began|became"
    r"|ran|wrote|built|spent|told|gave|found|sold|broke|lost|won|paid)\b(?<!'ve\sgot)(?<!have\sgot)",
    re.I,
)


def _style(text: str) -> bool:
    """Whether `text` is about how the assistant should write (not a working-hours topic)."""
    topic = style_topic(text)
    return topic.startswith("style:") or topic in ("reply-language", "theme")


# Nouns that say what a clause is about wherever they stand: "I sit on the payments squad".
_EN_OBJECT_HEAD_RE = re.compile(r"\b(?:squad|team|department)\b", re.I)
_EN_SLOT_RE = re.compile(r"\b(evenings?|mornings?|weekends?|nights?)\b", re.I)


def _en_fallback_key(text: str, head: str, names: list[str]) -> str:
    """The key of a clause no value class or known head keyed: its head noun, the team it names,
    the time of a habit ("hobby:evenings"), else the first name it gives."""
    if head:
        return f"about:{_slug(head)}"
    if _EN_OBJECT_HEAD_RE.search(text):
        return "team"
    slot = _EN_SLOT_RE.search(text)
    if slot is not None:
        return f"hobby:{slot.group(1).casefold().rstrip('s')}"
    return f"about:{_slug(names[0])}" if names else ""


def _en_type(text: str, key: str, kind: str, verb: str) -> str:
    if key in _PERSONAL_KEYS:
        return "personal"
    if _EN_LIKING_RE.search(text) or _style(text):
        return "preference"
    if key in _PREFERENCE_KEYS:
        return "preference"
    if key in _SKILL_KEYS or kind == "skill" or verb in _EN_USE_VERBS:
        return "skill"
    return kind or "personal"


def _en_content(text: str) -> str:
    text = text.strip().rstrip(".,;")
    if _EN_POSSESSIVE_RE.match(text):
        return "User's " + _EN_POSSESSIVE_RE.sub("", text, count=1)
    return "User: " + text


def _importance(type_: str) -> int:
    return (
        IMP_PREFERENCE if type_ == "preference" else IMP_SKILL if type_ == "skill" else IMP_GENERAL
    )


# -- Chinese ------------------------------------------------------------------------------------
_ZH_SELF_RE = re.compile(r"^(?:我们|咱们|我(?!们))")
# A request, a question word, a plan, a wish, a hypothetical, a negation, reported speech.
_ZH_NOT_FACT_RE = re.compile(
    r"帮我|给我|替我|告诉我|让我|请|麻烦|能不能|可不可以|可以|如果|假如|假设|要是|万一|打算|准备|考虑"
    r"|想要?|希望|计划|可能|也许|应该|需要|(?<!主)要|(?<!开|体)会|听说|据说|说过|觉得|认为|不|没|别|吗|呢|吧"
    r"|今天|明天|昨天|刚才|谢谢|哈哈|很少|几乎|又|这个|这段|那个|用户|客户|一本|书|文章|教程|视频"
    r"|下周|下个月|下次|把|试了|试用|^(?:把|帮|给|让|替|用)|[“”\"'「」『』]"
)
# A lead that reports on the writer when the clause names no subject: time, habit, home.
_ZH_REPORT_RE = re.compile(
    r"^(?:平时|平常|日常|一般|通常|周末|业余|每天|每周|工作日|我这边|家里|最近|这阵子|这两年|这半年"
    r"|现在|目前)"
)
# Taking something up: "最近迷上了飞盘", "爱上了攀岩".
_ZH_TAKE_UP_RE = re.compile(r"迷上|爱上|喜欢上|入坑|开始玩|开始学")
# A noun of the user's own setup before a verb of use: "业务数据都放在…", "打包发布靠的是…".
_ZH_SETUP_RE = re.compile(
    r"^(?P<head>[\u4e00-\u9fff]{2,6}?|[A-Za-z]{2,5}\s*)(?:这块|这边)?(?:我们|咱们)?(?:都|全|全部|一直|基本|主要)*"
    r"(?:放在|跑在|部署在|托管在|存在|靠的?是|靠|用的是|全是|都是|开着|装的是|跑的是)"
)
_ZH_VERB_OF_USE_RE = re.compile(r"用|跑在|放在|部署|托管|靠|装的是|开着|写")
_ZH_LIKING_RE = re.compile(r"喜欢|偏好|爱用|习惯|最爱|顺手")
_ZH_HABIT_RE = re.compile(r"平时|一般|通常|周末|每天|每周|经常|业余|晚上|早上")
_ZH_HEAD_RE = re.compile(
    r"^(?:我们?的?|咱们的?)(?P<head>[\u4e00-\u9fff]{1,4}?)(?:是|在|用|都|一直)"
)


def zh_general(sentence: str, ctx: Ctx) -> Iterator[Read]:
    """The first-person statements of a Chinese sentence (see the module), with their clauses."""
    text = sentence.strip().rstrip("。！!；;")
    if not text or is_question(text) or ZH_OTHER_RE.search(text) or "你" in text:
        return
    # not at 、: "每周二、四晚上" is one time
    clauses = [c.strip() for c in re.split(r"[，,：]|:(?![A-Za-z0-9/])", text) if c.strip()]
    for i, clause in enumerate(clauses):
        memory = _zh_clause(clause, ctx, i == 0)
        if memory is not None:
            yield clause, memory


_ZH_CLOCK_RE = re.compile(r"[一二三四五六七八九十两]+点")
# A condition of the body: "我海鲜过敏", "我乳糖不耐受".
_ZH_CONDITION_RE = re.compile(r"(过敏|不耐受|色盲|色弱|近视|哮喘|糖尿病|高血压)")
_ZH_LANGUAGE_RE = re.compile(r"粤语|普通话|英语|日语|韩语|法语|德语|西班牙语|闽南语|上海话|四川话")
# Keys whose head noun is itself the fact: "我在支付组", "我烟瘾挺大".
_SELF_VALUED = frozenset({"team", "habit:smoking"})


def _zh_clause(text: str, ctx: Ctx, first: bool) -> ExtractedMemory | None:
    if _ZH_NOT_FACT_RE.search(text):
        return None
    setup = _ZH_SETUP_RE.match(text)
    if not (_ZH_SELF_RE.match(text) or _ZH_REPORT_RE.match(text) or setup):
        return None
    # A name that is itself a head noun ("CI") names no value.
    names = [n for n in _LATIN_NAME_RE.findall(text) if _head_key(n, _ZH_HEAD_RES) is None]
    names += [n for n, _ in cjk_tech_names(text)]  # "达梦", written in Chinese script
    key, kind = _value_key(names)
    head_m = _ZH_HEAD_RE.match(text)
    head = setup.group("head") if setup else head_m.group("head") if head_m else text
    head_key = _head_key(head, _ZH_HEAD_RES) or ""
    habit = bool(_ZH_HABIT_RE.search(text) or _ZH_TAKE_UP_RE.search(text))
    place = _zh_places(text)
    number = _NUMBER_RE.search(text) or _ZH_CLOCK_RE.search(text)
    condition = _ZH_CONDITION_RE.search(text)
    if condition is not None:
        head_key = f"condition:{condition.group(1)}"  # "我海鲜过敏"
    if head_key == "spoken-language" and _ZH_LANGUAGE_RE.search(text):
        names = [*names, *_ZH_LANGUAGE_RE.findall(text)]  # "我说粤语和普通话"
    valued = names or place or habit or number or condition or head_key in _SELF_VALUED
    if not valued:
        return None  # nothing named: "我们的 CI 挂了"
    key = head_key or key or ("hobby" if _ZH_TAKE_UP_RE.search(text) else "")
    key = key or ("city" if place else f"about:{_slug(head[:4])}")
    type_ = _zh_type(text, key, kind, bool(setup))
    return ctx.mem(_zh_content(text), type_, _importance(type_), subject=key)


def _zh_places(text: str) -> str:
    for size in (4, 3, 2):
        for i in range(len(text) - size + 1):
            part = text[i : i + size]
            if (
                re.fullmatch(r"[\u4e00-\u9fff]+", part)
                and is_place(part, cities=False)
                and part != "老家"
            ):
                return part
    return ""


def _zh_type(text: str, key: str, kind: str, setup: bool) -> str:
    if _ZH_LIKING_RE.search(text) or key in _PREFERENCE_KEYS or _style(text):
        return "preference"
    if key in _SKILL_KEYS or kind == "skill" or (setup and _ZH_VERB_OF_USE_RE.search(text)):
        return "skill"
    return kind or "personal"


def _zh_content(text: str) -> str:
    if text.startswith("我们") or text.startswith("咱们"):
        return "用户的团队" + text[2:]
    if text.startswith("我"):
        return "用户" + text[1:]
    return "用户：" + text


# -- what the other rules read -------------------------------------------------------------------
_WORD_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+#\-]*|[\u3400-\u9fff]")
_FILLER = frozenset(
    "user user's i i'm my me we our the a an is are to of in on at for and with as it all".split()
    + list("用户我们的了是在有一个")
)


def _terms(text: str) -> set[str]:
    """Words (Latin) and character pairs (Chinese) of `text`, fillers left out."""
    words = [w.casefold() for w in _WORD_RE.findall(text)]
    out = {w for w in words if len(w) > 1 and w not in _FILLER}
    cjk = [w for w in words if len(w) == 1 and "\u3400" <= w <= "\u9fff"]
    out.update(a + b for a, b in zip(cjk, cjk[1:], strict=False) if not {a, b} <= _FILLER)
    return out


def covered(clause: str, said: Sequence[ExtractedMemory]) -> bool:
    """Whether a memory the other rules read from the sentence already says what `clause` says
    (it shares a third of its words), so the general reader adds nothing for it."""
    terms = _terms(clause)
    if not terms:
        return True
    # A name the clause gives that a memory holds: a rule read the clause's value.
    # (in Chinese every Latin word is a name: "用 tmux")
    latin = (
        r"[A-Za-z][A-Za-z0-9_.+#\-]*[A-Za-z0-9_+#]"
        if CJK_RE.search(clause)
        else r"\b[A-Z][A-Za-z0-9_.+#\-]*[A-Za-z0-9_+#]"
    )
    names = {n.casefold() for n in re.findall(latin, clause)}
    for m in said:
        held = _terms(m.content)
        if len(terms & held) * 3 >= len(terms) or names & held:
            return True
    return False


def someone_else_in(text: str) -> bool:
    """Whether a text names someone other than the user (a relation, he/she/they, you)."""
    if CJK_RE.search(text):
        return bool(ZH_OTHER_RE.search(text) or "你" in text)
    return bool(_EN_OTHERS_RE.search(text))


def not_a_statement(clause: str) -> bool:
    """Whether a clause has a shape no statement of the user's has, by this reader's lists: a
    plan, a wish, a possibility, a command, something going on now or said by someone, someone
    else in it, a question word, a negation (the learned gate, `learned.py`, reads no such
    clause)."""
    if CJK_RE.search(clause):
        return bool(_ZH_NOT_FACT_RE.search(clause) or ZH_OTHER_RE.search(clause) or "你" in clause)
    return bool(
        _EN_OTHERS_RE.search(clause) or _EN_ORDER_RE.match(clause) or _EN_NOT_FACT_RE.search(clause)
    )
