"""The text embedded for each turn: the turn alone or with its neighbours in the session."""

from __future__ import annotations

import pytest

from memd.semantic.passages import Turn, turn_line, turn_passages

TURNS = [
    Turn("Caroline", "I went to the LGBTQ support group yesterday."),
    Turn("Melanie", "Wow, how did it go?"),
    Turn("Caroline", "It was   powerful.\nThe stories moved me."),
]


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        (0, 0, ["Caroline: I went to the LGBTQ support group yesterday.",
                "Melanie: Wow, how did it go?",
                "Caroline: It was powerful. The stories moved me."]),
        (1, 0, ["Caroline: I went to the LGBTQ support group yesterday.",
                "Caroline: I went to the LGBTQ support group yesterday.\nMelanie: Wow, how did it go?",
                "Melanie: Wow, how did it go?\nCaroline: It was powerful. The stories moved me."]),
        (1, 1, ["Caroline: I went to the LGBTQ support group yesterday.\nMelanie: Wow, how did it go?",
                "Caroline: I went to the LGBTQ support group yesterday.\nMelanie: Wow, how did it go?\n"
                "Caroline: It was powerful. The stories moved me.",
                "Melanie: Wow, how did it go?\nCaroline: It was powerful. The stories moved me."]),
        (2, 0, ["Caroline: I went to the LGBTQ support group yesterday.",
                "Caroline: I went to the LGBTQ support group yesterday.\nMelanie: Wow, how did it go?",
                "Caroline: I went to the LGBTQ support group yesterday.\nMelanie: Wow, how did it go?\n"
                "Caroline: It was powerful. The stories moved me."]),
    ],
)  # fmt: skip
def test_turn_passages(before: int, after: int, expected: list[str]) -> None:
    assert turn_passages(TURNS, before=before, after=after) == expected


def test_neighbours_are_cut_the_turn_is_not() -> None:
    long = Turn("Melanie", "word " * 200)
    short = Turn("Caroline", "Thanks!")
    first, second = turn_passages([long, short], before=1, after=1, neighbour_chars=40)
    assert first == turn_line(long) + "\nCaroline: Thanks!"  # the turn itself is whole
    neighbour = second.split("\n")[0]
    assert neighbour.startswith("Melanie: word word") and neighbour.endswith(" …")
    assert len(neighbour) <= len("Melanie: ") + 40 + 2


@pytest.mark.parametrize(
    ("turn", "line"),
    [
        (Turn("", "no speaker"), "no speaker"),
        (Turn("user", "  spaced \t out  "), "user: spaced out"),
        (Turn("用户", "我喜欢用 pytest"), "用户: 我喜欢用 pytest"),
    ],
)
def test_turn_line(turn: Turn, line: str) -> None:
    assert turn_line(turn) == line


def test_no_turns() -> None:
    assert turn_passages([], before=1, after=1) == []
