"""The offline rules on sentence shapes added for messages the earlier rules missed: a name after
"the" as the employer, a title before "by", pronouns, home as a place, a name in quotes after
what the user makes, "I've got a project called", the project's backend or frontend as a
clause's subject, "做 SRE" and "base 在" in mixed messages, "Please" before a Chinese request,
"by the 30th", and a wish said as a condition.

Each row is (messages, [(type, subject or None, needle in the content)]); the messages are not
from any extraction set. Negatives must produce nothing at all.
"""

from __future__ import annotations

import pytest

from tests.extraction.session import extract

# Monday 2026-03-02, noon UTC.

Want = tuple[str, str | None, str]


FOUND: list[tuple[str, list[Want]]] = [
    ("I work for the BBC, mostly on the iPlayer apps.", [("personal", "employer", "BBC")]),
    ("I'm a data analyst by training, now writing more Python.", [("personal", "role", "analyst")]),
    ("My pronouns are she/her.", [("personal", "pronouns", "she/her")]),
    (
        "Hi, I'm Robin (they/them).",
        [("personal", "pronouns", "they/them"), ("personal", "name", "Robin")],
    ),  # fmt: skip
    (
        "我在上海上班，不过家在嘉兴。",
        [("personal", "city", "上海"), ("personal", "hometown", "嘉兴")],
    ),
    ("我最近在写一个命令行的记账软件，叫「小账本」。", [("project", None, "小账本")]),
    ("I've got a side project called Lantern, a reading-list app.", [("project", None, "Lantern")]),
    ("The frontend is built with Svelte and Vite.", [("project", None, "Svelte")]),
    ("我 base 在成都，做 DBA。", [("personal", "city", "成都"), ("personal", "role", "DBA")]),
    ("Please 用中文回答，术语保留英文。", [("preference", None, "中文")]),
    ("I need to renew the TLS certificates by the 20th.", [("task", None, "2026-03-20")]),
    # The 1st is past on March 2: the next one.
    ("I have to pay the contractor on the 1st.", [("task", None, "2026-04-01")]),
]


@pytest.mark.parametrize(("text", "want"), FOUND)
def test_found(text: str, want: list[Want]) -> None:
    got = [(m.type, m.subject, m.content, m.due or "") for m in extract(text)]
    for type_, subject, needle in want:
        assert any(
            t == type_ and (subject is None or s == subject) and needle in c + " " + due
            for t, s, c, due in got
        ), f"no {type_}/{subject} memory with {needle!r} in {got}"


@pytest.mark.parametrize(
    "text",
    [
        "My colleague works for the BBC.",
        "use (they/them) for that variable",
        "The 3rd test fails on CI",
        "Fix the lamp on the 2nd floor.",
        "我朋友在做一个游戏，叫「星海」。",
        "家在哪里都一样。",
        "The API is down again.",
    ],
)
def test_nothing(text: str) -> None:
    assert extract(text) == []


def test_a_condition_is_no_wish() -> None:
    memories = extract("Keep replies brief. I'll ask if I need more examples.")
    assert [m.content for m in memories] == ["User asks to keep replies brief"]
