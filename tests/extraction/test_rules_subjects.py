"""Subjects keyed by the clause's shape (memd.extraction.rules.subjects): pets, diets, working
hours, named things, a tool named by the key it fills, a job taken; and the name corrections and
"given up on" switches of the same round."""

from __future__ import annotations

from tests.extraction.session import extract, said_under


def test_a_pet_is_keyed_and_a_later_pet_replaces_it() -> None:
    got = said_under("pet", "I've got a cat named Miso.",
                     "Sadly Miso passed away. We adopted a rescue dog, Juniper, last week.")  # fmt: skip
    assert [(t, kind) for t, kind, _ in got] == [("t0", "personal"), ("t1", "personal")]
    assert "Miso" in got[0][2] and "Juniper" in got[1][2]


def test_pets_in_other_shapes() -> None:
    assert "Rocket" in said_under("pet", "My dog Rocket sleeps under my desk all day.")[0][2]
    assert "Pepper" in said_under("pet", "Mine is a greyhound called Pepper.")[0][2]
    assert "柯基" in said_under("pet", "我养了一条柯基，叫可乐。")[0][2]
    assert "布偶猫" in said_under("pet", "现在家里养的是一只布偶猫。")[0][2]
    assert "喵喵" in said_under("pet", "我的猫叫喵喵。")[0][2]


def test_a_pet_added_beside_another_keeps_no_key() -> None:
    memories = extract("We also got a kitten called Mochi.")
    assert [(m.type, m.subject) for m in memories if "Mochi" in m.content] == [("personal", "")]
    assert said_under("pet", "我还养了一只兔子。") == []


def test_someone_elses_pet_or_none_is_not_the_users() -> None:
    assert extract("Buddy is my sister's dog.") == []
    assert extract("I don't have a dog.") == []
    assert extract("我同事养了只猫，天天在群里发照片。") == []
    assert extract("Can you write a function that returns my dog's name?") == []


def test_diets_are_keyed() -> None:
    got = said_under("diet", "I'm vegetarian.", "I went fully vegan in January.")
    assert [c for _, _, c in got] == ["User is vegetarian", "User is vegan"]
    assert said_under("diet", "I don't eat pork, so skip it.")[0][2] == "User doesn't eat pork"
    assert said_under("diet", "I'm eating meat again.")[0][2] == "User eats meat again"
    assert [c for _, _, c in said_under("diet", "我是素食者。", "最近改成纯素了。")] == [
        "用户是素食者",
        "用户是纯素",
    ]


def test_an_allergy_is_a_personal_fact_without_a_key() -> None:
    memories = extract("I'm allergic to peanuts, so leave them out.")
    assert ("personal", "", "User is allergic to peanuts") in [
        (m.type, m.subject, m.content) for m in memories
    ]
    assert [(m.type, m.content) for m in extract("我对花生过敏。")] == [
        ("personal", "用户对花生过敏")
    ]


def test_no_diet_of_someone_else_or_a_hypothetical() -> None:
    assert said_under("diet", "my sister just went vegan and keeps sending me recipes") == []
    assert extract("If I were vegan, which of these recipes would still work?") == []


def test_working_hours_are_keyed() -> None:
    got = said_under("schedule", "I work mornings, roughly 7 to 3.",
                     "My hours changed, I'm on the late shift now, 2pm to 10pm.")  # fmt: skip
    assert [(t, kind) for t, kind, _ in got] == [("t0", "personal"), ("t1", "personal")]
    assert "2pm to 10pm" in got[1][2]
    assert "9点" in said_under("schedule", "我每天9点上班。")[0][2]


def test_hours_not_about_the_users_work_are_not_a_schedule() -> None:
    text = "My manager just moved to Lisbon, so our standups are going to be at weird hours."
    assert said_under("schedule", text) == []
    assert said_under("schedule", "The cron job runs 2am to 4am.") == []


def test_a_named_thing_is_keyed_by_its_noun() -> None:
    assert said_under("named:laptop", "my laptop is called Zeus") == [
        ("t0", "personal", "User's laptop is called Zeus")
    ]


def test_a_tool_named_by_its_key() -> None:
    got = said_under("tool:package-manager", "Our package manager is yarn.",
                     "We moved to pnpm for the workspace support.")  # fmt: skip
    assert [t for t, _, _ in got] == ["t0", "t1"] and "Yarn" in got[0][2]
    assert (
        said_under("tool:ci", "CI runs on Travis for us.")[0][2] == "User uses Travis as their CI"
    )
    assert said_under("browser", "Firefox is my browser for dev stuff.")[0][1] == "preference"
    assert said_under("tool:database", "我们的数据库是 MySQL。")[0][2] == "用户的数据库是MySQL"


def test_a_key_noun_with_no_tool_is_nothing() -> None:
    assert extract("our CI is broken") == []
    assert extract("The database is down again") == []


def test_a_job_taken_names_the_employer_and_role() -> None:
    got = extract("I've finished at UCL and started a job as a junior developer at Monzo.")
    assert ("employer", "User works at Monzo") in [(m.subject, m.content) for m in got]
    assert ("role", "User works as a junior developer") in [(m.subject, m.content) for m in got]
    assert said_under("employer", "My brother took a job at Google.") == []


def test_a_held_name_corrected() -> None:
    for later in ("Actually Bob is fine.", "Everyone calls me Bob.", "Oops, it's Bob with a B."):
        got = said_under("name", "Call me Robert.", later)
        assert [c for _, _, c in got] == ["User's name is Robert", "User's name is Bob"], later
    # Without a name held, "X is fine" names nothing.
    assert said_under("name", "Python is fine.") == []


def test_given_up_on_a_tool_is_a_switch_from_it() -> None:
    got = said_under("browser", "Firefox is my browser for dev stuff.",
                     "I've given up on Firefox, I'm back on Chrome for the devtools.")  # fmt: skip
    assert [t for t, _, _ in got] == ["t0", "t1"]
    assert "Chrome" in got[1][2] and got[1][1] == "preference"


def test_a_one_off_text_asked_for_is_no_preference() -> None:
    assert extract("Write a commit message for: 'switch logging to the logging module'.") == []
    assert extract("Generate a README for this repo.") == []
    # Unless it says it lasts.
    assert extract("Always write a docstring for every public function.") != []


def test_a_relations_own_diet_or_switch_is_theirs() -> None:
    assert extract("my sister just went vegan and keeps sending me recipes lol") == []
    assert extract("my dad switched to Linux last year") == []
    assert extract("My daughter just started kindergarten.") != []
