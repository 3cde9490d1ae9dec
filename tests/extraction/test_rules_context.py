"""The offline rules where a fact depends on its surroundings: tasks of several clauses, dates
that open a task, a later turn that drops its subject, relations that make a clause someone
else's, names given as a preference, and preferences said without a verb.

The messages are not from any extraction set.
"""

from __future__ import annotations

from tests.extraction.session import extract


def _tasks(*texts: str) -> list[tuple[str, str]]:
    return [(m.content, m.due) for m in extract(*texts) if m.type == "task"]


def test_every_clause_of_a_sentence_can_state_a_task() -> None:
    # The due date of the first clause must not hide the task of the second.
    tasks = _tasks(
        "The annual security review is due March 20, which means the SSO migration has to ship"
        " before then."
    )
    assert any("security review" in c and due == "2026-03-20" for c, due in tasks), tasks
    assert any("SSO migration" in c and due == "2026-03-20" for c, due in tasks), tasks


def test_a_chinese_deadline_opens_the_task_after_it() -> None:
    # "下个月10号之前" is read as one date: the task after it has no trigger word left but 得.
    [(content, due)] = _tasks("下个月10号之前得把季度预算表交给财务。")
    assert "季度预算表" in content and due == "2026-04-10"
    [(content, due)] = _tasks("下周五前把接口文档写完")
    assert "接口文档" in content and due == "2026-03-13"
    assert _tasks("我觉得明天会下雨") == []


def _facts(*texts: str) -> list[tuple[str, str, str]]:
    return [(m.type, m.subject, m.content) for m in extract(*texts)]


def test_a_later_chinese_turn_without_its_subject_is_still_the_user() -> None:
    first, second = extract("我住在成都。", "去年搬到杭州了，成都太潮了。")
    assert (first.subject, second.subject) == ("city", "city")
    assert "杭州" in second.content
    # and a subjectless first clause of a message is its writer's
    assert ("personal", "hometown", "用户来自西安") in _facts("老家是西安的，现在在北京上班。")
    assert any(t == "skill" and "Kotlin" in c for t, _, c in _facts("平时主要写 Kotlin。"))


def test_a_promotion_said_in_chinese_replaces_the_title() -> None:
    _old, new = extract("I'm a junior data analyst.", "升职啦，现在是 senior analyst 了")
    assert (new.type, new.subject) == ("personal", "role") and "senior analyst" in new.content


def test_a_relation_makes_a_clause_someone_elses() -> None:
    assert extract("我男朋友在阿里上班，他说他们都用 Java。") == []
    assert extract("我老公是产品经理。") == []
    assert extract("My wife works at Shopify and swears by Ruby.") == []
    # the user's own family events still count
    assert [t for t, _, _ in _facts("我女儿刚上小学了")] == ["personal"]


def test_an_english_clause_that_drops_its_i_is_still_the_user() -> None:
    assert ("personal", "city", "User lives in Porto") in _facts("I'm Brazilian but live in Porto.")
    assert ("personal", "city", "User lives in Oslo") in _facts("Relocated to Oslo in spring.")
    assert _facts("My sister hates Rust and lives in Oslo.") == []


def test_a_name_asked_for_after_a_name_is_the_name() -> None:
    first, second = extract("Call me Bea.", "Hmm, I'd prefer Beatrice actually.")
    assert (first.subject, second.subject) == ("name", "name")
    assert second.content == "User's name is Beatrice"
    # without a name before, "I'd prefer Python" stays a preference
    assert [t for t, _, _ in _facts("I'd prefer Python.")] == ["preference"]


def test_preferences_said_without_a_verb() -> None:
    assert ("preference", "style:quotes", "User prefers single quotes over double quotes") in (
        _facts("Single quotes, not double quotes.")
    )
    assert ("preference", "tool:package-manager", "User prefers Yarn over npm") in _facts(
        "Yarn over npm, always."
    )
    assert _facts("Monday, not Tuesday.") == []
    assert any(
        s == "style:jargon" for _, s, _ in _facts("Please go easy on the acronyms and jargon.")
    )
    assert any(
        "not to bother explaining" in c for _, _, c in _facts("Don't bother explaining the regex.")
    )
    assert any(
        s == "style:emoji" and "not to add emojis" in c
        for _, s, c in _facts("I'd rather you didn't add emojis to the docs.")
    )


def test_a_short_inline_code_span_is_part_of_the_sentence() -> None:
    [pref] = extract("Prefer `pathlib` over `os.path` in anything you write for me.")
    assert pref.content.startswith("User prefers pathlib over os.path")


def test_a_tool_set_against_another_is_not_an_order() -> None:
    got = _facts("I always lint with ruff, never flake8")
    assert any(t == "skill" and "Ruff" in c for t, _, c in got), got
    assert not any("never" in c for _, _, c in got)


def test_called_names_a_project_or_an_employer() -> None:
    assert any(
        t == "project" and "Beacon" in c
        for t, _, c in _facts("We're building an internal status page called Beacon.")
    )
    assert ("personal", "employer", "User works at Kestrel") in _facts(
        "I work for a tiny design agency called Kestrel."
    )
    assert not any(
        t == "project" for t, _, _ in _facts("My brother is building a game called Orb.")
    )


def test_continuous_delivery_and_managed_kubernetes_are_known() -> None:
    got = _facts("We deploy with Flux onto EKS.")
    assert any(s == "tool:cd" and "Flux" in c for _, s, c in got), got


def test_the_project_as_a_subject_gives_the_projects_stack() -> None:
    assert ("project", "stack:backend", "User's project uses Laravel") in _facts(
        "The codebase I maintain is a Laravel app from 2015."
    )
    assert ("project", "", "User's project uses Svelte and Go") in _facts(
        "for context, it's a monorepo with a Svelte frontend and a Go API"
    )
    assert any(
        t == "project" and "Nuxt" in c for t, _, c in _facts("项目用的是 Nuxt，部署在 Vercel。")
    )
    assert ("project", "stack:backend", "User's project uses Flask") in _facts(
        "My project is a Flask API."
    )


def test_a_migration_under_way_is_a_decision_one_done_a_switch() -> None:
    [under_way] = extract("We're moving our backend from Flask to FastAPI this quarter.")
    assert (under_way.type, under_way.content) == (
        "decision",
        "User is moving to FastAPI from Flask",
    )
    [done] = extract("I switched from Flask to FastAPI.")
    assert done.type == "skill"


def test_conditions_and_accounts_are_the_users() -> None:
    got = _facts("I'm dyslexic, so please keep sentences short.", "My GitLab username is kel-v.")
    assert ("personal", "", "User is dyslexic") in got
    assert ("personal", "account:gitlab", "User's GitLab username is kel-v") in got
    assert ("personal", "", "用户有色弱") in _facts("我有点色弱，图表别用红绿配色。")
    assert not any("dyslexic" in c for _, _, c in _facts("My brother is dyslexic, how do I help?"))


def test_chinese_work_without_a_title_and_a_chinese_place_in_english() -> None:
    got = _facts("我在网易做游戏服务端。")
    assert ("personal", "employer", "用户在网易工作") in got
    assert ("personal", "role", "用户是做游戏服务端的") in got
    assert not any(s == "employer" for _, s, _ in _facts("我在学校做实验。"))
    assert ("personal", "city", "User lives in 杭州") in _facts(
        "I'm 陈晨, a designer based in 杭州."
    )


def test_a_chinese_order_or_remark_without_a_subject_is_nobodys() -> None:
    for text in ("用 Python 写一个快排", "看起来是 Nginx 的配置问题", "为啥 Vue 的响应式这么慢"):
        assert extract(text) == [], text
    # after the user spoke of themselves, a clause without a subject goes on about them
    assert any("Elixir" in c for _, _, c in _facts("我是后端开发。", "主要写 Elixir。"))
    assert not any("Python" in c for _, _, c in _facts("我是后端开发。", "用 Python 写一个快排"))


def test_started_the_migration_names_no_employer() -> None:
    assert not any(s == "employer" for _, s, _ in _facts("Started the migration but it failed."))


def test_a_second_clause_borrows_the_date_only_for_what_must_be_done() -> None:
    tasks = _tasks("I've got an exam on Thursday so I'll be quiet.")
    assert [c for c, _ in tasks] == ["User has an exam (due Thursday March 5, 2026-03-05)"]


def test_an_employer_ends_with_its_capitalised_words() -> None:
    assert ("personal", "employer", "User works at Figma") in _facts(
        "I started at Figma this week."
    )
    # "不用 GitHub Actions" beside the tool used is no preference
    assert [t for t, _, _ in _facts("我们用 Buildkite 跑 CI，不用 GitHub Actions。")] == ["project"]
