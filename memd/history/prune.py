"""Bounding the history: squash changes older than the cutoff into one root commit, then gc.

The kept changes are written again on top of the new root with the same trees, authors, dates
and messages (so their `Memd-Change` ids stay), a `prune` change records what was folded, and
`git gc --prune=now` drops the objects only the squashed changes held.
"""

from __future__ import annotations

import datetime as dt
import secrets

from memd.history.git import BRANCH, CommitSpec, Git
from memd.history.models import CHANGE_TRAILER, Cause, format_message

GC_TIMEOUT_S = 600.0
LOOSE_LIMIT = 2000  # loose objects before gc packs them (about 400 changes)


def _day(at: float) -> str:
    return dt.datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M")


def _loose_objects(git: Git) -> int:
    for line in git.out("count-objects", "-v").splitlines():
        key, _, value = line.partition(":")
        if key == "count":
            return int(value)
    return 0


def squash_before(
    git: Git, before: float, *, now: float, committer: str, loose_limit: int = LOOSE_LIMIT
) -> tuple[int, int, str]:
    """Fold every change older than `before` into a new root; return (squashed, kept, the id
    of the change recording the prune, '' when nothing was old enough, in which case gc runs
    only once `loose_limit` loose objects have piled up)."""
    listing = git.out("log", "--first-parent", "--format=%H %ct", BRANCH)
    commits = [(sha, int(ct)) for sha, ct in (line.split() for line in listing.splitlines())]
    commits.reverse()  # oldest first
    cut = -1
    for i, (_, ct) in enumerate(commits):
        if ct < before:
            cut = i
    if cut < 1:  # nothing older than the root
        # Small commits are written as loose objects and nothing else packs them.
        if _loose_objects(git) >= loose_limit:
            git.run("gc", "--quiet", timeout=GC_TIMEOUT_S)
        return 0, len(commits), ""
    raw = git.raw_commits([sha for sha, _ in commits[cut:]])
    squashed = cut + 1
    root_message = format_message(
        Cause.BASELINE,
        f"the memory tree as of {_day(commits[cut][1])}; {squashed} older changes squashed",
        {CHANGE_TRAILER: secrets.token_hex(6)},
    ).encode("utf-8")
    shas = git.replay(raw[0], root_message, raw[1:])
    change_id = secrets.token_hex(6)
    detail = f"{squashed} changes before {_day(before)} squashed into one"
    git.fast_import(
        [
            CommitSpec(
                message=format_message(Cause.PRUNE, detail, {CHANGE_TRAILER: change_id}),
                author=committer,
                at=now,
                files={},
            )
        ],
        parent=shas[-1],
        committer=committer,
    )
    git.run("reflog", "expire", "--expire=now", "--all")
    git.run("gc", "--prune=now", "--quiet", timeout=GC_TIMEOUT_S)
    return squashed, len(commits) - squashed, change_id
