"""The memory tree as the page shows it: folders, files, `## Section`s and list items.

Files are listed and parsed as the indexer does (`scan_root`, `parse_markdown`), from the roots
the daemon reports in `status`, so the page shows the Markdown as it is on disk right now. Item
ids are the index's (`item_key`), so the page's buttons name the same items the socket methods
do. Nothing here writes.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from memd.api.messages import FileProblem, RootStatus, StatusResult, or_default
from memd.core import fsio
from memd.core.errors import MemdError
from memd.core.models import Item, ParsedFile
from memd.core.text import item_dates
from memd.memory import authorship
from memd.memory.indexer import Root, scan_root
from memd.memory.parse import parse_markdown, split_item, strip_meta_comments
from memd.memory.repo import item_key
from memd.memory.tree import FOLDERS, is_memory_file

# Folders whose files are listed with their sections inline; journal and archive files can be
# many and long, so they open one at a time.
INLINE = ("_core", "topics", "agents", "projects", "other", "workspace")
_CORE_ORDER = {"preferences.md": 0, "profile.md": 1, "notes.md": 2}
GROUP_LABELS = {
    "_core": "_core/ — always in context",
    "topics": "topics/ — when a question is about the topic",
    "agents": "agents/ — for one agent each",
    "projects": "projects/ — for one project each",
    "journal": "journal/ — conversations, day by day",
    "archive": "archive/ — aged out: searchable, not in context",
    "other": "other files",
}


@dataclass(frozen=True, slots=True)
class RootInfo:
    """A memory root as `status` reports it."""

    index: int
    path: Path
    project: str = ""

    @property
    def label(self) -> str:
        return f"workspace of project {self.project}" if self.project else "memory"


@dataclass(frozen=True, slots=True)
class ItemRef:
    id: str
    text: str
    rel: str


@dataclass(slots=True)
class ItemView:
    """One list item with the metadata of its `<!-- memd … -->` comment spelled out."""

    id: str
    text: str
    line: int
    meta: dict[str, str]
    rel: str
    root: int
    replaced_by: ItemRef | None = None
    writer: str = authorship.HAND  # who wrote it (`memd.memory.authorship`)

    @property
    def managed(self) -> bool:
        """Whether memd wrote it (it carries an id in its metadata comment)."""
        return bool(self.meta.get("id"))

    @property
    def is_memory(self) -> bool:
        """Whether it is a memory a person forgets or changes one by one (not a line memd
        keeps, nor a conversation record)."""
        return authorship.is_memory(self.writer)

    @property
    def type(self) -> str:
        return self.meta.get("type", "")

    @property
    def importance(self) -> str:
        return self.meta.get("imp", "")

    @property
    def hits(self) -> str:
        return self.meta.get("hits", "")

    @property
    def superseded(self) -> str:
        return self.meta.get("superseded", "")

    @property
    def dates(self) -> str:
        """ "said 2026-03-02, added 2026-03-04": the day of its turn and the day memd wrote it."""
        return item_dates(self.meta)

    @property
    def pinned(self) -> bool:
        return self.meta.get("pinned", "") in ("true", "yes", "1")

    def expired(self, today: dt.date) -> bool:
        exp = self.meta.get("expires", "")
        try:
            return bool(exp) and dt.date.fromisoformat(exp) < today
        except ValueError:
            return False

    @property
    def sources(self) -> list[tuple[str, str]]:
        """(session id, turn id) pairs of `src=<session>#<turn>,<turn>`; none for `manual`."""
        session, sep, turns = self.meta.get("src", "").partition("#")
        if not sep or not session:
            return []
        return [(session, t) for t in turns.split(",") if t]


@dataclass(slots=True)
class SectionView:
    heading: str
    level: int
    start_line: int
    end_line: int
    items: list[ItemView]
    notes: str  # the section's other lines, without metadata comments


@dataclass(slots=True)
class FileView:
    root: int
    rel: str
    path: str
    group: str
    title: str = ""
    front_matter: dict[str, Any] = field(default_factory=dict)
    sections: list[SectionView] = field(default_factory=list)
    problem: str = ""
    size: int = 0
    inline: bool = True

    @property
    def items(self) -> list[ItemView]:
        return [i for s in self.sections for i in s.items]


@dataclass(slots=True)
class Group:
    key: str
    label: str
    files: list[FileView]


def roots_from_status(status: StatusResult | None) -> list[RootInfo]:
    """The memory roots `status` names (none without a status)."""
    if status is None:
        return []
    roots = status.roots or [RootStatus(path=or_default(status.memory_root, ""))]
    return [RootInfo(i, Path(r.path), r.project) for i, r in enumerate(roots) if r.path]


def group_of(root: RootInfo, rel: str) -> str:
    if root.project:
        return "workspace"
    top = PurePosixPath(rel).parts[0] if "/" in rel else ""
    return top if top in FOLDERS else "other"


def resolve_file(roots: Sequence[RootInfo], root: int, rel: str) -> tuple[RootInfo, Path] | None:
    """The file `rel` of root number `root`, if it is a memory file inside that root.

    Paths that leave the root (``..``, absolute paths, symlinks pointing out) are refused, as
    the indexer refuses them.
    """
    if not 0 <= root < len(roots) or not rel or rel.startswith("/") or "\\" in rel:
        return None
    if any(p in ("", ".", "..") for p in rel.split("/")) or not is_memory_file(rel):
        return None
    info = roots[root]
    base = info.path.resolve()
    path = info.path / rel
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if not real.is_relative_to(base) or not real.is_file():
        return None
    return info, path


def read_file(info: RootInfo, path: Path, *, max_bytes: int, inline: bool = True) -> FileView:
    """One memory file parsed as the indexer parses it; problems are reported, not raised."""
    rel = os.path.relpath(path, info.path).replace(os.sep, "/")
    view = FileView(info.index, rel, str(path), group_of(info, rel), inline=inline)
    try:
        st = path.stat()
        view.size = st.st_size
        if not inline:
            return view
        if st.st_size > max_bytes:
            view.problem = f"too large to show here ({st.st_size / (1 << 20):.1f} MB)"
            return view
        # As every memory file is read: a regular file inside its root (never through a link
        # put in place since, never a FIFO that would hang the page), at most `max_bytes`.
        data = fsio.read_regular(path, inside=[info.path], max_bytes=max_bytes)
    except OSError as exc:
        view.problem = f"cannot read: {exc.strerror or exc}"
        return view
    except MemdError as exc:
        view.problem = f"cannot read: {exc}"
        return view
    if b"\0" in data[:8192]:
        view.problem = "binary file (contains NUL bytes)"
        return view
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        view.problem = f"invalid UTF-8 at byte {exc.start}"
        return view
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    parsed = parse_markdown(text, fallback_title=PurePosixPath(rel).stem)
    _fill(view, parsed, info)
    if parsed.warnings:
        view.problem = "; ".join(parsed.warnings)
    return view


def _fill(view: FileView, parsed: ParsedFile, info: RootInfo) -> None:
    view.title = parsed.title
    view.front_matter = parsed.front_matter
    for s in parsed.sections:
        items = [_item(view.rel, it, info, s.heading) for it in s.items]
        lines = [
            line
            for line in strip_meta_comments(s.text).split("\n")
            if line.strip() and not _is_item_line(line)
        ]
        view.sections.append(
            SectionView(s.heading, s.level, s.start_line, s.end_line, items, "\n".join(lines))
        )


def _is_item_line(line: str) -> bool:
    return split_item(line) is not None


def read_tail(path: Path, root: Path, *, lines: int, max_bytes: int = 256 * 1024) -> str:
    """The last `lines` lines of the memory file `path` ("" when it cannot be read), read like
    every memory file (a regular file inside `root`, opened without blocking), and no more
    than its last `max_bytes`."""
    try:
        fd = fsio.open_regular(path, inside=[root])
    except (OSError, MemdError):
        return ""
    with os.fdopen(fd, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        fh.seek(max(0, size - max_bytes))
        data = fh.read(max_bytes)
    text = data.decode("utf-8", errors="replace")
    if size > max_bytes:
        text = text.partition("\n")[2]  # the first line read is most likely cut
    return "\n".join(text.rstrip("\n").split("\n")[-lines:])


def _item(rel: str, it: Item, root: RootInfo, heading: str) -> ItemView:
    # A workspace's memory folder holds project memory only: no journal, no agents.
    who = authorship.writer(rel, heading, it.text, it.meta) if not root.project else ""
    return ItemView(
        item_key(rel, it.text, it.meta), it.text, it.line, dict(it.meta), rel, root.index,
        writer=who or (authorship.MEMORY if it.meta.get("id") else authorship.HAND),
    )  # fmt: skip


def scan(
    roots: Sequence[RootInfo], problems: Iterable[FileProblem], *, max_bytes: int
) -> list[Group]:
    """Every memory file of every root, grouped by folder; superseded items linked to their heirs."""
    troubles = {p.path: p.reason for p in problems}
    files: list[FileView] = []
    for info in roots:
        for p in sorted(scan_root(Root(info.path, info.project))):
            rel = os.path.relpath(p, info.path).replace(os.sep, "/")
            view = read_file(
                info, Path(p), max_bytes=max_bytes, inline=group_of(info, rel) in INLINE
            )
            if p in troubles and not view.problem:
                view.problem = troubles[p]
            files.append(view)
    link_replacements(files)
    return group(files, roots)


def link_replacements(files: Sequence[FileView]) -> None:
    """Point every superseded item at the item that replaced it (`by=<id>`), when present."""
    by_id = {i.id: i for f in files for i in f.items if i.managed}
    for f in files:
        for i in f.items:
            heir = by_id.get(i.meta.get("by", ""))
            if i.superseded and heir is not None:
                i.replaced_by = ItemRef(heir.id, heir.text, heir.rel)


def group(files: Sequence[FileView], roots: Sequence[RootInfo]) -> list[Group]:
    keys = [*FOLDERS, "other"]
    out: list[Group] = []
    for key in keys:
        members = [f for f in files if f.group == key]
        if key == "_core":
            members.sort(key=lambda f: (_CORE_ORDER.get(PurePosixPath(f.rel).name, 9), f.rel))
        elif key in ("journal", "archive"):
            members.sort(key=lambda f: f.rel, reverse=True)
        if members or key in FOLDERS:
            out.append(Group(key, GROUP_LABELS[key], members))
    for info in roots:
        if info.project:
            members = [f for f in files if f.root == info.index]
            out.append(Group("workspace", f"{info.label}: {info.path}", members))
    return out


def find_item(groups: Sequence[Group], item_id: str) -> ItemView | None:
    for g in groups:
        for f in g.files:
            for i in f.items:
                if i.id == item_id:
                    return i
    return None


def agents_and_projects(roots: Sequence[RootInfo]) -> tuple[list[str], list[str]]:
    """Agent ids and project slugs that have memory folders (for the context preview)."""
    agents: set[str] = set()
    projects: set[str] = set()
    for info in roots:
        if info.project:
            projects.add(info.project)
            continue
        for folder, names in (("agents", agents), ("projects", projects)):
            try:
                with os.scandir(info.path / folder) as it:
                    names.update(
                        e.name
                        for e in it
                        if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")
                    )
            except OSError:
                continue
    return sorted(agents), sorted(projects)
