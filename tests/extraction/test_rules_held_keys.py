"""A later statement of a key the session holds is the same fact changed: it keeps the held
fact's type, one sentence gives one value per key, and the project's frontend or backend
framework is a key of its own, so a rewrite replaces the old framework.

The messages are not from any extraction set.
"""

from __future__ import annotations

from tests.extraction.session import extract, said_under


def test_a_new_value_keeps_the_type_of_the_fact_it_changes() -> None:
    # Read alone, "以后测试都用 Vitest 吧" asks for a tool; after the team's test runner it is
    # that fact changed, of the same type, so the two are one fact in one place.
    assert said_under("tool:testing", "以后测试都用 Vitest 吧。") == [
        ("t0", "preference", "用户希望测试用Vitest")
    ]
    assert said_under("tool:testing", "我们用 Jest 做测试。", "以后测试都用 Vitest 吧。") == [
        ("t0", "project", "用户使用Jest"),
        ("t1", "project", "用户希望测试用Vitest"),
    ]


def test_one_sentence_states_one_value_of_a_key() -> None:
    said = said_under("tool:package-manager", "现在全组统一用 yarn 了。")
    assert len(said) == 1, said


def test_the_version_of_a_language_one_is_on_is_a_setting_the_language_a_skill() -> None:
    assert said_under("version:ruby", "We're on Ruby 3.1 in production.") == [
        ("t0", "project", "User works with Ruby 3.1")
    ]
    assert [m.type for m in extract("I write Ruby every day.")] == ["skill"]


def test_a_projects_single_framework_is_its_frontend_or_backend() -> None:
    assert said_under("stack:backend", "The app is a Laravel project.") == [
        ("t0", "project", "User's project uses Laravel")
    ]
    assert said_under("stack:frontend", "我们的项目用的是 Angular。") == [
        ("t0", "project", "用户的项目使用Angular")
    ]
    # Several technologies in one statement: none of them is replaced by a later one.
    assert not any(m.subject for m in extract("The repo is a Nuxt app with a Ktor API."))


def test_a_rewrite_replaces_the_projects_framework_on_that_side() -> None:
    assert said_under(
        "stack:backend", "The codebase is a Rails app.", "We ported the backend to Phoenix."
    ) == [
        ("t0", "project", "User's project uses Rails"),
        ("t1", "project", "User's project now uses Phoenix"),
    ]
    assert said_under("stack:backend", "我们的项目后端用的是 Flask。", "后端重写成 FastAPI 了。")[
        1:
    ] == [("t1", "project", "用户的项目换成了FastAPI")]
    assert said_under("stack:frontend", "这个项目前端用的是 Vue 2。", "前端升到 Vue 3 了。")[
        1:
    ] == [("t1", "project", "用户的项目换成了Vue 3")]


def test_another_framework_added_or_on_the_other_side_replaces_nothing() -> None:
    assert (
        len(
            said_under(
                "stack:backend", "The codebase is a Rails app.", "We now run a Django service too."
            )
        )
        == 1
    )
    assert (
        len(
            said_under(
                "stack:backend", "The codebase is a Rails app.", "We moved the frontend to React."
            )
        )
        == 1
    )


def test_working_from_a_known_place_is_where_the_user_is() -> None:
    assert said_under("city", "I'm working out of Porto these days.") == [
        ("t0", "personal", "User lives in Porto")
    ]
    assert said_under("city", "I'm working from home today.") == []


def test_a_change_of_what_something_is_written_in_is_the_new_wish() -> None:
    assert said_under("style:comment-language", "注释以后统一改用英文。") == [
        ("t0", "preference", "用户希望注释以后用英文")
    ]
    assert said_under("style:comment-language", "代码注释用中文写。", "以后注释都换成英文吧。")[
        1:
    ] == [("t1", "preference", "用户希望注释用英文")]
    # An order about the text at hand is done once.
    assert extract("把这段注释改成英文。") == []
    assert extract("帮我把这几行注释都换成中文") == []


def test_moved_or_promoted_into_a_role_is_the_new_role() -> None:
    assert said_under("role", "我是测试工程师。", "上个月被提拔当了组长。")[1:] == [
        ("t1", "personal", "用户担任组长")
    ]
    # Sent somewhere is not a role.
    assert said_under("role", "我是测试工程师。", "上个月被调到杭州了。")[1:] == []


def test_graduating_ends_the_students_role() -> None:
    assert said_under("role", "I'm a student at ETH.", "Finally graduated last week!")[1:] == [
        ("t1", "personal", "User has graduated")
    ]
    assert said_under("role", "我是研究生。", "我上个月毕业了。")[1:] == [
        ("t1", "personal", "用户已经毕业")
    ]
    # Someone else graduating, or a role that is not a student's, ends nothing.
    assert (
        said_under("role", "I'm a backend developer.", "My sister graduated last week.")[1:] == []
    )
