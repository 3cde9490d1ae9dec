"""Turning captured changes into commits: what history already holds is left out.

`Committer` keeps, for the paths it has seen, the blob id the history branch holds, so a batch
needs no git call to tell which files really changed (memd's own writes come back through the
watcher as hand edits; those compare equal and record nothing).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from memd.core.errors import HistoryError
from memd.history import files as tree_files
from memd.history.git import CommitSpec, Git, blob_sha
from memd.history.gitdir import HistoryRepo
from memd.history.models import CHANGE_TRAILER, Cause, format_message

log = logging.getLogger(__name__)

MEMD_IDENT = "memd <memd@localhost>"
_LS_CHUNK = 400


@dataclass(slots=True)
class Captured:
    """A change captured on the caller's thread, waiting for the commit thread."""

    cause: Cause
    detail: str
    files: dict[str, bytes | None]  # redacted content by path; None: absent
    at: float
    author: str
    trailers: dict[str, str] = field(default_factory=dict)
    folders: tuple[str, ...] = ()  # folders recorded whole: history files under them not in
    # `files` were gone when captured
    before: dict[str, bytes | None] | None = None
    spool: int | None = None  # its number in the spool (memd's own change, kept until committed)
    replayed: bool = False  # read back from the spool at a start: it may be committed already
    # The identity of each file read from the tree when read (hand edits): one saved since
    # may have been read in the middle of that save.
    read_as: dict[str, tree_files.Ident] = field(default_factory=dict)


def changed_in_tree(git: Git) -> list[str]:
    if not (git.git_dir / "index").exists():
        git.run("read-tree", "refs/heads/main")
    git.run("update-index", "-q", "--refresh", check=False)
    out: set[str] = set()
    for args in (
        ("diff-files", "--name-only", "-z"),
        ("diff-index", "--cached", "--name-only", "-z", "refs/heads/main"),
        ("ls-files", "--others", "--exclude-standard", "-z"),
    ):
        raw = git.run(*args).stdout
        out.update(p.decode("utf-8", "surrogateescape") for p in raw.split(b"\0") if p)
    return sorted(r for r in out if tree_files.recordable(r))


class Committer:
    """Writes captured changes into one history repository."""

    def __init__(self, git: Git, repo: HistoryRepo, hand_author: Callable[[], str]) -> None:
        self.git = git
        self.repo = repo
        self.hand_author = hand_author
        self._known: dict[str, str | None] = {}
        self._known_head: str | None = None

    @property
    def head(self) -> str | None:
        """The commit this committer last wrote or read the branch at (None: not known)."""
        return self._known_head

    def forget(self) -> None:
        """Drop what is known of the branch (after a failure, a prune or a new repository)."""
        self._known = {}
        self._known_head = None

    def _known_for(self, head: str | None, rels: set[str], folders: set[str]) -> None:
        if head != self._known_head:
            self._known = {}
            self._known_head = head
        if head is None:
            for r in rels:
                self._known.setdefault(r, None)
            return
        unknown = sorted(r for r in rels if r not in self._known)
        for i in range(0, len(unknown), _LS_CHUNK):
            chunk = unknown[i : i + _LS_CHUNK]
            found = self.git.entries(head, chunk)
            for r in chunk:
                self._known[r] = found.get(r)
        todo = sorted(folders)
        for i in range(0, len(todo), _LS_CHUNK):
            self._known.update(self.git.entries(head, todo[i : i + _LS_CHUNK]))

    def commit(self, items: list[Captured], *, allow_empty: bool = False) -> int:
        """Commit `items` in order (files whose content history already holds are left out,
        items left with nothing are skipped); return how many commits were written."""
        git = self.git
        with self.repo.locked():
            head = git.head()
            rels = {r for it in items for r in it.files} | {
                r for it in items for r in (it.before or {})
            }
            self._known_for(head, rels, {f for it in items for f in it.folders})
            state = dict(self._known)
            specs: list[CommitSpec] = []
            for it in items:
                specs += self._specs_of(it, state, allow_empty)
            if not specs:
                return 0
            shas = git.fast_import(specs, parent=head, committer=MEMD_IDENT)
            self._known = state
            self._known_head = shas[-1]
            touched = {r for s in specs for r in s.files}
            try:
                git.update_index({r: state.get(r) for r in touched})
            except HistoryError as exc:
                # The index only serves `git status`; a user's git holding its lock must
                # not cost a change.
                log.debug("history: index not updated: %s", exc)
        return len(specs)

    def _specs_of(
        self, it: Captured, state: dict[str, str | None], allow_empty: bool
    ) -> list[CommitSpec]:
        """The commits of one captured change against `state` (updated): the edits history has
        not seen of its files' `before` first, as a hand edit, then the change itself."""
        if it.replayed and not _changed(dict(state), it.files):
            return []  # committed before a crash, the spool not marked yet
        out = []
        unseen = _changed(state, it.before) if it.before else {}
        if unseen:
            what = f"edits not yet recorded before this {it.cause}"
            out.append(self._spec(Cause.HAND, what, unseen, it.at, self.hand_author(), {}))
        files = dict(it.files)
        for folder in it.folders:
            prefix = folder + "/"
            for r, sha in state.items():
                if sha is not None and r.startswith(prefix) and r not in files:
                    files[r] = None
        changed = _changed(state, files)
        if changed or allow_empty:
            out.append(self._spec(it.cause, it.detail, changed, it.at, it.author, it.trailers))
        return out

    def commit_tree(
        self,
        rels: Sequence[str],
        read: Callable[[str], bytes | None],
        cause: Cause,
        detail: str,
        at: float,
        author: str,
    ) -> int:
        """Write a root commit holding the files `rels` as `read` gives them (None: left out).

        Each file is read as git takes it, so a tree's first commit never holds all of it in
        memory. Nor are the blob ids of the whole tree kept afterwards (a restart does not have
        them either): a later batch asks git about the paths it touches. Returns 1.
        """
        files = _ReadAsWritten(rels, read)
        with self.repo.locked():
            spec = self._spec(cause, detail, files, at, author, {})
            shas = self.git.fast_import([spec], parent=None, committer=MEMD_IDENT)
            self._known = {}
            self._known_head = shas[-1]
            try:
                self.git.update_index(dict(files.shas))
            except HistoryError as exc:  # the index only serves `git status` (see `commit`)
                log.debug("history: index not updated: %s", exc)
        return 1

    def _spec(
        self,
        cause: Cause,
        detail: str,
        files: Mapping[str, bytes | None],
        at: float,
        author: str,
        trailers: Mapping[str, str],
    ) -> CommitSpec:
        extra = {CHANGE_TRAILER: secrets.token_hex(6), **trailers}
        return CommitSpec(format_message(cause, detail, extra), author, at, files)


class _ReadAsWritten(Mapping[str, bytes | None]):
    """The files `rels` of a commit, each read by `read` when git's stream reaches it; the blob
    id of each one read is kept in `shas`."""

    def __init__(self, rels: Sequence[str], read: Callable[[str], bytes | None]) -> None:
        self._rels = list(dict.fromkeys(rels))
        self._read = read
        self.shas: dict[str, str | None] = {}

    def __getitem__(self, rel: str) -> bytes | None:
        data = self._read(rel)
        if data is not None:
            self.shas[rel] = blob_sha(data)
        return data

    def __iter__(self) -> Iterator[str]:
        return iter(self._rels)

    def __len__(self) -> int:
        return len(self._rels)


def _changed(
    state: dict[str, str | None], files: Mapping[str, bytes | None]
) -> dict[str, bytes | None]:
    """The files whose content differs from `state`; `state` is updated to them."""
    out: dict[str, bytes | None] = {}
    for rel, data in files.items():
        sha = None if data is None else blob_sha(data)
        if state.get(rel) != sha:
            out[rel] = data
            state[rel] = sha
    return out
