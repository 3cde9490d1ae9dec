"""A later turn's new value said without what it is the value of, tied to the slot an earlier turn
filled (`rules.slots`): a technology's new version, a task's moved date.

The messages are not from any extraction set.
"""

from __future__ import annotations

from memd.core.models import ExtractedMemory
from tests.extraction.session import extract


def _replaced(memories: list[ExtractedMemory]) -> list[tuple[str, str, str]]:
    """(type, earlier content, later content) of each earlier memory a later one shares a key with."""
    out = []
    for i, old in enumerate(memories):
        for new in memories[i + 1 :]:
            if old.subject and new.subject == old.subject:
                if new.source_turn_ids != old.source_turn_ids:
                    out.append((new.type, old.content, new.content))
                break
    return out


def test_a_new_version_said_without_its_subject_replaces_the_held_one() -> None:
    said = extract(
        "The API is pinned to Python 3.8.",
        "Moved the API to Python 3.11 yesterday, and mypy complains now.",
    )
    assert [(t, new) for t, old, new in _replaced(said) if old.endswith("Python 3.8")] == [
        ("project", "User switched to Python 3.11")
    ]


def test_a_chinese_upgrade_without_its_subject_replaces_the_held_version() -> None:
    said = extract(
        "我们项目的后端是用 Django 3.2 写的。",
        "后端上个月刚升级到 Django 5.0，迁移文件要重新生成吗？",
    )
    assert _replaced(said) == [("project", "用户的项目使用Django 3.2", "用户的项目使用Django 5.0")]


def test_a_bare_version_after_a_move_is_the_held_tool_s() -> None:
    said = extract("The mobile app targets Android 12.", "We moved the target to 14 this sprint.")
    assert ("project", "User's project uses Android 12", "User's project uses Android 14") in (
        _replaced(said)
    )


def test_a_version_asked_about_denied_or_someone_else_s_replaces_nothing() -> None:
    for later in (
        "Should we bump the service to Ruby 3.3?",
        "We haven't moved the service to Ruby 3.3 yet.",
        "If we upgraded to Ruby 3.3, would the gems break?",
        "My friend's team upgraded to Ruby 3.3, he says it's faster.",
    ):
        said = extract("The API is pinned to Python 3.8.", later.replace("Ruby 3.3", "Python 3.11"))
        assert not any("3.11" in new for _, _, new in _replaced(said)), later
    for later in ("后端要不要升级到 Django 5.0？", "我朋友的公司后端升级到 Django 5.0 了。"):
        said = extract("我们项目的后端是用 Django 3.2 写的。", later)
        assert not any("5.0" in new for _, _, new in _replaced(said)), later


def test_a_moved_deadline_replaces_the_held_date() -> None:
    said = extract(
        "The grant proposal is due on April 8.",
        "The funder pushed the deadline to April 22, phew. Can you tighten the abstract?",
    )
    [(kind, old, new)] = _replaced(said)
    assert kind == "task" and "April 8" in old and "April 22" in new
    assert said[-1].due == "2026-04-22"


def test_a_chinese_moved_deadline_replaces_the_held_date() -> None:
    said = extract("结题报告要在5月6号之前交。", "老师说可以晚一点，延到5月20号。帮我排个计划吧。")
    assert _replaced(said) == [
        ("task", "用户需要交结题报告（截止 5月6日周三，2026-05-06）",
         "用户需要交结题报告（截止 5月20日周三，2026-05-20）")
    ]  # fmt: skip


def test_a_move_in_the_next_clause_of_the_sentence() -> None:
    said = extract(
        "Code freeze is on Friday, the PR has to be merged before then.",
        "The PM says the freeze got pulled in, Wednesday is the new deadline.",
    )
    [(kind, _, new)] = _replaced(said)
    assert kind == "task" and "2026-03-04" in new


def test_a_date_asked_about_or_supposed_moves_nothing() -> None:
    for later in (
        "Could the deadline be pushed to April 22?",
        "If the funder pushed the deadline to April 22, would that help?",
        "截止日期能不能延到4月22号？",
        "My dentist visit moved to April 22.",
    ):
        said = extract("The grant proposal is due on April 8.", later)
        assert _replaced(said) == [], later


def test_a_quantity_s_new_number_replaces_the_held_one() -> None:
    said = extract("我现在体重 92 公斤。", "现在 86 公斤了，瘦了不少！")
    assert _replaced(said) == [("personal", "用户现在体重 92 公斤", "用户：现在 86 公斤了")]
    said = extract(
        "I take 50 mg of sertraline every morning.",
        "My GP upped the sertraline to 100 mg this month.",
    )
    assert _replaced(said) == [
        (
            "personal",
            "User: I take 50 mg of sertraline every morning",
            "User's GP upped the sertraline to 100 mg this month",
        )
    ]
    said = extract("We have three cats at home.", "Since the adoption fair it's four cats now.")
    assert _replaced(said) == [
        ("personal", "User has a pet: three cats", "User has a pet: four cats")
    ]


def test_another_s_quantity_or_a_wish_replaces_nothing() -> None:
    for later in ("我老婆现在 60 公斤了。", "如果能减到 80 公斤就好了。", "现在 86 公斤了吗？"):
        assert _replaced(extract("我现在体重 92 公斤。", later)) == [], later
    for later in (
        "My sister takes 100 mg of sertraline now.",
        "Should I ask for 100 mg instead?",
        "I'm not going up to 100 mg, whatever the GP says.",
    ):
        assert _replaced(extract("I take 50 mg of sertraline every morning.", later)) == [], later


def test_a_chinese_date_typed_with_spaces_is_a_date() -> None:
    said = extract("开题报告 4 月 9 号交。", "导师说可以晚几天，延到 4 月 16 号。")
    assert said[-1].due == "2026-04-16"
    assert _replaced(said) == [("task", "用户：开题报告 4 月 9 号交", "用户：开题报告 4月16日交")]
    # A count of months and days is no date.
    assert [m.due for m in extract("我已经等了 4 个月 9 天了。")] == [""]


def test_a_value_left_and_its_new_one_replace_the_memory_naming_it() -> None:
    said = extract(
        "我们的静态资源放在七牛云上。", "静态资源已经从七牛云迁到又拍云了，CDN 配置要改哪些？"
    )
    assert _replaced(said) == [
        ("project", "用户的团队的静态资源放在七牛云上", "用户的团队的静态资源放在又拍云上")
    ]
    said = extract(
        "Our on-call alerts go through VictorOps.",
        "Long story, but we're done with VictorOps: we moved paging to Opsgenie in the spring.",
    )
    assert _replaced(said) == [
        (
            "project",
            "User's on-call alerts go through VictorOps",
            "User's on-call alerts go through Opsgenie",
        )
    ]


def test_what_was_moved_someone_else_s_move_or_a_question_replaces_nothing() -> None:
    for later in (
        "我朋友公司从七牛云迁到又拍云了。",
        "要不要从七牛云迁到又拍云？",
        "如果从七牛云迁到又拍云，CDN 要重新配吗？",
    ):
        assert _replaced(extract("我们的静态资源放在七牛云上。", later)) == [], later
    for later in (
        "We ported the VictorOps runbooks to Notion last week.",
        "Should we move paging from VictorOps to Opsgenie?",
        "My friend's team moved paging from VictorOps to Opsgenie.",
    ):
        assert _replaced(extract("Our on-call alerts go through VictorOps.", later)) == [], later


def test_a_version_said_as_an_attribute_is_kept_and_replaced_later() -> None:
    said = extract("我们组的 Node 版本是 18。", "组里把 Node 升到 22 了，现在能用原生 fetch 了吧？")
    assert [(t, new) for t, old, new in _replaced(said) if "18" in old] == [
        ("project", "用户使用Node.js 22")
    ]
    said = extract(
        "Our Elixir version is 1.14.", "We bumped the Elixir version to 1.16 last sprint."
    )
    assert any("1.14" in old and "1.16" in new for _, old, new in _replaced(said))
    # Asked about, the new version replaces nothing.
    said = extract("我们组的 Node 版本是 18。", "要不要把 Node 升到 22？")
    assert [m.content for m in said if "Node" in m.content and "版本" not in m.content] == [
        "用户使用Node.js 18"
    ]
    assert _replaced(said) == []


def test_a_reversed_choice_replaces_the_decision_it_reverses() -> None:
    said = extract(
        "For the desktop client we picked Electron.",
        "The vote went the other way in the end, we're building the client with Tauri.",
    )
    assert _replaced(said) == [("decision", "User decided Electron", "User works with Tauri")]
    said = extract("我们定了移动端用 Flutter。", "开会又改了，移动端改用 React Native，团队更熟。")
    assert _replaced(said) == [("decision", "用户使用Flutter", "用户换成了React Native")]
    said = extract(
        "我们定了服务之间用 Thrift 通信。", "架构评审没通过，服务间通信还是回到 HTTP，Thrift 暂缓。"
    )
    assert _replaced(said) == [("decision", "用户使用Thrift", "用户：服务间通信还是回到 HTTP")]


def test_someone_else_s_or_an_asked_reversal_replaces_no_decision() -> None:
    for later in (
        "My old team went the other way and built their client with Tauri.",
        "Did the vote go the other way after all?",
    ):
        said = extract("For the desktop client we picked Electron.", later)
        assert _replaced(said) == [], later
    said = extract("我们定了移动端用 Flutter。", "我同事那边又改了，他们改用 React Native 了。")
    assert _replaced(said) == []
