"""remember / forget / memories / the global switch, and resolving a project to its memory.

Markdown stays the source of truth: `remember` appends a list item (with its metadata comment)
to the right file and re-indexes that file at once, so the next query sees it; `forget` removes
the item's line from the Markdown and then from the index.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memd.core.errors import InvalidParams, MemoryDisabled, NotFound
from memd.core.models import MEMORY_TYPES
from memd.core.redact import redact
from memd.core.text import terms
from memd.db import Store
from memd.memory import repo as docs
from memd.memory.edit import append_item, remove_items
from memd.memory.indexer import Indexer, Root
from memd.memory.tree import slugify

SCOPES = ("user", "project", "agent")
PROJECT_DIR = Path(".memd") / "memory"


@dataclass(frozen=True, slots=True)
class Project:
    """A project as memd sees it: its slug and, when it has one, its workspace folder."""

    slug: str
    workspace: Path | None

    @property
    def memory_dir(self) -> Path | None:
        return self.workspace / PROJECT_DIR if self.workspace else None


def resolve_project(project: str) -> Project:
    """A slug stays a slug; a path is walked up to its workspace (`.memd/memory/` or `.git`)."""
    if not project:
        return Project("", None)
    looks_like_path = "/" in project or project.startswith(("~", "."))
    if not looks_like_path:
        return Project(slugify(project), None)
    start = Path(project).expanduser().absolute()
    for d in (start, *start.parents):
        if (d / PROJECT_DIR).is_dir():
            return Project(slugify(d.name), d)
    for d in (start, *start.parents):
        if (d / ".git").exists():
            return Project(slugify(d.name), d)
    return Project(slugify(start.name), start)


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
    ) -> None:
        self.store = store
        self.indexer = indexer
        self.memory_root = memory_root
        self.enabled_default = enabled_default
        self.on_new_root = on_new_root
        self.today = today

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
    def project(self, project: str, *, create: bool = False) -> Project:
        """Resolve a project and make sure its workspace memory folder is indexed and watched."""
        p = resolve_project(project)
        mdir = p.memory_dir
        if self.store.writer is None:  # read-only (CLI without a daemon): look, don't register
            return p
        if mdir is not None and (create or mdir.is_dir()):
            if create:
                mdir.mkdir(parents=True, exist_ok=True)
            root = Root(mdir, p.slug)
            if self.indexer.add_root(root):
                self.indexer.index_paths([str(mdir)])
                if self.on_new_root:
                    self.on_new_root(root)
        return p

    # -- remember / forget / list ---------------------------------------------------------
    def target(self, scope: str, type_: str, project: str, agent_id: str) -> tuple[Path, str, str]:
        """(file, section, title) a new memory of this scope and type goes to."""
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
            p = self.project(project, create=True)
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
    ) -> dict[str, Any]:
        """Append a memory to the right Markdown file and index it now; return its id and place."""
        self.require_enabled()
        text = redact(" ".join(str(text).split()))
        if not text:
            raise InvalidParams("nothing to remember: text is empty")
        if type_ and type_ not in MEMORY_TYPES:
            raise InvalidParams(f"type must be one of {', '.join(MEMORY_TYPES)}")
        path, section, title = self.target(scope, type_, project, agent_id)
        meta = {"id": new_memory_id()}
        if type_:
            meta["type"] = type_
        meta.update(
            {"imp": str(max(1, min(10, importance))), "src": source, "at": self.today().isoformat()}
        )
        item = append_item(path, section, text, meta, title=title)
        self.indexer.index_paths([str(path)])
        return {
            "id": meta["id"],
            "path": str(path),
            "line": item.line,
            "scope": scope,
            "text": text,
        }

    def find_items(self, query: str, *, limit: int = 50) -> list[dict[str, Any]]:
        """Items whose text contains every term of `query` (case-insensitive)."""
        qt = terms(query) or terms(query, drop_stopwords=False)
        if not qt:
            return []
        return [_item_dict(r) for r in docs.items_containing(self.store.read(), qt, limit)]

    def forget(self, *, id: str = "", query: str = "", confirm: bool = False) -> dict[str, Any]:
        """Remove items by id, or by query (only with `confirm`; otherwise list candidates)."""
        self.require_enabled()
        if not id and not query:
            raise InvalidParams("forget needs an id or a query")
        if id:
            cands = [_item_dict(r) for r in docs.items_with_id(self.store.read(), id)]
            if not cands:
                raise NotFound(f"no memory with id {id!r}")
        else:
            cands = self.find_items(query)
            if not confirm:
                return {"removed": [], "candidates": cands}
        removed: list[dict[str, Any]] = []
        by_path: dict[str, set[str]] = {}
        for c in cands:
            by_path.setdefault(c["path"], set()).add(c["id"])
        for path, ids in by_path.items():
            root = self.indexer.root_of(path)
            rel = os.path.relpath(path, root.path).replace(os.sep, "/") if root else path
            for g in remove_items(Path(path), _id_matcher(rel, ids)):
                removed.append(
                    {"id": docs.item_key(rel, g.text, g.meta), "text": g.text, "path": path}
                )
        self.indexer.index_paths(list(by_path))
        return {"removed": removed, "candidates": cands}

    def memories(self, scope: str = "", *, include_superseded: bool = False) -> dict[str, Any]:
        """The list items in effect (what `context` can draw on), optionally filtered by scope."""
        kinds = {
            "user": ("core", "topic", "note"),
            "project": ("project",),
            "agent": ("agent",),
            "": ("core", "topic", "note", "project", "agent"),
        }.get(scope)
        if kinds is None:
            raise InvalidParams(f"scope must be one of {', '.join(SCOPES)}")
        items = [_item_dict(r) for r in docs.items_of_kinds(self.store.read(), kinds)]
        if not include_superseded:
            items = [i for i in items if not i["meta"].get("superseded")]
        return {"enabled": self.enabled(), "items": items}


def _id_matcher(rel: str, ids: set[str]) -> Callable[[str, dict[str, str]], bool]:
    def match(text: str, meta: dict[str, str]) -> bool:
        return docs.item_key(rel, text, meta) in ids

    return match


def _item_dict(r: docs.ItemRow) -> dict[str, Any]:
    meta = json.loads(r.meta) if r.meta else {}
    scope = {"project": "project", "agent": "agent"}.get(r.kind, "user")
    return {
        "id": r.item_id,
        "text": r.text,
        "path": r.path,
        "rel": r.rel,
        "line": r.line,
        "type": meta.get("type", ""),
        "scope": scope,
        "owner": r.owner,
        "meta": meta,
    }
