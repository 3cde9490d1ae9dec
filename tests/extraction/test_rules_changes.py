"""A later turn that changes a fact the session holds: the new value is read, under the key of
the old one, whatever shape the sentence takes — a name inside a word the rules also know
("VS Code" is not "vs", "阿里云" holds no locative 里), a clause that opens with a negation
("不怎么…" asks nothing), a value said without its unit ("我今年 29 了"), the user's main
language or framework replaced by another of its kind, "instead of", a name one goes by, a
language for replies named alone, a place in Latin script in a Chinese sentence, a part of
the product as a clause's subject.

The messages are not from any extraction set.
"""

from __future__ import annotations

from memd.extraction.rules.clauses import en_clauses
from memd.extraction.rules.common import is_question
from tests.extraction.session import extract, said_under


def test_vs_code_named_in_a_clause_does_not_make_it_a_comparison() -> None:
    said = said_under("editor", "I use VS Code.", "I'm on Zed these days, VS Code felt sluggish.")
    assert [(t, c) for t, _, c in said][-1][0] == "t1" and "Zed" in said[-1][2]
    assert en_clauses("I can't pick between React vs Svelte")[0].unsure
    assert not en_clauses("I moved to Helix, VS Code got slow")[0].unsure


def test_a_chinese_employer_may_hold_a_locative_character() -> None:
    assert said_under("employer", "我在腾讯上班。", "现在在阿里云了。") == [
        ("t0", "personal", "用户在腾讯工作"),
        ("t1", "personal", "用户在阿里云工作"),
    ]


def test_this_years_age_needs_no_unit_but_a_bare_number_is_no_age() -> None:
    assert said_under("age", "我 28 岁。", "搞错了，我今年 29 了。")[-1] == (
        "t1",
        "personal",
        "用户今年29岁",
    )
    assert [t for t, _, _ in said_under("age", "我 28 岁。", "现在 30 了。")] == ["t0"]


def test_hardly_is_not_how() -> None:
    assert not is_question("我现在不怎么用 Vim 了")
    assert not is_question("这个版本没什么问题")
    assert is_question("怎么用 Vim 打开两个文件")


def test_the_main_language_is_replaced_by_another_language() -> None:
    said = said_under(
        "language:primary",
        "I mostly write Python.",
        "Our group moved to Scala for all the data jobs.",
    )
    assert said[0][0] == "t0" and said[-1] == ("t1", "skill", "User switched to Scala")
    said = said_under(
        "language:primary", "我主要写 Java。", "现在主要写 Kotlin 了，不怎么碰 Java 了。"
    )
    assert [t for t, _, _ in said] == ["t0", "t1"] and "Kotlin" in said[1][2]


def test_the_main_framework_has_a_key_and_instead_of_names_the_old_one() -> None:
    said = said_under("framework:backend", "I mostly build services with Django.",
                 "Lately it's been FastAPI instead of Django.")  # fmt: skip
    assert said == [
        ("t0", "skill", "User uses Django"),
        ("t1", "skill", "User switched to FastAPI"),
    ]
    # "instead of Django" says what the user no longer uses: nothing of t1 holds Django.
    assert not [m for m in extract("I've been using FastAPI instead of Django.")
                if "Django" in m.content]  # fmt: skip
    # A framework not said to be the main one replaces nothing.
    assert {m.subject for m in extract("I build services with Django.")} == {""}


def test_a_name_one_goes_by() -> None:
    assert said_under("name", "Call me Sam.", "I go by Samira at work now.")[-1] == (
        "t1",
        "personal",
        "User's name is Samira",
    )
    assert said_under("name", "I go by they/them.") == []


def test_the_language_of_replies_named_alone_replaces_the_held_one() -> None:
    assert (
        said_under("reply-language", "Talk to me in Spanish.")[0][2]
        == "User wants replies in Spanish"
    )
    said = said_under(
        "reply-language", "Reply in Spanish.", "Hmm, German suits me better now, no more Spanish."
    )
    assert said[-1] == ("t1", "preference", "User wants replies in German")
    # Without a held language of replies a language named is nothing of the kind.
    assert said_under("reply-language", "German suits me better now.") == []


def test_a_latin_place_after_a_chinese_verb_of_living() -> None:
    assert said_under("city", "我住在 Berlin。") == [("t0", "personal", "用户住在Berlin")]
    assert said_under("city", "我住在 Berlin。", "去年搬回成都了。")[-1] == (
        "t1",
        "personal",
        "用户住在成都",
    )


def test_a_part_of_the_product_as_the_subject_gives_the_projects_stack() -> None:
    assert said_under("stack:frontend", "The admin panel is built with Vue.") == [
        ("t0", "project", "User's project uses Vue")
    ]
    assert said_under(
        "stack:frontend", "我们的前端是用 React 写的。", "前端已经重写成 Svelte 了。"
    ) == [
        ("t0", "project", "用户的项目使用React"),
        ("t1", "project", "用户的项目换成了Svelte"),
    ]
    # "后端开发" is a kind of work, not the product's backend.
    assert all(m.type != "project" for m in extract("我们的后端开发都在北京。"))
