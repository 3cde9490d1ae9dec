"""`History`: record every change of the memory tree in a git repository, and undo them.

How a change travels:

1. memd's door to the memory files `hold`s each file an operation writes and, when it ends,
   calls `record_written(files, cause, detail)` with what each file held before and after:
   memd's change exactly as written (redacted on the caller's thread), never the file as it is
   a moment later; it is spooled to disk (`Spool`) until committed.
2. A background thread commits queued changes in batches: one `git fast-import` writes the
   blobs, trees and commits of a batch and moves the branch. Nothing a write waits on runs git.
3. Hand edits arrive from the watcher through `note_hand_edit(path)` and are committed per file
   a few seconds after the editor went quiet (`quiet_s`), at most a minute after the first save
   (`coalesce_s`), with the file's content at that time (hand.py). A path whose content history
   already holds (memd's own writes, seen by the watcher too) records nothing.

`History` composes the parts: `Capturer` (capture.py) reads files into changes, `HandEdits`
(hand.py) keeps the hand edits until they are due, `Committer` (commits.py) writes the
commits. Without `start()` (a CLI process) a record commits before it returns.

Recording never raises into the write that caused it: when git is missing or a commit fails the
change is skipped with one warning and `status()` says why; a damaged repository is set aside
(`history.git.damaged-<time>`) and a new history starts from the tree as it is.

The repository stores redacted blobs, so `git status` in it shows files that hold secrets as
modified, and restoring files with git tools (`checkout`, `reset --hard`, `restore`) would
write placeholders over real secrets: use `undo`, which never does.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from memd.core.errors import HistoryError
from memd.history import files as tree_files
from memd.history.capture import Capturer, hand_author
from memd.history.commits import MEMD_IDENT, Captured, Committer, changed_in_tree
from memd.history.git import Git, find_git
from memd.history.gitdir import HistoryRepo, history_dir
from memd.history.hand import QUIET_S, HandEdits
from memd.history.models import (
    CHANGE_TRAILER,
    Cause,
    Change,
    ChangeDetail,
    HistoryStatus,
    PruneResult,
    UndoPlan,
)
from memd.history.prune import LOOSE_LIMIT, squash_before
from memd.history.query import log_changes, resolve, run_changes, show_change
from memd.history.spool import Spool
from memd.history.undo import plan_undo

if TYPE_CHECKING:
    import datetime as dt

    from memd.core.settings import Settings

log = logging.getLogger(__name__)

MAX_PENDING = 10_000
_AUTO = "auto"


class History:
    """The change history of one memory tree (see the module docstring)."""

    def __init__(
        self,
        tree: Path,
        git_dir: Path,
        *,
        keep_days: int = 90,
        git: str | None = _AUTO,
        coalesce_s: float = 60.0,
        quiet_s: float = QUIET_S,
        clock: Callable[[], float] = time.time,
        max_file_bytes: int = tree_files.MAX_FILE_BYTES,
    ) -> None:
        self.tree = tree.absolute()
        self.git_dir = git_dir.absolute()
        self.keep_days = keep_days
        self.clock = clock
        exe = find_git() if git == _AUTO else git
        self._git = Git(exe, self.git_dir, self.tree) if exe else None
        self._repo = HistoryRepo(self._git) if self._git else None
        self._reason = (
            "" if exe else "git is not installed (no `git` on PATH): changes are not recorded"
        )
        self._opened = False
        self._version = ""
        self._moved: list[str] = []
        self._warned: set[str] = set()
        self._queue: list[Captured] = []
        self._hand = HandEdits(coalesce_s, clock, quiet_s)
        self._capture = Capturer(
            self.tree, max_file_bytes=max_file_bytes, clock=clock, skip=self._skip
        )
        # Capture order is commit order: files are read and queued under `_cond`'s lock, and
        # a batch drains the queue under it too. `_work` (taken first) serialises the batches.
        self._cond = threading.Condition(threading.Lock())
        self._work = threading.RLock()
        self._busy = 0
        self._stop = False
        self._thread: threading.Thread | None = None
        self._committer = (
            Committer(self._git, self._repo, hand_author) if self._git and self._repo else None
        )
        self._spool = Spool(self.git_dir)
        self.gc_loose_objects = LOOSE_LIMIT
        self.recorded = 0
        self.skipped = 0

    @classmethod
    def from_settings(cls, settings: Settings, **kwargs: object) -> History:
        """The history of the configured memory tree, kept in memd's data folder."""
        return cls(
            settings.memory_dir,
            history_dir(settings.paths.data_dir),
            keep_days=settings.history_keep_days,
            max_file_bytes=int(settings.index_max_file_mb * 1024 * 1024),
            **kwargs,  # type: ignore[arg-type]
        )

    @property
    def coalesce_s(self) -> float:
        """Seconds a hand edit waits after its first note before it is recorded."""
        return self._hand.coalesce_s

    @property
    def max_file_bytes(self) -> int:
        """Files larger than this are not recorded."""
        return self._capture.max_file_bytes

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        """Start the commit thread; it opens (or creates) the repository and records what
        changed in the tree since history last saw it."""
        if self._thread is not None:
            return
        self._stop = False
        self._thread = threading.Thread(target=self._loop, name="memd-history", daemon=True)
        with self._cond:
            self._busy += 1  # until the thread has opened the repository (see `_loop`)
        self._thread.start()

    def close(self, timeout: float = 30.0) -> None:
        """Commit waiting hand edits and queued changes, then stop the commit thread."""
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        else:
            self.flush(force=True)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every queued change is committed (or skipped); False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._queue or self._busy:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left)
        return True

    # -- recording -------------------------------------------------------------------------
    def record(
        self,
        paths: Iterable[str | Path],
        cause: Cause | str,
        detail: str = "",
        *,
        before: Mapping[str | Path, str | bytes | None] | None = None,
        trailers: Mapping[str, str] | None = None,
    ) -> None:
        """Record `paths` (files or folders, absolute or tree-relative) as they are now as one
        change; `detail` says what happened in a line. `before`, what the files held before:
        edits history has not seen yet are then recorded first as a hand edit. (memd's own
        writes use `record_written`.) Never raises on I/O or git problems."""
        cause = Cause(cause)
        self._enqueue(lambda: self._capture.writes(paths, cause, detail, before, trailers), [])

    def hold(self, path: str | Path) -> None:
        """memd is writing `path` in an operation not yet recorded: hand edits of the file are
        not captured until its `record_written`, so none holds memd's lines."""
        rel = tree_files.rel_in_tree(self.tree, path)
        if rel is not None:
            with self._cond:
                self._hand.hold(rel)

    def record_written(
        self,
        files: Mapping[str | Path, tuple[str | None, str | None]],
        cause: Cause | str,
        detail: str = "",
        *,
        trailers: Mapping[str, str] | None = None,
        held: Iterable[str | Path] | None = None,
    ) -> None:
        """Record memd's own change exactly as memd wrote it: per file (absolute or
        tree-relative) its text before memd's first write and after its last (None: no file).

        What the history has not seen of a file's `before` is recorded first as a hand edit,
        then this change: it holds memd's lines and nothing else, whatever was saved around
        them. The change is kept on disk until committed (`Spool`). Releases the files `hold`
        held (`held`, else `files`; `[]`: none). Never raises on I/O or git problems.
        """
        cause = Cause(cause)
        holds = files if held is None else held
        rels = [r for r in (tree_files.rel_in_tree(self.tree, p) for p in holds) if r]
        self._enqueue(lambda: self._capture.written(files, cause, detail, trailers), rels)

    def _enqueue(self, capture: Callable[[], Captured | None], held: list[str]) -> None:
        """Queue the change `capture` reads (under the capture lock, so capture order is commit
        order), then let go of the files `held`; commit it here when no thread runs."""
        running = True
        with self._cond:
            try:
                if self._git is None:
                    self._skip("no-git", self._reason)
                    return
                try:
                    pending = capture()
                except Exception as exc:
                    self._skip(
                        f"capture:{type(exc).__name__}", f"reading the changed files failed: {exc}"
                    )
                    return
                if pending is None:
                    return
                if len(self._queue) >= MAX_PENDING:
                    self._skip("queue", f"{MAX_PENDING} changes are waiting to be recorded")
                    return
                self._keep(pending)
                self._queue.append(pending)
                running = self._thread is not None and not self._stop
            finally:
                self._hand.release(held)
                self._cond.notify_all()
        if not running:
            self.flush()

    def _keep(self, pending: Captured) -> None:
        """Spool a change until it is committed (not before the repository is open: then this
        process commits before it answers); a spool that cannot be written costs a warning."""
        if not self._opened:
            return
        # Its change id from now on, not from its commit: a start that replays the spool tells
        # by it whether a killed memd committed the change already (see `_start_from_tree`).
        pending.trailers.setdefault(CHANGE_TRAILER, secrets.token_hex(6))
        try:
            self._spool.add(pending)
        except OSError as exc:
            self._warn_once("spool", f"changes are kept in memory only until committed: {exc}")

    def note_hand_edit(self, path: str | Path) -> None:
        """The watcher saw `path` (a file or folder of the tree) change: it is recorded as a
        hand edit once the editor went quiet (`HandEdits`), with its content then."""
        self.note_coalesced(path, Cause.HAND)

    def note_coalesced(self, path: str | Path, cause: Cause | str) -> None:
        """Record `path` like a hand edit (per file, `coalesce_s` after the first note) but
        with `cause`: for memd's own frequent small writes, such as journal entries. The first
        note of a file within the window gives its cause."""
        rel = tree_files.rel_in_tree(self.tree, path)
        if rel is None:
            return
        with self._cond:
            self._hand.note(rel, Cause(cause))
            self._cond.notify_all()

    def flush(self, *, force: bool = False) -> int:
        """Commit queued changes and the hand edits that are due (all of them with `force`);
        return how many changes were recorded."""
        return self._batch(force_hand=force)

    def catch_up(self) -> int:
        """Record, as one hand edit, every file of the tree that differs from the history
        (edits made while memd was not running, or that the watcher missed).

        Git's index stats the tree, so only files that changed are read.
        """
        with self._work:
            if not self._ensure_open():
                return 0
            git = self._git
            assert git is not None
            try:
                rels = changed_in_tree(git)
            except HistoryError as exc:
                self._skip("catch-up", f"comparing the tree with the history failed: {exc}")
                return 0
            with self._cond:  # memd is writing these: its change comes first (`hold`)
                rels = [r for r in rels if not self._hand.held(r)]

            def capture() -> list[Captured]:
                p = self._capture.rels(
                    rels, Cause.HAND, "edits made outside memd's view", hand_author()
                )
                return [p] if p else []

            return self._batch(extra=capture) if rels else self._batch()

    def _batch(
        self, *, force_hand: bool = False, extra: Callable[[], list[Captured]] | None = None
    ) -> int:
        """Drain the queue, capture due hand edits (and `extra`), commit them in one go."""
        with self._work:
            if not self._ensure_open():
                with self._cond:
                    self.skipped += len(self._queue)
                    self._queue = []
                    self._cond.notify_all()
                return 0
            with self._cond:
                items, self._queue = self._queue, []
                due = self._hand.take_due(force_hand)
                self._busy += 1
                try:
                    seen = self._capture.hand_edits(due) + (extra() if extra is not None else [])
                    seen, again = self._capture.without_saves(seen)  # read mid-save: later
                    self._hand.renote(again)
                    items += seen
                except Exception as exc:
                    self._skip(
                        f"capture:{type(exc).__name__}", f"reading changed files failed: {exc}"
                    )
            try:
                return self._commit(items) if items else 0
            finally:
                self._spool.done(items)
                with self._cond:
                    self._busy -= 1
                    self._cond.notify_all()

    # -- reading and undoing ---------------------------------------------------------------
    def log(
        self,
        path: str | Path | None = None,
        since: float | dt.datetime | str | None = None,
        limit: int = 50,
    ) -> list[Change]:
        """Changes newest first; only those touching `path` (a file or folder) when given."""
        git = self._reader()
        rel = ""
        if path is not None and str(path) not in ("", "."):
            found = tree_files.rel_in_tree(self.tree, path)
            if found is None:
                raise HistoryError(f"{path} is not inside the memory tree {self.tree}")
            rel = found
        return log_changes(git, path=rel, since=since, limit=limit)

    def show(self, change: str) -> ChangeDetail:
        """One change: its metadata and a unified diff per file (as recorded, redacted)."""
        return show_change(self._reader(), change)

    def get(self, change: str) -> Change:
        """One change by id (a Memd-Change id or a commit id prefix)."""
        return resolve(self._reader(), change)

    def run_changes(self, run: str) -> list[Change]:
        """The changes recorded with `trailers={"Memd-Run": run}`, newest first."""
        return run_changes(self._reader(), run)

    def undo(self, change: str | Sequence[str]) -> UndoPlan:
        """Compute the undo of `change` (an id, or several ids: all the changes of a job run)
        against the files as they are now.

        Raises `UndoConflict` naming each file and its lines when later edits touched what the
        change wrote. Nothing is written: apply the plan with `apply_undo` (or memd's safe
        writer, then `record(..., Cause.UNDO, ...)`).
        """
        self.wait()
        ids = [change] if isinstance(change, str) else list(change)
        return plan_undo(self._reader(), self.tree, ids)

    def apply_undo(
        self,
        plan: UndoPlan,
        write: Callable[[Path, str | None, str | None], None] = tree_files.write_checked,
    ) -> list[str]:
        """Write a plan's files with `write(path, expected, new)`, which must refuse a file no
        longer holding `expected` (the default does), and record the undo; returns the paths
        written. (memd's daemon applies undos through its door to the memory files.)"""
        done: dict[str | Path, tuple[str | None, str | None]] = {}
        try:
            for f in plan.files:
                write(f.path, f.expected, f.new)
                done[f.rel] = (f.expected, f.new)
        finally:
            if done:
                self.record_written(done, Cause.UNDO, plan.detail, trailers=plan.trailers)
        return [str(r) for r in done]

    def prune(self) -> PruneResult:
        """Squash changes older than `keep_days` into one root commit, record the prune and
        run gc (when nothing is old enough, gc runs once `gc_loose_objects` loose objects have
        piled up). With `keep_days` 0 nothing is squashed. Meant for a daily job."""
        now = self.clock()
        # keep_days 0 keeps everything: no change is older than the epoch, gc still runs.
        cutoff = now - self.keep_days * 86400 if self.keep_days > 0 else 0.0
        self.flush()
        with self._work:
            if not self._ensure_open():
                raise HistoryError(self._reason)
            git = self._git
            assert git is not None and self._repo is not None
            with self._repo.locked():
                squashed, kept, change_id = squash_before(
                    git, cutoff, now=now, committer=MEMD_IDENT, loose_limit=self.gc_loose_objects
                )
            if self._committer is not None:
                self._committer.forget()  # the branch was rewritten
        if not change_id:
            return PruneResult(0, kept, cutoff)
        return PruneResult(squashed, kept, cutoff, resolve(git, change_id))

    def status(self) -> HistoryStatus:
        """Whether changes are being recorded and, if not, why."""
        head = ""
        if self._git is not None and self._opened:
            # What this process last committed: `status` is asked often (clients poll it), and
            # a git process per call cost 85% of it.
            head = (self._committer.head if self._committer is not None else None) or ""
            if not head:
                try:
                    head = self._git.head() or ""
                except HistoryError:
                    head = ""
        with self._cond:
            pending = len(self._queue) + len(self._hand)
        return HistoryStatus(
            enabled=self._git is not None,
            ok=not self._reason,
            reason=self._reason,
            git_dir=str(self.git_dir),
            work_tree=str(self.tree),
            git=self._version,
            head=head,
            pending=pending,
            recorded=self.recorded,
            skipped=self.skipped,
            moved_aside=list(self._moved),
        )

    # -- internals -------------------------------------------------------------------------
    def _reader(self) -> Git:
        if self._git is None:
            raise HistoryError(
                self._reason, hint="install git to keep a history of the memory tree"
            )
        if not self._opened and not self.git_dir.exists():
            raise HistoryError(f"no history yet in {self.git_dir}")
        return self._git

    def _skip(self, key: str, message: str) -> None:
        self.skipped += 1
        self._warn_once(key, f"change not recorded: {message}")
        self._reason = message

    def _warn_once(self, key: str, message: str) -> None:
        self._reason = message
        if key in self._warned:
            log.debug("history: %s", message)
        else:
            self._warned.add(key)
            log.warning("history: %s", message)

    def _loop(self) -> None:
        try:
            with self._work:
                self._ensure_open()
        finally:
            with self._cond:
                self._busy -= 1
                self._cond.notify_all()
        while True:
            with self._cond:
                while not self._stop and not self._queue and not self._hand.due_now():
                    self._cond.wait(self._hand.next_due_in())
                stopping = self._stop
            try:
                self._batch(force_hand=stopping)
            except Exception:
                log.exception("history: recording failed")
            if stopping:
                with self._cond:
                    if not self._queue:
                        return

    def _ensure_open(self) -> bool:
        """Open (create, or repair) the repository once; record the tree's state in it."""
        if self._opened:
            return True
        if self._git is None or self._repo is None:
            return False
        try:
            self._version = self._git.out("--version")
            with self._repo.locked() if self._repo.exists() else contextlib.nullcontext():
                moved = self._repo.ensure()
            if moved is not None:
                self._moved.append(str(moved))
            self._opened = True
            self._reason = ""
        except HistoryError as exc:
            self._warn_once("open", f"the history repository cannot be used: {exc}")
            return False
        self._start_from_tree()
        return True

    def _start_from_tree(self) -> None:
        git = self._git
        assert git is not None
        try:
            head = git.head()
        except HistoryError:
            head = None
        if head is None:
            detail = "the memory tree when history started"
            committer = self._committer
            assert committer is not None
            # Under the capture lock, so a change captured meanwhile is either in the baseline
            # (and dropped from the queue) or captured after it. Each file is read as git takes
            # it: the whole tree is never in memory at once.
            with self._cond:
                self._queue = []
                rels = list(tree_files.walk(self.tree))
                try:
                    n = committer.commit_tree(
                        rels,
                        self._capture.read_one,
                        Cause.BASELINE,
                        detail,
                        self.clock(),
                        MEMD_IDENT,
                    )
                except HistoryError as exc:
                    failed: HistoryError | None = exc
                else:
                    failed = None
            self._committed(n if failed is None else failed, 1)
            self._spool.done(self._spool.pending())  # the tree's first record holds them
        else:
            # memd's changes a crash kept from their commit, before any edit found since.
            self._spool.replay(git, self._commit)
            self.catch_up()

    def _commit(self, items: list[Captured], *, allow_empty: bool = False) -> int:
        assert self._committer is not None
        try:
            n = self._committer.commit(items, allow_empty=allow_empty)
        except HistoryError as exc:
            return self._committed(exc, len(items))
        return self._committed(n, len(items))

    def _committed(self, result: int | HistoryError, items: int) -> int:
        """Count a commit of `items` changes (`result`: commits written, or why none was)."""
        if isinstance(result, HistoryError):
            assert self._committer is not None
            self._committer.forget()
            self._commit_failed(result, items)
            return 0
        self.recorded += result
        if result:
            self._reason = ""
        return result

    def _commit_failed(self, exc: HistoryError, n: int) -> None:
        repo = self._repo
        assert repo is not None
        try:
            why = repo.problem()
        except HistoryError as probe:
            why = str(probe)
        if not why:
            self._skip("commit", f"git could not record the change: {exc}")
            self.skipped += n - 1
            return
        self._skip("damaged", f"{why}; the history was set aside and starts again")
        self.skipped += n - 1
        try:
            with repo.locked():
                moved = repo.set_aside()
            self._moved.append(str(moved))
            self._opened = False
            if self._committer is not None:
                self._committer.forget()
            self._ensure_open()
        except HistoryError as again:
            self._warn_once("open", f"the history repository cannot be used: {again}")
