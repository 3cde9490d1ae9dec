"""The history repository on disk: create it, check it, set a damaged one aside, lock it.

The repository lives in memd's data folder (`<data>/history.git`), never inside the memory
tree, and its configured work tree is the memory tree, so `git --git-dir=<data>/history.git
log` (or `status`, `diff`, `show`) works from anywhere. Its `info/exclude` limits what git
tools look at to the Markdown files memd records.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import logging
import os
from collections.abc import Iterator
from pathlib import Path

from memd.core.errors import HistoryError, PathError
from memd.core.paths import ensure_private_dir
from memd.history.git import BRANCH, Git

log = logging.getLogger(__name__)

LOCK_NAME = "memd.lock"
EXCLUDE = """\
# Written by memd: the history records Markdown files only, and no hidden or temporary files.
*
!*/
!*.md
!*.markdown
.*
*~
*.swp
*.tmp
*.memd-tmp
"""


def history_dir(data_dir: Path) -> Path:
    """Where the history repository of a memd data folder lives."""
    return data_dir / "history.git"


class HistoryRepo:
    """One history repository: `git_dir` on disk, the memory tree as its work tree."""

    def __init__(self, git: Git) -> None:
        self.git = git
        self.git_dir = git.git_dir
        self.work_tree = git.work_tree

    def exists(self) -> bool:
        return self.git_dir.exists()

    def create(self) -> None:
        """Initialise an empty repository (no commits yet)."""
        ensure_private_dir(self.git_dir.parent)
        self.git.run("init", "--quiet", "--template=")
        os.chmod(self.git_dir, 0o700)
        self.git.run("symbolic-ref", "HEAD", BRANCH)
        for key, value in (
            ("core.bare", "false"),
            ("core.worktree", str(self.work_tree)),
            ("core.logAllRefUpdates", "false"),
            ("user.name", "memd"),
            ("user.email", "memd@localhost"),
        ):
            self.git.run("config", key, value)
        info = self.git_dir / "info"
        info.mkdir(exist_ok=True)
        (info / "exclude").write_text(EXCLUDE, encoding="utf-8")

    def problem(self) -> str:
        """Why the repository is unusable ('' when it is fine)."""
        if not (self.git_dir / "HEAD").is_file() or not (self.git_dir / "objects").is_dir():
            return f"{self.git_dir} is not a git repository"
        proc = self.git.run("rev-parse", "--git-dir", check=False)
        if proc.returncode != 0:
            return f"{self.git_dir} is not a git repository"
        ref = self.git.run("rev-parse", "--verify", "--quiet", BRANCH, check=False)
        if ref.returncode != 0:
            if (self.git_dir / "refs" / "heads" / "main").exists():
                return f"{BRANCH} in {self.git_dir} is unreadable"
            return ""  # no commit yet
        sha = ref.stdout.decode().strip()
        # Reading the newest commit and its whole tree catches truncated or missing objects
        # where a recording would touch them, at the cost of one listing.
        check = self.git.run("ls-tree", "-r", "--full-tree", sha, check=False)
        if check.returncode != 0:
            err = check.stderr.decode("utf-8", "replace").strip().splitlines()
            return f"{self.git_dir} is damaged: {err[-1] if err else 'unreadable tree'}"
        return ""

    def set_aside(self) -> Path:
        """Rename a damaged repository next to itself and return where it went."""
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        dest = self.git_dir.with_name(f"{self.git_dir.name}.damaged-{stamp}")
        n = 1
        while dest.exists():
            n += 1
            dest = self.git_dir.with_name(f"{self.git_dir.name}.damaged-{stamp}-{n}")
        try:
            os.replace(self.git_dir, dest)
        except OSError as exc:
            raise HistoryError(
                f"cannot move the damaged history {self.git_dir} aside: {exc}"
            ) from exc
        return dest

    def ensure(self) -> Path | None:
        """Make the repository usable: create it, or set a damaged one aside and start afresh.

        Returns where a damaged repository was moved, or None.
        """
        moved: Path | None = None
        if self.exists():
            why = self.problem()
            if not why:
                self._fix_worktree()
                return None
            moved = self.set_aside()
            log.warning("history: %s; moved it to %s and started a new history", why, moved)
        try:
            self.create()
        except (OSError, PathError) as exc:
            raise HistoryError(
                f"cannot create the history repository {self.git_dir}: {exc}"
            ) from exc
        return moved

    def _fix_worktree(self) -> None:
        # The memory tree can move (memory.root); git tools must follow it.
        proc = self.git.run("config", "--get", "core.worktree", check=False)
        if proc.stdout.decode().strip() != str(self.work_tree):
            self.git.run("config", "core.worktree", str(self.work_tree))

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the repository's lock (between memd processes) while writing."""
        fd = os.open(self.git_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)
