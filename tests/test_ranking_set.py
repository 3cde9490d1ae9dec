"""bench/ranking_set/queries.json names only answers that exist; E stays held out, F and G unasked.

A key of a query's `expect` is `<file>#<heading>` (a section of the set's memory tree) or
`turn:<label>` (a turn of conversations.json): a key that names no section or turn could never
be matched, and a query expecting it would count as a miss whatever `search` did. Folds C and D
were written after the ranking was tuned and each measured once, then read as development
data; fold E, written by a third stranger, is the fresh one: `--tune` and `--file-weights` can
only choose from FOLDS, which must not hold it. Fold F was written for the round after by a
fourth, and fold G for the round after that by a fifth: no option asks either.
"""

from __future__ import annotations

import json
import re

import pytest

from bench import ranking
from bench.ranking import DEV, FOLDS, FRESH, LATER, NEXT, SET, TUNED, Query, load_set

HEADING = re.compile(r"^#{2,6} (.+?)\s*$", re.M)


def _keys() -> set[str]:
    """Every key a query may expect: each section heading of the tree and each turn label."""
    keys = set()
    tree = SET / "tree"
    for path in tree.rglob("*.md"):
        rel = path.relative_to(tree).as_posix()
        keys |= {f"{rel}#{h}" for h in HEADING.findall(path.read_text(encoding="utf-8"))}
    convs = json.loads((SET / "conversations.json").read_text(encoding="utf-8"))
    keys |= {f"turn:{t['label']}" for c in convs for t in c["turns"]}
    return keys


def test_every_expected_key_names_a_section_or_a_turn() -> None:
    qs, _ = load_set()
    keys = _keys()
    missing = {(q.id, k) for q in qs for slot in q.expect for k in slot if k not in keys}
    assert not missing


def test_fold_e_is_fresh_and_fold_d_is_dev() -> None:
    assert FRESH == "E" and FRESH not in FOLDS
    assert {"C", "D"} <= {*DEV} and {"C", "D"} <= {*FOLDS}


@pytest.mark.parametrize("fold", ["C", "D", "E", "F", "G"])
def test_a_late_fold_is_well_formed(fold: str) -> None:
    qs, _ = load_set()
    assert len({q.id for q in qs}) == len(qs)
    late = [q for q in qs if q.fold == fold]
    assert len(late) >= 64
    for q in late:
        assert re.fullmatch(rf"{fold.lower()}-{q.lang}\d\d", q.id) and q.lang in ("en", "zh"), q.id
        assert q.text.strip() and len(q.expect) <= 3, q.id
        assert all(q.expect) and (q.kind == "negative") == (q.expect == []), q.id
    for lang in ("en", "zh"):
        assert sum(q.lang == lang for q in late) >= len(late) * 2 // 5, lang
    earlier = {q.text.casefold() for q in qs if q.fold < fold}
    assert not [q.id for q in late if q.text.casefold() in earlier]


class _Asked(Exception):
    """Raised in place of a run: the queries `main` would have asked."""

    def __init__(self, qs: list[Query]) -> None:
        self.qs = qs


def _asked(monkeypatch: pytest.MonkeyPatch, *argv: str) -> set[str]:
    """The folds `main` selects for these options, stopped before anything is run."""

    def stop(kind: str, qs: list[Query], *_: object) -> None:
        raise _Asked(qs)

    monkeypatch.setattr(ranking, "run_one", stop)
    with pytest.raises(_Asked) as asked:
        ranking.main(["--semantic", "off", "--no-write", *argv])
    return {q.fold for q in asked.value.qs}


def test_fold_e_is_asked_only_for_itself_or_all(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fresh fold is asked by `--folds E` and `--folds all`, never by default, and never
    tuned on; the next fold (F) by nothing."""
    assert NEXT == "F" and NEXT not in (*FOLDS, FRESH, *DEV)
    assert _asked(monkeypatch, "--folds", "all") == {*FOLDS, "E"}
    assert _asked(monkeypatch, "--folds", "E") == {"E"}
    assert _asked(monkeypatch) == set(FOLDS) == {"A", "B", "C", "D"}
    for argv in (["--folds", NEXT], ["--tune", "E"], ["--file-weights", "E"]):
        with pytest.raises(SystemExit):
            ranking.main([*argv, "--no-write"])


@pytest.mark.parametrize("fresh", ["D", "E"])
def test_fold_f_is_asked_by_no_option(monkeypatch: pytest.MonkeyPatch, fresh: str) -> None:
    """F stays out whether E is still NEXT (fresh D) or has become the fresh fold (D dev)."""
    assert "F" in LATER and not {*LATER} & {*FOLDS, *DEV, FRESH, TUNED}
    assert NEXT in ("E", *LATER)  # F may be named NEXT once E is fresh; it stays unasked
    qs, _ = load_set()
    assert any(q.fold == "F" for q in qs)
    if fresh == "D":  # the round before: D fresh, E next
        monkeypatch.setattr(ranking, "FOLDS", ("A", "B", "C"))
        monkeypatch.setattr(ranking, "DEV", ("B", "C"))
        monkeypatch.setattr(ranking, "FRESH", "D")
        monkeypatch.setattr(ranking, "NEXT", "E")
    else:
        monkeypatch.setattr(ranking, "FOLDS", ("A", "B", "C", "D"))
        monkeypatch.setattr(ranking, "DEV", ("B", "C", "D"))
        monkeypatch.setattr(ranking, "FRESH", "E")
    assert "F" not in _asked(monkeypatch, "--folds", "all") | _asked(monkeypatch)
    assert _asked(monkeypatch, "--folds", "all") == {*ranking.FOLDS, fresh}
    for argv in (["--folds", "F"], ["--tune", "F"], ["--file-weights", "F"]):
        with pytest.raises(SystemExit):
            ranking.main([*argv, "--no-write"])


def test_a_fold_of_later_is_dropped_before_the_selection(monkeypatch: pytest.MonkeyPatch) -> None:
    """Even a selection that named F (here F made FRESH by mistake) asks none of LATER."""
    monkeypatch.setattr(ranking, "FRESH", "F")
    assert _asked(monkeypatch, "--folds", "all") == set(FOLDS)
    assert _asked(monkeypatch, "--folds", "F") == set()


@pytest.mark.parametrize("fresh", ["E", "F"])
def test_fold_g_is_asked_by_no_option(monkeypatch: pytest.MonkeyPatch, fresh: str) -> None:
    """G is for the round after the one that makes F fresh: `--folds all` leaves it out whether E
    is still the fresh fold or F has become it (E dev, F no longer in LATER)."""
    assert "G" in LATER and "G" not in (*FOLDS, *DEV, FRESH, TUNED, NEXT)
    qs, _ = load_set()
    assert any(q.fold == "G" for q in qs)
    for argv in (["--folds", "G"], ["--tune", "G"], ["--file-weights", "G"]):
        with pytest.raises(SystemExit):
            ranking.main([*argv, "--no-write"])
    if fresh == "F":  # the next round: F fresh, E dev
        monkeypatch.setattr(ranking, "FOLDS", ("A", "B", "C", "D", "E"))
        monkeypatch.setattr(ranking, "DEV", ("B", "C", "D", "E"))
        monkeypatch.setattr(ranking, "FRESH", "F")
        monkeypatch.setattr(ranking, "LATER", tuple(f for f in LATER if f != "F"))
    assert _asked(monkeypatch, "--folds", "all") == {*ranking.FOLDS, fresh}
    assert "G" not in _asked(monkeypatch)
    monkeypatch.setattr(ranking, "FRESH", "G")  # named fresh by mistake, still dropped
    assert "G" not in _asked(monkeypatch, "--folds", "all") | _asked(monkeypatch, "--folds", "G")


def test_the_key_check_reads_headings_and_labels() -> None:
    keys = _keys()
    assert "topics/travel.md#Kyoto, spring 2027" in keys and "turn:cl4-a2" in keys
    assert "topics/travel.md#Kyoto" not in keys and "turn:cl4-a3" not in keys
