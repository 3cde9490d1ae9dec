"""Orders to the assistant: a standing one is a preference to keep, a one-off one is not; and
someone else's facts told by their relation to the user are not the user's."""

from __future__ import annotations

from tests.extraction.session import extract


def _said(*texts: str) -> list[tuple[str, str]]:
    return [(m.type, m.content) for m in extract(*texts)]


def test_a_scope_clause_makes_the_orders_after_it_standing() -> None:
    sql = _said("Whenever you show me SQL, write it for PostgreSQL, it's the only database we run.")
    assert any(t == "preference" and "PostgreSQL" in c for t, c in sql)
    fish = _said("Going forward, whenever you give me shell commands, assume fish shell, not bash.")
    assert any(t == "preference" and "fish" in c for t, c in fish)
    tests = _said("Every time you write tests, use pytest.")
    assert any(t == "preference" and "pytest" in c for t, c in tests)


def test_the_same_orders_for_this_once_are_no_preference() -> None:
    assert _said("Just for this reply, skip the explanation and give me only the regex.") == []
    assert _said("For this answer only, put it in a table.") == []
    assert _said("This time, answer in French.") == []
    assert _said("For this one, write it for PostgreSQL.") == []


def test_chinese_orders_for_this_once_are_no_preference() -> None:
    assert _said("这次回答用表格的形式") == []
    assert _said("这次用英文回答就行") == []
    # The standing ones of the same shape are kept.
    assert any(t == "preference" for t, _ in _said("以后回答都用表格"))
    assert any(t == "preference" for t, _ in _said("以后都用英文回答"))


def test_a_one_off_order_leaves_the_turns_other_preferences() -> None:
    said = _said("Just this once, answer in French. I prefer dark mode in every editor.")
    assert not any("French" in c for _, c in said)
    assert any("dark mode" in c for _, c in said)


def test_kin_by_side_or_rank_is_someone_else() -> None:
    assert _said("我表哥在阿里做运维，说最近天天加班，大厂都这样吗？") == []
    assert _said("我堂妹在字节做产品") == []
    assert _said("我二姨在医院当护士") == []
    # The user's own job in the same shape is theirs.
    assert any(t == "personal" and "运维" in c for t, c in _said("我在阿里做运维"))
    assert any("成都" in c for _, c in _said("我小时候在成都长大"))
