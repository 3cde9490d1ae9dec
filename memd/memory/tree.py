"""The memory tree layout (DESIGN.md §3): folders, first-start templates, file kinds."""

from __future__ import annotations

import logging
import re
from pathlib import Path, PurePosixPath

from memd.core.errors import PathError
from memd.core.fsio import PRIVATE_DIR, make_private_dir, tighten
from memd.core.models import FileKind
from memd.history import Cause
from memd.memory.files import MemoryFiles

log = logging.getLogger(__name__)
FOLDERS = ("_core", "topics", "agents", "projects", "journal", "archive")

TEMPLATES: dict[str, str] = {
    "_core/profile.md": """---
type: profile
pinned: true
---
# User Profile

## Basic Info

## Background
""",
    "_core/preferences.md": """---
type: preference
pinned: true
---
# User Preferences

## Communication Style

## Technical Preferences
""",
    "README.md": """# memd memory

This folder is your assistants' long-term memory. Edit any file by hand; memd notices and the
next answer already knows it.

- `_core/` is always given to assistants (keep it short: profile, preferences, notes).
- `topics/<name>.md` is given when a question is about that topic.
- `agents/<id>/relationship.md` is given to that agent only.
- `projects/<slug>/*.md` (or a workspace's `.memd/memory/`) is given inside that project.
- `journal/` records conversations day by day; `archive/` keeps what aged out (still searchable).

Each `## Section` is one unit of memory. List items may carry a `<!-- memd … -->` comment with
their id, type and source: delete the line to forget the memory, edit the text to change it.
""",
}

# Editors and tools write these next to real files; they are never memory.
_IGNORED_NAME = re.compile(
    r"""^(\..*|.*~|\#.*\#|4913|.*\.(swp|swx|swo|tmp|temp|bak|orig|part|crdownload)
    |.*___jb_(tmp|old|bak)___|.*\.conflict-.*\.md\.tmp)$""",
    re.X,
)


def create_tree(root: Path) -> list[Path]:
    """Create the folders and template files that do not exist yet; return what was created.

    Folders are made 0700 and files 0600; the root itself is made 0700 if it is not (other
    users of the machine then read nothing below it, whatever the modes of the files inside).
    Before anything else runs: the templates are not a change of the history (its first
    record of the tree holds them).
    """
    created: list[Path] = []
    files = MemoryFiles([root])
    make_private_dir(root)
    if tighten(root, PRIVATE_DIR):
        log.info("memory folder %s made private (mode 0700)", root)
    for folder in FOLDERS:
        p = root / folder
        if not p.exists():
            make_private_dir(p)
            created.append(p)
    for rel, body in TEMPLATES.items():
        p = root / rel
        try:
            # Never over a file made meanwhile, nor through a folder linked out of the tree.
            if not p.exists() and files.create_new(p, body, Cause.BASELINE):
                created.append(p)
        except PathError as exc:
            log.warning("template %s not created: %s", rel, exc)
    return created


def is_memory_file(rel: str) -> bool:
    """Whether a path relative to a memory root is a Markdown memory file memd indexes."""
    parts = PurePosixPath(rel).parts
    if not parts or not parts[-1].lower().endswith((".md", ".markdown")):
        return False
    if any(_IGNORED_NAME.match(p) for p in parts):
        return False
    return not (len(parts) == 1 and parts[0] == "README.md")


def classify(rel: str, project_tier: bool = False) -> tuple[FileKind, str]:
    """Kind of a memory file and its owner (agent id or project slug) from its relative path."""
    if project_tier:
        return FileKind.PROJECT, ""
    parts = PurePosixPath(rel).parts
    top = parts[0] if len(parts) > 1 else ""
    if top == "_core":
        return FileKind.CORE, ""
    if top == "topics":
        return FileKind.TOPIC, ""
    if top == "agents" and len(parts) >= 3:
        return FileKind.AGENT, parts[1]
    if top == "projects" and len(parts) >= 3:
        return FileKind.PROJECT, parts[1]
    if top == "journal":
        return FileKind.JOURNAL, ""
    if top == "archive":
        return FileKind.ARCHIVE, ""
    return FileKind.NOTE, ""


def slugify(name: str) -> str:
    """A file-system friendly slug (keeps CJK characters)."""
    s = re.sub(r"[^\w\-]+", "-", name.strip().lower(), flags=re.UNICODE).strip("-")
    return s[:80] or "untitled"
