"""memd's folders and socket: present, writable, and closed to other users."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from memd.cli.doctor.check import Check, fail, ok, warn
from memd.core.settings import Settings


def _folder_problem(path: Path) -> str:
    if not path.exists():
        return ""
    if not path.is_dir():
        return f"{path} is not a folder"
    if not os.access(path, os.W_OK | os.X_OK):
        return f"{path} is not writable by you"
    return ""


def check_folders(settings: Settings) -> Check:
    """The memory tree and the data folder exist (or can be created) and are writable."""
    places = {"memory": settings.memory_dir, "data": settings.db_path.parent}
    problems = [p for p in (_folder_problem(path) for path in places.values()) if p]
    missing = [f"{k} {v}" for k, v in places.items() if not v.exists()]
    data = {k: str(v) for k, v in places.items()}
    if problems:
        return fail(
            "folders",
            "; ".join(problems),
            "fix the owner/mode (chown, chmod u+rwx) or move memory.root",
            data,
        )
    if missing:
        return warn(
            "folders",
            f"not created yet: {', '.join(missing)}",
            "`memd serve` creates them with templates on first start",
            data=data,
        )
    wide = _readable_by_others(settings)
    if wide:
        return warn(
            "folders",
            "other users can read " + ", ".join(f"{p} ({m})" for p, m in wide),
            f"chmod go-rwx {' '.join(str(p) for p, _ in wide)} (memd does this for its own"
            " folders and index when it starts)",
            data=data,
        )
    return ok("folders", f"memory {places['memory']}, index {settings.db_path}", data=data)


def _readable_by_others(settings: Settings) -> list[tuple[Path, str]]:
    """memd's folders and index files whose mode lets other users in."""
    db = settings.db_path
    out = []
    for p in (settings.memory_dir, settings.paths.data_dir, db, Path(f"{db}-wal")):
        st = _stat(p)
        if st is not None and st.st_mode & 0o077:
            out.append((p, oct(stat.S_IMODE(st.st_mode))))
    return out


def assess_permissions(
    folder: Path,
    folder_st: os.stat_result | None,
    sock: Path,
    sock_st: os.stat_result | None,
    uid: int,
) -> Check:
    """The socket's folder is 0700 and the socket 0600, both owned by `uid`."""
    data = {"runtime_dir": str(folder), "socket": str(sock)}
    if folder_st is None:
        return ok(
            "permissions", f"{folder} does not exist yet (the daemon creates it 0700)", data=data
        )
    data["runtime_dir_mode"] = oct(stat.S_IMODE(folder_st.st_mode))
    if folder_st.st_uid != uid:
        return fail(
            "permissions",
            f"{folder} belongs to uid {folder_st.st_uid}, not to you (uid {uid})",
            "set MEMD_SOCKET (or server.socket) to a path in a folder you own",
            data=data,
        )
    wide: list[str] = []
    if folder_st.st_mode & 0o077:
        wide.append(f"{folder} is {data['runtime_dir_mode']} (should be 0o700)")
    if sock_st is not None:
        data["socket_mode"] = oct(stat.S_IMODE(sock_st.st_mode))
        if sock_st.st_uid != uid:
            return fail(
                "permissions",
                f"{sock} belongs to uid {sock_st.st_uid}, not to you",
                "stop whatever owns it, remove it, and start memd again",
                data=data,
            )
        if not stat.S_ISSOCK(sock_st.st_mode):
            return fail(
                "permissions", f"{sock} exists but is not a socket", f"remove it: rm {sock}", data
            )
        if sock_st.st_mode & 0o077:
            wide.append(f"{sock} is {data['socket_mode']} (should be 0o600)")
    if wide:
        # Not fatal: the daemon still refuses other users by peer uid; this is the second wall.
        return warn(
            "permissions",
            "; ".join(wide),
            f"chmod 700 {folder}" + (f" && chmod 600 {sock}" if sock_st is not None else ""),
            data=data,
        )
    shown = "0o600" if sock_st is not None else "not created yet"
    return ok("permissions", f"{folder} 0o700, socket {shown}", data=data)


def _stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except OSError:
        return None


def check_permissions(settings: Settings) -> Check:
    sock = settings.socket_path
    return assess_permissions(sock.parent, _stat(sock.parent), sock, _stat(sock), os.getuid())
