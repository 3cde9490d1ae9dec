"""remember / forget / memories / the global switch, and resolving a project to its memory.

Markdown stays the source of truth: `remember` appends a list item (with its metadata comment)
to the right file and re-indexes that file at once, so the next query sees it; `forget` removes
the item's line from the Markdown and then from the index.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from memd.api import messages as msg
from memd.core.errors import InvalidParams, MemoryDisabled, NotFound, PathError
from memd.core.fsio import make_private_dir, within
from memd.core.fsio import real as real_of
from memd.core.models import MEMORY_TYPES
from memd.core.paths import WORKSPACE_DIR, find_workspace, project_base
from memd.core.redact import redact
from memd.core.text import terms
from memd.db import Store
from memd.db.recovery import is_disk_full
from memd.history import Cause
from memd.memory import authorship
from memd.memory import repo as docs
from memd.memory.edit import ItemChange, add_item, change_item, move_item, remove_items
from memd.memory.files import MemoryFiles, Operation, Written
from memd.memory.indexer import Indexer, Root
from memd.memory.items import check_item_text, clean_text, heading_problem
from memd.memory.tree import is_memory_file, slugify

SCOPES = ("user", "project", "agent")
ITEM_FILE_SUFFIXES = (".md", ".markdown")
NOT_ITEM_FOLDERS = ("journal", "archive")
PROJECT_DIR = WORKSPACE_DIR


@dataclass(frozen=True, slots=True)
class Project:
    """A project as memd sees it: its slug and, when it has one, its workspace folder."""

    slug: str
    workspace: Path | None

    @property
    def memory_dir(self) -> Path | None:
        return self.workspace / PROJECT_DIR if self.workspace else None


def resolve_project(project: str) -> Project:
    """A slug stays a slug; a path is walked up to its workspace (`.memd/memory/` or `.git`).

    For folders the user configured (`memory.workspaces`); what a caller names goes through
    `MemoryOps.project`, which also checks where the folder is.
    """
    if not project:
        return Project("", None)
    if not _looks_like_path(project):
        return Project(slugify(project), None)
    start = Path(os.path.realpath(Path(project).expanduser()))
    ws = find_workspace(start, top=Path(start.anchor)) or start
    return Project(slugify(ws.name), ws)


def _looks_like_path(project: str) -> bool:
    return "/" in project or os.sep in project or project.startswith(("~", "."))


def _refuse(message: str, hint: str = "") -> InvalidParams:
    return InvalidParams(f"param 'project': {message}", hint=hint)


def check_project(
    project: str,
    *,
    home: Path,
    workspaces: Sequence[str],
    private: Sequence[Path],
    trusted: bool = False,
) -> Project:
    """The project a caller names: a slug, a configured workspace (or a folder in one), an
    existing folder below the user's home, or, `trusted` (a person named it from their own
    shell or session), an existing folder anywhere; never in memd's own folders.
    `InvalidParams` naming the param for anything else, with the setting that allows it.

    Relative paths are refused: only the caller knows the folder they are relative to, so the
    clients (CLI, MCP, hooks) make them absolute before they send them.
    """
    if not project or not _looks_like_path(project):
        return resolve_project(project)
    path = Path(project).expanduser()
    if not path.is_absolute():
        raise _refuse(f"{project!r} is a relative path; send an absolute path or a project slug",
                      hint="memd's clients resolve '.' and relative paths where they run")  # fmt: skip
    real = os.path.realpath(path)
    if not os.path.isdir(real):
        raise _refuse(f"{project} is not an existing folder")
    configured = [os.path.realpath(Path(w).expanduser()) for w in workspaces]
    own = [os.path.realpath(p) for p in private]
    if any(real == p or real.startswith(p.rstrip(os.sep) + os.sep) for p in own):
        raise _refuse(f"{project} is inside memd's own folders (its memory tree or data)")
    base = project_base(real, home=os.path.realpath(home), workspaces=configured,
                        private=own, trusted=trusted)  # fmt: skip
    if base is None:
        raise _refuse_folder(project, real, home)
    # The home itself is no workspace (a dotfiles repository there would swallow every folder).
    configured_base = base in configured
    found = find_workspace(Path(real), top=Path(base), include_top=configured_base)
    ws = found or Path(base if configured_base else real)
    mdir = ws / PROJECT_DIR
    # A cloned repository decides what its `.memd` holds: a link out of it is not followed.
    if not configured_base and mdir.exists() and not within(real_of(mdir), real_of(ws)):
        raise _refuse(f"{mdir} leads outside the workspace {ws}; memd does not follow it")
    return Project(slugify(ws.name), ws)


def _refuse_folder(project: str, real: str, home: Path) -> InvalidParams:
    """The refusal of a folder outside the home, with the exact way to allow it."""
    mine = os.path.realpath(home)
    if mine == real or mine.startswith(real.rstrip(os.sep) + os.sep):
        # A repository there would swallow every folder of the home.
        return _refuse(f"{project} is your home or a folder above it: not a project folder")
    ws = find_workspace(Path(real), top=Path(Path(real).anchor), include_top=False) or Path(real)
    return _refuse(
        f"{project} is not a folder below your home ({home}) nor a configured workspace",
        hint=f"allow it with `memd workspace add {ws}`, or in the settings file:"
        f" [memory] workspaces = [{json.dumps(str(ws))}] (a folder you name from your own shell"
        " with `memd remember --project` is taken as it is)",
    )


def new_memory_id() -> str:
    return "m_" + secrets.token_hex(4)


class MemoryOps:
    """The memory operations of one daemon (or one CLI process)."""

    def __init__(
        self,
        store: Store,
        indexer: Indexer,
        memory_root: Path,
        *,
        enabled_default: bool = True,
        on_new_root: Callable[[Root], None] | None = None,
        today: Callable[[], dt.date] = dt.date.today,
        workspaces: Callable[[], Sequence[str]] = tuple,
        private: Sequence[Path] = (),
        files: MemoryFiles | None = None,
    ) -> None:
        self.store = store
        # The door every write below goes through; each operation is one change of the history.
        self.files = files if files is not None else MemoryFiles(indexer.root_paths)
        self.indexer = indexer
        self.memory_root = memory_root
        self.enabled_default = enabled_default
        self.on_new_root = on_new_root
        self.today = today
        # Configured workspaces (read at each use: a reload may change them) and memd's own
        # folders, which are never a project.
        self.workspaces = workspaces
        self.private = private

    # -- switch ---------------------------------------------------------------------------
    def enabled(self) -> bool:
        v = docs.get_state(self.store.read(), "enabled", "")
        return self.enabled_default if v == "" else v == "1"

    def set_enabled(self, on: bool) -> bool:
        self.store.w.run(lambda c: docs.set_state(c, "enabled", "1" if on else "0"))
        return on

    def require_enabled(self) -> None:
        if not self.enabled():
            raise MemoryDisabled(
                "memory is disabled",
                hint="turn it on with `memd enable` (set_enabled over the socket)",
            )

    # -- projects -------------------------------------------------------------------------
    def project(
        self, project: str, *, create: bool = False, lenient: bool = False, trusted: bool = False
    ) -> Project:
        """Resolve a project a caller names (`check_project`; `trusted`: a person named it) and
        make sure its workspace memory folder is indexed and watched. `lenient` (a folder a
        session recorded): one memd does not accept is not an error but its nearest accepted
        workspace, or the slug of its name."""
        try:
            p = self._check(project, trusted=trusted)
        except InvalidParams:
            if not lenient:
                raise
            p = self._recorded(project)
        mdir = p.memory_dir
        if self.store.writer is None:  # read-only (CLI without a daemon): look, don't register
            return p
        if mdir is not None and (create or mdir.is_dir()):
            if create:
                make_private_dir(mdir)
            root = Root(mdir, p.slug)
            if self.indexer.add_root(root):
                self.indexer.index_paths([str(mdir)])
                if self.on_new_root:
                    self.on_new_root(root)
        return p

    def rejoin(self, folder: str, slug: str) -> bool:
        """A project's memory folder the index holds files of from before this start (`folder`,
        its `slug`) is a root again — watched, and read by the first scan with the others —
        when its workspace still resolves to it and memd accepts it as a caller naming it
        would (`check_project`, not trusted). Not read here. True when added."""
        path = Path(folder)
        if path.parts[-len(PROJECT_DIR.parts) :] != PROJECT_DIR.parts:
            return False
        workspace = path.parents[len(PROJECT_DIR.parts) - 1]
        try:
            p = self._check(str(workspace))
        except InvalidParams:
            return False
        mdir = p.memory_dir
        if p.slug != slug or mdir is None or os.path.realpath(mdir) != folder or not mdir.is_dir():
            return False
        return self.indexer.add_root(Root(mdir, p.slug))

    def _check(self, project: str, *, trusted: bool = False) -> Project:
        return check_project(project, home=Path.home(), workspaces=self.workspaces(),
                             private=[*self.indexer.root_paths(), *self.private],
                             trusted=trusted)  # fmt: skip

    def _recorded(self, project: str) -> Project:
        """A folder a session recorded that memd does not accept as it is (gone since, or
        elsewhere): the workspace of its nearest existing folder when that is one memd accepts,
        else the slug of its name."""
        slug = Project(slugify(os.path.basename(project.rstrip("/"))), None)
        path = Path(project)
        if not path.is_absolute():
            return slug
        existing = next((d for d in (path, *path.parents) if d.is_dir()), None)
        try:
            p = self._check(str(existing)) if existing is not None else slug
        except InvalidParams:
            return slug
        ws = p.workspace
        if ws is None or not ((ws / PROJECT_DIR).is_dir() or (ws / ".git").exists()):
            return slug
        return p

    # -- remember / forget / list ---------------------------------------------------------
    def target(
        self, scope: str, type_: str, project: str, agent_id: str, *, trusted: bool = False
    ) -> tuple[Path, str, str]:
        """(file, section, title) a new memory of this scope and type goes to (`trusted`: a
        person named the project's folder).

        The file is its real path: a symbolic link is followed to its target when that is
        inside the memory roots (the link stays a link), and refused (`PathError`) when not.
        """
        path, section, title = self._target(scope, type_, project, agent_id, trusted)
        return self.indexer.resolve(path), section, title

    def _target(
        self, scope: str, type_: str, project: str, agent_id: str, trusted: bool = False
    ) -> tuple[Path, str, str]:
        if scope == "user":
            if type_ == "preference":
                return (
                    self.memory_root / "_core" / "preferences.md",
                    "Remembered",
                    "User Preferences",
                )
            if type_ in ("personal", "skill"):
                return self.memory_root / "_core" / "profile.md", "Remembered", "User Profile"
            return self.memory_root / "_core" / "notes.md", "Notes", "Notes"
        if scope == "project":
            if not project:
                raise InvalidParams("scope 'project' needs a project (workspace path or slug)")
            p = self.project(project, create=True, trusted=trusted)
            if p.memory_dir is not None:
                return p.memory_dir / "context.md", "Context", f"Project {p.slug}"
            return (
                self.memory_root / "projects" / p.slug / "context.md",
                "Context",
                f"Project {p.slug}",
            )
        if scope == "agent":
            if not agent_id:
                raise InvalidParams("scope 'agent' needs an agent_id")
            slug = slugify(agent_id)
            return (
                self.memory_root / "agents" / slug / "relationship.md",
                "Memory Points",
                "Agent Relationship",
            )
        raise InvalidParams(f"scope must be one of {', '.join(SCOPES)}, not {scope!r}")

    def remember(
        self,
        text: str,
        *,
        scope: str = "user",
        project: str = "",
        agent_id: str = "",
        type_: str = "",
        importance: int = 7,
        source: str = "manual",
        trusted: bool = False,
    ) -> msg.RememberResult:
        """Append a memory to the right Markdown file and index it now; return its id and place.

        The same statement (normalised text) already in effect in that file is not added
        twice: its `hits` is bumped and the answer says `existed`. When the index cannot be
        written because the disk is full, the line is taken out of the file again before the
        error is raised, so a retry does not find half a remember.
        """
        self.require_enabled()
        check_item_text(str(text))
        text = redact(clean_text(str(text)))
        if not text:
            raise InvalidParams("nothing to remember: text is empty")
        if type_ and type_ not in MEMORY_TYPES:
            raise InvalidParams(f"type must be one of {', '.join(MEMORY_TYPES)}")
        path, section, title = self.target(scope, type_, project, agent_id, trusted=trusted)
        meta = {"id": new_memory_id()}
        if type_:
            meta["type"] = type_
        meta.update(
            {"imp": str(max(1, min(10, importance))), "src": source, "at": self.today().isoformat()}
        )
        with self.files.operation(Cause.REMEMBER) as op:
            written = self.files.edit(
                path, add_item(path, section, text, meta, title=title, dedupe=True), op
            )
            item = written.result
            op.detail = f"id={item.meta.get('id', '')} {text}"
            try:
                self.indexer.index_paths([str(path)])
            except Exception as exc:
                if is_disk_full(exc) and written.changed and not item.existed:
                    self._take_back(written, item.meta.get("id", ""), op)
                raise
        return msg.RememberResult(
            id=item.meta.get("id", meta["id"]), path=str(path), line=item.line, scope=scope,
            text=item.text, existed=item.existed,
        )  # fmt: skip

    def _take_back(self, written: Written[Any], item_id: str, op: Operation) -> None:
        """Remove a just-written item whose indexing failed (a full disk)."""
        if self.files.take_back(written, op):
            return
        gone = remove_items(written.path, lambda _t, m: m.get("id") == item_id)
        with contextlib.suppress(OSError):
            self.files.edit(written.path, gone, op)  # guarded: an older copy cannot bring it back

    def find_items(self, query: str, *, limit: int = 50) -> list[msg.MemoryItem]:
        """Memory items whose text contains every term of `query` (case-insensitive): not the
        journal's conversation records, nor the lines memd keeps (`authorship`)."""
        qt = terms(query) or terms(query, drop_stopwords=False)
        if not qt:
            return []
        rows = docs.items_containing(self.store.read(), qt, limit)
        return [_item(r) for r in rows if authorship.is_memory(_writer(r))]

    def forget(self, *, id: str = "", query: str = "", confirm: bool = False) -> msg.ForgetResult:
        """Remove items by id, or by query (only with `confirm`; otherwise list candidates)."""
        self.require_enabled()
        if not id and not query:
            raise InvalidParams("forget needs an id or a query")
        if id:
            rows = docs.items_with_id(self.store.read(), id)
            if not rows:
                raise NotFound(f"no memory with id {id!r}")
            _refuse_kept(rows[0])
            cands = [_item(r) for r in rows]
        else:
            cands = self.find_items(query)
            if not confirm:
                return msg.ForgetResult(removed=[], candidates=cands)
        removed: list[msg.RemovedItem] = []
        by_path: dict[str, set[str]] = {}
        for c in cands:
            by_path.setdefault(c.path, set()).add(c.id)
        with self.files.operation(Cause.FORGET) as change:
            for path, ids in by_path.items():
                target = self.indexer.resolve(path)  # a link put in its place: its target
                rel = self._rel(path)
                gone = remove_items(target, _id_matcher(rel, ids))
                for g in self.files.edit(target, gone, change).result:
                    # As the index served it: a secret written by hand in the item stays home.
                    removed.append(
                        msg.RemovedItem(id=docs.item_key(rel, g.text, g.meta),
                                        text=redact(g.text), path=path)
                    )  # fmt: skip
            change.detail = "; ".join(f"id={r.id} {r.text}" for r in removed)
        self.indexer.index_paths(list(by_path))
        return msg.ForgetResult(removed=removed, candidates=cands)

    def roots(self) -> list[Path]:
        """The memory roots: every write of a memory file stays inside them."""
        return self.indexer.root_paths()

    def _rel(self, path: str) -> str:
        root = self.indexer.root_of(path)
        return os.path.relpath(path, root.path).replace(os.sep, "/") if root else path

    def edit_item(self, item_id: str, change: ItemChange) -> msg.EditItemResult:
        """Change one item in place (text, importance, pin, expiry) and/or move it to another
        file or section, only if its text on disk is still `change.expect_text` (when given).

        Raises `NotFound` (no such item), `EditConflict` (it changed since it was shown; nothing
        written), `InvalidParams` (a bad value or destination).
        """
        self.require_enabled()
        if not item_id:
            raise InvalidParams("param 'id' is required")
        change.check()
        rows = docs.items_with_id(self.store.read(), item_id)
        if not rows:
            raise NotFound(
                f"no memory with id {item_id!r}", hint="reload: it may have been removed"
            )
        _refuse_kept(rows[0])
        path = Path(rows[0].path)
        dest = self._destination(change.move_to[0]) if change.move_to else path
        match = _id_matcher(self._rel(str(path)), {item_id})
        # An item that moves, or gets metadata, needs an id of its own to be found again.
        new_id = new_memory_id() if (dest != path or change.meta_changes()) else ""
        new_text = redact(clean_text(change.text)) if change.text is not None else None

        def apply(text: str, meta: dict[str, str]) -> tuple[str, dict[str, str]]:
            return change.apply(text, meta, new_text, new_id)

        with self.files.operation(Cause.EDIT) as scope:
            if change.move_to is None:
                edit = change_item(path, match, apply, expect_text=change.expect_text)
                item = self.files.edit(path, edit, scope).result
            else:
                section = change.move_to[1] or "Notes"
                item = move_item(self.files, path, dest, section, match, apply, scope,
                                 expect_text=change.expect_text)  # fmt: skip
            scope.detail = f"id={item.meta.get('id', item_id)} {item.text}"
        self.indexer.index_paths(sorted({str(path), str(dest)}))
        return msg.EditItemResult(
            id=docs.item_key(self._rel(str(dest)), item.text, item.meta), path=str(dest),
            line=item.line, text=redact(item.text), meta=item.meta,
            moved_from=str(path) if dest != path else "",
        )  # fmt: skip

    def _destination(self, rel: str) -> Path:
        """A file of the memory tree where items live, named by a path relative to its root:
        a `.md` (or `.markdown`) file, not in `journal/` or `archive/` (conversations and what
        aged out), written as memd writes names (the same rule as an import's paths)."""
        p = PurePosixPath(rel)
        if (
            not rel
            or "\\" in rel
            or heading_problem(rel)
            or p.is_absolute()
            or any(x in ("", ".", "..") for x in rel.split("/"))
            or not p.name.endswith(ITEM_FILE_SUFFIXES)
            or p.parts[0] in NOT_ITEM_FOLDERS
            or not is_memory_file(str(p))
        ):
            raise InvalidParams(
                f"param 'move_to.path': {rel!r} is not a Markdown file of the memory tree where"
                " items live (a path like topics/vue.md; not in journal/ or archive/)"
            )
        try:
            return self.indexer.resolve(self.memory_root / p)  # a link: its target, if inside
        except PathError as exc:
            raise InvalidParams(f"param 'move_to.path': {exc}") from None

    def memories(
        self, scope: str = "", *, include_superseded: bool = False
    ) -> list[msg.MemoryItem]:
        """The list items in effect (what `context` can draw on), optionally filtered by scope."""
        kinds = {
            "user": ("core", "topic", "note"),
            "project": ("project",),
            "agent": ("agent",),
            "": ("core", "topic", "note", "project", "agent"),
        }.get(scope)
        if kinds is None:
            raise InvalidParams(f"scope must be one of {', '.join(SCOPES)}")
        rows = docs.items_of_kinds(self.store.read(), kinds)
        items = [_item(r) for r in rows if authorship.is_memory(_writer(r))]
        if not include_superseded:
            items = [i for i in items if not i.meta.get("superseded")]
        return items


def _id_matcher(rel: str, ids: set[str]) -> Callable[[str, dict[str, str]], bool]:
    def match(text: str, meta: dict[str, str]) -> bool:
        return docs.item_key(rel, text, meta) in ids

    return match


def _writer(r: docs.ItemRow) -> str:
    meta = json.loads(r.meta) if r.meta else {}
    return authorship.writer(r.rel, r.heading, r.text, meta)


def _refuse_kept(r: docs.ItemRow) -> None:
    """`forget` by id of a line that is no memory item: say what it is and how it goes."""
    who = _writer(r)
    if who == authorship.JOURNAL:
        raise InvalidParams(
            f"{r.item_id} is a conversation record in {r.rel}, not a memory item",
            hint="forget the conversation it records, everywhere: memd forget --session ID"
            " (forget_conversation over the socket)",
        )
    if who == authorship.STATUS:
        raise InvalidParams(
            f"{r.item_id} is a line memd keeps in {r.rel} ({r.heading}), rewritten after each"
            " session, not a memory item",
            hint=f"edit {r.path} to change it (memd goes on from an edited trust)",
        )


def _item(r: docs.ItemRow) -> msg.MemoryItem:
    meta = json.loads(r.meta) if r.meta else {}
    scope = {"project": "project", "agent": "agent"}.get(r.kind, "user")
    return msg.MemoryItem(
        id=r.item_id, text=r.text, path=r.path, rel=r.rel, line=r.line,
        type=meta.get("type", ""), scope=scope, owner=r.owner, meta=meta,
    )  # fmt: skip
