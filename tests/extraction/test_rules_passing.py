"""Statements said in passing, in shapes the other readers do not take: a project's name, a native
language said with the language first, years at a line of work. Not in a question, a hypothesis or
about someone else; a project's name is not a file's, a function's or a variable's.

The messages are made up for these tests, not taken from any extraction set.
"""

from __future__ import annotations

import pytest

from tests.extraction.session import extract


@pytest.mark.parametrize(
    ("text", "type_", "word"),
    [
        # a project's name
        (
            "The app is called Lantern, a habit tracker for my kids. How do I add a widget?",
            "project",
            "Lantern",
        ),
        ("Our internal tool is named Ledgerly; it reconciles invoices.", "project", "Ledgerly"),
        ("We named the service Osprey after the old one got retired.", "project", "Osprey"),
        ("So the game is called Moth Lamp, it's a tiny platformer.", "project", "Moth Lamp"),
        ("My side project is called Pebble, a note app.", "project", "Pebble"),
        (
            "The project I'm on is called Meridian, a search UI for contracts.",
            "project",
            "Meridian",
        ),
        ("The app we're building is called Tally.", "project", "Tally"),
        ("项目代号叫「青松」，是个内部报销系统。", "project", "青松"),
        ("工具名叫「灯塔」，用来巡检机器。", "project", "灯塔"),
        ("给学校做的选课系统「白杨」下周上线，帮我列个检查清单。", "project", "白杨"),
        ("这个小程序叫「小满」，给社区团购用的。", "project", "小满"),
        ("平台的名字是“鲸落”，做日志分析。", "project", "鲸落"),
        # a native language said with the language first
        ("日语是我的母语，帮我把这段改成敬语。", "personal", "日语"),
        ("闽南话是我母语，所以普通话有口音。", "personal", "闽南话"),
        ("粤语是我的母语。", "personal", "粤语"),
        ("客家话是我的母语，但我很少说了。", "personal", "客家话"),
        ("韩语是我的母语，英语是后来学的。", "personal", "韩语"),
        # years at a line of work
        ("干前端八年了，CSS 的基础不用讲。", "personal", "前端"),
        ("做运维五年了，脚本不用解释太细。", "personal", "运维"),
        ("搞算法三年多了，推导可以跳过。", "personal", "算法"),
        (
            "I've been doing embedded work for ten years, so skip the register basics.",
            "personal",
            "embedded",
        ),
        ("I have been working in fintech for six years.", "personal", "fintech"),
    ],
)
def test_a_statement_said_in_passing_is_kept(text: str, type_: str, word: str) -> None:
    memories = extract(text)
    assert any(m.type == type_ and word in m.content for m in memories), memories


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("The function is called parseDate, can you rename it?", "parseDate"),
        ("What's the app called again?", "called"),
        ("My friend's app is called Lantern.", "Lantern"),
        ("If the tool is called Hearth, will the trademark clash?", "Hearth"),
        ("The file is called config.yaml.", "config"),
        ("我同事干前端八年了。", "前端"),
        ("我朋友的项目叫「青松」。", "青松"),
        ("项目叫「青松」吗？", "青松"),
        ("英语是他的母语。", "英语"),
        ("如果干运维五年了，还要学什么？", "运维"),
    ],
)
def test_no_statement_from_a_question_someone_else_or_a_name_of_code(text: str, word: str) -> None:
    memories = extract(text)
    assert not any(word in m.content for m in memories if m.type in ("project", "personal")), (
        memories
    )


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("As tech lead I sign off every release, and it's a lot.", "tech lead"),
        ("As the only backend developer here, I own the whole API.", "backend developer"),
        ("As the sole maintainer I triage every issue myself.", "maintainer"),
        ("As the on-call engineer, I get paged at night.", "on-call engineer"),
        ("As team lead on payments I run the standups.", "team lead"),
    ],
)
def test_a_role_said_as_a_lead_is_kept(text: str, word: str) -> None:
    memories = extract(text)
    assert any(m.type == "personal" and word in m.content for m in memories), memories


@pytest.mark.parametrize(
    "text",
    [
        "As the docs say, the cache is per process.",
        "As the lead said, we freeze on Friday.",
        "As expected, the build failed again.",
    ],
)
def test_as_without_a_role_of_the_user_is_no_role(text: str) -> None:
    memories = extract(text)
    assert not any(m.subject == "role" for m in memories), memories


@pytest.mark.parametrize(
    ("text", "word"),
    [
        # "Being X, …": what the writer is
        ("Being vegan, I need the planner to skip dairy too.", "vegan"),
        ("Being diabetic myself, I track every carb.", "diabetic"),
        ("Being vegetarian, I skip the meat recipes.", "vegetarian"),
        # what the user is saving for
        ("I'm saving for a deposit on a house, so every expense goes in a sheet.", "deposit"),
        ("I am saving up for a new bike, which is why I'm counting pennies.", "bike"),
        ("我在攒钱买房，记账脚本帮我加个按月汇总。", "买房"),
        ("最近在攒钱换车，开销都记着。", "换车"),
        ("一直在攒钱出国读书。", "出国"),
        # a business the user runs
        ("I run a small bakery on weekends alongside the day job.", "bakery"),
        ("I also own a food truck, so weekends are busy.", "food truck"),
        ("I run a podcast about databases.", "podcast"),
        # a trip to a known place
        ("I'll be in Lisbon for a conference next week, so replies will lag.", "Lisbon"),
        ("I will be in Toronto from Monday to Thursday.", "Toronto"),
        ("下个月去东京出差一周，消息可能回得慢。", "东京"),
        ("下周去成都开会，帮我把脚本先写完。", "成都"),
        ("月底到上海培训三天。", "上海"),
        # a native language said after 母语
        ("我母语是藏语，汉语是后来学的。", "藏语"),
        ("我的母语是壮语。", "壮语"),
    ],
)
def test_a_life_statement_said_in_passing_is_kept(text: str, word: str) -> None:
    memories = extract(text)
    assert any(m.type == "personal" and word in m.content for m in memories), memories


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("Being honest, the build is a mess.", "honest"),
        ("My sister is saving for a deposit.", "deposit"),
        ("Should I be saving for a house?", "house"),
        ("My dad runs a small bakery.", "bakery"),
        ("If I run a podcast, what mic should I get?", "podcast"),
        ("I'll be in touch next week.", "touch"),
        ("我同事下周去成都出差。", "成都"),
        ("如果去东京出差，要带什么？", "东京"),
        ("我妈在攒钱买房。", "买房"),
    ],
)
def test_no_life_statement_from_someone_else_a_question_or_a_phrase(text: str, word: str) -> None:
    memories = extract(text)
    assert not any(m.type == "personal" and word in m.content for m in memories), memories


@pytest.mark.parametrize(
    ("text", "word"),
    [
        # how the assistant is to answer, said without naming answers
        ("One-liners are plenty for me.", "One-liners"),
        ("You can be blunt with me, skip the small talk.", "blunt"),
        ("Feel free to be direct with me.", "direct"),
        ("Be patient with me, I'm new to Rust.", "patient"),
        ("Be gentle with me today.", "gentle"),
        ("解释得越详细越好，我是新手。", "详细"),
        ("讲得简洁点就行。", "简洁"),
    ],
)
def test_a_first_statement_of_how_to_answer_me_is_kept(text: str, word: str) -> None:
    memories = extract(text)
    assert any(m.type == "preference" and word in m.content for m in memories), memories


@pytest.mark.parametrize(
    "text",
    [
        "This is a long story for me.",
        "The meeting was long for me.",
        "The film felt harsh to me.",
        "My manager is very direct with me.",
    ],
)
def test_a_length_or_tone_word_about_something_else_is_no_answer_style(text: str) -> None:
    memories = extract(text)
    assert not any(m.subject.startswith("style:") for m in memories), memories


@pytest.mark.parametrize(
    ("text", "word"),
    [
        # a project named before the thing it is
        ("业余在折腾一个叫「潮汐表」的海钓查询网站。", "潮汐表"),
        ("我一个人在做一款叫「小满」的记账 App。", "小满"),
    ],
)
def test_a_project_named_before_the_thing_is_kept(text: str, word: str) -> None:
    memories = extract(text)
    assert any(m.type == "project" and word in m.content for m in memories), memories


@pytest.mark.parametrize(
    ("text", "word"),
    [
        # studies under way
        ("我在读在职研究生，周末要上课。", "研究生"),
        ("正在读博士，论文压力很大。", "博士"),
        ("I'm doing a part-time master's in the evenings.", "master's"),
        ("I am finishing my PhD this year.", "PhD"),
        ("I'm taking a bootcamp on weekends.", "bootcamp"),
        # a life event just past
        ("刚领证，下个月要请婚假。", "领证"),
        ("上个月刚生了二胎，睡眠严重不足。", "二胎"),
        ("My wife and I just had our first baby, so replies may be slow.", "baby"),
        ("We just got married, so I'm off next week.", "married"),
        ("Oh, and I just became a dad.", "dad"),
    ],
)
def test_studies_and_life_events_are_kept(text: str, word: str) -> None:
    memories = extract(text)
    assert any(m.type == "personal" and word in m.content for m in memories), memories


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("我同事刚领证。", "领证"),
        ("如果在读研究生，能实习吗？", "研究生"),
        ("Should I do a master's?", "master's"),
        ("My sister just got married.", "User got married"),
        ("我朋友在读博士。", "博士"),
        ("我爸今年六十五了，刚退休。", "退休"),
    ],
)
def test_no_study_or_event_of_someone_else_or_asked(text: str, word: str) -> None:
    memories = extract(text)
    assert not any(m.type == "personal" and word in m.content for m in memories), memories
