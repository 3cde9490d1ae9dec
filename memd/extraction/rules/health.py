"""A condition of the user's body read by its structure: what it is or what sets it off.

"Gluten makes me properly ill", "I have type 2 diabetes", "I'm asthmatic", "Ever since the knee
surgery I …", "My cholesterol came back high", "我有高血压", "我乳糖不耐受", "我一吃海鲜就过敏",
"我腰椎做过手术", "体检查出来血脂有点高": `condition_of(clause, zh)` gives the thing (gluten,
diabetes, knee, 血脂) that keys the fact as `condition:<what>` — two conditions are two facts.
Whose clause it is, and whether it is stated at all, is for the caller (`life`) to judge.
"""

from __future__ import annotations

import re

# -- conditions -----------------------------------------------------------------------------------
_EN_CONDITIONS = (
    r"(?:type\s+[12]\s+)?diabetes|asthma|co?eliac(?:\s+disease)?|crohn'?s(?:\s+disease)?|ibs"
    r"|migraines|eczema|psoriasis|epilepsy|arthritis|hypertension|high\s+blood\s+pressure|gout"
    r"|sleep\s+apn(?:o)?ea|insomnia|anxiety|depression|tinnitus|lupus|endometriosis|pcos"
    r"|long\s+covid|hay\s+fever|a\s+bad\s+back|a\s+heart\s+condition|an?\s+\w+\s+allergy"
    r"|(?:a\s+)?(?:\w+\s+)?intolerance|chronic\s+fatigue|fibromyalgia|ulcerative\s+colitis"
)
_EN_ILL = (
    r"(?:sick|ill|unwell|poorly|bloated|nauseous|queasy|migraines?|headaches?|hives|a\s+rash"
    r"|rashes|stomach\s+aches?|cramps|break\s+out|itchy|wheezy)"
)
_PARTS = (
    r"knees?|back|hips?|shoulders?|wrists?|ankles?|neck|elbows?|spine|eyes?|heart|acl|hands?"
    r"|achilles|meniscus"
)
_EN_CONDITION_RES = (
    re.compile(
        r"^(?P<what>[A-Za-z][\w\-]*(?:\s+[\w\-]+)?)\s+(?:makes|make|gives|give|leaves|leave)\s+me"
        r"\s+(?:(?:really|properly|so|very|quite|pretty|badly|violently)\s+)?" + _EN_ILL + r"\b",
        re.I,
    ),
    re.compile(
        r"\bI(?:'ve|\s+have)?\s+(?:have|got|had|live\s+with|suffer\s+from|been\s+diagnosed\s+with"
        r"|was\s+diagnosed\s+with)\s+(?:(?:mild|severe|chronic|bad|really\s+bad)\s+)?"
        r"(?P<cond>" + _EN_CONDITIONS + r")\b",
        re.I,
    ),
    # a part of the body operated on or hurt: "Ever since the knee surgery I …"
    re.compile(
        r"\b(?:since|after)\s+(?:my|the)\s+(?P<part>" + _PARTS + r")\s+(?:surgery|operation|op"
        r"|injury|replacement)|\bI(?:'ve|\s+have)?\s+(?:had|hurt|injured|broke|tore|did|wrecked)\s+"
        r"(?:a\s+|an\s+|my\s+)?(?P<part2>" + _PARTS + r")(?:\s+(?:surgery|operation|injury"
        r"|replacement))?\b",
        re.I,
    ),
    re.compile(
        r"\bI(?:'m|\s+am)\s+(?:(?:a|type\s+[12]|also|mildly|severely)\s+)*(?P<adj>diabetic|asthmatic"
        r"|co?eliac|epileptic|anaemic|anemic|pre-?diabetic|gluten[- ]intolerant|hypertensive)\b",
        re.I,
    ),
)
_ZH_CONDITIONS = (
    r"高血压|糖尿病|哮喘|胃病|胃炎|颈椎病|腰椎间盘突出|腰间盘突出|偏头痛|抑郁症|焦虑症|湿疹|过敏性鼻炎|鼻炎"
    r"|痛风|失眠|心脏病|甲亢|甲减|贫血|乙肝|肠易激|痛经|腱鞘炎|干眼症|荨麻疹|癫痫|关节炎"
)
_ZH_CONDITION_RES = (
    re.compile(
        r"我(?:有|患有|得了|查出|查出了)(?:点|些|轻度|轻微的?|严重的?|慢性)?(?P<c>"
        + _ZH_CONDITIONS
        + ")"
    ),
    re.compile(r"我(?:是)?(?:一[个名])?(?P<c>" + _ZH_CONDITIONS + r")患者"),
    re.compile(r"我(?:也|还)?(?:有点|有些)?(?:对)?(?P<c>[\u4e00-\u9fff]{1,4}?)不耐受"),
    re.compile(r"我(?:也|还)?(?:对)?(?P<c>[\u4e00-\u9fff]{1,4}?)过敏"),
    re.compile(
        r"我一(?:吃|喝|碰|闻到?)(?P<c>[\u4e00-\u9fff]{1,4}?)就(?:会)?(?:过敏|拉肚子|不舒服|胃疼|头疼"
        r"|起疹子|难受|犯病|发作)"
    ),
    re.compile(
        r"我(?:的)?(?P<c>腰椎|腰|膝盖|颈椎|肩膀|手腕|脚踝|眼睛|心脏|胃|后背|脊椎)(?:做过|动过|开过|受过|有)"
        r"(?:手术|刀|伤|旧伤)|我(?:的)?(?P<c2>腰椎|腰|膝盖|颈椎|肩膀|手腕|脚踝)(?:不好|伤过|有旧伤)"
    ),
)
# "体检查出来血脂有点高", "我血压偏高", "My cholesterol came back high".
_ZH_CHECKUP_RE = re.compile(
    r"(?:体检)?(?:查出来?|发现)?(?P<c>血脂|血压|血糖|尿酸|胆固醇|转氨酶|甘油三酯)(?:有点|有些|偏|稍微|比较)?(?:高|低)"
)
_EN_CHECKUP_RE = re.compile(
    r"\bmy\s+(?P<c>cholesterol|blood\s+pressure|blood\s+sugar|iron|vitamin\s+d|thyroid)\s+"
    r"(?:came\s+back|is|was|runs|has\s+been)\s+(?:a\s+bit\s+|quite\s+|really\s+)?(?:high|low)",
    re.I,
)
_ZH_NOT_CONDITION_RE = re.compile(r"^(?:有点|有些|特别|很|比较|都|也|还|就)$")


def condition_of(text: str, zh: bool) -> str:
    """What a condition of the user's body is, or sets it off ("gluten", "diabetes", "乳糖")."""
    checkup = (_ZH_CHECKUP_RE if zh else _EN_CHECKUP_RE).search(text)
    if checkup is not None:
        return checkup.group("c").casefold().split()[0]
    for rx in _ZH_CONDITION_RES if zh else _EN_CONDITION_RES:
        m = rx.search(text)
        if m is None:
            continue
        what = next(g for g in m.groups() if g)
        if zh:
            return "" if _ZH_NOT_CONDITION_RE.match(what) else what
        return _condition_slug(what)
    return ""


def _condition_slug(what: str) -> str:
    words = re.sub(r"^(?:type\s+[12]\s+|an?\s+)", "", what.casefold()).split()
    word = words[0] if words else ""
    word = {"celiac": "coeliac", "diabetic": "diabetes", "asthmatic": "asthma",
            "epileptic": "epilepsy", "crohns": "crohn's"}.get(word, word)  # fmt: skip
    return word
