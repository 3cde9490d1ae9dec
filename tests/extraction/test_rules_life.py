"""First statements of the user's life read by structure: a first-person subject, a copular,
possessive or habitual predicate and a value of a known class — how they get to work, a device
they carry, a routine, a condition, children, a place, a degree, an age in words, a role in
Chinese. Each is keyed by its class, so a later value of the class supersedes it; someone else's,
a question, a negation or a plan gives none. A time or a degree is never a value: "since
Tuesday", "for two years", "really stressful", 最近, 很累.

The messages are made up for these tests, not taken from any extraction set.
"""

from __future__ import annotations

import pytest

from tests.extraction.session import extract


def _keys(text: str) -> dict[str, str]:
    return {m.subject: m.content for m in extract(text) if m.subject}


@pytest.mark.parametrize(
    ("text", "key", "word"),
    [
        # how the user gets to work
        ("I drive to work.", "commute", "drive"),
        ("I cycle to the office most days.", "commute", "cycle"),
        ("I take the train into work.", "commute", "train"),
        ("Most days I walk to work, it's twenty minutes.", "commute", "walk"),
        ("I get the bus to the office every morning.", "commute", "bus"),
        ("我开车上班。", "commute", "开车"),
        ("我每天坐地铁上班。", "commute", "地铁"),
        ("平时我骑电动车去公司。", "commute", "骑电动车"),
        ("我一般走路上班，十分钟。", "commute", "走路"),
        ("我每天坐公交去单位。", "commute", "公交"),
        # a device the user carries or works on
        ("I'm on a ThinkPad X1 Carbon.", "computer", "ThinkPad"),
        ("My daily driver is a Pixel 7.", "phone", "Pixel"),
        ("I carry an iPhone 13 mini.", "phone", "iPhone"),
        ("I do all my work on a MacBook Air.", "computer", "MacBook"),
        ("Work gave me a Galaxy S23.", "phone", "Galaxy"),
        ("我用的是华为 Mate 60。", "phone", "Mate"),
        ("我手机是小米 14。", "phone", "小米"),
        ("我的电脑是 ThinkPad T14。", "computer", "ThinkPad"),
        ("我平时用 MacBook Pro 写代码。", "computer", "MacBook"),
        ("我拿的是 iPhone 15。", "phone", "iPhone"),
        # a routine: an activity of the user's done over and over (sports share one key: one is
        # given up for another)
        ("I'm on call every other week.", "routine:on-call", "on call"),
        ("I go to the gym every morning before work.", "routine:exercise", "gym"),
        ("I swim three times a week.", "routine:exercise", "swim"),
        ("I do yoga on Tuesday and Thursday evenings.", "routine:exercise", "yoga"),
        ("Weekends I'm usually out bouldering.", "routine:exercise", "bouldering"),
        ("我下班常去攀岩馆。", "routine:exercise", "攀岩"),
        ("我每周二晚上踢球。", "routine:exercise", "踢球"),
        ("我周末一般去爬山。", "routine:exercise", "爬山"),
        ("我每隔一周要值一周班。", "routine:on-call", "值"),
        ("我每天早上跑五公里。", "routine:exercise", "跑"),
        # a condition of the body
        ("Gluten makes me properly ill.", "condition:gluten", "Gluten"),
        ("I have type 2 diabetes.", "condition:diabetes", "diabetes"),
        ("I've had asthma since I was a kid.", "condition:asthma", "asthma"),
        ("Shellfish gives me hives.", "condition:shellfish", "Shellfish"),
        ("I have coeliac disease.", "condition:coeliac", "coeliac"),
        ("我有高血压。", "condition:高血压", "高血压"),
        ("我乳糖不耐受。", "condition:乳糖", "乳糖"),
        ("我一吃海鲜就过敏。", "condition:海鲜", "海鲜"),
        ("我有轻度哮喘。", "condition:哮喘", "哮喘"),
        ("我是糖尿病患者。", "condition:糖尿病", "糖尿病"),
        # children
        ("I have two kids.", "family:children", "two kids"),
        ("We've got three kids under ten at home.", "family:children", "three kids"),
        ("I'm a dad of two.", "family:children", "dad of two"),
        ("我有两个孩子。", "family:children", "两个孩子"),
        ("我是两个孩子的妈妈。", "family:children", "两个孩子"),
        ("我家有三个娃。", "family:children", "三个娃"),
        # a place by a gazetteer of cities, after a verb of being somewhere
        ("I'm out in Halifax.", "city", "Halifax"),
        ("I'm in Kraków these days.", "city", "Kraków"),
        ("Home for me is Lisbon.", "city", "Lisbon"),
        ("I'm based in Rotterdam.", "city", "Rotterdam"),
        ("我现在一个人在大理。", "city", "大理"),
        ("我人在遵义。", "city", "遵义"),
        ("我在洛阳住。", "city", "洛阳"),
        # what the user studied
        ("I studied accounting.", "education", "accounting"),
        ("My degree is in economics.", "education", "economics"),
        ("I did a master's in statistics.", "education", "statistics"),
        ("我本科学的是会计。", "education", "会计"),
        ("我硕士读的是统计。", "education", "统计"),
        ("我大学学的计算机。", "education", "计算机"),
        # an age in words
        ("I'm fifty.", "age", "50"),
        ("I'm thirty-four.", "age", "34"),
        ("Being 27, I don't worry about pensions yet.", "age", "27"),
        ("我今年二十七。", "age", "27"),
        ("我快四十了。", "age", "40"),
        # a role said with 是
        ("我是护士。", "role", "护士"),
        ("我是一名产品经理。", "role", "产品经理"),
        ("我是做测试的。", "role", "测试"),
        ("I'm a paramedic.", "role", "paramedic"),
        ("I work as a welder.", "role", "welder"),
    ],
)
def test_a_first_statement_is_keyed_by_its_class(text: str, key: str, word: str) -> None:
    keys = _keys(text)
    assert key in keys, extract(text)
    assert word.casefold() in keys[key].casefold(), keys


@pytest.mark.parametrize(
    "text",
    [
        # someone else's, a question, a negation, a plan, a hypothetical
        "My husband drives to work.",
        "Should I take the train to work?",
        "I don't drive to work.",
        "I'm going to cycle to work from next week.",
        "我老公开车上班。",
        "我不开车上班。",
        "要不要坐地铁上班？",
        "My wife uses an iPhone.",
        "Is the Pixel 8 any good?",
        "I'm thinking about buying a MacBook Air.",
        "我老婆用华为。",
        "我不用 iPhone。",
        "My sister goes to the gym every morning.",
        "How often should I go to the gym?",
        "我老婆每周二晚上踢球。",
        "我不怎么去健身房。",
        "My brother has asthma.",
        "Does gluten make you sick?",
        "If I had diabetes, what would change?",
        "我妈有高血压。",
        "我没有糖尿病。",
        "My sister has two kids.",
        "Do you have kids?",
        "我同事有两个孩子。",
        "我没有孩子。",
        "I'm in a meeting.",
        "I'm in Slack all day.",
        "My sister lives in Halifax.",
        "我在开会。",
        "My daughter studied accounting.",
        "I studied the docs.",
        "我女儿学的是会计。",
        "I'm fifty minutes away.",
        "My son is fifty.",
        "我是说明天。",
        "我是不是太啰嗦了？",
        # a quality, a time: no value
        "My job is really stressful.",
        "My commute is pretty long.",
        "我的工作最近很累。",
        "我最近挺忙。",
        "我这周很累。",
    ],
)
def test_what_is_not_the_users_first_statement_gives_no_key(text: str) -> None:
    keys = _keys(text)
    assert not set(keys) & {
        "commute", "phone", "computer", "condition", "family:children", "city", "education",
        "age", "role",
    } and not [k for k in keys if k.startswith(("routine:", "condition:"))], keys  # fmt: skip


@pytest.mark.parametrize(
    ("first", "later", "old", "new"),
    [
        ("I drive to work.", "It's the tram to work every day now.", "drive", "tram"),
        ("I cycle to the office.", "These days I take the bus to the office.", "cycle", "bus"),
        ("我开车上班。", "现在改成坐地铁上班了。", "开车", "地铁"),
        ("我每天骑车上班。", "最近开始走路上班了。", "骑车", "走路"),
        ("My daily driver is a Galaxy S22.", "I'm on a Pixel 8 now.", "Galaxy", "Pixel"),
        ("I'm on a ThinkPad X1 Carbon.", "I've switched to a MacBook Pro.", "ThinkPad", "MacBook"),
        ("我手机是小米 14。", "手机现在换成 iPhone 15 了。", "小米", "iPhone"),
        ("我用的是华为 Mate 60。", "现在用 iPhone 16 了。", "Mate", "iPhone"),
        ("I'm out in Halifax.", "I've since moved to Lisbon.", "Halifax", "Lisbon"),
        ("我现在一个人在大理。", "现在搬到遵义了。", "大理", "遵义"),
    ],
)
def test_a_later_value_of_the_class_supersedes_the_first(
    first: str, later: str, old: str, new: str
) -> None:
    memories = extract(first, later)
    olds = [m for m in memories if m.source_turn_ids == ("t0",) and old in m.content]
    news = [m for m in memories if m.source_turn_ids == ("t1",) and new in m.content]
    assert olds and news, memories
    assert olds[-1].subject and olds[-1].subject == news[-1].subject, memories


@pytest.mark.parametrize(
    ("text", "key", "word", "not_word"),
    [
        # a time adverbial after the value is not the value
        ("fish has been my login shell since Tuesday.", "tool:shell", "fish", "Tuesday"),
        ("Zed has been my editor for two years.", "editor", "Zed", "years"),
        ("Helix is my editor these days.", "editor", "Helix", "days"),
        ("我的 shell 上周起换成 fish 了。", "tool:shell", "fish", "上周"),
        ("我最近用 Neovim 写代码。", "editor", "Neovim", "最近"),
    ],
)
def test_a_time_is_never_the_value(text: str, key: str, word: str, not_word: str) -> None:
    keys = _keys(text)
    assert key in keys, extract(text)
    assert word in keys[key] and not_word not in keys[key].replace(text, ""), keys


@pytest.mark.parametrize(
    ("text", "key", "word"),
    [
        # a name of the technology lexicon written in Chinese script
        ("现在数据库全是达梦。", "tool:database", "达梦"),
        ("我们的库用的是人大金仓。", "tool:database", "人大金仓"),
        ("我们生产库是达梦，测试库也是。", "tool:database", "达梦"),
    ],
)
def test_a_chinese_name_of_the_lexicon_is_looked_for(text: str, key: str, word: str) -> None:
    keys = _keys(text)
    assert key in keys and word in keys[key], extract(text)


@pytest.mark.parametrize(
    ("text", "key", "word"),
    [
        # a commute said with "in" for "into work"
        ("I drive in, it's about half an hour.", "commute", "drive"),
        ("Most days I cycle in along the river.", "commute", "cycle"),
        ("I usually walk in unless it's pouring.", "commute", "walk"),
        # a child named by the user's possessive, wherever it stands; how many
        ("My son's school sends everything as PDFs.", "kin:son", "son"),
        ("My daughter's swim lessons clash with standup.", "kin:daughter", "daughter"),
        ("With two kids under five at home I code after bedtime.", "family:children", "two kids"),
        ("女儿刚上幼儿园，早上得送她。", "kin:女儿", "女儿"),
        ("孩子刚上初中，我每天晚上陪写作业。", "kin:孩子", "孩子"),
        # a pet named beside its kind
        ("Our dog, Pretzel, ate my charger.", "pet", "Pretzel"),
        ("My cat Biscuit sleeps on the laptop.", "pet", "Biscuit"),
        ("家里那只橘猫叫团子。", "pet", "团子"),
        ("我家的狗叫旺财。", "pet", "旺财"),
        # an age said before "and …"
        ("I'm sixty and new to all this.", "age", "60"),
        ("I'm 45 and just learning to code.", "age", "45"),
        # the languages the user speaks, said as "my nth language"
        ("Spanish is my second language after Catalan.", "spoken-language", "Catalan"),
        ("French is my native language.", "spoken-language", "French"),
        # a part of the body that was operated on or hurt
        ("Ever since the back surgery I work standing up.", "condition:back", "back"),
        ("I had knee surgery last year, so no running.", "condition:knee", "knee"),
        ("我腰椎做过手术，久坐不行。", "condition:腰椎", "腰椎"),
        ("我膝盖有旧伤。", "condition:膝盖", "膝盖"),
        # fetching children as a routine
        ("I pick up my son from school at 3:30 every day.", "routine:school-run", "3:30"),
        ("我每天下午五点要去接。", "routine:school-run", "五点"),
        ("我每天早上八点送孩子上学。", "routine:school-run", "八点"),
        # a role after 我这个, a lead that says who the writer is without a comma
        ("我这个 CTO 还得兼职写前端。", "role", "CTO"),
        ("我这个项目经理天天开会。", "role", "项目经理"),
        ("As a longtime Emacs user I don't want a Vim answer.", "editor", "Emacs"),
        ("作为一个干了八年运维的人，我想转开发。", "role", "运维"),
        # a hometown one goes back to
        ("过年要回湖南衡阳老家。", "hometown", "衡阳"),
        ("国庆回四川老家。", "hometown", "四川"),
        # "X is where I live/work"
        ("Ottawa is where I live these days.", "city", "Ottawa"),
        ("The data team at Spotify is where I spend my days.", "employer", "Spotify"),
    ],
)
def test_a_first_statement_in_another_shape_is_keyed(text: str, key: str, word: str) -> None:
    keys = _keys(text)
    assert key in keys, extract(text)
    assert word.casefold() in keys[key].casefold(), keys


@pytest.mark.parametrize(
    "text",
    [
        "My sister's son plays football.",
        "Do your kids like Scratch?",
        "我同事的女儿在学钢琴。",
        "My neighbour's dog, Rex, barks all night.",
        "I'm sixty percent sure it's the cache.",
        "Python is my second language, after Go.",
        "My brother had knee surgery last year.",
        "我妈腰椎做过手术。",
        "My wife picks up the kids at 3:30 every day.",
        "我老婆每天下午五点去接孩子。",
        "As a matter of fact I asked about this yesterday.",
        "Berlin is where my sister lives.",
    ],
)
def test_someone_elses_or_no_such_statement_gives_no_key(text: str) -> None:
    keys = _keys(text)
    assert not {"family:children", "pet", "age", "spoken-language", "hometown", "city",
                "employer"} & set(keys), keys  # fmt: skip
    assert not [k for k in keys if k.startswith(("routine:", "condition:", "kin:"))], keys


@pytest.mark.parametrize(
    ("first", "later", "old", "new"),
    [
        # a commute changed without saying "to work"
        ("I drive in, about 25 minutes.", "Sold the car; it's the tram every day now.", "drive",
         "tram"),
        ("我开车上班。", "车卖了，现在坐地铁。", "开车", "地铁"),
        # one sport given up for another
        ("I go swimming three times a week.", "My shoulder said no, so I've switched to cycling.",
         "swimming", "cycling"),
        ("我每周去两次攀岩馆。", "攀岩馆关了，现在改成游泳了。", "攀岩", "游泳"),
        # a team or a role one was moved to
        ("I'm on the billing squad.", "I transferred to the identity squad last week.", "billing",
         "identity"),
        ("I'm a data analyst.", "They bumped me to analytics engineer this cycle.", "data analyst",
         "analytics engineer"),
        # a place said as "X is where I live"
        ("I live in Halifax.", "Ottawa is where I live these days.", "Halifax", "Ottawa"),
    ],
)  # fmt: skip
def test_a_change_in_another_shape_supersedes(first: str, later: str, old: str, new: str) -> None:
    memories = extract(first, later)
    olds = [m for m in memories if m.source_turn_ids == ("t0",) and old in m.content]
    news = [m for m in memories if m.source_turn_ids == ("t1",) and new in m.content]
    assert olds and news, memories
    assert olds[-1].subject and olds[-1].subject == news[-1].subject, memories


@pytest.mark.parametrize(
    ("first", "later"),
    [
        # a sport added, not one changed; someone else's
        ("I go swimming three times a week.", "I also do yoga on Sundays."),
        ("我每周去两次攀岩馆。", "我还每周踢一次球。"),
        ("I go swimming three times a week.", "My wife switched to cycling."),
        ("I drive to work.", "My husband takes the tram now."),
    ],
)
def test_what_adds_or_is_someone_elses_supersedes_nothing(first: str, later: str) -> None:
    memories = extract(first, later)
    keys = {m.subject for m in memories if m.source_turn_ids == ("t0",)} - {""}
    assert not [m for m in memories if m.source_turn_ids == ("t1",) and m.subject in keys]


@pytest.mark.parametrize(
    ("first", "later", "old", "new"),
    [
        # a deadline said with "is due" / "has to be done by", moved later
        ("The beta for Lantern is due on June 12.", "Lantern's beta slipped to June 26.",
         "06-12", "06-26"),
        ("The Orchard migration has to be done by March 3.",
         "March 3 is off, the Orchard cutover moved to March 17.", "03-03", "03-17"),
        ("Our tax filing is due April 30.", "The tax filing got pushed to May 15.", "04-30",
         "05-15"),
        # a bare version after an upgrade of the one held
        ("Our scripts all run on Python 3.8.", "We're on 3.12 now.", "3.8", "3.12"),
        ("脚本都跑在 Python 3.8 上。", "已经升到 3.12 了。", "3.8", "3.12"),
        # a commute changed with 通勤 before the mode
        ("我每天坐地铁上班。", "现在平时通勤骑车了。", "地铁", "骑车"),
        # an employer said as "我们X这边", then "来Y三个月了"
        ("我们华为这边流程特别多。", "来小米三个月了，流程少一半。", "华为", "小米"),
        ("我们公司是网易。", "入职米哈游快一个月了。", "网易", "米哈游"),
    ],
)  # fmt: skip
def test_a_later_value_in_more_shapes_supersedes(
    first: str, later: str, old: str, new: str
) -> None:
    memories = extract(first, later)
    olds = [m for m in memories if m.source_turn_ids == ("t0",) and old in m.content + m.due]
    news = [m for m in memories if m.source_turn_ids == ("t1",) and new in m.content + m.due]
    assert olds and news, memories
    assert olds[-1].subject and olds[-1].subject == news[-1].subject, memories


def test_a_move_of_another_event_keeps_the_deadline() -> None:
    memories = extract(
        "The beta for Lantern is due on June 12.", "My dentist visit moved to June 20."
    )
    keys = {m.subject for m in memories if m.source_turn_ids == ("t0",)} - {""}
    assert keys and not [m for m in memories if m.source_turn_ids == ("t1",) and m.subject in keys]


@pytest.mark.parametrize(
    ("text", "key", "word"),
    [
        # the languages the user speaks, with how well
        ("At home it's Tagalog and Cebuano, English is for work.", "spoken-language", "Tagalog"),
        ("我英语一般，日语还行。", "spoken-language", "日语"),
        ("我粤语说得很流利。", "spoken-language", "粤语"),
        # a result of a check-up
        ("体检查出来血脂有点高。", "condition:血脂", "血脂"),
        ("我血压偏高。", "condition:血压", "血压"),
        ("My cholesterol came back high at the last check-up.", "condition:cholesterol",
         "cholesterol"),
        # pets counted and named
        ("家里养了两只布偶猫，一只叫汤圆一只叫年糕。", "pets", "汤圆"),
        ("We have two cats, Miso and Tofu.", "pet", "Miso"),
        # a child the user looks after
        ("周末要陪女儿上钢琴课。", "kin:女儿", "女儿"),
        ("I take my son to swimming on Saturdays.", "kin:son", "son"),
        # what the user trained in, said with 出身
        ("我是学医出身的。", "education", "学医"),
        ("我是学会计出身。", "education", "会计"),
        # an employer said as 我们X这边 / 我们公司是X
        ("我们华为这边流程特别多。", "employer", "华为"),
        ("我们公司是网易。", "employer", "网易"),
    ],
)  # fmt: skip
def test_more_first_statements_are_keyed(text: str, key: str, word: str) -> None:
    keys = _keys(text)
    assert key in keys, extract(text)
    assert word.casefold() in keys[key].casefold(), keys


@pytest.mark.parametrize(
    "text",
    [
        "My sister's English is better than mine.",
        "我老婆日语还行。",
        "我妈血压偏高。",
        "My dad's cholesterol came back high.",
        "我同事家里养了两只猫。",
        "周末要陪客户吃饭。",
        "他是学医出身的。",
        "我们这边流程特别多。",
        "我们公司是做电商的。",
    ],
)
def test_no_such_first_statement_of_someone_else(text: str) -> None:
    keys = _keys(text)
    assert not {"spoken-language", "pet", "education", "employer"} & set(keys), keys
    assert not [k for k in keys if k.startswith(("condition:", "kin:"))], keys


@pytest.mark.parametrize(
    ("first", "later", "old", "new"),
    [
        # a spelling corrected: the held word closest to the new one
        ("I'm Marten, nice to meet you.", "Typo on my side: Maarten, with two a's.", "Marten",
         "Maarten"),
        ("My cat is called Mochi.", "Sorry, misspelled that, it's Mocchi.", "Mochi", "Mocchi"),
        # "I meant X" after "scratch that"
        ("Alacritty is the terminal I keep open.", "Scratch that, I meant kitty.", "Alacritty",
         "kitty"),
        ("My editor is Vim.", "Oops, I meant Helix.", "Vim", "Helix"),
        # a number corrected in Chinese numerals
        ("我二十六岁，刚工作三年。", "不对，应该是二十七，我老是记错。", "26", "27"),
        ("我今年三十一岁。", "说错了，是三十二。", "31", "32"),
        # "不是X，是Y" with the user's own earlier words
        ("我在支付中台组。", "不是支付中台，是清结算组，之前说的是我去年的组。", "支付中台",
         "清结算"),
    ],
)  # fmt: skip
def test_a_correction_in_more_shapes_supersedes(first: str, later: str, old: str, new: str) -> None:
    memories = extract(first, later)
    olds = [m for m in memories if m.source_turn_ids == ("t0",) and old in m.content]
    news = [m for m in memories if m.source_turn_ids == ("t1",) and new in m.content]
    assert olds and news, memories
    assert olds[-1].subject and olds[-1].subject == news[-1].subject, memories


@pytest.mark.parametrize(
    ("first", "later", "old", "new"),
    [
        # a sport changed keeps the held statement's type
        ("我下班常去攀岩馆。", "攀岩馆关了，现在改成夜跑了。", "攀岩", "夜跑"),
        # a device "got replaced by" another
        ("I test on my own Galaxy S22.", "The Galaxy got replaced by a Pixel 8 last week.",
         "Galaxy", "Pixel"),
        # CI "搬到" another service, after a first statement with a Latin head noun
        ("CI 用的是自己搭的 Jenkins。", "Jenkins 那台机器停了，CI 全搬到 GitLab CI 上了。", "Jenkins",
         "GitLab CI"),
        ("DB 用的是 MySQL。", "DB 已经搬到 PostgreSQL 上了。", "MySQL", "PostgreSQL"),
    ],
)  # fmt: skip
def test_a_change_keeps_its_kind(first: str, later: str, old: str, new: str) -> None:
    memories = extract(first, later)
    olds = [m for m in memories if m.source_turn_ids == ("t0",) and old in m.content]
    news = [m for m in memories if m.source_turn_ids == ("t1",) and new in m.content]
    assert olds and news, memories
    assert olds[-1].subject and olds[-1].subject == news[-1].subject, memories
    assert olds[-1].type == news[-1].type, memories


@pytest.mark.parametrize(
    ("text", "key", "word"),
    [
        # a name of the lexicon in Chinese script after a head noun of the setup
        ("数据库这块我们用的是达梦，国产化要求。", "tool:database", "达梦"),
        ("数据库我们用的是人大金仓。", "tool:database", "人大金仓"),
        # an editor of the lexicon
        ("Most days I'm in Qt Creator for the C++ work.", "editor", "Qt Creator"),
    ],
)
def test_a_setup_named_in_other_words_is_keyed(text: str, key: str, word: str) -> None:
    keys = _keys(text)
    assert key in keys and word in keys[key], extract(text)


def test_a_pet_at_home_is_read_before_a_question() -> None:
    said = extract("家里养了两只布偶猫，一只叫汤圆一只叫年糕，Mac 上怎么清理 Docker 占的磁盘？")
    assert [m for m in said if "汤圆" in m.content], said
    assert extract("家里网不好，Mac 上怎么清理 Docker 占的磁盘？") == []


@pytest.mark.parametrize(
    "text",
    [
        # a stay or a trip that does not last: no home, no commute
        "I'm in Paris for a conference this week, any tips for the metro?",
        "I'm in Berlin until Friday.",
        "我今天坐地铁去公司，路上看了本书。",
        "I drove to work today because of the rain.",
        "我明天开车上班。",
    ],
)
def test_what_holds_for_a_day_is_no_first_statement(text: str) -> None:
    assert not {"city", "commute"} & set(_keys(text)), extract(text)


@pytest.mark.parametrize(
    ("first", "later"),
    [
        # a city's name said as a person's or a product's is no new home
        ("I live in Leeds.", "I'm on Victoria's team."),
        ("I live in Leeds.", "I'm using Jackson for JSON in our services."),
        ("I live in Leeds.", "We ship the Mobile app every Friday."),
    ],
)
def test_a_city_name_not_said_as_a_place_keeps_the_home(first: str, later: str) -> None:
    memories = extract(first, later)
    assert not [m for m in memories if m.source_turn_ids == ("t1",) and m.subject == "city"]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        # a project named in apposition after what it is to the user
        ("The thing I'm building, Driftwood, is a self-hosted photo index.", "Driftwood"),
        ("The app we're making, Tallyho, tracks board game scores.", "Tallyho"),
        ("My side project, Lumen, is a tiny RSS reader.", "Lumen"),
        # 项目叫X
        ("我们这个项目叫“青鸟”，是个内部审批系统。", "青鸟"),
        ("我的小程序叫「早睡打卡」，用户不多。", "早睡打卡"),
    ],
)
def test_a_project_named_in_apposition(text: str, name: str) -> None:
    said = extract(text)
    assert [m for m in said if m.type == "project" and name in m.content], said


@pytest.mark.parametrize(
    "text",
    [
        "The thing my brother is building, Crumbs, is a recipe app.",
        "我同事的项目叫“蓝鲸”。",
        "What should the project be called?",
    ],
)
def test_someone_elses_project_is_not_the_users(text: str) -> None:
    assert not [m for m in extract(text) if m.type == "project"]
