"""The general reader (a first-person statement no rule read, kept by its structure) and the
corrections and values left behind read by their shape, whatever the values.

The messages are made up for these tests, not taken from any extraction set.
"""

from __future__ import annotations

import pytest

from tests.extraction.session import extract, said_under


@pytest.mark.parametrize(
    ("text", "type_", "key", "needle"),
    [
        # the head noun after "my" keys it; the copula's complement is the value
        ("My laptop OS is Fedora Silverblue.", "preference", "os", "Fedora"),
        ("My phone is a Galaxy S21.", "preference", "phone", "Galaxy"),
        ("Home base for me is Ghent.", "personal", "city", "Ghent"),
        # a setup's noun as subject, a verb of use: the host, the CI
        ("Three Linode boxes host everything we ship.", "project", "tool:hosting", "Linode"),
        ("Releases go through Buildkite on every tag.", "project", "tool:ci", "Buildkite"),
        # a habit, keyed by when it happens
        ("I play a lot of Catan on weekends.", "personal", "hobby:weekend", "Catan"),
        ("I sit on the growth squad.", "personal", "team", "growth"),
        ("我的显示器是 Dell U2723QE。", "personal", "", "Dell"),
        ("日志都放在一套 Loki 里。", "skill", "", "Loki"),
        ("发版靠的是一台老 Bamboo。", "skill", "tool:ci", "Bamboo"),
        ("终端一直用的是 Tabby。", "preference", "tool:terminal", "Tabby"),
        # a pastime of no known kind keeps the time it is done at as its key (a known activity
        # is a routine of its own: test_rules_life)
        ("周末我一般去打台球。", "personal", "hobby:weekend", "台球"),
        ("我在增长组。", "personal", "team", "增长组"),
    ],
)
def test_a_first_person_statement_no_rule_reads_is_kept_with_a_key(
    text: str, type_: str, key: str, needle: str
) -> None:
    [memory] = extract(text)
    assert (memory.type, needle in memory.content) == (type_, True)
    if key:
        assert memory.subject == key
    else:
        assert memory.subject  # a key from its head noun, so a later value replaces it


@pytest.mark.parametrize(
    "text",
    [
        # someone else, the assistant, a question, a request, a plan, a hypothetical
        "My sister's phone is a Galaxy S21.",
        "My boss plays a lot of chess on weekends.",
        "Your answer about Linode boxes was great.",
        "Do three Linode boxes host everything we ship?",
        "Add a Loki sink to our logging config.",
        "We'll probably move everything to Linode next year.",
        "If my home base were Ghent, what would my timezone be?",
        # an event with nothing of a known kind, a state with nothing named, a negation
        "We moved the standup to Thursday.",
        "Our CI is broken again.",
        "I'm not on the growth squad.",
        "I'm exhausted today lol",
        # quoted or reported
        'The docs say "our servers run on Linode".',
        "他的显示器是 Dell U2723QE。",
        "日志要不要都放在 Loki 里？",
        "把日志都放在 Loki 里。",
        "如果周末我去游泳，要带什么？",
        "我们的 CI 又挂了。",
        "我这周很少写 Rust。",
        # a guess, what is going on now, reading about a thing, a product's users, a plan
        "I think the bug is in the Memcached layer.",
        "We're hiring two data engineers in Lisbon.",
        "I'm reading a book about Elixir.",
        "我在看一本讲 Elixir 并发的书。",
        "我们的用户主要来自四川和湖南。",
        "我们下周把 Memcached 升级到 1.6。",
    ],
)
def test_what_is_not_the_users_own_statement_gives_nothing(text: str) -> None:
    assert extract(text) == []


def test_a_later_value_under_the_same_head_replaces_the_first() -> None:
    said = said_under(
        "tool:hosting",
        "Three Linode boxes host everything we ship.",
        "We moved it all to Hetzner last month.",
    )
    assert [(t, "Hetzner" in c) for t, _, c in said] == [("t0", False), ("t1", True)]
    said = said_under("team", "我在增长组。", "组织架构调整，我被调到搜索组了。")
    assert [(t, "搜索组" in c) for t, _, c in said] == [("t0", False), ("t1", True)]


@pytest.mark.parametrize(
    ("first", "later", "old", "new"),
    [
        # both values named: 不是X，是Y; X不对，是Y; it's Y, not X; I said X … it's Y
        ("我老家是江西的。", "不是江西，是安徽，老搞混。", "江西", "安徽"),
        ("我用的数据库是 MariaDB。", "MariaDB 不对，是 TiDB。", "MariaDB", "TiDB"),
        ("My shell is zsh.", "Sorry, it's fish, not zsh.", "zsh", "fish"),
        ("My editor is Vim.", "I said Vim, that's wrong: it's Helix.", "Vim", "Helix"),
        # a bare correction: the wrong value is the one named again, or the one of its kind
        ("我今年41岁。", "我记错了，是 42。", "41", "42"),
        ("我在华为做测试。", "我说错了，是在 Honor，华为是我上一家。", "华为", "Honor"),
        (
            "I'm allergic to shellfish.",
            "I misspoke: it's walnuts I'm allergic to, shellfish is fine.",
            "shellfish",
            "walnuts",
        ),
    ],
)
def test_a_correction_replaces_the_statement_it_corrects(
    first: str, later: str, old: str, new: str
) -> None:
    memories = extract(first, later)
    olds = [m for m in memories if old in m.content and new not in m.content]
    news = [m for m in memories if new in m.content and m.source_turn_ids == ("t1",)]
    assert olds and news, memories
    assert olds[-1].subject and olds[-1].subject == news[-1].subject


@pytest.mark.parametrize(
    ("first", "later", "old", "new"),
    [
        (
            "I daily-drive Manjaro.",
            "I'm not on Manjaro anymore, Fedora since May.",
            "Manjaro",
            "Fedora",
        ),
        (
            "Releases go through Buildkite on every tag.",
            "Buildkite is history, releases run on a self-hosted Concourse now.",
            "Buildkite",
            "Concourse",
        ),
        (
            "We keep our data in CouchDB.",
            "We left Couch for ScyllaDB in the spring.",
            "CouchDB",
            "ScyllaDB",
        ),
        (
            "我电脑装的是 Manjaro。",
            "Manjaro 我早就不用了，现在是 openSUSE。",
            "Manjaro",
            "openSUSE",
        ),
        (
            "日志都放在一套 Loki 里。",
            "迁移做完了，现在是 Quickwit，老的 Loki 集群已经下线。",
            "Loki",
            "Quickwit",
        ),
        ("周末我一般去游泳。", "最近迷上了攀岩，游泳好久没去了。", "游泳", "攀岩"),
    ],
)
def test_a_value_left_behind_is_replaced_by_what_is_there_now(
    first: str, later: str, old: str, new: str
) -> None:
    memories = extract(first, later)
    [held] = [m for m in memories if m.source_turn_ids == ("t0",) and old in m.content]
    news = [m for m in memories if m.source_turn_ids == ("t1",) and new in m.content]
    assert news and held.subject and news[0].subject == held.subject, memories


def test_a_habit_left_behind_with_nothing_new_is_stated_as_left() -> None:
    memories = extract("我烟瘾挺大，一天一包。", "烟我已经戒了，快一年了。")
    assert [(m.source_turn_ids[0], m.subject) for m in memories] == [
        ("t0", "habit:smoking"),
        ("t1", "habit:smoking"),
    ]
    assert "戒了" in memories[-1].content


@pytest.mark.parametrize(
    ("first", "later"),
    [
        # someone else's correction or change, a question, a plan
        ("我老家是江西的。", "我同事说不是江西，是安徽。"),
        ("My shell is zsh.", "My coworker says it's fish, not zsh."),
        ("My shell is zsh.", "Is it fish, not zsh, that ships with macOS?"),
        ("I daily-drive Manjaro.", "If I'm not on Manjaro anymore next year, Fedora maybe."),
        ("我电脑装的是 Manjaro。", "要是 Manjaro 不用了，你推荐什么？"),
    ],
)
def test_someone_elses_or_an_unsure_correction_replaces_nothing(first: str, later: str) -> None:
    memories = extract(first, later)
    keys = {m.subject for m in memories if m.source_turn_ids == ("t0",)}
    assert not [m for m in memories if m.source_turn_ids == ("t1",) and m.subject in keys]


@pytest.mark.parametrize(
    ("text", "type_", "key"),
    [
        ("Stick to French in your replies, please.", "preference", "reply-language"),
        ("Please assume Pacific time for anything I book.", "personal", "timezone"),
        ("Please leave emoji out of anything you write for me.", "preference", "style:emoji"),
        ("Any scripts you give me should be PowerShell.", "preference", "tool:shell"),
        ("Three bullet points per answer from now on.", "preference", "style:length"),
        ("回答用繁体字写吧。", "preference", "style:script"),
        ("每次改代码都把完整的文件贴给我。", "preference", "style:diff"),
        ("时间都按东京时间算就行。", "personal", "timezone"),
        ("写 SQL 的时候关键字一律小写。", "preference", ""),
    ],
)
def test_a_standing_request_no_rule_reads_is_kept_under_its_topic(
    text: str, type_: str, key: str
) -> None:
    [memory] = extract(text)
    assert (memory.type, memory.subject) == (type_, key)


def test_a_later_request_on_the_topic_replaces_the_first() -> None:
    said = said_under(
        "reply-language",
        "Stick to French in your replies, please.",
        "From here on out I'd like your replies in German.",
    )
    assert [(t, "German" in c) for t, _, c in said] == [("t0", False), ("t1", True)]
    said = said_under("style:script", "回答用繁体字写吧。", "算了，还是用简体吧。")
    assert [(t, "简体" in c) for t, _, c in said] == [("t0", False), ("t1", True)]
    said = said_under(
        "timezone",
        "Please assume Pacific time for anything I book.",
        "I moved to Chicago, so I'm on Central time now.",
    )
    assert [(t, "Central" in c) for t, _, c in said] == [("t0", False), ("t1", True)]


@pytest.mark.parametrize(
    "text",
    [
        # one thing asked for now, an edit of one thing in the code, a question
        "Write the summary in Spanish.",
        "Add a `region` column to the orders table and backfill it with 'eu'.",
        "Rename the created field in this model to created_at.",
        "把配置文件里的 timezone 改成 Asia/Tokyo。",
        "帮我把这段代码改成异步的。",
        "What's the difference between Pacific time and UTC?",
        # someone else's news: an adult relation's event is theirs
        "My dad just got a Kindle after years of paper books, and now I'm his tech support.",
        "My sister turned 40 yesterday, we took her out for sushi.",
        "Should I switch to Zed? Half my team keeps telling me it's worth it.",
    ],
)
def test_a_request_or_news_that_does_not_last_gives_nothing(text: str) -> None:
    assert extract(text) == []


@pytest.mark.parametrize(
    ("first", "later", "key", "old", "new"),
    [
        (
            "I build payment APIs at Adyen.",
            "Since starting at Wise in May I barely write Go.",
            "employer",
            "Adyen",
            "Wise",
        ),
        (
            "My title is support lead.",
            "Good news: they made me head of customer success last week.",
            "role",
            "support",
            "customer success",
        ),
        (
            "I sit on the search squad.",
            "After the reorg, as of today I'm on billing.",
            "team",
            "search",
            "billing",
        ),
        (
            "Lisbon has been home for two years.",
            "I moved to Berlin in June.",
            "city",
            "Lisbon",
            "Berlin",
        ),
        ("我在滴滴做后端。", "滴滴那边已经离职了，下周一去美团报到。", "employer", "滴滴", "美团"),
        ("我是做测试的。", "今年转岗做项目经理了。", "role", "测试", "项目经理"),
        ("我在北京上班。", "自从调到杭州分公司，周末才回北京。", "city", "北京", "杭州"),
    ],
)
def test_a_move_in_a_shape_no_identity_rule_reads_replaces_the_held_value(
    first: str, later: str, key: str, old: str, new: str
) -> None:
    said = said_under(key, first, later)
    assert [(t, new in c) for t, _, c in said] == [("t0", False), ("t1", True)], said
    assert old in said[0][2]


@pytest.mark.parametrize(
    "text",
    [
        "My brother just started at Wise.",
        "If they made me head of support, would I still code?",
        "我同事下周一去美团报到。",
        "如果调到杭州分公司，要搬家吗？",
        "I start at 9 on Mondays and at noon on Fridays.",
    ],
)
def test_someone_elses_or_an_unsure_move_is_no_move_of_the_user(text: str) -> None:
    assert not [m for m in extract(text) if m.subject in ("employer", "role", "city")]


def test_a_terminal_is_a_setting_of_the_users_and_tmux_is_no_terminal() -> None:
    said = {(m.type, m.subject) for m in extract("My terminal is Kitty, with tmux inside it.")}
    assert ("preference", "tool:terminal") in said
    assert ("skill", "tool:multiplexer") in said


@pytest.mark.parametrize(
    ("text", "type_", "key", "needle"),
    [
        ("Dev and prod both live on Google Cloud.", "project", "tool:hosting", "Google Cloud"),
        ("I speak Dutch natively.", "personal", "spoken-language", "Dutch"),
        ("我说闽南语和普通话。", "personal", "spoken-language", "闽南语"),
        # an allergy is keyed by what sets it off: two allergies are two facts
        ("我芒果过敏。", "personal", "condition:芒果", "芒果"),
    ],
)
def test_what_a_statement_names_gives_its_key(text: str, type_: str, key: str, needle: str) -> None:
    [memory] = extract(text)
    assert (memory.type, memory.subject, needle in memory.content) == (type_, key, True)


def test_a_reading_that_names_only_the_value_left_behind_is_dropped() -> None:
    memories = extract(
        "日志都放在一套 Loki 里。", "迁移做完了，现在是 Quickwit，老的 Loki 集群已经下线。"
    )
    [held, now] = memories
    assert "Loki" in held.content and "Quickwit" in now.content and "Loki" not in now.content
    assert held.subject and held.subject == now.subject


@pytest.mark.parametrize(
    ("first", "later", "key", "new"),
    [
        ("我用的手机是小米 13。", "手机换成 Pixel 8 了。", "phone", "Pixel"),
        (
            "My phone is a Galaxy S21.",
            "Switched my phone to a Pixel 8 last week.",
            "phone",
            "Pixel",
        ),
    ],
)
def test_a_change_named_by_the_things_head_noun_replaces_its_statement(
    first: str, later: str, key: str, new: str
) -> None:
    said = said_under(key, first, later)
    assert [(t, new in c) for t, _, c in said] == [("t0", False), ("t1", True)], said


def test_a_change_of_a_head_noun_the_session_never_stated_replaces_nothing() -> None:
    assert not [m for m in extract("手机换成 Pixel 8 了。") if m.subject == "phone"]
