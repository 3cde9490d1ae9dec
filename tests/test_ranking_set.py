"""bench/ranking_set/queries.json names only answers that exist; G held out.

A key of a query's `expect` is `<file>#<heading>` (a section of the set's memory tree) or
`turn:<label>` (a turn of conversations.json): a key that names no section or turn could never
be matched, and a query expecting it would count as a miss whatever `search` did. Folds C and D
were written after the ranking was tuned and each measured once, then read as development
data, and so were E and F (written by a third and a fourth stranger, measured once in the
fourth and fifth rounds); fold G, written by a fifth, is the fresh one: no option asks it until
the ranking is frozen, and `--tune` and `--file-weights` can only choose from FOLDS, which must
not hold it. A fold of LATER (H, written by a sixth for a later round) is asked by no option.
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


def test_fold_g_is_fresh_and_fold_f_is_dev() -> None:
    assert FRESH == "G" and FRESH not in FOLDS and FRESH not in DEV
    assert {"C", "D", "E", "F"} <= {*DEV} and {"C", "D", "E", "F"} <= {*FOLDS}


@pytest.mark.parametrize("fold", ["C", "D", "E", "F", "G", "H"])
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


def test_fold_g_is_asked_by_no_option_until_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    """Until the ranking is frozen the fresh fold (G) is asked by no option; F, dev now, is
    asked by default and may be tuned on."""
    monkeypatch.setattr(ranking, "FROZEN", False)
    qs, _ = load_set()
    assert any(q.fold == "G" for q in qs)
    assert _asked(monkeypatch, "--folds", "all") == _asked(monkeypatch) == set(FOLDS)
    assert set(FOLDS) == {"A", "B", "C", "D", "E", "F"}
    assert _asked(monkeypatch, "--folds", "F") == {"F"}
    for argv in (["--folds", "G"], ["--tune", "G"], ["--file-weights", "G"], ["--tune", "FG"]):
        with pytest.raises(SystemExit):
            ranking.main([*argv, "--no-write"])


def test_fold_g_once_frozen_is_asked_only_for_itself_or_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Frozen (as it is since G was measured), G is asked by `--folds G` and `--folds all`,
    never by default nor tuned on."""
    assert ranking.FROZEN
    assert _asked(monkeypatch, "--folds", "all") == {*FOLDS, "G"}
    assert _asked(monkeypatch, "--folds", "G") == {"G"}
    assert _asked(monkeypatch) == set(FOLDS)
    for argv in (["--tune", "G"], ["--file-weights", "G"]):
        with pytest.raises(SystemExit):
            ranking.main([*argv, "--no-write"])


@pytest.mark.parametrize("frozen", [False, True])
def test_a_later_fold_is_asked_by_no_option(monkeypatch: pytest.MonkeyPatch, frozen: bool) -> None:
    """A fold of `LATER` stays out, frozen or not (H is, `test_fold_h_is_asked_by_no_option`);
    here G's queries stand in for one the way it was in the round before (G named LATER and
    NEXT, F the fresh fold)."""
    assert LATER == ("H",) and NEXT == "H" and FRESH not in (*FOLDS, *DEV, TUNED)
    qs, _ = load_set()
    assert any(q.fold == "G" for q in qs)
    monkeypatch.setattr(ranking, "FOLDS", ("A", "B", "C", "D", "E"))
    monkeypatch.setattr(ranking, "DEV", ("B", "C", "D", "E"))
    monkeypatch.setattr(ranking, "FRESH", "F")
    monkeypatch.setattr(ranking, "NEXT", "G")
    monkeypatch.setattr(ranking, "LATER", ("G",))
    monkeypatch.setattr(ranking, "FROZEN", frozen)
    assert "G" not in _asked(monkeypatch, "--folds", "all") | _asked(monkeypatch)
    for argv in (["--folds", "G"], ["--tune", "G"], ["--file-weights", "G"]):
        with pytest.raises(SystemExit):
            ranking.main([*argv, "--no-write"])


def test_a_fold_of_later_is_dropped_before_the_selection(monkeypatch: pytest.MonkeyPatch) -> None:
    """Even a selection that named a fold of LATER (here G, made LATER and FRESH by mistake)
    asks none of it."""
    monkeypatch.setattr(ranking, "FROZEN", True)
    monkeypatch.setattr(ranking, "LATER", ("G",))
    assert _asked(monkeypatch, "--folds", "all") == set(FOLDS)
    with pytest.raises(SystemExit):
        ranking.main(["--folds", "G", "--no-write"])


@pytest.mark.parametrize("fresh", ["F", "G"])
def test_fold_g_is_asked_only_once_it_is_fresh_and_frozen(
    monkeypatch: pytest.MonkeyPatch, fresh: str
) -> None:
    """G was written for the round after the one that made F fresh: `--folds all` leaves it out
    while F is the fresh fold (G in LATER), and asks it only once G is fresh and frozen."""
    assert FRESH == "G" and "G" not in (*FOLDS, *DEV, TUNED)
    qs, _ = load_set()
    assert any(q.fold == "G" for q in qs)
    monkeypatch.setattr(ranking, "FROZEN", False)  # not yet frozen: no option asks G
    for argv in (["--folds", "G"], ["--tune", "G"], ["--file-weights", "G"]):
        with pytest.raises(SystemExit):
            ranking.main([*argv, "--no-write"])
    if fresh == "F":  # the round before: F fresh and asked, G held
        monkeypatch.setattr(ranking, "FOLDS", ("A", "B", "C", "D", "E"))
        monkeypatch.setattr(ranking, "DEV", ("B", "C", "D", "E"))
        monkeypatch.setattr(ranking, "FRESH", "F")
        monkeypatch.setattr(ranking, "LATER", ("G", *LATER))
    monkeypatch.setattr(ranking, "FROZEN", True)
    assert _asked(monkeypatch, "--folds", "all") == {*ranking.FOLDS, fresh}
    assert ("G" in _asked(monkeypatch, "--folds", "all")) == (fresh == "G")
    assert "G" not in _asked(monkeypatch)


def test_fold_h_expects_only_sections_and_turns_that_exist() -> None:
    """Fold H (a sixth stranger's, for a later round) is in the set, and each of its keys names
    a section of the tree or a turn; its negative queries expect nothing."""
    qs, _ = load_set()
    late = [q for q in qs if q.fold == "H"]
    assert len(late) >= 66
    keys = _keys()
    assert {(q.id, k) for q in late for slot in q.expect for k in slot if k not in keys} == set()
    assert {q.kind for q in late} >= {"cross-language", "negative", "curated", "turn-only"}


@pytest.mark.parametrize("frozen", [False, True])
def test_fold_h_is_asked_by_no_option(monkeypatch: pytest.MonkeyPatch, frozen: bool) -> None:
    """H is for a round after the next: it is in LATER whatever this round makes fresh, so no
    option asks it, frozen or not, not even when it is named FRESH by mistake."""
    assert "H" in LATER and "H" not in (*FOLDS, *DEV, FRESH, TUNED)
    qs, _ = load_set()
    assert any(q.fold == "H" for q in qs)
    monkeypatch.setattr(ranking, "FROZEN", frozen)
    assert "H" not in _asked(monkeypatch) | _asked(monkeypatch, "--folds", "all")
    for argv in (["--folds", "H"], ["--tune", "H"], ["--file-weights", "H"], ["--tune", "AH"]):
        with pytest.raises(SystemExit):
            ranking.main([*argv, "--no-write"])
    monkeypatch.setattr(ranking, "FRESH", "H")
    assert "H" not in _asked(monkeypatch, "--folds", "all")
    with pytest.raises(SystemExit):
        ranking.main(["--folds", "H", "--no-write"])


def test_the_key_check_reads_headings_and_labels() -> None:
    keys = _keys()
    assert "topics/travel.md#Kyoto, spring 2027" in keys and "turn:cl4-a2" in keys
    assert "topics/travel.md#Kyoto" not in keys and "turn:cl4-a3" not in keys
