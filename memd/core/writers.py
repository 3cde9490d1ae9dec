"""Which other programs hold a file open for writing right now.

An editor saving in place holds the file open between its truncate and its last write; a
reader at that moment sees an empty or cut file, and bytes another writer appends end up under
the editor's write. memd's door to the memory files waits while a file is held so (before it
writes), and the history does not capture a hand edit then (it would record the file emptied).

Asked first of the kernel (`lease.nobody_writing`: a read lease is refused exactly when some
open file description has the file open for writing), so the common case, nobody writing,
costs a few system calls; /proc is scanned only to name who holds a file (this process's own
descriptors are not counted, as before), and where leases are not to be had. When the kernel
says someone writes a file and /proc names nobody, someone still does (`held_open`).
"""

from __future__ import annotations

import os
from pathlib import Path

from memd.core.lease import nobody_writing

Key = tuple[int, int]  # st_dev, st_ino
# Up to this many files, the kernel is asked for each (~10 µs a file) rather than /proc
# scanned once (one stat per open descriptor of the user's processes: 2-12 ms).
ASK_EACH_MAX = 100


def writers(path: Path) -> list[str] | None:
    """The other programs that hold `path` open for writing right now ("name (pid N)"): on
    Linux from the open descriptors of the processes this user may see in /proc (another user's
    are not seen); None where the system does not say (no /proc).

    A few microseconds when the kernel says nobody writes it (a read lease granted); else a
    few milliseconds (one stat per open descriptor of the user's processes).
    """
    found = held_open([path])
    return None if found is None else found.get(path, [])


def held_open(paths: list[Path]) -> dict[Path, list[str]] | None:
    """`writers` of several files in one pass over /proc: the paths held open for writing by
    another program, with who holds them (None where the system does not say). A file the
    kernel says nobody writes (`lease.nobody_writing`) is not looked for in /proc; for many
    files one scan is cheaper than asking for each (a history's first recording: thousands).

    A file the kernel says someone writes is held open even when /proc lists nobody (`UNLISTED`):
    seen on a loaded machine for a quarter of a second while an editor's in-place save had
    emptied the file (a reader then saw an empty file that nobody seemed to write). Why /proc
    missed the descriptor is not known (an `open()` with O_TRUNC empties the file before its
    descriptor is listed is one way); the kernel's answer wins. Unless this process itself
    holds it open for writing (its own descriptors do not count) or the kernel, asked again,
    says the writer has closed it."""
    if len(paths) > ASK_EACH_MAX:
        return scan(paths)
    told = {p: nobody_writing(p) for p in paths}
    found = scan([p for p, nobody in told.items() if not nobody])
    if found is None:
        return None
    for p, nobody in told.items():
        if (
            nobody is False
            and p not in found
            and not _writing_here(p)
            and nobody_writing(p) is False
        ):
            found[p] = [UNLISTED]
    return found


UNLISTED = "a program not listed yet"
"""Who holds a file open for writing when the kernel says someone does and /proc lists nobody."""


def _writing_here(path: Path) -> bool:
    """Whether this process holds `path` open for writing (the kernel counts it too)."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    pid = str(os.getpid())
    return any(
        _opened_for_writing(pid, fd) for _, fd in _fds_on(pid, {(st.st_dev, st.st_ino): path})
    )


def scan(paths: list[Path]) -> dict[Path, list[str]] | None:
    """`held_open` from /proc alone: one stat per open descriptor of the user's processes."""
    if not os.path.isdir("/proc/self/fd"):
        return None
    keys: dict[Key, Path] = {}
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            continue
        keys[(st.st_dev, st.st_ino)] = p
    found: dict[Path, list[str]] = {}
    if not keys:
        return found
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]
    except OSError:
        return found
    for pid in pids:
        for key, fd in _fds_on(pid, keys):
            who = f"{_name(pid)} (pid {pid})"
            if _opened_for_writing(pid, fd) and who not in found.get(keys[key], []):
                found.setdefault(keys[key], []).append(who)
    return found


def _fds_on(pid: str, keys: dict[Key, Path]) -> list[tuple[Key, str]]:
    out = []
    try:
        with os.scandir(f"/proc/{pid}/fd") as it:
            for e in it:
                try:
                    st = os.stat(e.path)
                except OSError:
                    continue
                if (st.st_dev, st.st_ino) in keys:
                    out.append(((st.st_dev, st.st_ino), e.name))
    except OSError:  # gone, or another user's process
        return []
    return out


def _opened_for_writing(pid: str, fd: str) -> bool:
    try:
        with open(f"/proc/{pid}/fdinfo/{fd}", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("flags:"):
                    return (int(line.split()[1], 8) & os.O_ACCMODE) in (os.O_WRONLY, os.O_RDWR)
    except (OSError, ValueError):
        pass
    return False


def _name(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as fh:
            return fh.read().strip() or "a program"
    except OSError:
        return "a program"
