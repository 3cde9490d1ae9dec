"""A query about something the memory never heard of: no partial match answers it.

"What's my shoe size?", "Kafka consumer group lag", "Which Jira board tracks the dashboard
bugs?": most of the query's words are held by no text full text found, and what it did find
holds a word that does not name the thing (*size*, *group*, *dashboard*). `search`'s page
(`memd.conversations.ranking.rank`) then shows a hit only if it matches more than `MATCH` of
the query, or was found by the bridge or the vector alone (their own gates judge those).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from memd.conversations.match_words import query_words, spelled
from memd.core.models import Hit
from memd.semantic.recipe import FTS, VECTOR, Plan

SHARE = 0.6
"""A query of which at least this share of the words are Latin words (a CJK bigram is not a
word) that no found text spells, nor any word its bridge translated them to, is about
something the memory never heard of. Chosen with `MATCH` on the ranking set's folds A-F, both
daemons, each fold also left out (`python -m bench.ranking --unheard --home DIR`: 0.6 and 1/3,
of five settings as good)."""
MATCH = 1 / 3
"""The share of such a query a hit full text found must match to be shown."""


def share(
    words: Sequence[str],
    plan: Plan | None,
    heard: Iterable[tuple[Sequence[str], str]],
) -> float:
    """The share of `words` (a query's, `query_words`) that are Latin words no hit full text
    found (not the vector alone) spells in what it searched of it, nor any word `plan`'s bridge
    translated them to. `heard`: each hit's rankers and what full text searched of it, as
    `memd.semantic.recipe.all_on_common` takes them."""
    latin = [w for w in words if w.isascii()]
    if not latin:
        return 0.0
    low = [t.lower().replace("’", "'") for found_by, t in heard if tuple(found_by) != (VECTOR,)]
    senses: dict[str, set[str]] = {}
    b = plan.bridged if plan is not None else None
    for term, ts in b.words if b is not None else ():
        said = {spelled(w) for t in ts for w in query_words(t)}
        for w in query_words(term):
            senses.setdefault(w, set()).update(said)
    return sum(
        not any(s in t for s in (spelled(w), *senses.get(w, ())) for t in low) for w in latin
    ) / len(words)


def by_own_words(h: Hit) -> bool:
    """Whether full text found the hit by the query's own words: without recall by meaning
    (no ranking named) every hit; with it, those `fts` found (not the bridge or the vector
    alone)."""
    found_by = h.found_by or ()
    return not found_by or FTS in found_by
