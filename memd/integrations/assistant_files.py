"""What `memd integrate` writes into an assistant's own files: the change of each file (before,
after, its backup) and the plan of them all, and the careful reading and writing they share —
a file that does not parse is never touched, a link is written through, the previous content is
kept as ``<name>.bak``, containers memd created are remembered so an undo removes them again."""

from __future__ import annotations

import difflib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memd.core.errors import ConfigError
from memd.core.fsio import atomic_write


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file's content before and after the integration (``None``: the file is absent,
    or is to be deleted)."""

    path: Path
    before: str | None
    after: str | None
    backup: Path | None = None

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        """Unified diff of the change, empty when nothing changes."""
        if not self.changed:
            return ""
        return "".join(
            difflib.unified_diff(
                (self.before or "").splitlines(keepends=True),
                (self.after or "").splitlines(keepends=True),
                fromfile=f"{self.path} (before)" if self.before is not None else "/dev/null",
                tofile=f"{self.path} (after)" if self.after is not None else "/dev/null",
            )
        )


@dataclass(frozen=True, slots=True)
class IntegrationPlan:
    """What `integrate` did (or, in a dry run, would do)."""

    files: tuple[FileChange, ...]
    actions: tuple[str, ...]
    remove: bool
    dry_run: bool
    title: str = "Claude Code"  # the assistant, as the summary names it

    @property
    def changed(self) -> bool:
        return any(f.changed for f in self.files)

    def diff(self) -> str:
        return "".join(f.diff() for f in self.files)

    def summary(self) -> str:
        """Human-readable lines for the CLI: one per action, then where backups went."""
        lines = list(self.actions)
        if not self.changed:
            lines.append(
                f"nothing to change: {self.title} is already "
                + ("free of memd" if self.remove else "set up for memd")
            )
        elif self.dry_run:
            lines.append("dry run: no file was written")
        for f in self.files:
            if f.changed and not self.dry_run:
                saved = f" (previous content in {f.backup})" if f.backup else ""
                lines.append(f"wrote {f.path}{saved}")
        return "\n".join(lines)


def container(
    parent: dict[str, Any], key: str, kind: type, path: Path, made: set[str], name: str
) -> Any:
    if key not in parent:
        parent[key] = kind()
        made.add(name)
    value = parent[key]
    if not isinstance(value, kind):
        expected = "an object" if kind is dict else "a list"
        raise ConfigError(
            f"{path}: '{name}' is {type(value).__name__}, expected {expected}",
            hint="fix the file by hand (Claude Code would not read it either), then run again",
        )
    return value


def drop_empty(name: str, created: set[str] | None) -> bool:
    # With a state record, only containers memd created go; without one, an empty container
    # is taken out, which restores every file except one that held it empty beforehand.
    return created is None or name in created


def real_path(path: Path) -> Path:
    # Write through symlinks (dotfile managers link settings.json): os.replace on the link
    # itself would turn it into a plain file and cut it from the user's dotfiles.
    path = path.expanduser()
    return path.resolve() if path.is_symlink() else path.absolute()


def read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc


def parse(path: Path, text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})",
            hint="fix the file by hand (or restore it from its backup); it was not changed",
        ) from exc
    if not isinstance(doc, dict):
        raise ConfigError(f"{path} does not hold a JSON object", hint="it was not changed")
    return doc


def dump(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def write_atomic(path: Path, text: str, *, backup: Path | None = None) -> None:
    if backup is not None and path.exists():
        shutil.copy2(path, backup)
    # ~/.claude.json holds credentials: new files are private.
    atomic_write(path, text, new_mode=0o600)


def read_state(state_file: Path | None) -> dict[str, list[str]]:
    if state_file is None:
        return {}
    try:
        state = json.loads(state_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def write_state(state_file: Path, state: dict[str, list[str]]) -> None:
    if not state and not state_file.exists():
        return
    write_atomic(state_file, json.dumps(state, indent=2) + "\n")
