"""Reading the history: the list of changes, one change with its diffs, finding a change by id."""

from __future__ import annotations

import datetime as dt
import difflib
import re
from collections.abc import Iterable, Sequence
from pathlib import PurePosixPath

import msgspec

from memd.core.errors import NotFound
from memd.history.git import BRANCH, Git
from memd.history.models import (
    CAUSE_TRAILER,
    CHANGE_TRAILER,
    DETAIL_TRAILER,
    RUN_TRAILER,
    UNDOES_TRAILER,
    Change,
    ChangeDetail,
    FileChange,
    FileDiff,
    parse_trailers,
)

_FORMAT = "--format=%x1e%H%x1f%ct%x1f%an%x1f%B%x1f"
# An id with no character a basic regular expression reads specially.
_PLAIN_ID = re.compile(r"[A-Za-z0-9_-]+")


def _change(sha: str, at: str, author: str, body: str, files: list[FileChange]) -> Change:
    trailers = parse_trailers(body)
    return Change(
        id=trailers.get(CHANGE_TRAILER) or sha[:12],
        commit=sha,
        at=float(at),
        cause=trailers.get(CAUSE_TRAILER, ""),
        detail=trailers.get(DETAIL_TRAILER, ""),
        summary=body.strip().split("\n", 1)[0],
        author=author,
        files=files,
        undoes=trailers.get(UNDOES_TRAILER, ""),
        run=trailers.get(RUN_TRAILER, ""),
    )


def _parse_log(raw: bytes) -> list[Change]:
    changes = []
    for rec in raw.decode("utf-8", "surrogateescape").split("\x1e")[1:]:
        sha, at, author, body, rest = rec.split("\x1f", 4)
        fields = [f for f in rest.lstrip("\x00\n").split("\x00") if f]
        files = [
            FileChange(path=fields[i + 1], status=fields[i][:1])
            for i in range(0, len(fields) - 1, 2)
        ]
        changes.append(_change(sha, at, author, body, files))
    return changes


def since_arg(since: float | dt.datetime | str) -> str:
    """A `--since` value git reads exactly (ISO 8601 with an offset)."""
    if isinstance(since, str):
        return since
    if isinstance(since, dt.datetime):
        when = since if since.tzinfo else since.astimezone()
    else:
        when = dt.datetime.fromtimestamp(since, dt.UTC)
    # git reads no date after 2099 and ignores one it cannot read, which would list every
    # change; no change is that new, so the last moment git reads means the same.
    return min(when, _GIT_LAST_DATE).isoformat()


_GIT_LAST_DATE = dt.datetime(2099, 12, 31, 23, 59, 59, tzinfo=dt.UTC)


def log_changes(
    git: Git,
    *,
    path: str = "",
    since: float | dt.datetime | str | None = None,
    limit: int = 50,
    rev: str = BRANCH,
) -> list[Change]:
    """Changes newest first, optionally only those touching `path` (a file or folder)."""
    if git.head() is None:
        return []
    args = ["log", "--first-parent", "--no-renames", "--name-status", "-z", _FORMAT]
    if limit > 0:
        args.append(f"--max-count={limit}")
    if since is not None:
        args.append("--since=" + since_arg(since))
    args.append(rev)
    if path:
        args += ["--", path]
    changes = _parse_log(git.run(*args).stdout)
    # An undo comes after what it reverses: the undos after the oldest change listed are all
    # that can mark one (a list of the last 50 need not read the whole history).
    return with_undone(changes, undone(git, after=changes[-1].commit) if changes else {})


def recent_ids(git: Git, limit: int) -> set[str]:
    """The ids of the last `limit` changes of the branch (none when it has no commit)."""
    if git.head() is None:
        return set()
    raw = git.run("log", "--first-parent", f"--max-count={limit}", _FORMAT, BRANCH).stdout
    return {c.id for c in _parse_log(raw)}


def undone(git: Git, *, after: str = "") -> dict[str, str]:
    """Change id -> the id of the undo that reversed it, for every change an undo in effect
    reversed (an undo that was itself undone gives its changes back). With `after` (a commit),
    only the undos recorded after it are read: right for that change and every later one."""
    if git.head() is None:
        return {}
    rev = f"{after}..{BRANCH}" if after else BRANCH
    raw = git.run(
        "log", "--first-parent", "--reverse", "--format=%x1e%B", "--fixed-strings",
        f"--grep={UNDOES_TRAILER}: ", rev,
    ).stdout  # fmt: skip
    by: dict[str, str] = {}
    for body in raw.decode("utf-8", "surrogateescape").split("\x1e")[1:]:
        trailers = parse_trailers(body)
        undo = trailers.get(CHANGE_TRAILER, "")
        for target in filter(None, trailers.get(UNDOES_TRAILER, "").split(",")):
            for changed, by_undo in list(by.items()):
                if by_undo == target:  # undoing an undo: what it reversed is back
                    del by[changed]
            by[target] = undo
    return by


def with_undone(changes: Sequence[Change], by: dict[str, str]) -> list[Change]:
    """`changes` with `undone_by` set from `undone`."""
    return [msgspec.structs.replace(c, undone_by=by[c.id]) if c.id in by else c for c in changes]


def resolve(git: Git, change: str) -> Change:
    """The change with this id (a Memd-Change id, or a commit id or prefix of one)."""
    key = change.strip()
    # A NUL byte is in no change id (and no command line can carry it to git).
    if not key or "\0" in key or git.head() is None:
        raise NotFound(f"no change {change!r} in the history")
    if _PLAIN_ID.fullmatch(key):
        # The trailer's whole line, and the newest change with it: git stops there instead of
        # reading the whole history (change ids are unique).
        grep = ["--max-count=1", f"--grep=^{CHANGE_TRAILER}: {key}$"]
    else:
        grep = ["--fixed-strings", f"--grep={CHANGE_TRAILER}: {key}"]
    raw = git.run(
        "log", "--first-parent", "--no-renames", "--name-status", "-z", _FORMAT, *grep, BRANCH
    ).stdout
    found = [c for c in _parse_log(raw) if c.id == key]
    if found:
        return found[0]
    if all(ch in "0123456789abcdef" for ch in key.lower()) and len(key) >= 4:
        proc = git.run("rev-parse", "--verify", "--quiet", key + "^{commit}", check=False)
        if proc.returncode == 0:
            sha = proc.stdout.decode().strip()
            listed = _parse_log(
                git.run(
                    "log", "--no-renames", "--name-status", "-z", _FORMAT, "--max-count=1", sha
                ).stdout
            )
            # Only changes on the history branch count: an object left over from before a
            # prune is not a change any more.
            on_branch = git.run("merge-base", "--is-ancestor", sha, BRANCH, check=False)
            if listed and on_branch.returncode == 0:
                return listed[0]
    raise NotFound(
        f"no change {change!r} in the history",
        hint="`memd history` lists the changes and their ids",
    )


def parent_of(git: Git, change: Change) -> str | None:
    proc = git.run("rev-parse", "--verify", "--quiet", change.commit + "^1", check=False)
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


def file_versions(git: Git, change: Change) -> dict[str, tuple[bytes | None, bytes | None]]:
    """(before, after) content of every file the change touched (None: absent)."""
    paths = [f.path for f in change.files]
    if not paths:
        return {}
    parent = parent_of(git, change)
    after = git.entries(change.commit, paths)
    before = git.entries(parent, paths) if parent else {}
    blobs = git.blobs([*after.values(), *before.values()])
    return {
        p: (blobs[before[p]] if p in before else None, blobs[after[p]] if p in after else None)
        for p in paths
    }


def _decode(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "surrogateescape")


def show_change(git: Git, change: str) -> ChangeDetail:
    """A change's metadata (with the undo that reversed it, if one did) and a unified diff per
    file."""
    found = resolve(git, change)
    (c,) = with_undone([found], undone(git, after=found.commit))
    diffs = []
    versions = file_versions(git, c)
    for f in c.files:
        before, after = versions[f.path]
        if b"\x00" in (before or b"") or b"\x00" in (after or b""):
            diffs.append(FileDiff(path=f.path, status=f.status, diff="", binary=True))
            continue
        a_text, b_text = _decode(before) or "", _decode(after) or ""
        name = str(PurePosixPath(f.path))
        lines = difflib.unified_diff(
            a_text.splitlines(keepends=True),
            b_text.splitlines(keepends=True),
            fromfile="/dev/null" if before is None else f"a/{name}",
            tofile="/dev/null" if after is None else f"b/{name}",
        )
        diffs.append(FileDiff(path=f.path, status=f.status, diff="".join(_ensure_eol(lines))))
    return ChangeDetail(c, tuple(diffs))


def _ensure_eol(lines: Iterable[str]) -> list[str]:
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return out


def run_changes(git: Git, run: str) -> list[Change]:
    """The changes a job run made (their `Memd-Run` trailer), newest first."""
    if not run.strip() or "\0" in run or git.head() is None:
        return []
    raw = git.run(
        "log", "--first-parent", "--no-renames", "--name-status", "-z", _FORMAT,
        "--fixed-strings", f"--grep={RUN_TRAILER}: {run.strip()}", BRANCH,
    ).stdout  # fmt: skip
    return [c for c in _parse_log(raw) if c.run == run.strip()]
