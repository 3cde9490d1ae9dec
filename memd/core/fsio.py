"""File access memd can trust: replacing a file in one step, reading only regular files, and
keeping every read and write inside the memory roots.

Replacing: the new content goes to a hidden temp file in the same folder (the watchers skip
hidden names), is flushed to disk, takes its permission bits and is renamed over the target;
on any failure the temp file is removed and the target is left as it was. A symbolic link is
never replaced by a file: the caller resolves it first (`resolve_inside`) and writes its
target.

Reading: `read_regular` opens without following a final symlink and without blocking (a FIFO
named `x.md` would otherwise hang the reader until someone writes to it), and refuses anything
that is not a regular file. Given the roots, it also checks where the opened file really is.

Roots: `resolve_inside` follows every link of a path and answers its real place, or raises
`PathError` when that place is outside every root. It is called where a path is opened, not
only where it was listed: a link made in between is caught there.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from memd.core.errors import PathError, SourceError

TEMP_SUFFIX = ".memd-tmp"
PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class NotRegularFile(SourceError):
    """A path is a FIFO, socket, device or folder where a regular file was expected."""


# -- roots ---------------------------------------------------------------------------------------
def real(path: Path | str) -> str:
    """`path` with every symbolic link followed (the parts that exist), as a string."""
    return os.path.realpath(path)


def within(path: str, root: str) -> bool:
    """Whether the real path `path` is `root` or below it (both already real)."""
    root = root.rstrip(os.sep) or os.sep
    return path == root or path.startswith(root if root == os.sep else root + os.sep)


def inside_any(path: Path | str, roots: Iterable[Path | str]) -> bool:
    """Whether `path`, every link followed, lies inside one of `roots`."""
    p = real(path)
    return any(within(p, real(r)) for r in roots)


def resolve_inside(roots: Iterable[Path | str], path: Path | str) -> Path:
    """The real path of `path` (every symbolic link followed) when it lies inside one of
    `roots`; `PathError` naming both when it leads anywhere else.

    A path that does not exist yet resolves through the parts that do, so a new file below a
    linked folder is checked by where that folder leads. A link whose target is inside the
    roots answers the target: write there, and the link stays a link.
    """
    roots = list(roots)
    p = real(path)
    if any(within(p, real(r)) for r in roots):
        return Path(p)
    shown = f"{path} leads to {p}, which" if p != os.path.abspath(path) else str(path)
    raise PathError(
        f"{shown} is outside memd's memory folders; memd does not read or write there",
        hint="to include a folder kept elsewhere, add it to memory.extra_roots in the config"
        " file (or use a workspace listed in memory.workspaces)",
    )


# -- reading -------------------------------------------------------------------------------------
def open_regular(
    path: Path | str,
    *,
    inside: Iterable[Path | str] | None = None,
    follow: bool = False,
    resolved: bool = False,
) -> int:
    """A read-only descriptor of the regular file at `path`, opened without following a final
    symlink (unless `follow`: a file the user named, such as an import) and without blocking;
    `NotRegularFile` for anything else, `PathError` when the file opened is not inside the
    roots `inside` (when given; `resolved`: they are real paths already, resolved once by the
    caller). OSError as `os.open` raises it.
    """
    flags = os.O_RDONLY | _NONBLOCK | _CLOEXEC | (0 if follow else _NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):  # EMLINK: the BSDs' answer to O_NOFOLLOW
            raise NotRegularFile(f"{path} is a symbolic link (not followed here)") from exc
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(f"{path} is not a regular file ({_kind(st.st_mode)})")
        if inside is not None:
            where = _fd_path(fd) or real(path)
            # A caller reading many files (the indexer, the door) resolves its roots once and
            # says so (`resolved`): no lookup per file, and no cache kept at module level.
            places = [str(r) if resolved else real(r) for r in inside]
            if not any(within(where, r) for r in places):
                raise PathError(f"{path} is outside memd's memory folders (it is {where})")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(
    path: Path | str,
    *,
    inside: Iterable[Path | str] | None = None,
    max_bytes: int | None = None,
) -> bytes:
    """The bytes of the regular file at `path` (see `open_regular`); with `max_bytes`, a
    longer file raises `SourceError` instead of being read whole."""
    fd = open_regular(path, inside=inside)
    with os.fdopen(fd, "rb") as fh:
        if max_bytes is not None:
            data = fh.read(max_bytes + 1)
            if len(data) > max_bytes:
                raise SourceError(f"{path} is larger than {max_bytes} bytes")
            return data
        return fh.read()


def _fd_path(fd: int) -> str:
    """Where an open descriptor really is (Linux: /proc, macOS: F_GETPATH), or "" unknown."""
    try:
        if sys.platform == "linux":
            return os.readlink(f"/proc/self/fd/{fd}")
        if sys.platform == "darwin":
            import fcntl

            raw = fcntl.fcntl(fd, fcntl.F_GETPATH, bytes(1024))  # type: ignore[attr-defined]
            return os.fsdecode(raw.split(b"\0", 1)[0])
    except OSError:
        return ""
    return ""


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symbolic link")):  # fmt: skip
        if test(mode):
            return name
    return "not a file"


def is_regular(path: Path | str) -> bool:
    """Whether `path` itself (not a link's target) is a regular file."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


# -- writing -------------------------------------------------------------------------------------
def make_private_dir(path: Path) -> None:
    """Create `path` and its missing parents, each with mode 0700 whatever the umask
    (existing folders are left as they are)."""
    missing: list[Path] = []
    p = path
    while not p.is_dir():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=PRIVATE_DIR)
        except FileExistsError:
            if not d.is_dir():
                raise
            continue
        # mkdir's mode is filtered by the umask; the folder must end up 0700 all the same.
        os.chmod(d, PRIVATE_DIR)


def tighten(path: Path, mode: int) -> bool:
    """Take group and other bits beyond `mode` away from memd's own file or folder; True if
    it changed. A missing path is left alone."""
    try:
        current = stat.S_IMODE(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False
    if current & ~mode & 0o077 and not os.path.islink(path):
        os.chmod(path, current & ~0o077 | (mode & 0o077))
        return True
    return False


@contextlib.contextmanager
def atomic_file(
    path: Path,
    *,
    mode: int | None = None,
    new_mode: int = PRIVATE_FILE,
    replace: bool = True,
) -> Iterator[IO[str]]:
    """A text file to write that replaces `path` when the block ends without an error.

    Missing parent folders are created (0700). The result has permission bits `mode`; by
    default those of the file it replaces, or `new_mode` (0600) when there was none. Text is
    written as UTF-8, line endings untouched. `path` must not be a symbolic link (`PathError`):
    resolve it and write its target. With `replace=False` an existing `path` is never replaced
    (`FileExistsError`), even one created while the block ran.
    """
    make_private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        if mode is None:
            try:
                mode = os.lstat(path).st_mode & 0o7777
            except FileNotFoundError:
                mode = new_mode
        os.chmod(tmp, mode)
        if os.path.islink(path):
            raise PathError(
                f"{path} is a symbolic link; memd writes the file it points to, never over the link"
            )
        if replace:
            os.replace(tmp, path)
        else:
            _place_new(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _place_new(tmp: str, path: Path) -> None:
    """Give the finished temp file the name `path` only if nothing has that name."""
    try:
        # link() fails when the name exists: no window in which another file is replaced.
        os.link(tmp, path)
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
            raise
        if os.path.lexists(path):  # a file system without hard links: check, then rename
            raise FileExistsError(errno.EEXIST, "file exists", str(path)) from exc
        os.replace(tmp, path)
        return
    os.unlink(tmp)


def atomic_write(
    path: Path, text: str, *, mode: int | None = None, new_mode: int = PRIVATE_FILE
) -> None:
    """Replace `path` with `text` in one step (see `atomic_file` for the permission bits)."""
    with atomic_file(path, mode=mode, new_mode=new_mode) as fh:
        fh.write(text)
