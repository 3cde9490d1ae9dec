"""One key per subject: a first statement and its later change land on the same key whatever the
verb of each, because the later turn says it changes something (now, no longer, instead, switched,
换成, 改, 不再, 停了 …) and its new value is of the class of the earlier one, or the turn leaves the
earlier value behind by name. Someone else's change, a question, a hypothetical or a plan links
nothing.

The messages are made up for these tests, not taken from any extraction set.
"""

from __future__ import annotations

import pytest

from tests.extraction.session import extract


def _linked(first: str, later: str, old: str, new: str) -> None:
    memories = extract(first, later)
    olds = [m for m in memories if m.source_turn_ids == ("t0",) and old in m.content]
    news = [m for m in memories if m.source_turn_ids == ("t1",) and new in m.content]
    assert olds and news, memories
    assert olds[-1].subject, memories
    assert olds[-1].subject in {m.subject for m in news}, memories


@pytest.mark.parametrize(
    ("first", "later", "old", "new"),
    [
        # a team: "I'm on the X team" → "moved to the Y squad"
        (
            "I'm on the payments team, mostly webhooks.",
            "Reorg: I'm on the search team now.",
            "payments",
            "search",
        ),
        (
            "I work on the mobile squad.",
            "They moved me to the platform squad last week.",
            "mobile",
            "platform",
        ),
        (
            "I'm in the data platform team.",
            "I joined the billing team this month.",
            "data platform",
            "billing",
        ),
        ("我在支付组写后端。", "组织调整，我现在调到了搜索组。", "支付组", "搜索组"),
        ("我在增长团队做实验平台。", "上周转到了风控团队。", "增长团队", "风控团队"),
        # the leaving clause is no new value; the new one comes after it
        (
            "I run three mornings a week.",
            "The injury ended the running; I swim laps at lunch instead.",
            "run",
            "swim",
        ),
        ("我每周跑步三次。", "膝盖伤了，跑步停了，现在每天游泳。", "跑步", "游泳"),
        # a clause of the turn that is a plan does not stop the change beside it
        ("跟我说话用中文。", "从今天起请全部用日语回复，我在准备日语考试。", "中文", "日语"),
        ("回答控制在三五行以内就好。", "三五行太少了，以后可以写详细点。", "三五行", "详细"),
        (
            "Reply in English, please.",
            "From now on answer in Polish; I'm planning to move to Krakow.",
            "English",
            "Polish",
        ),
    ],
)
def test_a_change_of_team_or_after_a_leaving_clause_lands_on_the_first_key(
    first: str, later: str, old: str, new: str
) -> None:
    _linked(first, later, old, new)


@pytest.mark.parametrize(
    ("text", "old", "new", "kind"),
    [
        # a tool the user sets up (an editor, a terminal) left behind by name: a preference
        ("我现在写代码都开 Cursor，PyCharm 已经卸了。", "PyCharm", "Cursor", "preference"),
        (
            "I write everything in Zed now; Sublime Text is uninstalled.",
            "Sublime",
            "Zed",
            "preference",
        ),
        ("I manage Node with fnm now; nvm is uninstalled.", "nvm", "fnm", "skill"),
    ],
)
def test_a_left_tool_keeps_the_type_of_its_kind(text: str, old: str, new: str, kind: str) -> None:
    memories = extract(text)
    olds = [m for m in memories if old in m.content and new not in m.content]
    news = [m for m in memories if new in m.content]
    assert olds and news and olds[0].subject == news[-1].subject, memories
    assert news[-1].type == kind, memories


@pytest.mark.parametrize(
    ("first", "later", "old", "new"),
    [
        # a programming language: "most of my code is X" → "these days I mostly write Y"
        (
            "Most of what I write at work is Kotlin.",
            "After the reorg I mostly write Go; Kotlin is behind me.",
            "Kotlin",
            "Go",
        ),
        (
            "My main language is Ruby.",
            "I haven't touched Ruby in months, it's all Python at work now.",
            "Ruby",
            "Python",
        ),
        ("Day to day I code in C#.", "These days I mostly write Rust instead.", "C#", "Rust"),
        ("我平时主要写 Java。", "现在天天写 Go，Java 基本不碰了。", "Java", "Go"),
        (
            "工作里写得最多的是 Ruby。",
            "组里改用 Elixir 了，我现在主要写 Elixir。",
            "Ruby",
            "Elixir",
        ),
        ("我主要用 C++ 写东西。", "后来换成 Rust 了，C++ 很少写了。", "C++", "Rust"),
        # a tool of a kind: the editor, a terminal, a version manager, a cache
        (
            "For Python I use PyCharm.",
            "I write everything in Cursor now; PyCharm is uninstalled.",
            "PyCharm",
            "Cursor",
        ),
        (
            "I manage Node versions with nvm.",
            "Locally I've moved to fnm, nvm was too slow.",
            "nvm",
            "fnm",
        ),
        (
            "写 Python 我用 PyCharm。",
            "我现在写代码都开 Cursor，PyCharm 已经卸了。",
            "PyCharm",
            "Cursor",
        ),
        ("我用 nvm 管理 Node 版本。", "另外本地已经换成 fnm 了。", "nvm", "fnm"),
        (
            "缓存放在 Redis 里。",
            "现在缓存改用 Memcached 了，Redis 已经下线。",
            "Redis",
            "Memcached",
        ),
        # a place: "I live in X" → "moved to Y" / "home is Y now"
        (
            "I live in Leeds.",
            "Quick update: I left Leeds in May, home is York now.",
            "Leeds",
            "York",
        ),
        ("I'm based in Porto.", "I relocated to Lisbon last month.", "Porto", "Lisbon"),
        ("我住在成都。", "上个月搬到重庆了。", "成都", "重庆"),
        ("我在杭州工作。", "现在人在苏州，杭州那边的房子退了。", "杭州", "苏州"),
        ("我老家在长沙，现在住在武汉。", "今年搬到了南京。", "武汉", "南京"),
        # an employer
        (
            "I'm one of four engineers at Basecamp.",
            "Week two at Shopify and I already miss Basecamp.",
            "Basecamp",
            "Shopify",
        ),
        (
            "My employer is Atlassian.",
            "I left Atlassian; I'm with Canva now.",
            "Atlassian",
            "Canva",
        ),
        ("我在美团做后端。", "上个月从美团离职了，现在在京东。", "美团", "京东"),
        ("我在百度上班。", "跳槽了，现在在网易。", "百度", "网易"),
        # a sport or a routine
        (
            "I swim three mornings a week.",
            "A shoulder injury ended the swimming; I cycle at lunch instead.",
            "swim",
            "cycl",
        ),
        (
            "I play tennis every Sunday.",
            "Gave up tennis, I'm into climbing now.",
            "tennis",
            "climbing",
        ),
        ("业余时间在学钢琴，每周一节课。", "钢琴放弃了，改学小提琴了。", "钢琴", "小提琴"),
        ("我每周跑步三次。", "跑步停了，现在改成游泳了。", "跑步", "游泳"),
        ("我在练瑜伽。", "瑜伽不练了，现在每天打羽毛球。", "瑜伽", "羽毛球"),
        # a diet
        (
            "I'm vegetarian, so no meat please.",
            "I've gone vegan since March; no dairy either now.",
            "vegetarian",
            "vegan",
        ),
        ("I'm pescatarian.", "It's been vegan only since June.", "pescatarian", "vegan"),
        ("我在做生酮饮食。", "生酮停了，现在改成轻断食。", "生酮", "轻断食"),
        ("我吃素。", "现在不吃素了，改成地中海饮食。", "吃素", "地中海"),
        (
            "I do intermittent fasting.",
            "I stopped intermittent fasting; I'm on keto now.",
            "intermittent fasting",
            "keto",
        ),
    ],
)
def test_a_change_lands_on_the_key_of_the_first_statement(
    first: str, later: str, old: str, new: str
) -> None:
    _linked(first, later, old, new)


@pytest.mark.parametrize(
    ("first", "later", "old", "new"),
    [
        # how answers are given: their language, their length, their form
        (
            "English replies are fine by me.",
            "Actually, I'd rather you answer in German from now on.",
            "English",
            "German",
        ),
        (
            "Reply in French please.",
            "Switch to Spanish for replies now, I'm practising.",
            "French",
            "Spanish",
        ),
        ("跟我说话用中文。", "从今天起请全部用英语回复。", "中文", "英语"),
        ("回答用英文就行。", "以后改成用中文回答吧。", "英文", "中文"),
        ("用日语回复我。", "不用日语了，换成韩语回复。", "日语", "韩语"),
        (
            "Please write answers as prose rather than lists.",
            "Actually no, bullet points work better for me.",
            "prose",
            "bullet",
        ),
        (
            "Keep answers to two or three lines.",
            "I take that back: go long and walk me through the reasoning.",
            "lines",
            "reasoning",
        ),
        ("回答控制在三五行以内。", "三五行太少了，以后写详细点。", "三五行", "详细"),
        ("回答尽量简短。", "改一下，回答写详细一点，把原理讲清楚。", "简短", "详细"),
        (
            "Keep answers short.",
            "On second thought, give me detailed answers.",
            "short",
            "detailed",
        ),
    ],
)
def test_a_change_of_how_to_answer_lands_on_its_key(
    first: str, later: str, old: str, new: str
) -> None:
    _linked(first, later, old, new)


@pytest.mark.parametrize(
    ("first", "later"),
    [
        # someone else's change, a question, a hypothetical, a plan, a comparison
        ("Most of what I write at work is Kotlin.", "My teammate mostly writes Go now."),
        ("I live in Leeds.", "My sister moved to York last month."),
        ("I live in Leeds.", "Should I move to York?"),
        ("I'm pescatarian.", "If I went vegan, what would I miss?"),
        ("I play tennis every Sunday.", "I might take up climbing next year."),
        ("我在美团做后端。", "我同事上个月从美团离职了，现在在京东。"),
        ("我住在成都。", "要是搬到重庆会怎样？"),
        ("我平时主要写 Java。", "Go 现在流行吗？"),
        ("业余时间在学钢琴。", "我女儿钢琴放弃了，改学小提琴了。"),
        ("跟我说话用中文。", "打算以后学学英语。"),
        ("I'm on the payments team.", "My brother is on the search team now."),
        ("我在支付组写后端。", "我同事现在调到了搜索组。"),
    ],
)
def test_what_is_not_the_users_change_lands_on_no_key(first: str, later: str) -> None:
    memories = extract(first, later)
    keys = {m.subject for m in memories if m.source_turn_ids == ("t0",)} - {""}
    assert not [m for m in memories if m.source_turn_ids == ("t1",) and m.subject in keys], memories


@pytest.mark.parametrize(
    ("text", "key"),
    [
        # a first statement of a diet, a pastime, the language or form of answers, kept by its
        # class when no reader read it
        ("我在做生酮饮食，碳水基本不碰。", "diet"),
        ("I do intermittent fasting most days.", "diet"),
        ("我每周练三次瑜伽。", "routine:exercise"),
        ("跟我说话用中文。", "reply-language"),
        ("Please write answers as prose rather than lists.", "style:format"),
        ("回答用英文就行。", "reply-language"),
    ],
)
def test_a_first_statement_of_a_class_is_kept_under_its_key(text: str, key: str) -> None:
    assert key in {m.subject for m in extract(text)}


@pytest.mark.parametrize(
    "text",
    [
        # someone else's, a one-off request, a question, a plan
        "my sister just went vegan and keeps sending me recipes lol",
        "My sister goes to the gym every morning.",
        "Write a short bio for our CEO: she lives in Dublin.",
        "Can you put the results in a table?",
        "我女朋友在做生酮饮食。",
        "要是我开始吃素，蛋白质怎么补？",
        "I'm thinking about taking up tennis.",
    ],
)
def test_what_is_not_a_first_statement_of_the_user_is_not_kept(text: str) -> None:
    assert extract(text) == []


@pytest.mark.parametrize(
    ("text", "old", "new"),
    [
        # a change that leaves a value behind by name when the session holds none: the old value
        # is recorded from the clause that leaves it, under the new value's key
        ("已经从滴滴离职了，现在在快手，还是做支付。", "滴滴", "快手"),
        ("上个月从网易辞职了，现在在腾讯。", "网易", "腾讯"),
        ("I left Atlassian in May; I'm with Canva now.", "Atlassian", "Canva"),
        ("I quit Basecamp last month and I'm at Shopify now.", "Basecamp", "Shopify"),
        ("Gave up tennis, I'm into climbing now.", "tennis", "climbing"),
    ],
)
def test_a_value_left_behind_that_was_never_stored_is_replaced(
    text: str, old: str, new: str
) -> None:
    memories = extract(text)
    olds = [m for m in memories if old in m.content and new not in m.content]
    news = [m for m in memories if new in m.content]
    assert olds and news and olds[0].subject, memories
    assert olds[0].subject == news[-1].subject, memories
    assert memories.index(olds[0]) < memories.index(news[-1])


@pytest.mark.parametrize(
    ("text", "value", "key"),
    [
        # a first statement of the tool of a kind the user sets up for themselves (an editor, a
        # terminal, a browser): a preference under its kind's key, in whatever words
        ("写 Python 用的是 Spyder，读研时留下的习惯。", "Spyder", "editor"),
        ("在 Windows 下面我一般开 Windows Terminal 敲命令。", "Windows Terminal", "tool:terminal"),
        ("平时浏览器我一直开 Firefox。", "Firefox", "browser"),
        (
            "On Windows I usually open Windows Terminal for commands.",
            "Windows Terminal",
            "tool:terminal",
        ),
        ("For notebooks I mostly live in Spyder.", "Spyder", "editor"),
    ],
)
def test_a_first_statement_of_a_tool_of_a_kind_is_kept_under_its_key(
    text: str, value: str, key: str
) -> None:
    assert any(m.subject == key and value in m.content for m in extract(text)), extract(text)


@pytest.mark.parametrize(
    "text",
    [
        "Spyder 里怎么连远程的 Jupyter kernel？",
        "我同事用 Spyder 写 Python。",
        "Should I use Windows Terminal?",
        "If I opened Firefox instead, would it work?",
    ],
)
def test_a_tool_named_in_a_question_or_by_someone_else_is_not_kept(text: str) -> None:
    assert not [m for m in extract(text) if m.subject in ("editor", "tool:terminal", "browser")]


def test_a_chinese_first_statement_of_a_team_is_kept_and_corrected() -> None:
    _linked("我在数据平台组。", "不是数据平台组，是风控组。", "数据平台组", "风控组")
    _linked("我在支付组。", "组织调整，现在调到搜索组了。", "支付组", "搜索组")
