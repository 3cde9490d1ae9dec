"""A change read from its shape (`memd.extraction.rules.replaced`), whose fact a clause states
when its subject is a colleague or relation named by their role, and a later clause of one
message that corrects or goes on from an earlier one.

The messages are not from any extraction set.
"""

from __future__ import annotations

from memd.core.models import ExtractedMemory
from memd.extraction.rules.replaced import change_pairs
from tests.extraction.session import extract


def _keyed(memories: list[ExtractedMemory]) -> list[tuple[str, str, str]]:
    return [(m.source_turn_ids[0], m.subject, m.content) for m in memories]


def _replaces(memories: list[ExtractedMemory], old: str, new: str) -> bool:
    """Whether the memory naming `old` comes first and shares its key with the one naming `new`
    (so placement marks it superseded)."""
    olds = [i for i, m in enumerate(memories) if old in m.content and new not in m.content]
    news = [i for i, m in enumerate(memories) if new in m.content]
    if not olds or not news:
        return False
    o, n = memories[olds[-1]], memories[news[-1]]
    return olds[-1] < news[-1] and bool(o.subject) and o.subject == n.subject and o.type == n.type


def test_a_new_value_no_lexicon_knows_replaces_the_one_it_names() -> None:
    said = extract("We use yarn.", "We dropped yarn, it's all Bun now.")
    assert _replaces(said, "Yarn", "Bun")
    assert said[-1].content == "User works with Bun" and said[-1].source_turn_ids == ("t1",)


def test_a_change_supersedes_a_fact_under_another_key() -> None:
    said = extract(
        "We're going with MongoDB for the catalogue.",
        "Scrap the MongoDB plan — we're going with DynamoDB for the catalogue.",
    )
    assert _replaces(said, "MongoDB", "DynamoDB")


def test_moving_off_a_tool_is_not_using_it() -> None:
    said = extract("CI is CircleCI.", "We finally finished moving CI off CircleCI onto Buildkite.")
    assert _replaces(said, "CircleCI", "Buildkite")
    assert not [m for m in said if m.source_turn_ids == ("t1",) and "CircleCI" in m.content]


def test_rather_than_names_the_value_it_replaces() -> None:
    said = extract("I'm vegan.", "Eating eggs again, so vegetarian now rather than vegan.")
    assert _replaces(said, "vegan", "vegetarian")
    assert said[-1].subject == "diet"


def test_the_old_value_never_stored_is_recorded_and_replaced_at_once() -> None:
    said = extract("Friday was my last day at Stripe. Starting at Vercel on Monday!")
    assert _keyed(said) == [
        ("t0", "employer", "User works at Stripe"),
        ("t0", "employer", "User works at Vercel"),
    ]


def test_a_comparison_records_no_old_value() -> None:
    # "instead of" compares; it does not say the user had the other one.
    assert [m.content for m in extract("I use Vim instead of Emacs.")] == ["User uses Vim"]


def test_a_chinese_change_to_a_value_no_lexicon_knows() -> None:
    said = extract("我们的包管理用 yarn。", "从 yarn 换成了 Bun。")
    assert _replaces(said, "yarn", "Bun") or _replaces(said, "Yarn", "Bun")


def test_no_change_from_a_plan_a_question_or_someone_else() -> None:
    assert change_pairs("I'm thinking about moving from yarn to Bun.") == []
    assert change_pairs("Should we switch from yarn to Bun?") == []
    assert change_pairs("My brother switched from Vim to Emacs.") == []
    assert change_pairs("我同事从 Vim 换成了 VS Code。") == []
    assert change_pairs("打算从 yarn 换成 Bun。") == []
    said = extract("We use yarn.", "I'm thinking about moving from yarn to Bun.")
    assert [m.content for m in said] == ["User works with Yarn"]


def test_a_colleague_named_by_role_is_someone_else() -> None:
    assert extract("Our new hire Jamal switched from PyCharm to VS Code on his first day.") == []
    assert extract("Our new hire uses PyCharm.") == []
    assert extract("The intern moved to Berlin and uses Emacs.") == []
    assert extract("新来的同事从 Vim 换成了 VS Code。") == []
    assert extract("新来的同事用 Vim。") == []


def test_a_relation_s_diet_job_or_move_in_chinese_is_theirs() -> None:
    assert extract("我女朋友最近开始吃素了。") == []
    assert extract("我爸去年退休了。") == []
    assert extract("我哥跳槽去了字节。") == []
    # What the user says of their family is still kept.
    assert [m.content for m in extract("我老婆怀孕了。")] == ["用户的老婆怀孕了"]


def test_a_correction_in_the_same_message_replaces_the_earlier_value() -> None:
    said = extract("I use npm — actually pnpm now.")
    assert _replaces(said, "npm", "pnpm")


def test_a_second_clause_on_the_same_key_goes_on_without_replacing_it() -> None:
    said = extract("回答详细一点。", "以后回答简短点，不要长篇大论。")
    keyed = [(t, c) for t, k, c in _keyed(said) if k == "style:length"]
    assert keyed == [("t0", "用户希望回答详细一点"), ("t1", "用户希望回答简短点")]
    assert any(c == "用户希望不要长篇大论" and not k for _, k, c in _keyed(said))


def test_a_new_pet_after_the_held_one_is_gone_replaces_it() -> None:
    said = extract(
        "We have a hamster called Nibbles.",
        "Nibbles died over the weekend :( the kids picked out a bunny named Clover.",
    )
    assert _keyed(said) == [
        ("t0", "pet", "User has a pet: hamster called Nibbles"),
        ("t1", "pet", "User has a pet: bunny called Clover"),
    ]
    # Someone else's new animal is theirs.
    said = extract("I have a cat named Miso.", "My neighbour has a dog called Rex.")
    assert [m.content for m in said] == ["User has a pet: cat called Miso"]


def test_the_language_the_user_writes_at_work_is_their_main_one() -> None:
    said = extract(
        "I write Go at work.", "These days it's mostly Python for me, since I joined the ML team."
    )
    assert [(t, k) for t, k, _ in _keyed(said)] == [
        ("t0", "language:primary"),
        ("t1", "language:primary"),
    ]
    assert "Python" in said[-1].content


def test_over_a_span_of_time_is_no_choice() -> None:
    assert extract("The build broke over the weekend.") == []
    assert [m.content for m in extract("Tabs over spaces.")] == ["User prefers tabs over spaces"]


def test_a_change_that_names_only_the_new_one_replaces_the_one_of_its_kind() -> None:
    assert _replaces(extract("We host on AWS.", "We're fully on GCP now."), "AWS", "GCP")
    said = extract("Our frontend is React.", "We rewrote the frontend in Svelte.")
    assert _replaces(said, "React", "Svelte")
    said = extract("I use Slack for team chat.", "We switched to Discord for team chat.")
    assert _replaces(said, "Slack", "Discord")
    # Added beside it, or of another kind: nothing replaced.
    said = extract("We host on AWS.", "We also moved the docs to GitHub.")
    assert all(not m.subject for m in said)
    said = extract("Our frontend is React.", "We moved the API to FastAPI.")
    assert not _replaces(said, "React", "FastAPI") and not said[0].subject


def test_ditched_for_records_the_old_tool_it_names() -> None:
    said = extract("We ditched Jira for Linear.")
    assert _keyed(said) == [
        ("t0", "changed:jira", "User used Jira"),
        ("t0", "changed:jira", "User switched to Linear from Jira"),
    ]


def test_left_an_employer_and_now_at_another() -> None:
    said = extract("I work at Shopify.", "I left Shopify in March and now I'm at Stripe.")
    assert _replaces(said, "Shopify", "Stripe") and said[-1].subject == "employer"


def test_a_request_to_make_a_change_is_not_one_made() -> None:
    for held, asked in (
        ("We use yarn.", "Replace yarn with pnpm in the Dockerfile."),
        ("I use Jest.", "Please migrate these tests from Jest to Vitest."),
        ("I use Jest.", "Let's move the tests from Jest to Vitest next sprint."),
        ("我用 Jest。", "把 Jest 换成 Vitest。"),
        ("我用 Jest。", "帮我把测试从 Jest 迁到 Vitest。"),
    ):
        assert [m.source_turn_ids for m in extract(held, asked)] == [("t0",)], asked
    # A change the team made, said after an imperative-looking opening, still counts.
    assert change_pairs("Scrap the MongoDB plan — we're going with DynamoDB.") == [
        ("MongoDB", "DynamoDB", True)
    ]


def test_someone_else_s_change_stays_theirs() -> None:
    assert [m.source_turn_ids for m in extract("I use AWS.", "Our competitor moved to GCP.")] == [
        ("t0",)
    ]
    assert extract("我老公从腾讯跳槽到阿里了。") == []


def test_a_tool_changed_as_the_project_s_replaces_the_user_s() -> None:
    said = extract("我们组用 GitLab。", "代码已经全部迁到 GitHub 了。")
    assert _replaces(said, "GitLab", "GitHub")


def test_the_old_one_behind_the_user() -> None:
    said = extract("I code in Java.", "Java's behind me, it's all Kotlin now.")
    assert _replaces(said, "Java", "Kotlin")


def test_no_change_from_what_someone_read_or_a_platform_of_another_kind() -> None:
    assert change_pairs("The article says people are switching from Chrome to Firefox.") == []
    assert change_pairs("教程里说可以从 npm 换成 pnpm。") == []
    said = extract("I use Docker.", "We moved the docs to GitHub.")
    assert not _replaces(said, "Docker", "GitHub")
    said = extract("我用 React。", "我们考虑从 React 换成 Vue。")
    assert [m.source_turn_ids for m in said] == [("t0",)]
