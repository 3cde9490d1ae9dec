"""Reading changed files of the memory tree into `Captured` changes, on the caller's thread.

A change holds the files as they were when it was captured, redacted, so memd's own write is
recorded exactly as memd wrote it even if someone edits the file a moment later; the commit
thread only writes what was captured. A path may name a file or a folder (every recordable file
under it); a path that is gone records the file's removal, or, for a folder, the removal of the
files history still lists under it. A file larger than `max_file_bytes` is left out.

A file that cannot be captured is reported to `skip(key, message)` (the history's warn-once
count of changes not recorded) and the rest of the change goes on.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from memd.core.writers import held_open
from memd.history import files as tree_files
from memd.history.commits import MEMD_IDENT, Captured
from memd.history.models import Cause


def hand_author() -> str:
    """The commit author of a hand edit: the user running memd."""
    try:
        user = getpass.getuser()
    except Exception:
        user = "you"
    return f"{user} <{user}@localhost>"


class Capturer:
    """Reads the files of one memory tree into `Captured` changes (see the module docstring)."""

    def __init__(
        self,
        tree: Path,
        *,
        max_file_bytes: int,
        clock: Callable[[], float],
        skip: Callable[[str, str], None],
    ) -> None:
        self.tree = tree
        self.max_file_bytes = max_file_bytes
        self.clock = clock
        self.skip = skip

    def writes(
        self,
        paths: Iterable[str | Path],
        cause: Cause,
        detail: str,
        before: Mapping[str | Path, str | bytes | None] | None,
        trailers: Mapping[str, str] | None,
    ) -> Captured | None:
        """memd's own write of `paths` (absolute or tree-relative), with what the files held
        before it when the caller knows (`before`); None when no path is in the tree."""
        rels = [r for r in (tree_files.rel_in_tree(self.tree, p) for p in paths) if r]
        pending = self.rels(rels, cause, detail, MEMD_IDENT)
        if pending is None:
            return None
        pending.trailers = dict(trailers or {})
        if before:
            pending.before = {}
            for p, content in before.items():
                rel = tree_files.rel_in_tree(self.tree, p)
                if rel is None or not tree_files.recordable(rel):
                    continue
                data = (
                    content.encode("utf-8", "surrogateescape")
                    if isinstance(content, str)
                    else content
                )
                pending.before[rel] = None if data is None else tree_files.redact_bytes(data)
        return pending

    def written(
        self,
        files: Mapping[str | Path, tuple[str | None, str | None]],
        cause: Cause,
        detail: str,
        trailers: Mapping[str, str] | None,
    ) -> Captured | None:
        """memd's own change as memd wrote it: for each file (absolute or tree-relative) the
        text before memd's first write of it and after its last (None: no file), redacted; the
        disk is not read, so an edit saved a moment later is not part of it. None when no file
        is one the history records."""
        after: dict[str, bytes | None] = {}
        before: dict[str, bytes | None] = {}
        for path, (old, new) in files.items():
            rel = tree_files.rel_in_tree(self.tree, path)
            if rel is None or not tree_files.recordable(rel):
                continue
            after[rel] = _redacted(new, self.max_file_bytes)
            before[rel] = _redacted(old, self.max_file_bytes)
            if (new is not None and after[rel] is None) or (
                old is not None and before[rel] is None
            ):
                del after[rel], before[rel]  # too big to record (as `rels` leaves it out)
                self.skip(
                    "too-big", f"{rel} is larger than {self.max_file_bytes} bytes; not recorded"
                )
        if not after:
            return None
        return Captured(
            cause, detail, after, self.clock(), MEMD_IDENT, dict(trailers or {}), before=before
        )

    def without_saves(
        self, items: list[Captured]
    ) -> tuple[list[Captured], list[tuple[str, Cause]]]:
        """`items` just read, less the files another program holds open for writing now (an
        editor mid-save: what was read may be the file emptied or cut), or changed since they
        were read, which are returned to be noted again. Asked after reading: a save that began
        before the read is seen, either still open or, once closed, by what it wrote (an
        editor's truncate and write may both fall between the read and this check)."""
        rels = sorted({r for it in items for r, data in it.files.items() if data is not None})
        found = held_open([self.tree / r for r in rels]) if rels else None
        saving = {r for r in rels if found and (self.tree / r) in found}
        saving |= {
            r
            for it in items
            for r, ident in it.read_as.items()
            if r not in saving and tree_files.ident_now(self.tree, r) != ident
        }
        if not saving:
            return items, []
        out, again = [], []
        for it in items:
            for r in [r for r in it.files if r in saving]:
                del it.files[r]
                again.append((r, it.cause))
            if it.files or it.folders:
                out.append(it)
        return out, again

    def hand_edits(self, due: list[tuple[str, Cause]]) -> list[Captured]:
        """One change per due file (see `HandEdits.take_due`); a file that cannot be read is
        skipped, the others are captured."""
        out = []
        for rel, cause in due:
            author = hand_author() if cause is Cause.HAND else MEMD_IDENT
            try:
                p = self.rels([rel], cause, rel, author)
            except Exception as exc:
                self.skip(f"capture:{type(exc).__name__}", f"reading {rel} failed: {exc}")
                continue
            if p is not None:
                out.append(p)
        return out

    def rels(self, rels: Iterable[str], cause: Cause, detail: str, author: str) -> Captured | None:
        """One change of the tree-relative files and folders `rels` as they are now (None:
        nothing recordable)."""
        files: dict[str, bytes | None] = {}
        read_as: dict[str, tree_files.Ident] = {}
        folders: list[str] = []
        for rel in rels:
            path = self.tree / rel
            if tree_files.rel_in_tree(self.tree, rel) is None:
                # Reached through a link (a linked file, or a folder on its way): never read,
                # and for the history no file of the tree (the indexer lists such links).
                if tree_files.recordable(rel):
                    files[rel] = None
            elif path.is_dir():
                folders.append(rel)
                for f in tree_files.walk(self.tree, rel):
                    self._read_into(files, f, read_as)
            elif path.exists():
                if tree_files.recordable(rel):
                    self._read_into(files, rel, read_as)
            else:
                # Gone: a file, or a folder whose files history still lists.
                if tree_files.recordable(rel):
                    files[rel] = None
                folders.append(rel)
        if not files and not folders:
            return None
        return Captured(
            cause, detail, files, self.clock(), author, folders=tuple(folders), read_as=read_as
        )

    def read_one(self, rel: str) -> bytes | None:
        """One file's redacted bytes (None: missing; too big or unreadable, reported to `skip`)."""
        files: dict[str, bytes | None] = {}
        try:
            self._read_into(files, rel)
        except OSError as exc:
            self.skip(f"capture:{type(exc).__name__}", f"reading {rel} failed: {exc}")
        return files.get(rel)

    def _read_into(
        self,
        files: dict[str, bytes | None],
        rel: str,
        read_as: dict[str, tree_files.Ident] | None = None,
    ) -> None:
        data, ident = tree_files.read_real_as(self.tree, rel)
        if data is not None and len(data) > self.max_file_bytes:
            self.skip("too-big", f"{rel} is larger than {self.max_file_bytes} bytes; not recorded")
            return
        files[rel] = None if data is None else tree_files.redact_bytes(data)
        if read_as is not None and ident is not None:
            read_as[rel] = ident


def _redacted(text: str | None, limit: int) -> bytes | None:
    """A file's text as the history stores it: redacted bytes (None: no file, or too big)."""
    if text is None:
        return None
    data = text.encode("utf-8", "surrogateescape")
    return None if len(data) > limit else tree_files.redact_bytes(data)
