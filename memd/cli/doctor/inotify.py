"""The kernel's inotify limits against the folders the daemon watches (Linux)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

from memd.cli.doctor.check import Check, fail, ok, warn
from memd.conversations.sources import configured
from memd.core.settings import Settings
from memd.memory.ops import resolve_project

INOTIFY_DIR = Path("/proc/sys/fs/inotify")


def count_dirs(roots: Iterable[Path], limit: int = 1_000_000) -> int:
    """Folders below (and including) each root: a recursive inotify watch needs one each."""
    n = 0
    for root in roots:
        if not root.is_dir():
            continue
        for _dirpath, dirnames, _files in os.walk(root):
            n += 1
            dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(_dirpath, d))]
            if n >= limit:
                return n
    return n


def assess_inotify(max_watches: int | None, max_instances: int | None, dirs: int) -> Check:
    """Whether the per-user inotify limits leave room for memd's recursive watches."""
    data = {"max_user_watches": max_watches, "max_user_instances": max_instances, "folders": dirs}
    if max_watches is None:
        return ok("inotify", "no inotify limits to check on this system", data=data)
    hint = (
        "raise the limit: echo fs.inotify.max_user_watches=524288 | sudo tee "
        "/etc/sysctl.d/90-memd.conf && sudo sysctl --system"
    )
    plural = "s" if dirs != 1 else ""
    detail = f"{dirs:,} folder{plural} to watch, max_user_watches {max_watches:,}"
    if dirs >= max_watches:
        return fail("inotify", detail + ": memd falls back to polling", hint, data=data)
    # Editors, IDEs and sync clients share the same per-user budget.
    if dirs * 2 > max_watches:
        return warn("inotify", detail + ": little room left for other programs", hint, data=data)
    if max_instances is not None and max_instances < 8:
        return warn(
            "inotify",
            f"max_user_instances is {max_instances}",
            "raise fs.inotify.max_user_instances (memd uses 2, many programs use some)",
            data=data,
        )
    return ok("inotify", detail, data=data)


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def watched_roots(settings: Settings) -> list[Path]:
    """Every folder the daemon watches recursively: memory tree, project tiers, assistant log
    folders (a folder watched for its own entries only counts as one, in `check_inotify`)."""
    roots = [settings.memory_dir]
    for ws in settings.memory_workspaces:
        project = resolve_project(str(Path(ws).expanduser()))
        if project.memory_dir is not None:
            roots.append(project.memory_dir)
    roots += [s.root for s in configured(settings.value).sources if s.reader.recursive]
    return roots


def check_inotify(settings: Settings) -> Check:
    if not sys.platform.startswith("linux"):
        return ok("inotify", f"not Linux ({sys.platform}): no inotify limits apply")
    flat = {s.root for s in configured(settings.value).sources if not s.reader.recursive}
    dirs = count_dirs(watched_roots(settings)) + sum(1 for r in flat if r.is_dir())
    return assess_inotify(
        _read_int(INOTIFY_DIR / "max_user_watches"),
        _read_int(INOTIFY_DIR / "max_user_instances"),
        dirs,
    )
