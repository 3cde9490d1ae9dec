"""A change that names the value it ends replaces the user's earlier statement of that value,
whatever shape the first statement had: a later turn leaves the value by name (ditched, went away,
renamed, reversed, is done, put an end to, misspoke; 下掉, 不干了, 卖了, 否了, 给…了, 说错) and says
what holds now, so the earlier turn's statement is kept (when no reader kept it) and both land on
one key. A turn that names the earlier value without leaving it, someone else's change, a question
or a hypothetical changes nothing; an earlier question is no statement to replace.

The messages are made up for these tests, not taken from any extraction set.
"""

from __future__ import annotations

import pytest

from memd.core.models import ExtractedMemory
from tests.extraction.session import extract


def _pair(
    memories: list[ExtractedMemory], old: str, new: str
) -> tuple[list[ExtractedMemory], list[ExtractedMemory]]:
    olds = [m for m in memories if m.source_turn_ids == ("t0",) and old in m.content]
    news = [m for m in memories if m.source_turn_ids[0] != "t0" and new in m.content]
    return olds, news


def _replaces(turns: tuple[str, ...], old: str, new: str) -> None:
    """The later turn's value is stored under the key of the first turn's, which it replaces."""
    memories = extract(*turns)
    olds, news = _pair(memories, old, new)
    assert olds and news, memories
    assert olds[-1].subject, memories
    assert olds[-1].subject in {m.subject for m in news}, memories


def _links_nothing(turns: tuple[str, ...]) -> None:
    """Nothing the first turn stored shares a key with what the second one stored."""
    memories = extract(*turns)
    olds = [m for m in memories if m.source_turn_ids == ("t0",)]
    later = {m.subject for m in memories if m.source_turn_ids == ("t1",) and m.subject}
    assert not any(o.subject and o.subject in later for o in olds), memories


@pytest.mark.parametrize(
    ("turns", "old", "new"),
    [
        # a tool or a service said in passing, ended by name
        (
            (
                "Pulumi provisions all of our cloud stuff.",
                "We dumped Pulumi after the licence change; Terraform runs the infra now.",
            ),
            "Pulumi",
            "Terraform",
        ),
        (
            (
                "Sentry catches the errors in the mobile app, mostly crashes on startup.",
                "Sentry got too pricey so we ditched it, Bugsnag does the crash reports now.",
            ),
            "Sentry",
            "Bugsnag",
        ),
        (
            ("订单数据都放在 MongoDB 里。", "MongoDB 上个月就下掉了，现在全换成 PostgreSQL 了。"),
            "MongoDB",
            "PostgreSQL",
        ),
        (
            ("监控是 Zabbix 搭的，告警发到钉钉。", "Zabbix 已经淘汰了，现在用 Prometheus 做监控。"),
            "Zabbix",
            "Prometheus",
        ),
        # a role, a title, a pastime said in passing
        (
            (
                "As the only designer on the team, I do every mockup in Figma.",
                "I misspoke earlier: design was my job until March. I'm a product manager now.",
            ),
            "designer",
            "product manager",
        ),
        (
            ("我现在是后端组长，管三个人。", "组长我不干了，回去写代码，当个普通开发。"),
            "组长",
            "开发",
        ),
        (
            (
                "Sundays are for sailing on the lake.",
                "The boat got sold, which put an end to sailing; Sundays are pottery classes now.",
            ),
            "sailing",
            "pottery",
        ),
        (
            ("周末喜欢去郊区骑马。", "马术课全停了，骑马也卖了会员卡，现在周末都在家做木工。"),
            "骑马",
            "木工",
        ),
        # a project's name, changed
        (
            (
                "The project is called Bluebird, a booking tool for the clinic.",
                "Legal made us rename Bluebird; it's Kingfisher from now on.",
            ),
            "Bluebird",
            "Kingfisher",
        ),
        (
            (
                "项目代号叫「青松」，是个内部报销系统。",
                "「青松」这个名字被领导否了，项目改叫「白桦」。",
            ),
            "青松",
            "白桦",
        ),
        # a device handed on
        (
            ("我手机用的是小米 13，调试都靠它。", "小米那台给我爸了，现在手上是 Pixel 8。"),
            "小米",
            "Pixel",
        ),
        # both stored, under different keys: the one named replaces
        (
            (
                "Sorry for the slow replies, my Leeds flat has no heating.",
                "Scratch the bit about Leeds, old habit: I've been renting in York since May.",
            ),
            "Leeds",
            "York",
        ),
        (
            (
                "We agreed to use Flask for the admin backend.",
                "We reversed the Flask call at the review; it's going to be FastAPI.",
            ),
            "Flask",
            "FastAPI",
        ),
    ],
)
def test_a_change_naming_the_old_value_replaces_its_first_statement(
    turns: tuple[str, str], old: str, new: str
) -> None:
    _replaces(turns, old, new)


@pytest.mark.parametrize(
    ("turns", "old"),
    [
        # the earlier value named again, not left
        (
            (
                "Pulumi provisions all of our cloud stuff.",
                "Pulumi is great, Terraform is next for me to learn.",
            ),
            "Pulumi",
        ),
        (("订单数据都放在 MongoDB 里。", "MongoDB 的聚合管道真好用，现在全靠它。"), "MongoDB"),
        # someone else's change
        (
            ("Sentry catches our errors.", "My brother ditched Sentry; he uses Bugsnag now."),
            "Sentry",
        ),
        (("监控是 Zabbix 搭的。", "我同事那边 Zabbix 已经淘汰了，现在用 Prometheus。"), "Zabbix"),
        # a question or a hypothetical
        (("Pulumi provisions our cloud.", "Should we ditch Pulumi for Terraform now?"), "Pulumi"),
        (("监控是 Zabbix 搭的。", "如果 Zabbix 下掉了，现在用什么好？"), "Zabbix"),
    ],
)
def test_no_change_without_the_user_leaving_the_value(turns: tuple[str, str], old: str) -> None:
    memories = extract(*turns)
    olds = [m for m in memories if m.source_turn_ids == ("t0",) and old in m.content]
    later = {
        m.subject
        for m in memories
        if m.source_turn_ids == ("t1",) and m.subject and old not in m.content
    }
    assert not any(o.subject and o.subject in later for o in olds), memories


@pytest.mark.parametrize(
    "turns",
    [
        (
            "How do I pin a provider version in Pulumi?",
            "We ditched Pulumi; Terraform runs the infra now.",
        ),
        ("MongoDB 的索引怎么建比较好？", "MongoDB 已经下掉了，现在全换成 PostgreSQL 了。"),
    ],
)
def test_an_earlier_question_is_no_statement_to_replace(turns: tuple[str, str]) -> None:
    memories = extract(*turns)
    assert not [m for m in memories if m.source_turn_ids == ("t0",)], memories


@pytest.mark.parametrize(
    "text",
    [
        "We ditched Pulumi; Terraform runs the infra now.",
        "MongoDB 上个月就下掉了，现在全换成 PostgreSQL 了。",
    ],
)
def test_one_turn_alone_records_no_earlier_statement(text: str) -> None:
    memories = extract("Morning! Long day ahead.", text)
    assert not [m for m in memories if m.source_turn_ids == ("t0",)], memories


# A change by the class of its value, when the first statement of that class was in a shape no
# reader keeps: the user's earlier sentence naming another value of the class is that statement.
@pytest.mark.parametrize(
    ("turns", "old", "new"),
    [
        (
            (
                "Tabby came with the laptop, it's open all day for the SSH sessions.",
                "Now I'm on WezTerm, the config is just Lua.",
            ),
            "Tabby",
            "WezTerm",
        ),
        (
            (
                "Tabby 是公司统一装的，我每天开着它连服务器。",
                "现在改用 WezTerm 了，配置就是一个 Lua 文件。",
            ),
            "Tabby",
            "WezTerm",
        ),
        (
            (
                "Every push goes through Jenkins before review.",
                "These days CircleCI runs the checks instead.",
            ),
            "Jenkins",
            "CircleCI",
        ),
        (
            ("每次合并都要等 Jenkins 跑完。", "流水线现在换到 GitLab CI 了。"),
            "Jenkins",
            "GitLab CI",
        ),
        (
            (
                "The staging boxes all live on Heroku, free tier mostly.",
                "Staging moved to Fly.io last month.",
            ),
            "Heroku",
            "Fly.io",
        ),
        (
            ("测试环境都放在 Heroku 上，基本是免费档。", "测试环境现在迁到 Fly.io 了。"),
            "Heroku",
            "Fly.io",
        ),
        # a change said by when it holds from: "as of this month", "这个月起"
        (
            (
                "I'm at Shopify on the payments side.",
                "As of this month I'm with Stripe, same kind of work.",
            ),
            "Shopify",
            "Stripe",
        ),
        (
            ("我在阿里巴巴做推荐算法。", "这个月起我去了网易，还是做推荐。"),
            "阿里巴巴",
            "网易",
        ),
        (
            ("我住在杭州，离公司很近。", "下个月起我搬去成都，房子已经租好了。"),
            "杭州",
            "成都",
        ),
    ],
)
def test_a_change_by_class_replaces_an_earlier_sentence_of_that_class(
    turns: tuple[str, str], old: str, new: str
) -> None:
    _replaces(turns, old, new)


@pytest.mark.parametrize(
    "turns",
    [
        # no change said: two values of one class side by side
        ("Tabby came with the laptop.", "WezTerm looks nice, what do you think of it?"),
        ("每次合并都要等 Jenkins 跑完。", "GitLab CI 的缓存怎么配？"),
        # the earlier sentence is a question, not a statement
        ("Is Heroku still free for hobby apps?", "Staging moved to Fly.io last month."),
        # the earlier sentence is someone else's
        ("My teammate swears by Jenkins.", "These days CircleCI runs our checks instead."),
        ("我同事一直用 Tabby。", "现在我改用 WezTerm 了。"),
        # the earlier sentence says it is not theirs
        ("I never liked Jenkins.", "These days CircleCI runs our checks instead."),
    ],
)
def test_no_earlier_sentence_kept_without_a_statement_and_a_change(turns: tuple[str, str]) -> None:
    _links_nothing(turns)


# The classes of the systems one runs: a message broker, a cache, a job queue, a host, an OS said
# short; a move from one to another of its class is a change of one key.
@pytest.mark.parametrize(
    ("turns", "old", "new"),
    [
        (
            ("Our events all go through RabbitMQ.", "We moved the events to Kafka last month."),
            "RabbitMQ",
            "Kafka",
        ),
        (("消息队列用的是 RocketMQ。", "现在消息队列换成 Kafka 了。"), "RocketMQ", "Kafka"),
        (
            ("Sessions sit in Memcached for now.", "We switched the sessions to Valkey."),
            "Memcached",
            "Valkey",
        ),
        (("缓存放在 Hazelcast 里。", "缓存现在改成 Memcached 了。"), "Hazelcast", "Memcached"),
        (
            ("Background jobs run on Resque.", "The jobs moved to Sidekiq this sprint."),
            "Resque",
            "Sidekiq",
        ),
        (
            ("服务器都在 Linode 上。", "上个月全部迁到 Hetzner 了，现在账单便宜一半。"),
            "Linode",
            "Hetzner",
        ),
        (("开发机装的是 Win10。", "现在开发机换成 Ubuntu 了。"), "Win10", "Ubuntu"),
    ],
)
def test_a_move_within_a_class_of_systems_replaces_the_first(
    turns: tuple[str, str], old: str, new: str
) -> None:
    _replaces(turns, old, new)


@pytest.mark.parametrize(
    "turns",
    [
        ("Our events all go through RabbitMQ.", "Is Kafka worth learning?"),
        ("服务器都在 Linode 上。", "我同事他们公司上个月迁到 Hetzner 了。"),
        ("Sessions sit in Memcached.", "We also keep a Valkey instance for rate limits."),
    ],
)
def test_no_move_within_a_class_without_a_change_of_the_users(turns: tuple[str, str]) -> None:
    _links_nothing(turns)


@pytest.mark.parametrize(
    "text",
    [
        "We'll probably move everything to Heroku next year.",
        "We'll likely put the events on Kafka at some point.",
        "I'd probably host it on Hetzner.",
    ],
)
def test_a_hedged_plan_names_no_tool_of_the_users(text: str) -> None:
    assert extract(text) == []


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("We reversed the Flask call at the review.", "Flask"),
        ("We scrapped the Kafka plan after the load tests.", "Kafka"),
        ("Memcached went away in the spring.", "Memcached"),
        ("We retired the Jenkins box last week.", "Jenkins"),
        ("We decommissioned the old Heroku apps.", "Heroku"),
    ],
)
def test_a_value_taken_back_or_retired_is_not_the_users_tool(text: str, word: str) -> None:
    memories = extract(text)
    assert not any(word in m.content and m.type in ("skill", "decision") for m in memories), (
        memories
    )


# A correction that gives the right value and takes the wrong one back by name: "*44, not 41",
# "我是项目经理，不是产品经理".
@pytest.mark.parametrize(
    ("turns", "old", "new"),
    [
        (("I'm 41, so vi is in my fingers.", "*44, not 41. Fat fingers."), "41", "44"),
        (("I'm 29 and new to Go.", "Sorry, 31, not 29."), "29", "31"),
        (
            ("目前的工作是产品经理，写代码的机会不多。", "说错了，我是项目经理，不是产品经理。"),
            "产品经理",
            "项目经理",
        ),
        (("我在杭州住了三年。", "我是说苏州，不是杭州。"), "杭州", "苏州"),
        (("我在字节做推荐。", "打错了，是快手，不是字节。"), "字节", "快手"),
        (("Our deploys run on Jenkins.", "I meant CircleCI, not Jenkins."), "Jenkins", "CircleCI"),
    ],
)
def test_a_correction_naming_the_wrong_value_replaces_it(
    turns: tuple[str, str], old: str, new: str
) -> None:
    _replaces(turns, old, new)


@pytest.mark.parametrize(
    "turns",
    [
        # "not X" about something else than the earlier value
        ("I'm 41 and still on vi.", "Use tabs, not spaces."),
        ("我在杭州住了三年。", "这个接口是 POST，不是 GET。"),
        # someone else's correction
        ("I'm 41.", "My brother is 44, not 41."),
    ],
)
def test_no_correction_without_the_earlier_value_taken_back(turns: tuple[str, str]) -> None:
    _links_nothing(turns)


# A pet, a device or a thing handed on: "X lives with my aunt now", 送到爸妈那儿, 回老家了, "traded it in".
@pytest.mark.parametrize(
    ("turns", "old", "new"),
    [
        (
            ("家里有只柯基，每天早晚都要遛。", "柯基送到我爸妈那儿养了，现在家里只有一只布偶猫。"),
            "柯基",
            "布偶猫",
        ),
        (
            ("家里养了一只金毛，叫豆豆。", "豆豆跟我妈回老家了，现在我养了一只橘猫。"),
            "豆豆",
            "橘猫",
        ),
        (("我的平板是 iPad Air。", "iPad Air 送人了，现在用的是小米平板。"), "iPad", "小米平板"),
        (
            (
                "We have a beagle called Rufus who sleeps under my desk.",
                "Rufus got rehomed last spring, so it's just our cat Miso at home.",
            ),
            "Rufus",
            "Miso",
        ),
        (
            (
                "My e-reader is a Kobo Clara.",
                "Gave the Kobo away last month; I read on a Kindle now.",
            ),
            "Kobo",
            "Kindle",
        ),
        (
            (
                "Everything user-facing sits on MySQL 8.",
                "Correction: it was MySQL until spring, we're on MariaDB now.",
            ),
            "MySQL",
            "MariaDB",
        ),
    ],
)
def test_a_thing_handed_on_is_replaced_by_the_one_that_holds_now(
    turns: tuple[str, str], old: str, new: str
) -> None:
    memories = extract(*turns)
    olds, news = _pair(memories, old, new)
    assert olds and news, memories
    # one of the statements naming the old value is replaced (a reader may key two of them)
    assert any(o.subject and o.subject in {m.subject for m in news} for o in olds), memories


# A team said as the people one sits with ("the billing folks"), changed "as of" a day.
@pytest.mark.parametrize(
    ("turns", "old", "new"),
    [
        (
            (
                "I sit with the billing folks; invoices are our whole life.",
                "As of this week I'm on the search team.",
            ),
            "billing",
            "search",
        ),
        (
            (
                "Most days I'm with the infra crew, mostly Terraform.",
                "We got reshuffled, so I'm on the mobile team as of Monday.",
            ),
            "infra",
            "mobile",
        ),
        (("我在支付组写后端。", "从这周起我在搜索组了。"), "支付组", "搜索组"),
    ],
)
def test_a_team_said_as_the_people_one_sits_with_is_replaced(
    turns: tuple[str, str], old: str, new: str
) -> None:
    memories = extract(*turns)
    olds, news = _pair(memories, old, new)
    assert olds and news, memories
    assert any(o.subject and o.subject in {m.subject for m in news} for o in olds), memories


def test_with_the_folks_of_someone_else_is_no_team_of_the_users() -> None:
    memories = extract(
        "My brother sits with the billing folks.", "As of this week I'm on the search team."
    )
    assert not [m for m in memories if m.source_turn_ids == ("t0",)], memories
