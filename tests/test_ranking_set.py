"""bench/ranking_set/queries.json names only answers that exist, and fold D stays held out.

A key of a query's `expect` is `<file>#<heading>` (a section of the set's memory tree) or
`turn:<label>` (a turn of conversations.json): a key that names no section or turn could never
be matched, and a query expecting it would count as a miss whatever `search` did. Fold C was
written after the ranking was tuned and measured once; fold D was written after that and is
the fresh one: `--tune` and `--file-weights` can only choose from FOLDS, which must not hold it.
"""

from __future__ import annotations

import json
import re

import pytest

from bench.ranking import DEV, FOLDS, FRESH, SET, load_set

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


def test_fold_d_is_fresh_and_fold_c_is_dev() -> None:
    assert FRESH == "D" and FRESH not in FOLDS
    assert "C" in DEV and "C" in FOLDS


@pytest.mark.parametrize("fold", ["C", "D"])
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


def test_the_key_check_reads_headings_and_labels() -> None:
    keys = _keys()
    assert "topics/travel.md#Kyoto, spring 2027" in keys and "turn:cl4-a2" in keys
    assert "topics/travel.md#Kyoto" not in keys and "turn:cl4-a3" not in keys
