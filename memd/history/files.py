"""Which files of the memory tree the history records, and reading them safely and redacted.

Only Markdown files inside the tree are recorded; hidden files and folders, editor temp files
and anything reached through a symlink (a linked file, or a linked folder on the way) are not,
so history can never read outside the tree or commit a file twice under two names.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from memd.core.redact import redact

MAX_FILE_BYTES = 10 * 1024 * 1024
_SUFFIXES = (".md", ".markdown")
# The same editor droppings the indexer skips (vim's 4913 probe, backups, swap and temp files).
_TEMP_NAME = re.compile(
    r"^(\..*|.*~|\#.*\#|4913|.*\.(swp|swx|swo|tmp|temp|bak|orig|part|crdownload|memd-tmp)"
    r"|.*___jb_(tmp|old|bak)___)$"
)


def recordable(rel: str) -> bool:
    """Whether a tree-relative path names a file the history records."""
    parts = PurePosixPath(rel).parts
    if not parts or not parts[-1].lower().endswith(_SUFFIXES):
        return False
    return not any(_TEMP_NAME.match(p) for p in parts)


def _visible_dir(rel: str) -> bool:
    return not any(_TEMP_NAME.match(p) for p in PurePosixPath(rel).parts)


def rel_in_tree(tree: Path, path: str | os.PathLike[str]) -> str | None:
    """`path` relative to `tree` with / separators, or None when it is outside the tree or
    reached through a symlink. `path` may be absolute or relative to the tree."""
    p = Path(path)
    if not p.is_absolute():
        p = tree / p
    p = Path(os.path.normpath(p))
    rel: str | None = None
    for base in (tree, tree.resolve()):
        try:
            rel = p.relative_to(base).as_posix()
            break
        except ValueError:
            continue
    if rel is None or rel in ("", ".") or rel.startswith("../"):
        return None
    cur = tree
    for part in PurePosixPath(rel).parts:
        cur = cur / part
        try:
            if stat.S_ISLNK(os.lstat(cur).st_mode):
                return None
        except FileNotFoundError:
            break
        except OSError:
            return None
    return rel


def redact_bytes(data: bytes) -> bytes:
    """File bytes with secrets redacted and `<private>` spans dropped (bytes that are not
    UTF-8 pass through unchanged)."""
    text = data.decode("utf-8", "surrogateescape")
    return redact(text).encode("utf-8", "surrogateescape")


# A file's identity as the history read it: a save after the read changes it.
Ident = tuple[int, int, int, int]  # st_ino, st_size, st_mtime_ns, st_ctime_ns


def ident_of(st: os.stat_result) -> Ident:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def ident_now(tree: Path, rel: str) -> Ident | None:
    """The identity of a file of the tree this instant (None: missing), not through a link."""
    try:
        return ident_of(os.stat(tree / rel, follow_symlinks=False))
    except OSError:
        return None


def read_real(tree: Path, rel: str) -> bytes | None:
    """The bytes of a regular file in the tree (None: missing), never through a symlink."""
    return read_real_as(tree, rel)[0]


def read_real_as(tree: Path, rel: str) -> tuple[bytes | None, Ident | None]:
    """`read_real`, with the file's identity taken before reading it (None: missing)."""
    path = tree / rel
    try:
        # Non-blocking: a FIFO named like a memory file must not hang the history thread.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        if os.path.islink(path):
            raise OSError(f"{path} is a symlink") from exc
        raise
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            return None, None
        return fh.read(), ident_of(st)


def walk(tree: Path, rel_dir: str = "") -> Iterator[str]:
    """Recordable files under a folder of the tree (not following symlinks), sorted."""
    start = tree / rel_dir if rel_dir else tree
    stack = [start]
    found: list[str] = []
    while stack:
        d = stack.pop()
        try:
            with os.scandir(d) as it:
                entries = list(it)
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            continue
        for e in entries:
            rel = Path(e.path).relative_to(tree).as_posix()
            if e.is_dir(follow_symlinks=False):
                if _visible_dir(rel):
                    stack.append(Path(e.path))
            elif e.is_file(follow_symlinks=False) and recordable(rel):
                found.append(rel)
    yield from sorted(found)


def write_checked(path: Path, expected: str | None, new: str | None) -> None:
    """Write `new` to `path` (None deletes it) only while it still holds `expected`.

    A stand-in for memd's own safe Markdown writer: it compares, then replaces atomically
    (temp file + rename), so an editor never sees half a file.
    """
    from memd.core.errors import UndoConflict

    try:
        with open(path, "rb") as fh:
            current: str | None = fh.read().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        current = None
    if current != expected:
        raise UndoConflict(
            f"{path} changed after the undo was planned; nothing was written to it",
            hint="run the undo again",
        )
    if new is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".memd-tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(new.encode("utf-8", "surrogateescape"))
            fh.flush()
            os.fsync(fh.fileno())
        mode = os.stat(path).st_mode & 0o7777 if current is not None else 0o600
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
