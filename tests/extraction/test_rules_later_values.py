"""Later values read against the key the session holds, in shapes the readers of `carried` and
`updates` did not know: an age after "just turned", a Chinese role after 转 or 现在做, a diet said
with 什么都吃 (no question), a working place with 去公司, a Chinese household's new pet.

The messages are not from any extraction set.
"""

from __future__ import annotations

from tests.extraction.session import said_under


def test_just_turned_gives_the_new_age() -> None:
    assert said_under("age", "I'm 29.", "Just turned 30!") == [
        ("t0", "personal", "User is 29 years old"),
        ("t1", "personal", "User is 30 years old"),
    ]


def test_a_chinese_role_after_zhuan_or_xianzai_zuo() -> None:
    assert [c for _, _, c in said_under("role", "我是后端开发。", "我转前端了。")][
        -1
    ] == "用户担任前端"
    said = said_under("role", "我是产品经理。", "我现在做技术负责人了。")
    assert said[-1] == ("t1", "personal", "用户担任技术负责人")
    # A task after 现在做 is no role.
    assert len(said_under("role", "我是产品经理。", "我现在做饭。")) == 1


def test_shenme_dou_is_no_question() -> None:
    said = said_under("diet", "我吃素。", "我现在什么都吃了。")
    assert [t for t, _, _ in said] == ["t0", "t1"]


def test_going_to_the_office_is_a_working_place() -> None:
    said = said_under("schedule", "我在远程办公。", "现在每周去公司三天。")
    assert [t for t, _, _ in said] == ["t0", "t1"]


def test_a_chinese_household_s_new_pet() -> None:
    said = said_under("pet", "我养了一只猫叫咪咪。", "咪咪送人了，现在养了条狗叫旺财。")
    assert said[-1] == ("t1", "personal", "用户现在养了条狗叫旺财")
    assert len(said_under("pet", "我养了一只猫叫咪咪。", "我妹妹养了条狗叫豆豆。")) == 1


def test_an_event_s_date_said_as_it_stands_is_keyed_by_the_event() -> None:
    assert said_under(
        "date:beta", "The beta ships on October 3.", "Beta got pushed to October 17."
    ) == [
        ("t0", "task", "The beta is scheduled for Saturday October 3, 2026-10-03"),
        ("t1", "task", "The beta is scheduled for Saturday October 17, 2026-10-17"),
    ]
    assert said_under("date:release", "The release is on June 5.")[0][2].endswith("2026-06-05")
    said = said_under("date:上线", "项目下个月5号上线。", "上线时间改到下个月20号了。")
    assert [(t, c[-10:]) for t, _, c in said] == [("t0", "2026-04-05"), ("t1", "2026-04-20")]
    said = said_under("date:截止", "截止日期是3月3号。", "截止日期推迟到3月10号。")
    assert [t for t, _, _ in said] == ["t0", "t1"]
    # No event, no date of one.
    assert said_under("date:今天", "今天是3月3号。") == []


def test_a_language_one_starts_learning_is_no_employer() -> None:
    assert said_under("employer", "I gave up Spanish and started Japanese.") == []


def test_eating_everything_is_a_diet_s_new_value() -> None:
    said = said_under("diet", "I'm a vegetarian.", "Not vegetarian anymore, I eat everything.")
    assert said[-1] == ("t1", "personal", "User's diet: they eat everything")


def test_a_theme_switched() -> None:
    assert said_under("theme", "I prefer light theme.", "I switched to dark theme.") == [
        ("t0", "preference", "User prefers light theme"),
        ("t1", "preference", "User prefers dark theme"),
    ]


def test_a_name_changed_in_chinese() -> None:
    assert said_under("name", "我改叫小安了。") == [("t0", "personal", "用户的名字是小安")]
    assert said_under("name", "我现在叫车来接你。") == []
