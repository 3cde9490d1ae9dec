"""First statements of the user's life, read by structure: how they get to work, the devices they
carry, their routines, conditions of the body, children, what they studied, an age in words, a
role said with 是.

A later change can only supersede a value that was stored, and people state these in shapes no
rule of a particular phrasing reads: "I cycle to the office most days", "I'm on a ThinkPad X1",
"I'm on call every other week", "Gluten makes me properly ill", "I have two kids", "我每天坐地铁
上班", "我手机是小米 14", "我下班常去攀岩馆", "我乳糖不耐受", "我本科学的是会计", "我是护士". Each is
a clause whose subject is the user (I/me/my, 我; someone else's, a question, a negation, a plan or
a hypothetical gives nothing) with a predicate of being, having or doing again and a value of a
known class:

- `commute`: a mode of getting somewhere (drive, cycle, walk, the bus/train/tram …; 开车, 骑车,
  坐地铁 …) with work or the office as where to;
- `phone`, `computer`, `tablet`: a device by its maker's line (iPhone, Pixel, Galaxy, ThinkPad,
  MacBook …; 华为 Mate, 小米 14);
- `routine:<activity>`: an activity of a known kind (the gym, swimming, climbing, being on call;
  健身, 攀岩, 踢球, 值班 …) with a word that says it recurs (every, usually, on Tuesdays; 每天,
  常, 周末 …);
- `condition:<what>`: a condition of the body (`health`);
- `education`: what they studied; `age`: an age in words; `role`: 我是 + a noun of a job.

`life_value(clause, zh)` gives the class of a value a clause names for the readers of new values
(`holds`): "it's the tram to work every day now", "I'm on a Pixel 8 now".
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memd.core.models import ExtractedMemory
from memd.extraction.rules.clauses import en_clauses
from memd.extraction.rules.common import IMP_AGE, IMP_FAMILY, IMP_ROLE, Ctx, is_question
from memd.extraction.rules.dates import cn_number
from memd.extraction.rules.health import condition_of
from memd.extraction.rules.moves import is_org
from memd.extraction.rules.places import is_place
from memd.extraction.rules.units import cut
from memd.extraction.rules.zh_clauses import zh_clauses

IMP_LIFE = 6
IMP_DEVICE = 5
Read = tuple[str, ExtractedMemory]

# -- commute ------------------------------------------------------------------------------------
_EN_WHERE_TO = (
    r"(?:to|into)\s+(?:work|the\s+office|the\s+lab|campus|the\s+studio|the\s+site|the\s+hospital"
    r"|my\s+(?:job|office|work))\b|\bcommute\b"
)
_EN_WHERE_TO_RE = re.compile(_EN_WHERE_TO, re.I)
_VEHICLES = (
    r"bus|train|tram|subway|metro|tube|ferry|shuttle|underground|streetcar|light\s+rail|overground"
    r"|car|bike|bicycle|e-bike|scooter|motorbike|motorcycle|boat"
)
_EN_MODE_RE = re.compile(
    r"\b(?P<verb>drive|drives|driving|cycle|cycles|cycling|bike|bikes|biking|walk|walks|walking"
    r"|run|runs|running|carpool|carpools)\b(?=\s+(?:in\s+)?(?:to|into)\b)"
    r"|\b(?:take|takes|taking|get|gets|getting|catch|catches|ride|rides|riding|hop\s+on|jump\s+on)"
    r"\s+(?:the|a|my)\s+(?P<vehicle>" + _VEHICLES + r")\b"
    r"|\bby\s+(?P<by>" + _VEHICLES + r")\b"
    r"|\b(?:the|a)\s+(?P<it>" + _VEHICLES + r")\s+(?:in\s*)?(?:to|into)\s+(?:work|the\s+office)\b"
    r"|\bcommute\s+is\s+(?:an?\s+)?(?:[\w\-]+\s+){0,2}?(?P<ride>" + _VEHICLES + r")\b",
    re.I,
)
_ZH_MODE_RE = re.compile(
    r"(?P<v>开车|自驾|骑(?:自行)?车|骑(?:电动车|电瓶车|摩托|单车|共享单车)|坐(?:地铁|公交车?|班车|轻轨|火车|高铁)"
    r"|搭(?:地铁|公交车?|班车)|打车|走路|步行|跑步)"
    r"(?=(?:去|到)?(?:上班|公司|单位|通勤|上下班|去公司|去单位))"
)


# "I drive in": "in" is into work.
_EN_IN_RE = re.compile(
    r"\b(?P<verb>drive|drives|cycle|cycles|bike|bikes|walk|walks)\s+in\b(?!\s+(?:a|an|the|my|our"
    r"|from|circles|\w+ing)\b)",
    re.I,
)
# A vehicle the user goes by, said without where to: only a change of a commute held reads it.
_EN_BARE_MODE_RE = re.compile(
    r"\b(?:it's|it\s+is|by|take|takes|taking|on)\s+(?:the\s+|a\s+)?(?P<v>bus|train|tram|subway|metro"
    r"|tube|ferry|bike|e-bike|scooter)\b",
    re.I,
)
_ZH_BARE_MODE_RE = re.compile(
    r"(?P<v>开车|自驾|骑(?:自行)?车|骑(?:电动车|电瓶车|摩托|单车)|坐(?:地铁|公交车?|班车|轻轨)|搭(?:地铁|公交车?)"
    r"|打车)"
)


def _en_commute(text: str, *, bare: bool = False) -> str:
    m = _EN_IN_RE.search(text)
    if m is not None:
        return m.group("verb").casefold()
    m = _EN_MODE_RE.search(text) if _EN_WHERE_TO_RE.search(text) else None
    if m is None and bare:
        m = _EN_BARE_MODE_RE.search(text)
    return next(g for g in m.groups() if g).casefold() if m else ""


def _zh_commute(text: str, *, bare: bool = False) -> str:
    m = _ZH_MODE_RE.search(text) or (_ZH_BARE_MODE_RE.search(text) if bare else None)
    return m.group("v") if m else ""


# -- devices ------------------------------------------------------------------------------------
_MODEL = r"(?:\s*(?:[A-Z0-9][\w+]*|mini|max|plus|pro|ultra|air|lite|carbon|fold|flip)(?![\w]))*"
_DEVICES = (
    ("phone", r"iPhone|Pixel|Galaxy\s+[SZAN]\w*|Galaxy|OnePlus|Xperia|Moto\s+\w+|Fairphone|Redmi"
              r"|Nothing\s+Phone|Xiaomi\s+\d+|Huawei\s+(?:Mate|P)\s*\d+|Honor\s+\d+"),
    ("computer", r"ThinkPad|MacBook|Mac\s+mini|Mac\s+Studio|Mac\s+Pro|iMac|XPS|Surface\s+(?:Laptop|Book)"
                 r"|Framework\s+(?:Laptop|13|16)|Chromebook|Zenbook|Vivobook|Legion|MateBook|Spectre"
                 r"|EliteBook|Latitude|IdeaPad|Yoga\s+\d+\w*|ROG\s+\w+"),
    ("tablet", r"iPad|Galaxy\s+Tab|Surface\s+Pro"),
)  # fmt: skip
_EN_DEVICE_RES = tuple(
    (key, re.compile(r"(?<![\w])(?P<d>(?:" + names + r")" + _MODEL + r")"))
    for key, names in _DEVICES
)
_ZH_DEVICES = (
    ("phone", r"华为\s*(?:Mate|P|nova|Pura)\s*\d+\w*|小米\s*\d+\w*|红米\s*\w+|荣耀\s*\d+\w*"
              r"|OPPO\s*\w+|vivo\s*\w+|一加\s*\d+|魅族\s*\d+"),
    ("computer", r"拯救者\w*|联想\w*笔记本|华为\s*MateBook\w*|小米笔记本\w*"),
)  # fmt: skip
_ZH_DEVICE_RES = tuple((key, re.compile(r"(?P<d>" + names + r")")) for key, names in _ZH_DEVICES)
_ZH_DEVICE_HEAD_RE = re.compile(r"手机|电脑|笔记本|平板|用的是|用|拿的是|拿着|换成|换了|买了")


def _device(text: str, zh: bool) -> tuple[str, str]:
    """The device `text` names and its key ("Pixel 7", "phone"), or ("", "")."""
    found: list[tuple[int, str, str]] = []
    for key, rx in _EN_DEVICE_RES:
        found += [(m.start(), m.group("d").strip(), key) for m in rx.finditer(text)]
    if zh:
        for key, rx in _ZH_DEVICE_RES:
            found += [(m.start(), m.group("d").strip(), key) for m in rx.finditer(text)]
    if not found:
        return "", ""
    _, name, key = min(found, key=lambda f: (f[0], -len(f[1])))
    if key == "phone" and re.match(r"Surface\s+Pro|Galaxy\s+Tab", name):
        key = "tablet"
    return name, key


def is_device(name: str) -> bool:
    """Whether `name` is a device ("iPhone 15", "ThinkPad X1"), not a technology one works with."""
    return bool(_device(name, zh=True)[0])


# -- routines -----------------------------------------------------------------------------------
_EN_ACTIVITIES = (
    ("on-call", r"on[\s-]call"),
    ("school-run", r"school\s+run|pick(?:s|ing)?\s+up\s+(?:my|the|our)\s+(?:kids?|son|daughter"
     r"|children|child|little\s+ones?)|drop(?:s|ping)?\s+(?:off\s+)?(?:my|the|our)\s+(?:kids?|son"
     r"|daughter|children)"),
    ("night-shift", r"night\s+shifts?"), ("choir", r"choir"), ("chess", r"chess"),
    # sports and exercise: one is given up for another ("switched to rowing")
    ("exercise", r"gym|work(?:ing)?\s+out|lift(?:ing)?\s+weights|crossfit|jogging"
     r"|running(?!\s+(?:on|in|at|with|tests?|the|a|an|our|my|it|them|everything|jobs?|services?)\b)"
     r"|go\s+(?:for\s+)?(?:a\s+)?run|run\s+\d+\s*(?:k|km|miles?)|swim|swims|swimming|yoga"
     r"|pilates|climb|climbs|climbing|bouldering|football|soccer|five-a-side|basketball|tennis"
     r"|badminton|squash|hike|hikes|hiking|road\s+cycling|cycling|ride\s+my\s+bike|dance|dancing"
     r"|salsa|karate|judo|jiu[\s-]?jitsu|bjj|boxing|kickboxing|taekwondo|rowing|surfing|skiing"
     r"|spin\s+class(?:es)?|spinning|volleyball|netball|rugby|cricket|golf|skating"),
)  # fmt: skip
_EN_ACTIVITY_RES = tuple((k, re.compile(r"\b(?:" + p + r")\b", re.I)) for k, p in _EN_ACTIVITIES)
_EN_AGAIN_RE = re.compile(
    r"\b(?:every|each|most|usually|normally|often|regularly|always|daily|weekly|nightly|religiously"
    r"|(?:on\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)days|weekends|mornings|evenings|nights"
    r"|lunchtimes|once|twice|\w+\s+times\s+a|a\s+week|before\s+work|after\s+work|rota|rotation)\b",
    re.I,
)
_ZH_ACTIVITIES = (
    ("on-call", r"值班|值.{0,3}班|on\s*call|oncall"),
    ("school-run", r"接孩子|送孩子|接娃|送娃|接小孩|送小孩|接送|要?去[接送](?![\u4e00-\u9fff])"),
    ("exercise", r"健身|撸铁|练器械|跑步|夜跑|晨跑|慢跑|跑[\d一二两三四五六七八九十半]+公里|游泳"
     r"|游[\d一二两三]+公里|瑜伽|攀岩|抱石|踢球|踢足球|足球|篮球|羽毛球|网球|爬山|徒步|骑行|跳舞"
     r"|广场舞|划船|滑雪|冲浪|拳击|普拉提|乒乓球|排球|高尔夫"),
    ("fishing", r"钓鱼"),
)  # fmt: skip
_ZH_ACTIVITY_RES = tuple((k, re.compile(p)) for k, p in _ZH_ACTIVITIES)
_ZH_AGAIN_RE = re.compile(
    r"每天|每周|每隔|每晚|每早|每个?月|每[周个]?[一二三四五六日天末]|常|经常|一般|平时|通常|周末|早上|晚上|下班后?"
    r"|周[一二三四五六日天]|隔周|轮流"
)


# A routine said beside another one has: it adds, it does not replace.
_ADDED_RE = re.compile(r"\b(?:also|too|as\s+well|another|on\s+top)\b|还|也|另外", re.I)


def _routine(text: str, zh: bool, *, again: bool = True) -> tuple[str, str]:
    """The activity a clause says the user does again and again, and its key ("" when it adds
    to another), or ("", ""); `again=False`: without a word that it recurs (a change of one)."""
    if again and not (_ZH_AGAIN_RE if zh else _EN_AGAIN_RE).search(text):
        return "", ""
    for key, rx in _ZH_ACTIVITY_RES if zh else _EN_ACTIVITY_RES:
        m = rx.search(text)
        if m is not None:
            return m.group(0), "" if _ADDED_RE.search(text) else f"routine:{key}"
    return "", ""


# -- what the user studied -------------------------------------------------------------------------
_EN_FIELD = (
    r"(?P<what>(?!the\b|a\b|an\b|my\b|this\b|that\b|it\b|some\b|your\b|how\b|for\b)"
    r"[A-Za-z][\w\-]*(?:\s+(?:and\s+)?[A-Za-z][\w\-]*){0,3}?)(?=\s*$|\s+(?:at|in\s+\d|from|back"
    r"|before|and\s+then|but)\b)"
)
_EN_STUDIED_RES = (
    re.compile(r"\bI\s+(?:studied|majored\s+in|did\s+(?:a|my)\s+(?:degree|bachelor'?s|master'?s"
               r"|masters|phd|ba|bsc|ma|msc|mba|undergrad)\s+in|have\s+an?\s+(?:degree|bachelor'?s"
               r"|master'?s|masters|phd|ba|bsc|ma|msc)\s+in|trained\s+in)\s+" + _EN_FIELD, re.I),
    re.compile(r"\bmy\s+(?:degree|major|phd|master'?s|undergrad|background)\s+(?:is|was)\s+in\s+"
               + _EN_FIELD, re.I),
)  # fmt: skip
_ZH_STUDIED_RES = (
    re.compile(
        r"^我(?:的)?(?:本科|大学|硕士|研究生|博士|专业|大专)(?:是|学的是|学的|读的是|读的|念的是|念的|学)"
        r"(?P<what>[\u4e00-\u9fffA-Za-z]{2,8}?)(?:专业)?(?:的|出身)?$"
    ),
    re.compile(r"^我是(?P<what>[\u4e00-\u9fff]{2,6}?)专业(?:毕业)?的$"),
    re.compile(r"^我是(?P<what>学[\u4e00-\u9fff]{1,4}?)出身的?$"),
)


# -- where the user is ----------------------------------------------------------------------------
_EN_IN_PLACE_RE = re.compile(
    r"\bI(?:'m|\s+am)\s+(?:(?:currently|now|still|mostly|permanently|just)\s+)?(?:(?:out|over|up"
    r"|down|back|based|living|staying|settled)\s+)?(?:in|out\s+of)\s+"
    r"(?P<p>(?-i:[A-Z])[\w.'\-]*(?:\s+(?-i:[A-Z])[\w.'\-]*)?)"
    r"|^home(?:\s+for\s+(?:me|us))?\s+is\s+(?P<h>(?-i:[A-Z])[\w.'\-]*(?:\s+(?-i:[A-Z])[\w.'\-]*)?)",
    re.I,
)
_ZH_IN_PLACE_RE = re.compile(
    r"^我(?:现在|目前|如今|暂时)?(?:一个人|自己|独自|人)?(?:在|住在|待在|呆在|定居在?)"
    r"(?P<p>[\u4e00-\u9fff]{2,5}?)(?:住|生活|定居|待着|呆着|工作|上班|这边|那边)?了?$"
)


# "Ottawa is where I live these days", "The data team at Spotify is where I spend my days".
_EN_WHERE_I_RE = re.compile(
    r"^(?P<v>.{2,60}?)\s+is\s+where\s+(?:I|we)\s+(?:live|'m\s+based|am\s+based|work|spend\s+my"
    r"\s+days|call\s+home|am|'m|'ve\s+settled|settled)\b",
    re.I,
)
_EN_AT_ORG_RE = re.compile(r"\bat\s+(?P<org>(?-i:[A-Z])[\w&.\-]*(?:\s+(?-i:[A-Z])[\w&.\-]*)?)")


def _place(text: str, zh: bool) -> str:
    m = (_ZH_IN_PLACE_RE if zh else _EN_IN_PLACE_RE).search(text)
    place = (m.group("p") or m.groupdict().get("h") or "") if m else ""
    return place if place and is_place(place) else ""


def where_i_am(text: str) -> tuple[str, str]:
    """ "X is where I live/work": the place (`city`) or the organisation (`employer`) X names."""
    m = _EN_WHERE_I_RE.match(text.strip())
    if m is None:
        return "", ""
    what = m.group("v").strip()
    if is_place(what):
        return what, "city"
    at = _EN_AT_ORG_RE.search(what)
    return (at.group("org"), "employer") if at is not None else ("", "")


# -- age in words -------------------------------------------------------------------------------
_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
          "fifteen sixteen seventeen eighteen nineteen").split()  # fmt: skip
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_EN_NUMBER = (
    r"(?:" + "|".join(_TENS) + r")(?:[\s-](?:one|two|three|four|five|six|seven|eight|nine))?"
)
_EN_AGE_RES = (
    re.compile(r"\bI(?:'m|\s+am)\s+(?:now\s+|almost\s+|nearly\s+)?(?P<n>" + _EN_NUMBER + r"|\d{2})"
               r"(?:\s+(?:years?\s+old|this\s+year|now))?(?=$|\s+(?:and|but|so)\b)", re.I),
    re.compile(r"^being\s+(?P<n>" + _EN_NUMBER + r"|\d{2})$", re.I),
    re.compile(r"\bI\s+(?:just\s+)?turned\s+(?P<n>" + _EN_NUMBER + r")\b", re.I),
)  # fmt: skip
_ZH_AGE_RE = re.compile(
    r"^我(?:今年|已经|都)?(?:快|刚|刚满|满|差不多|奔)?(?P<n>[二三四五六七八九]十[一二三四五六七八九]?|\d{2})(?:岁)?了?$"
)


def _en_number(text: str) -> int:
    if text.isdigit():
        return int(text)
    parts = re.split(r"[\s-]", text.casefold())
    value = (_TENS.index(parts[0]) + 2) * 10 if parts[0] in _TENS else 0
    return value + (_UNITS.index(parts[1]) if len(parts) > 1 and parts[1] in _UNITS else 0)


# -- a role said with 是 ------------------------------------------------------------------------
_ZH_ROLE_RE = re.compile(
    r"^我(?:现在|目前)?是(?:一名|一个|一位|个|名)?(?P<r>[\u4e00-\u9fffA-Za-z]{0,6}?(?:工程师|设计师|分析师"
    r"|架构师|程序员|护士|医生|大夫|老师|教师|律师|会计|经理|总监|主管|编辑|记者|研究生|博士生|学生|教授"
    r"|创始人|司机|厨师|警察|军人|工人|店主|主播|翻译|销售|运营|产品|前端|后端|全栈|测试|运维|药师|师|员))$"
)
# "我们华为这边流程特别多", "我们公司是网易": the organisation the user's "we" is.
_ZH_OUR_ORG_RE = re.compile(
    r"^我们(?:公司|单位|司)?(?:是|在)?(?P<org>[A-Za-z][\w&.\-]*|[\u4e00-\u9fff]{2,4}?)(?:这边|那边|这里|$)"
)


def _zh_org(name: str) -> bool:
    """Whether `name` after 我们公司是 names an organisation ("网易"), not what it does ("做电商的")
    nor a place."""
    return (
        is_org(name) and not is_place(name) and not re.search(r"^(?:做|搞|干|一|个|家)|的$", name)
    )


# "我这个 CTO 还得写前端", "我是一个干了十年测试的人": a role in other words.
_ZH_ROLE_MORE_RE = re.compile(
    r"^我这个\s*(?P<r>[A-Za-z]{2,5}|[\u4e00-\u9fff]{0,4}?(?:经理|总监|主管|负责人|组长|老师|老板|工程师))"
    r"|^我是(?:一个|一名)?(?P<v>干|做|搞|写)了?(?:[一二两三四五六七八九十\d]+年)?(?P<w>[\u4e00-\u9fff]{2,6}?)"
    r"的(?:人)?$"
)
_EN_ROLE_RE = re.compile(
    r"\bI\s+work\s+as\s+(?:an?\s+)?(?P<r>[a-z][\w\-]*(?:\s+[a-z][\w\-]*){0,2}?)(?=\s*$|\s+(?:at|for"
    r"|in|on|with)\b)"
    r"|^I(?:'m|\s+am)\s+an?\s+(?P<r2>(?:[a-z][\w\-]*\s+)?(?:[a-z][\w\-]*(?:medic|nurse|chef|pilot"
    r"|surgeon|midwife|carpenter|plumber|welder|electrician|firefighter|paralegal|dentist|vet"
    r"|pharmacist|physio|barista|bartender|cashier|courier|driver|mechanic|farmer|baker"
    r"|butcher|tailor|janitor|cleaner|carer|caregiver|therapist|counsellor|counselor|teacher"
    r"|tutor|lecturer|translator|interpreter|paramedic|optician|radiographer|sonographer"
    r"|surveyor|solicitor|barrister|clerk|cook|coach|trainer)))$",
    re.I,
)


# -- reading a sentence ---------------------------------------------------------------------------
_EN_ME_RE = re.compile(r"\b(?:I|I'm|I've|me|my|we|we've|our)\b", re.I)
# "Being 27, …": a lead that says who the writer is.
_EN_BEING_RE = re.compile(r"^being\s+\w+$", re.I)
_EN_NOT_RE = re.compile(
    r"\b(?:not|never|don't|doesn't|didn't|no|without|used\s+to|if|would|could|might|should|will"
    r"|going\s+to|gonna|plan|planning|thinking|considering|want|wanna|hope|maybe|wish|whether"
    # what holds for a day or a trip: "I'm in Paris for a conference this week"
    r"|today|tonight|yesterday|tomorrow|this\s+(?:morning|afternoon|evening|week)|until|till"
    r"|for\s+(?:a|the)\s+(?:conference|trip|week|weekend|meeting|visit|holiday|wedding|funeral)"
    r"|on\s+(?:holiday|vacation|a\s+trip|business)|visiting)\b"
    r"|n't\b|'ll\b",
    re.I,
)


def _en_reads(text: str) -> Iterator[tuple[str, str, str, str]]:
    """(key, value, type, content) of what an English clause about the user states."""
    yield from _en_things(text)
    yield from _en_who(text)


def _en_things(text: str) -> Iterator[tuple[str, str, str, str]]:
    """How the user gets to work, a device, a routine, a condition."""
    mode = _en_commute(text)
    if mode:
        yield "commute", mode, "personal", f"User commutes: {text}"
    device, key = _device(text, zh=False)
    if device:
        yield key, device, "preference", f"User's {key}: {device}"
    activity, key = _routine(text, zh=False)
    if activity and not mode:
        yield key, activity, "personal", f"User's routine: {text}"
    condition = condition_of(text, zh=False)
    if condition:
        yield f"condition:{condition}", condition, "personal", f"User's health: {text}"


def _first(rxs: tuple[re.Pattern[str], ...], text: str) -> re.Match[str] | None:
    return next((m for rx in rxs if (m := rx.search(text))), None)


def _en_who(text: str) -> Iterator[tuple[str, str, str, str]]:
    """Children, a place, what the user studied, an age, a role."""
    if place := _place(text, zh=False):
        yield "city", place, "personal", f"User lives in {place}"
    value, key = where_i_am(text)
    if key == "city":
        yield key, value, "personal", f"User lives in {value}"
    elif key == "employer":
        yield key, value, "personal", f"User works at {value}"
    if m := _first(_EN_STUDIED_RES, text):
        yield "education", m.group("what"), "personal", f"User studied {m.group('what')}"
    if (m := _first(_EN_AGE_RES, text)) and 10 <= (age := _en_number(m.group("n"))) <= 110:
        yield "age", str(age), "personal", f"User is {age} years old"
    if m := _EN_ROLE_RE.search(text):
        role = m.group("r") or m.group("r2")
        yield "role", role, "personal", f"User works as {role}"


def en_life(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    """The first statements of an English sentence's clauses about the user (see the module)."""
    text = sentence.strip()
    if not text or is_question(text):
        return
    for clause in en_clauses(text.rstrip(".!")):
        own = (
            clause.subject in ("I", "we")
            or clause.subject == "none"
            and bool(_EN_ME_RE.search(clause.text) or _EN_BEING_RE.match(clause.text))
        )
        if not own or clause.label or clause.negated or _EN_NOT_RE.search(clause.text):
            continue
        for key, _value, type_, content in _en_reads(clause.text):
            importance = IMP_DEVICE if type_ == "preference" else _importance(key)
            yield ctx.mem(content, type_, importance, subject=key)


def _importance(key: str) -> int:
    return {"age": IMP_AGE, "role": IMP_ROLE, "family:children": IMP_FAMILY}.get(key, IMP_LIFE)


_ZH_NOT_RE = re.compile(
    r"(?<!不耐)不(?!耐受)|没|(?<![特分区级类告识])别|吗|呢|如果|假如|要是|万一|打算|准备|考虑|想|希望|可能|也许|计划|听说|据说"
    r"|以后|将来|下周|下个月|明年|帮|请|麻烦|你|曾经|以前|之前|原来|今天|昨天|明天|今早|刚才|出差"
)
# 我 after a lead of time ("周末我一般去游泳"): the user, said where the lead stays first.
_ZH_SELF_RE = re.compile(r"^(?P<lead>[^我，,]{0,4})我(?!们)")
_ZH_LEAD_RE = re.compile(r"^(?:平时|平常|一般|通常|现在|目前|如今)+")


def _zh_reads(text: str) -> Iterator[tuple[str, str, str, str]]:
    """(key, value, type, content) of what a Chinese clause about the user (with 我) states."""
    said = _ZH_SELF_RE.sub(r"\g<lead>", text, count=1)
    mode = _zh_commute(text)
    if mode:
        yield "commute", mode, "personal", f"用户{said}"
    device, key = _device(text, zh=True)
    if device and (_ZH_DEVICE_HEAD_RE.search(text) or key != "phone"):
        yield key, device, "preference", f"用户的{_ZH_KEY_NAMES[key]}：{device}"
    activity, key = _routine(text, zh=True)
    if activity and not mode:
        yield key, activity, "personal", f"用户{said}"
    condition = condition_of(text, zh=True)
    if condition:
        yield f"condition:{condition}", condition, "personal", f"用户{said}"
    yield from _zh_who(text, said)


def _zh_who(text: str, said: str) -> Iterator[tuple[str, str, str, str]]:
    """Children, a place, what the user studied, an age, a role."""
    if place := _place(text, zh=True):
        yield "city", place, "personal", f"用户住在{place}"
    if m := _first(_ZH_STUDIED_RES, text):
        yield "education", m.group("what"), "personal", f"用户学的是{m.group('what')}"
    if (m := _ZH_AGE_RE.search(text)) and 10 <= (age := cn_number(m.group("n"))) <= 110:
        yield "age", str(age), "personal", f"用户今年{age}岁"
    if (m := _ZH_OUR_ORG_RE.match(text)) and _zh_org(m.group("org")):
        yield "employer", m.group("org"), "personal", f"用户在{m.group('org')}工作"
    if m := _ZH_ROLE_RE.search(text):
        yield "role", m.group("r"), "personal", f"用户是{m.group('r')}"
    elif m := _ZH_ROLE_MORE_RE.search(text):
        role = m.group("r") or m.group("v") + m.group("w")
        yield "role", role, "personal", f"用户是{role}" + ("的" if m.group("w") else "")


_ZH_KEY_NAMES = {"phone": "手机", "computer": "电脑", "tablet": "平板"}


def zh_life(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    """The first statements of a Chinese sentence's clauses about the user (see the module)."""
    text = sentence.strip().rstrip("。！!；;")
    if not text or is_question(text):
        return
    texts = cut(text, zh=True)
    for clause in zh_clauses(texts, carried=ctx.session.spoke):
        if clause.subject not in ("I", "we") or _ZH_NOT_RE.search(clause.text):
            continue
        body = _ZH_LEAD_RE.sub("", clause.text)
        body = body if body.startswith("我") or _ZH_SELF_RE.match(body) else "我" + body
        for key, _value, type_, content in _zh_reads(body):
            importance = IMP_DEVICE if type_ == "preference" else _importance(key)
            yield ctx.mem(content, type_, importance, subject=key)


def life_value(clause: str, zh: bool) -> tuple[str, str]:
    """The value of a class of this module a clause names, and its key, or ("", ""): a commute
    or a routine only when a held one is changed (see `HELD_ONLY`)."""
    mode = _zh_commute(clause, bare=True) if zh else _en_commute(clause, bare=True)
    if mode:
        return mode, "commute"
    device, key = _device(clause, zh)
    if device:
        return device, key
    return ("", "") if zh else where_i_am(clause)


def routine_value(clause: str, zh: bool) -> tuple[str, str]:
    """A sport or routine a clause names, with its key, for a change of the one held
    ("switched to rowing", 现在改成夜跑了); read after every other class."""
    return _routine(clause, zh, again=False)


def held_only(key: str) -> bool:
    """Whether a new value of `key` counts only as a change of a value the session holds: a
    vehicle or a sport named alone says too little of a commute or a routine."""
    return key == "commute" or key.startswith("routine:")
