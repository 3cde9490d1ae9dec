"""The type of what the readers read: a choice made is a decision whichever reader read it, a
spoken language learned to a level is a skill and one the user was born to is personal."""

from __future__ import annotations

from tests.extraction.session import extract


def _typed(*texts: str) -> list[tuple[str, str]]:
    return [(m.type, m.content) for m in extract(*texts)]


def test_a_choice_made_is_a_decision() -> None:
    loki = _typed("我们团队定了，日志统一用 Loki")
    assert any(t == "decision" and "Loki" in c for t, c in loki)
    assert not any(t != "decision" and "Loki" in c for t, c in loki)
    pulumi = _typed("We've chosen Pulumi over Terraform for the data platform.")
    assert any(t == "decision" and "Pulumi" in c for t, c in pulumi)


def test_a_tool_used_is_no_decision() -> None:
    assert ("skill", "User uses Terraform") in _typed("I use Terraform at work.")
    assert all(t != "decision" for t, _ in _typed("我们用 Loki 看日志"))
    # A name chosen is no decision: "go with" a name keeps it the user's name.
    said = extract(
        "The name's Aleksander.", "On second thought, go with Olek; only my grandmother says it."
    )
    assert [(m.type, m.subject) for m in said if "Olek" in m.content] == [("personal", "name")]


def test_a_language_learned_to_a_level_is_a_skill() -> None:
    italian = _typed("I'm fluent in Italian, so translations are easy for me.")
    assert any(t == "skill" and "Italian" in c for t, c in italian)
    german = _typed("我德语考过了 B2")
    assert any(t == "skill" and "德语" in c for t, c in german)


def test_a_language_born_to_stays_personal() -> None:
    dutch = _typed("I speak Dutch at home and English at work.")
    assert any(t == "personal" and "Dutch" in c for t, c in dutch)
    korean = _typed("我韩语是母语")
    assert any(t == "personal" and "韩语" in c for t, c in korean)
    fluent_native = _typed("I speak Portuguese natively and I'm fluent in it at work too.")
    assert all(t != "skill" for t, c in fluent_native if "Portuguese" in c)


def test_whose_statement_a_clause_is() -> None:
    from memd.extraction.rules.learned import subject_class

    assert subject_class("Our backend is a Rails 7 monolith") == "system"
    assert subject_class("我们项目数据库是 PostgreSQL 14") == "system"
    assert subject_class("we run everything on Kubernetes") == "team"
    assert subject_class("我们组定了") == "team"
    assert subject_class("I write Go at work") == "self"
    assert subject_class("我在阿里做运维") == "self"
    assert subject_class("我表哥在阿里做运维") == "other"
    assert subject_class("my brother uses Vim") == "other"
