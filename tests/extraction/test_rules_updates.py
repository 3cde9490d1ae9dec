"""Round 10 of the offline rules, by kind of miss on the development data: whose fact a clause
states (a relation's move or job is theirs), new values read against the key the session holds
(working hours, diets, an event's date, a name said alone, a title, an age or a city said the
Chinese way), keys from a clause's shape (a style topic and its value, a key noun changed with a
Chinese verb of change, where things are deployed, a decision and its revision), and a request
after a lead-in."""

from __future__ import annotations

from tests.extraction.session import extract, said_under


def test_a_relations_move_or_job_is_theirs() -> None:
    assert extract("My brother just moved to Toronto and started at Shopify.") == []
    assert extract("My uncle left Oracle and joined Google.") == []
    assert extract("我舅舅在银行上班，今年五十了。") == []
    # The user and a relation together are the user too.
    assert said_under("city", "My wife and I moved to Porto last year.")[0][2] == (
        "User lives in Porto"
    )


def test_a_standing_request_after_a_lead_in() -> None:
    got = said_under("reply-language", "Please reply in English.",
                     "Actually, could you reply in Spanish from now on? I'm practicing.")  # fmt: skip
    assert [(t, "Spanish" in c) for t, _, c in got] == [("t0", False), ("t1", True)]


def test_a_name_said_alone_replaces_the_held_one() -> None:
    got = said_under("name", "You can call me Katherine.",
                     "Honestly just Kate, nobody calls me Katherine.")  # fmt: skip
    assert [c for _, _, c in got] == ["User's name is Katherine", "User's name is Kate"]


def test_a_chinese_time_lead_is_no_demonstrative() -> None:
    got = said_under(
        "language:primary", "我主要写 Java。", "这两年基本都在写 Kotlin 了，Java 很少碰。"
    )
    assert [(t, "Kotlin" in c) for t, _, c in got] == [("t0", False), ("t1", True)]
    # "很少碰" (rarely touched) says the user does not use it.
    assert not [m for m in extract("这两年 Java 很少碰。") if "Java" in m.content]


def test_chinese_age_and_city_said_as_corrections_and_moves() -> None:
    assert said_under("age", "我今年二十五岁。", "说错了，我二十六了。")[-1][:1] == ("t1",)
    got = said_under("city", "我在南京工作。", "我已经不在南京了，今年三月回了老家合肥。")
    assert got[-1][0] == "t1" and "合肥" in got[-1][2]


def test_new_working_hours_read_against_the_held_ones() -> None:
    got = said_under("schedule", "I work nights, 10pm to 6am.",
                     "I'm off nights now! Normal 9 to 5 from this week on.")  # fmt: skip
    assert got[-1][0] == "t1" and "9 to 5" in got[-1][2]
    got = said_under(
        "schedule", "我一般晚上十点以后才写代码。", "现在换成早上写代码了，晚上要带娃。"
    )
    assert got[-1][0] == "t1" and "早上" in got[-1][2]
    assert said_under("schedule", "I commute to the office every day.")[0][1] == "personal"
    assert said_under("schedule", "I go to the gym every day.") == []


def test_an_events_new_date_read_against_the_held_one() -> None:
    got = said_under(
        "date:launch", "The launch is set for May 12.", "launch slipped, it's June 2 now."
    )
    assert [(t, kind) for t, kind, _ in got] == [("t0", "task"), ("t1", "task")]
    assert "June 2" in got[1][2]


def test_a_title_said_again_as_the_current_one() -> None:
    got = said_under("role", "I'm the tech lead on the search team.",
                     "I stepped down as tech lead, I'm back to being an individual contributor.")  # fmt: skip
    assert got[-1][0] == "t1" and "individual contributor" in got[-1][2]


def test_studying_is_a_role_a_graduation_ends() -> None:
    got = said_under("role", "我在读研，方向是 NLP。", "我已经毕业了，现在在百度做搜索。")
    assert got[0][0] == "t0" and "读研" in got[0][2] and got[-1][0] == "t1"


def test_a_chinese_style_topic_set_to_a_value() -> None:
    got = said_under("style:indent", "缩进用两个空格。", "缩进改成四个空格，团队统一了。")
    assert [t for t, _, _ in got] == ["t0", "t1"] and "四个空格" in got[1][2]
    # The language of commit messages is not the language of the answers.
    turns = ("commit message 写英文。", "算了，commit message 还是用中文写吧，团队都是中国人。")
    assert said_under("reply-language", *turns) == []
    assert [t for t, _, _ in said_under("style:commits", *turns)] == ["t0", "t1"]
    assert extract("帮我把这段代码里的 tab 换成空格。") == []


def test_a_key_noun_with_a_chinese_verb_of_change() -> None:
    assert said_under("tool:testing", "Tests use unittest.")[0][2] == (
        "User uses unittest as their test runner"
    )
    got = said_under(
        "tool:testing", "我们用 Jest 跑测试。", "测试框架换成 Vitest 了，Jest 已经删掉了。"
    )
    assert [t for t, _, _ in got] == ["t0", "t1"] and "Vitest" in got[1][2]


def test_where_things_are_deployed_is_keyed_by_the_verb() -> None:
    got = said_under("tool:hosting", "我们的服务部署在阿里云。", "服务已经全部迁到腾讯云了。")
    assert [(t, c) for t, _, c in got] == [
        ("t0", "用户的服务部署在阿里云"),
        ("t1", "用户的服务部署在腾讯云"),
    ]
    assert extract("我同事把服务迁到华为云了。") == []
    assert extract("如果把服务迁到华为云，要改什么？") == []


def test_a_decision_revised_keeps_its_key() -> None:
    got = said_under("decision:redux", "We picked Redux for state.",
                     "We're ripping out Redux, going with Zustand instead.")  # fmt: skip
    assert [(t, kind) for t, kind, _ in got] == [("t0", "decision"), ("t1", "decision")]
    assert "Zustand" in got[1][2]
    got = said_under("decision:flask", "We decided on Flask for the API.",
                     "Actually we're going with FastAPI instead, Flask is out.")  # fmt: skip
    assert [t for t, _, _ in got] == ["t0", "t1"] and "FastAPI" in got[1][2]


def test_a_request_to_the_assistant_names_the_new_reply_language() -> None:
    got = said_under("reply-language", "Please answer in German.",
                     "You can stop with the German, English is easier for me when it's technical.")  # fmt: skip
    assert got[-1][0] == "t1" and "English" in got[-1][2]


def test_a_device_that_died_is_no_longer_used() -> None:
    got = said_under("os", "I'm on a MacBook for everything.",
                     "My MacBook died, so I'm on a ThinkPad running Ubuntu now.")  # fmt: skip
    assert [(t, "Ubuntu" in c) for t, _, c in got] == [("t0", False), ("t1", True)]


def test_mostly_after_the_verb_names_the_main_language() -> None:
    got = said_under("language:primary", "I write mostly Ruby these days.",
                     "Ruby's behind me, it's been Elixir for the last year.")  # fmt: skip
    assert [(t, "Elixir" in c) for t, _, c in got] == [("t0", False), ("t1", True)]


def test_what_the_user_eats_now_replaces_the_held_diet() -> None:
    got = said_under(
        "diet", "我在减肥，晚上不吃主食。", "减肥结束了，现在正常吃饭，不用再避开主食了。"
    )
    assert [t for t, _, _ in got] == ["t0", "t1"] and "正常吃饭" in got[1][2]
    assert extract("我同事在减肥，晚上不吃主食。") == []
