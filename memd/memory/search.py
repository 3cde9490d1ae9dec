"""Full-text search over sections (FTS5 bm25) as hits with provenance and a snippet.

The query itself is the repository's (`memd.memory.repo.search_sql` / `search_rows`). With
recall by meaning on (`memd.semantic`), the full-text ranking is fused with the query's
bridge into the other language and with the sections' vectors (`fused_sections`); every hit
then names the rankings that found it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from memd.core.models import Hit
from memd.core.text import snippet, terms
from memd.db import Connection
from memd.memory.parse import split_item
from memd.memory.repo import SectionRow, search_rows, sections_by_id
from memd.semantic.fusion import Ranked, Script, dominant_script
from memd.semantic.recipe import DEPTH, VECTOR, Plan, all_on_common
from memd.semantic.service import SemanticRecall, monotone


def search_sections(
    conn: Connection,
    query: str,
    *,
    limit: int = 10,
    kinds: Sequence[str] = (),
    exclude_kinds: Sequence[str] = (),
    owner: str | None = None,
    mode: str = "auto",
    semantic: SemanticRecall | None = None,
) -> list[Hit]:
    """Sections matching `query` as hits with provenance and a snippet, best first."""
    found, qt = find_sections(conn, query, limit=limit, kinds=kinds, exclude_kinds=exclude_kinds,
                              owner=owner, mode=mode, semantic=semantic)  # fmt: skip
    return [_hit(f.row, qt, round(f.score, 4), f.found_by, f.item) for f in found]


def find_sections(
    conn: Connection,
    query: str,
    *,
    limit: int = 10,
    kinds: Sequence[str] = (),
    exclude_kinds: Sequence[str] = (),
    owner: str | None = None,
    mode: str = "auto",
    semantic: SemanticRecall | None = None,
    text: SectionLists | None = None,
) -> tuple[list[FusedSection], list[str]]:
    """Sections matching `query`, best first, and the terms they were matched on (the query's,
    and with recall by meaning its bridge's). With recall by meaning on, the recipe's fusion
    (`fused_sections`, from `text` when its full-text half was run already), a section found
    by its vector alone only when it is close enough."""
    p = text.plan if text is not None else semantic.plan(query) if semantic is not None else None
    if semantic is not None and p is not None:
        found = fused_sections(conn, p, semantic, limit=limit, kinds=kinds,
                               exclude_kinds=exclude_kinds, owner=owner, mode=mode, gate=True,
                               text=text)  # fmt: skip
        return found, terms(" ".join(p.full_text.values()))
    rows = search_rows(
        conn, query, limit=limit, kinds=kinds, exclude_kinds=exclude_kinds, owner=owner, mode=mode
    )
    return [FusedSection(r, -float(r.rank), (), "") for r in rows], terms(query)


def _hit(
    r: SectionRow, qt: list[str], score: float, found_by: tuple[str, ...] = (), item: str = ""
) -> Hit:
    # Found by a vector alone, through one of the section's memories: that memory is the
    # excerpt (the query's words are not in the section to centre on).
    by_vector_only = bool(item) and found_by == (VECTOR,)
    return Hit(
        kind="section",
        path=r.path,
        heading=r.heading,
        start_line=r.start_line,
        end_line=r.end_line,
        score=score,
        snippet=snippet(item, qt) if by_vector_only else snippet(r.text or r.heading, qt),
        text=r.text,
        file_kind=r.kind,
        archived=r.kind == "archive",
        found_by=list(found_by),
    )


def _mixed(text: str) -> bool:
    """Whether a section's list items are written in more than one script (CJK and Latin)."""
    return not text.isascii() and _mixed_scripts(text)


@lru_cache(maxsize=2048)  # the same sections come back query after query
def _mixed_scripts(text: str) -> bool:
    seen: set[Script] = set()
    for line in text.split("\n"):
        item = split_item(line)
        if item is not None and item[0]:
            seen.add(dominant_script(item[0]))
    return {"cjk", "latin"} <= seen


@dataclass(frozen=True, slots=True)
class FusedSection:
    """A section ranked by fusion: its row, fused score, the rankings that found it, its
    script, its vector's z-score among the scope's when asked for (`SemanticRecall.is_close`),
    and the memory in it the query came closest to, when that was one of its items' vectors."""

    row: SectionRow
    score: float
    found_by: tuple[str, ...]
    script: Script
    z: float | None = None
    item: str = ""
    cosine: float | None = None
    bound: float | None = None
    """The last cosine of the vector list: an upper bound of a cosine the list did not reach."""

    @property
    def judged_cosine(self) -> float | None:
        """Its cosine, or for a section the vector list did not reach, the list's last."""
        return self.cosine if self.cosine is not None else self.bound

    @property
    def cosine_script(self) -> Script:
        """The script of the text its cosine was measured with: the item's when its best
        vector was one of its items' (a Chinese memory among English ones in one section),
        else the section's. The calibrated scale of a cosine is that of this script."""
        return judged_script(self.script, self.item)


def judged_script(section_script: Script, item: str) -> Script:
    """The script a section's cosine is judged in (`FusedSection.cosine_script`)."""
    return dominant_script(item) if item else section_script


@dataclass(frozen=True, slots=True)
class SectionLists:
    """The half of `fused_sections` that needs no vector: the full-text rankings of one query's
    plan over sections (as typed and bridged) and the rows they found."""

    plan: Plan
    rows: dict[int, SectionRow]
    lists: dict[str, Ranked[int]]


def section_lists(
    conn: Connection,
    p: Plan,
    semantic: SemanticRecall,
    *,
    kinds: Sequence[str] = (),
    exclude_kinds: Sequence[str] = (),
    owner: str | None = None,
    mode: str = "auto",
) -> SectionLists:
    """Full text with the query as typed and bridged (`DEPTH` each), the query's vector asked
    for first so that it is embedded meanwhile."""
    semantic.prefetch(p)
    rows: dict[int, SectionRow] = {}
    lists: dict[str, Ranked[int]] = {}
    for name, text in p.full_text.items():
        found = search_rows(conn, text, limit=DEPTH, kinds=kinds, exclude_kinds=exclude_kinds,
                            owner=owner, mode=mode)  # fmt: skip
        rows.update((r.id, r) for r in found if r.id not in rows)
        lists[name] = Ranked([r.id for r in found], monotone([-float(r.rank) for r in found]))
    return SectionLists(p, rows, lists)


def fused_sections(
    conn: Connection,
    p: Plan,
    semantic: SemanticRecall,
    *,
    limit: int,
    kinds: Sequence[str] = (),
    exclude_kinds: Sequence[str] = (),
    owner: str | None = None,
    agent_id: str | None = None,
    mode: str = "auto",
    z: bool = False,
    gate: bool = False,
    text: SectionLists | None = None,
) -> list[FusedSection]:
    """The recipe over sections: full text with the query as typed and bridged
    (`section_lists`, or `text` when the caller ran it already with the same scope), the
    nearest section vectors of the same scope, fused (`memd.semantic.recipe.fuse`). With
    `gate`, a section found by its vector alone is kept only when its cosine reaches the
    calibrated floor (`memd.semantic.recipe.close_enough`)."""
    if text is None:
        text = section_lists(conn, p, semantic, kinds=kinds, exclude_kinds=exclude_kinds,
                             owner=owner, mode=mode)  # fmt: skip
    rows = dict(text.rows)
    lists = dict(text.lists)
    near = semantic.sections(p, kinds=kinds, exclude_kinds=exclude_kinds, owner=owner,
                             agent_id=agent_id, z=z)  # fmt: skip
    if near.docs:
        rows.update(
            (r.id, r) for r in sections_by_id(conn, [d for d in near.docs if d not in rows])
        )
        # A vector of a section re-indexed since the matrix was built has no row: left out.
        keep = [(d, c) for d, c in zip(near.docs, near.cosines, strict=True) if d in rows]
        lists[VECTOR] = Ranked([d for d, _ in keep], [c for _, c in keep])
    scripts = semantic.scripts(near, {i: r.text for i, r in rows.items()}, rows)
    cos = dict(zip(near.docs, near.cosines, strict=True))
    # A section of memories in both scripts (`remember` puts every memory in one section) is
    # matched by a full-text list of either: its dominant script says nothing of each memory.
    either: dict[int, Script] = {k: "" if _mixed(rows[k].text) else s for k, s in scripts.items()}
    fused = semantic.fuse(p, lists, either, None if gate else limit,
                          text_of=lambda k: searched_text(rows[k]))  # fmt: skip
    said = {rows[h.key].path for h in fused.hits if h.found_by != (VECTOR,)}
    # A section a full vector list did not reach is no closer than the list's last one.
    bound = min(near.cosines) if len(near.cosines) >= DEPTH else None
    common = gate and all_on_common(
        p, ((h.found_by, searched_text(rows[h.key])) for h in fused.hits)
    )
    hits = [h for h in fused.hits if not gate or semantic.kept(
        p, h.found_by, cos.get(h.key, bound),
        judged_script(scripts[h.key], near.items.get(h.key, "")), rows[h.key].path in said,
        common and h.found_by != (VECTOR,))]  # fmt: skip
    zs = dict(zip(near.docs, near.z, strict=True)) if z else {}
    return [FusedSection(rows[h.key], h.score, h.found_by, scripts[h.key], zs.get(h.key),
                         near.items.get(h.key, ""), cos.get(h.key), bound)
            for h in hits[:limit]]  # fmt: skip


def searched_text(r: SectionRow) -> str:
    """What full text searches of a section: its file's title and path, heading and body."""
    return f"{r.title} {r.rel} {r.heading} {r.text}"
