"""Chinese: who the user is (name, age, employer, role, city, hometown)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from memd.core.models import ExtractedMemory
from memd.extraction.rules.common import (
    CJK_RE,
    IMP_AGE,
    IMP_CITY,
    IMP_EMPLOYER,
    IMP_FAMILY,
    IMP_HOMETOWN,
    IMP_NAME,
    IMP_ROLE,
    ZH_NOT_ORG_RE,
    Ctx,
    clean,
)
from memd.extraction.rules.dates import cn_number
from memd.extraction.rules.places import is_place

_ZH_STOP = r"(?=$|[，,。.！!；;、\s])"
_ZH_NAME_RE = re.compile(
    r"(?:我(?:已经)?改?叫|改名[了啦]?[，,]?\s*(?:现在|以后)?叫|我的名字(?:是|叫)|我名字(?:是|叫)|(?:你)?(?:可以)?叫我|本人(?:名)?叫|\b(?i:I'm|I\s+am"
    r"|my\s+name\s+is)(?=\s*[\u3400-\u9fff]))\s*"
    r"(?P<name>[A-Za-z][A-Za-z .'\-]{0,30}[A-Za-z]|[A-Za-z]|[\u3400-\u9fff·]{1,8})"
)
# "本人小周，…": 本人 and a short name as the message's first clause.
_ZH_SELF_NAME_RE = re.compile(r"^本人(?P<name>[\u3400-\u9fff]{2,3})$")
_ZH_NAME_CUT_RE = re.compile(
    r"(?:今年|在|是|来自|住|目前|现在|我|的|了|啊|呀|哦|吧|就行|就好|，).*$"
)
_ZH_NOT_NAME_RE = re.compile(r"什么|啥|谁|哪|怎么|名字")


def zh_name(clause: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    m = _ZH_NAME_RE.search(clause) or _ZH_SELF_NAME_RE.match(clause.strip())
    if m is None:
        return
    name = m.group("name").strip()
    if CJK_RE.match(name):
        name = _ZH_NAME_CUT_RE.sub("", name)
        if not 1 <= len(name) <= 4 and "·" not in name:
            return
    if not name or _ZH_NOT_NAME_RE.search(name):
        return
    yield ctx.mem(f"用户的名字是{name}", "personal", IMP_NAME, subject="name")


_ZH_AGE_RE = re.compile(
    r"(?:我(?:今年|是|其实是|已经)?|今年)\s*(?P<age>\d{1,3}|[一二两三四五六七八九十]{1,3})\s*(?:周)?岁"
    # "我今年28，在深圳": a bare number after 今年 ends its clause.
    r"|(?:我)?今年(?:已经|刚)?\s*(?P<bare>\d{2}|[一二两三四五六七八九]?十[一二三四五六七八九]?)(?:了)?\s*$"
)


def zh_age(clause: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    m = _ZH_AGE_RE.search(clause)
    if m is None:
        return
    age = cn_number(m.group("age") or m.group("bare"))
    if 3 <= age <= 120:
        yield ctx.mem(f"用户今年{age}岁", "personal", IMP_AGE, subject="age")


_ROLE_ZH = (
    r"(?:工程师|程序员|开发者|开发|设计师|产品经理|经理|架构师|研究员|学生|研究生|博士生|本科生|老师|教师"
    r"|医生|律师|分析师|科学家|创始人|合伙人|总监|实习生|运营|测试|主管|负责人|专家|顾问|CTO|CEO|SRE|PM"
    r"|QA|DBA|DevOps|运维|前端|后端|全栈"
    # English titles in a Chinese sentence: "现在是 senior engineer 了"
    r"|(?i:engineer|developer|dev|programmer|designer|manager|architect|lead|intern|analyst"
    r"|scientist|consultant|researcher))"
)
_ZH_WORK_RE = re.compile(
    r"(?:^|我)(?:目前|现在|现|正|一直)?(?:在|于)\s*(?P<org>[^，,。！!；;\s]{2,20}?)\s*"
    r"(?:工作|上班|任职|就职|实习|供职|(?:做|当)\s*(?P<role1>[^，,。！!；;]{1,18})"
    r"|担任(?P<role2>[^，,。！!；;]{2,20}))"
)
_ZH_ROLE_RES = (
    # "我是做算法的", "我是搞前端的": a line of work.
    re.compile(r"我是(?P<role>(?:做|搞|干|写)[^，,。！!；;的]{1,10})的" + _ZH_STOP),
    re.compile(r"(?:担任|任职为|职位是|职务是|岗位是|我的工作是)(?P<role>[^，,。！!；;]{2,20})"),
    re.compile(
        r"我(?:现在|目前|如今|已经|也)*是(?:一?[名个位])?(?P<role>[^，,。！!；;是]{0,12}?"
        + _ROLE_ZH
        + r")"
        + _ZH_STOP
    ),
)


# Where one works named by its kind, not its name: "我在学校做实验" names no employer.
_ZH_PLAIN_PLACE_RE = re.compile(
    r"^(?:学校|大学|单位|医院|实验室|研究所|工地|办公室|宿舍|图书馆|外企|国企|银行|工厂|创业公司|小公司|大厂)$"
)


def _is_zh_place(text: str) -> bool:
    return is_place(text)


# "从阿里跳槽到腾讯做客户端开发", "上个月入职了字节".
_ZH_JOIN_RE = re.compile(
    r"(?:跳槽到了?|跳槽去了?|跳到了?|入职了?|加入了?|换到了?)(?P<org>[^，,。！!；;\s做当]{2,12}?)"
    r"(?:做(?P<role>[^，,。！!；;]{1,12})|当(?P<role2>[^，,。！!；;]{1,12})|工作|上班|了|$)"
)
# "做客户端开发", "当CTO", "做 SRE": a line of work, or a title after 做/当.
_ZH_DO_ROLE_RE = re.compile(
    r"(?:^|我|在)[^，,。]{0,12}?(?:做|当|干)(?P<role>[^，,。！!；;的]{0,8}?(?:开发|设计|运维|测试|产品"
    r"|研究|算法|前端|后端|运营|销售|咨询|" + _ROLE_ZH + r"))" + _ZH_STOP
)


# "我在读研", "我现在读博": studying is the user's occupation (a role a graduation ends).
_ZH_STUDYING_RE = re.compile(
    r"^我(?:现在|目前|还)?(?:在)?(?P<what>读研究生|读研|读博士?|读本科|读大学|上大学|读大[一二三四])"
)


_SINCE_RE = re.compile(
    r"(?:快|近|将近|差不多|刚)?[一二两三四五六七八九十半几\d]+个?多?(?:天|周|星期|礼拜|月|年)多?$"
)


def zh_work(clause: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    org = role = ""
    jm = _ZH_JOIN_RE.search(clause)
    if (
        jm is not None
        and not _is_zh_place(jm.group("org"))
        and not ZH_NOT_ORG_RE.search(jm.group("org"))
    ):
        # "入职米哈游快一个月了": the time since is no part of the name
        org = _SINCE_RE.sub("", jm.group("org")) or jm.group("org")
        role = clean(jm.group("role") or jm.group("role2") or "")
    m = None if org else _ZH_WORK_RE.search(clause)
    if m:
        candidate = m.group("org")
        if _is_zh_place(candidate):
            yield ctx.mem(f"用户在{candidate}工作", "personal", IMP_CITY, subject="city")
        elif not (
            re.search(r"家|这|那|公司$", candidate)
            or _ZH_PLAIN_PLACE_RE.match(candidate)
            or ZH_NOT_ORG_RE.search(candidate)
        ):
            org = candidate
        role = clean(m.group("role1") or m.group("role2") or "")
        if m.group("role1") and not re.search(_ROLE_ZH + "$", role):
            role = "做" + role  # "我在字节跳动做推荐算法": a line of work, not a title
    if not role:
        for rx in (*_ZH_ROLE_RES, _ZH_DO_ROLE_RE):
            rm = rx.search(clause)
            if rm:
                role = clean(rm.group("role"))
                break
    if not org and not role and (st := _ZH_STUDYING_RE.search(clause)) is not None:
        role = f"学生（{st.group('what')}）"
    if org:
        yield ctx.mem(f"用户在{org}工作", "personal", IMP_EMPLOYER, subject="employer")
    if role[:1] in ("做", "搞", "干", "写"):
        yield ctx.mem(f"用户是{role}的", "personal", IMP_ROLE, subject="role")
    elif role:
        yield ctx.mem(f"用户担任{role}", "personal", IMP_ROLE, subject="role")


_ZH_LIVE_RE = re.compile(
    r"我(?:现在|目前|一直|去年|今年|前年|上个月|这个月|上周|最近|刚刚?|已经|前几天|年初|年底)*"
    r"(?:住在|生活在|定居在|居住在|常驻|搬到了?|搬去了?|搬回了?)\s*(?P<place>[^，,。！!；;\s]{2,15})"
)
_ZH_IN_PLACE_RE = re.compile(
    # "我 base 在新加坡": the English word as Chinese speakers use it.
    r"我(?:现在|目前|人)?\s*(?i:base\s*)?在(?P<place>[^，,。！!；;\s]{2,6}?)(?:生活|定居)?$"
)
# "我在杭州一家做电商的公司写后端": the place of a workplace.
_ZH_PLACE_OF_WORK_RE = re.compile(
    r"我(?:现在|目前)?在(?P<place>[\u3400-\u9fff]{2,5}?)(?:的)?(?:一家|一个|某家?|这边|那边)"
)
_ZH_FROM_RE = re.compile(
    # "我是成都人", "老家在襄阳", "不过家在苏州": where the user is from, where home is.
    r"(?:^(?:不过|但是?|可是|而|其实)?|我)(?:是|来自|(?P<home>老?家(?:是|在)))(?P<place>[^，,。！!；;\s]{2,10}?)(?:人|的)?$"
    # "本人小周，南京人": a place and 人 as a clause of its own
    r"|^我?(?P<place2>[\u3400-\u9fff]{2,6}?)人$"
)
_ZH_PLACE_TRIM_RE = re.compile(r"(?:了|的|啦|呀|工作|生活|上班)$")


def zh_location(clause: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    m = _ZH_LIVE_RE.search(clause)
    place = _ZH_PLACE_TRIM_RE.sub("", m.group("place")) if m else ""
    if not place:
        m2 = _ZH_IN_PLACE_RE.search(clause) or _ZH_PLACE_OF_WORK_RE.search(clause)
        if m2 and _is_zh_place(m2.group("place")):
            place = m2.group("place")
    if place:
        yield ctx.mem(f"用户住在{place}", "personal", IMP_CITY, subject="city")
    m3 = _ZH_FROM_RE.search(clause)
    if m3 is None:
        return
    if m3.group("place2"):
        if _is_zh_place(m3.group("place2")):
            yield ctx.mem(f"用户来自{m3.group('place2')}", "personal", IMP_HOMETOWN,
                          subject="hometown")  # fmt: skip
        return
    said = m3.group(0)
    # "我是成都人" names a hometown; "我是X" alone is usually a role.
    home = m3.group("home") or ""
    if not home and not said.startswith("我"):
        return  # "是X人" without 我 is anyone's
    if home == "家在" and _is_zh_place(m3.group("place")):
        yield ctx.mem(f"用户家在{m3.group('place')}", "personal", IMP_HOMETOWN, subject="hometown")
    elif (
        "来自" in said
        or home.startswith("老")
        or (said.endswith("人") and _is_zh_place(m3.group("place")))
    ):
        yield ctx.mem(f"用户来自{m3.group('place')}", "personal", IMP_HOMETOWN, subject="hometown")


_ZH_FAMILY_RE = re.compile(
    r"^(?:我|我家)(?P<who>老婆|妻子|太太|爱人|老公|丈夫|先生|女朋友|男朋友|对象|女儿|儿子|孩子|宝宝"
    r"|小孩|爸爸|妈妈|父母|爸妈)(?P<rest>(?:刚|刚刚|已经|也|今年|下个月|明年)?[^说问让叫觉想].+)$"
)


# Where a relation works or lives, what they do or use or think: their facts, not the user's.
_ZH_THEIRS_RE = re.compile(
    r"^(?:也|现在|目前|一直|还|最近|刚|刚刚|已经|去年|今年|上个?月|这个?月)*(?:在[^，,。]{1,12}(?:上班|工作|实习|任职|做|当|干)|在[^，,。]{2,8}$"
    r"|是[^，,。]{0,10}"
    + _ROLE_ZH
    + r"|是做|做|当|用|使用|说|觉得|认为|喜欢|讨厌|住在|住|搬到|在学"
    # their diet, their move, their job: "我女朋友最近开始吃素了", "我爸退休了"
    + r"|(?:开始|又|也)?(?:吃素|吃全素|不吃|戒|只吃)|搬|回老家|去了|跳槽|换工作|换了工作|辞职|离职"
    + r"|退休|升职|入职|转行|改用|换成|换到|迁到|从[^，,。]{1,12}(?:跳槽|换|搬|转|调|离职))"
)


def zh_family(clause: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    """What the user says of their family ("我老婆怀孕了", "我女儿刚上幼儿园") — not a
    relation's own job, home, tools or opinions ("我女朋友在腾讯上班")."""
    m = _ZH_FAMILY_RE.match(clause.strip())
    if m is None or len(m.group("rest")) < 2 or _ZH_THEIRS_RE.match(m.group("rest")):
        return
    yield ctx.mem(f"用户的{m.group('who')}{clean(m.group('rest'))}", "personal", IMP_FAMILY)
