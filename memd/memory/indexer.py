"""Index Markdown memory files: read + hash + parse on the caller's thread, write in batches.

A file whose content hash is unchanged is not re-indexed (only its mtime is refreshed). Files
that cannot be indexed (invalid UTF-8, binary, too large) are recorded in `problems` with the
reason and never stop the others; broken front matter is indexed as plain text and reported.

Only regular files inside the roots are indexed. The walk never follows a symbolic link: a link
whose target is inside a root is indexed once, at the target's own path, by the walk that finds
the target; a link leaving every root is never read, and is listed in `problems` so the user
sees why it is not in memory. What a file turns out to be is checked again when it is opened
(`memd.core.fsio.open_regular`), so a link or a FIFO put in place after the walk is never read.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from memd.core import fsio
from memd.core.errors import PathError, SourceError
from memd.core.models import ParsedFile
from memd.core.progress import Task
from memd.core.redact import redact
from memd.db import Connection, Store
from memd.memory import repo as docs
from memd.memory.files import MemoryFiles
from memd.memory.files.settle import snapshot_of
from memd.memory.parse import parse_markdown
from memd.memory.tree import classify, is_memory_file

log = logging.getLogger(__name__)
BATCH = 400
LINK_PROBLEM = "symbolic link to "


@dataclass(frozen=True, slots=True)
class Root:
    """A folder of Markdown memory: the user tree, or a workspace's project tier."""

    path: Path
    project_slug: str = ""  # non-empty: every file here belongs to this project

    @property
    def key(self) -> str:
        return str(self.path)

    def real(self) -> Root:
        """The same root at its real path (every symbolic link followed)."""
        p = Path(fsio.real(self.path))
        return self if p == self.path else Root(p, self.project_slug)


@dataclass(frozen=True, slots=True)
class FileChange:
    """What changed in one file; given to change hooks inside the write transaction."""

    path: str
    root: str
    rel: str
    kind: str
    deleted: bool
    sha256: str = ""
    content: str = ""


ChangeHook = Callable[[Connection, Sequence[FileChange]], None]


@dataclass(slots=True)
class IndexReport:
    """What one indexing pass did."""

    indexed: int = 0
    unchanged: int = 0
    deleted: int = 0
    problems: int = 0
    bytes: int = 0
    seconds: float = 0.0
    changed_paths: list[str] = field(default_factory=list)

    def merge(self, other: IndexReport) -> None:
        self.indexed += other.indexed
        self.unchanged += other.unchanged
        self.deleted += other.deleted
        self.problems += other.problems
        self.bytes += other.bytes
        self.changed_paths += other.changed_paths


@dataclass(frozen=True, slots=True)
class _Loaded:
    rec: docs.FileRecord
    parsed: ParsedFile | None  # None: unchanged content
    problem: str = ""
    content: str = ""


def looks_binary(data: bytes) -> bool:
    """A file that is not text: NUL bytes make more than a tenth of its first 8 KiB (UTF-16 or
    a real binary); a few stray NULs in a Markdown file do not."""
    head = data[:8192]
    return head.count(0) * 10 > len(head)


def scan_root(root: Root, links: list[str] | None = None) -> dict[str, tuple[int, int]]:
    """path → (mtime_ns, size) of every regular memory file below a root (hidden folders
    skipped, symbolic links not followed); the links met are appended to `links` when given."""
    out: dict[str, tuple[int, int]] = {}
    base = str(root.path)
    stack = [base]
    while stack:
        try:
            it = os.scandir(stack.pop())
        except OSError:
            continue
        with it:
            for e in it:
                if not e.name.startswith("."):
                    _scan_entry(e, base, stack, out, links)
    return out


def _scan_entry(
    e: os.DirEntry[str],
    base: str,
    stack: list[str],
    out: dict[str, tuple[int, int]],
    links: list[str] | None,
) -> None:
    try:
        if e.is_symlink():
            if links is not None:
                links.append(e.path)
        elif e.is_dir(follow_symlinks=False):
            stack.append(e.path)
        elif e.is_file(follow_symlinks=False):
            rel = os.path.relpath(e.path, base).replace(os.sep, "/")
            if is_memory_file(rel):
                st = e.stat(follow_symlinks=False)
                out[e.path] = (st.st_mtime_ns, st.st_size)
    except OSError:
        pass  # gone since listed


def _stat_regular(paths: Iterable[str]) -> dict[str, tuple[int, int]]:
    """path → (mtime_ns, size) of those of `paths` (real paths when indexed) that are regular
    files still at that place: neither they nor a folder above them is a link now (a folder
    replaced by a link leads to other files, which are not these)."""
    out: dict[str, tuple[int, int]] = {}
    real_dirs: dict[str, bool] = {}
    for p in paths:
        parent = os.path.dirname(p)
        if parent not in real_dirs:
            real_dirs[parent] = os.path.realpath(parent) == parent
        try:
            st = os.lstat(p)
        except OSError:
            continue
        if real_dirs[parent] and stat.S_ISREG(st.st_mode):
            out[p] = (st.st_mtime_ns, st.st_size)
    return out


def plan_reconcile(
    disk: dict[str, tuple[int, int]], known: dict[str, tuple[int, int, str]]
) -> tuple[list[str], list[str]]:
    """PURE: which files to (re)read and which to delete, from a disk scan and the index."""
    to_read = [p for p, (m, s) in disk.items() if p not in known or known[p][:2] != (m, s)]
    to_delete = [p for p in known if p not in disk]
    return sorted(to_read), sorted(to_delete)


class Indexer:
    """Keeps the index in step with the Markdown roots."""

    def __init__(
        self,
        store: Store,
        roots: Sequence[Root],
        *,
        max_file_bytes: int = 10 << 20,
        hooks: Sequence[ChangeHook] = (),
        files: MemoryFiles | None = None,
    ) -> None:
        self.store = store
        self.roots = [r.real() for r in roots]
        self.max_file_bytes = max_file_bytes
        self.hooks = list(hooks)
        # Reads go through the door, which knows memd's own writes and files mid-save (one of
        # its own when none is given: an indexer on its own, in a test or a tool).
        self._files = files
        self.last_indexed_at = 0.0

    @property
    def files(self) -> MemoryFiles:
        """The door to the memory files this indexer reads through."""
        if self._files is None:
            self._files = MemoryFiles(self.root_paths)
        return self._files

    @files.setter
    def files(self, files: MemoryFiles) -> None:
        self._files = files

    def add_root(self, root: Root) -> bool:
        root = root.real()
        if any(r.path == root.path for r in self.roots):
            return False
        self.roots.append(root)
        return True

    def root_paths(self) -> list[Path]:
        """The real paths of every root: where memd may read and write memory."""
        return [r.path for r in self.roots]

    def resolve(self, path: Path | str) -> Path:
        """`path`'s real place when it is inside a root (`fsio.resolve_inside`), else PathError."""
        return fsio.resolve_inside(self.root_paths(), path)

    def root_of(self, path: str) -> Root | None:
        best: Root | None = None
        for r in self.roots:
            base = str(r.path)
            if (path == base or path.startswith(base + os.sep)) and (
                best is None or len(base) > len(str(best.path))
            ):
                best = r
        return best

    def reconcile(self, progress: Task | None = None) -> IndexReport:
        """Scan every root and bring the index in line with the disk (startup and periodic).

        `progress` counts the files to read as each root is planned, and those read.
        """
        t0 = time.perf_counter()
        report = IndexReport()
        for root in self.roots:
            links: list[str] = []
            disk = scan_root(root, links) if root.path.is_dir() else {}
            known = docs.manifest(self.store.read(), root.key)
            to_read, to_delete = plan_reconcile(disk, known)
            if progress is not None:
                progress.add_total(len(to_read))
            report.merge(self._apply(root, to_read, to_delete, known, progress=progress))
            self._report_links(root, links)
        report.merge(self._unrooted())
        report.seconds = time.perf_counter() - t0
        return report

    def _unrooted(self) -> IndexReport:
        """The files the index holds below a folder that is not a root now: the memory folder
        moved, an extra folder or a workspace taken out, or a project's folder memd wrote
        memory in that was not taken back as a root at start (`MemoryOps.rejoin`: memd no
        longer accepts it). A user-tier folder's are dropped: it is not memory any more. A
        project folder's stay as they are on disk — a file gone is dropped, one changed is read
        again — until the project is used and its folder is a root again; before, a memory
        deleted there while memd was not watching it was still found."""
        report = IndexReport()
        current = {r.key for r in self.roots}
        for key, project in docs.indexed_roots(self.store.read()):
            if key in current:
                continue
            known = docs.manifest(self.store.read(), key)
            root = Root(Path(key), project)
            if not project:
                report.merge(self._apply(root, [], sorted(known), known))
                continue
            to_read, to_delete = plan_reconcile(_stat_regular(known), known)
            report.merge(self._apply(root, to_read, to_delete, known))
        return report

    def index_paths(self, paths: Iterable[str]) -> IndexReport:
        """Re-read the given paths (watcher events): changed, created, or gone."""
        t0 = time.perf_counter()
        report = IndexReport()
        reader = self.store.read()
        plans: dict[str, _RootPlan] = {}
        for p in self._with_link_targets(paths):
            root = self.root_of(p)
            if root is not None:
                plans.setdefault(root.key, _RootPlan(root)).add(reader, p)
        for plan in plans.values():
            known = docs.manifest_of(reader, plan.read)
            report.merge(self._apply(
                plan.root, sorted(set(plan.read)), sorted(set(plan.delete)), known, force=True
            ))  # fmt: skip
            # After the paths are dropped (which clears their problems): a link put where a
            # file was is listed now, not at the next full scan.
            if plan.links:
                self._report_links(plan.root, plan.links, full=False)
        report.seconds = time.perf_counter() - t0
        return report

    def _with_link_targets(self, paths: Iterable[str]) -> list[str]:
        """`paths`, plus the target of each link among them that is a file inside a root:
        whoever wrote through a link changed its target."""
        out = list(paths)
        for p in list(out):
            if _lkind(p) == "link":
                target = fsio.real(p)
                if _lkind(target) == "file" and self.root_of(target) is not None:
                    out.append(target)
        return out

    def _load(
        self, root: Root, path: str, known: dict[str, tuple[int, int, str]]
    ) -> _Loaded | None:
        rel = os.path.relpath(path, root.path).replace(os.sep, "/")
        kind, owner = classify(rel, project_tier=bool(root.project_slug))
        if root.project_slug:
            owner = root.project_slug
        try:
            # Checked at open time, not only when listed: a link or FIFO put here since is
            # not read, and neither is a file whose real place left the root.
            fd = fsio.open_regular(path, inside=[root.path], resolved=True)  # a real path
            with os.fdopen(fd, "rb") as fh:
                st = os.fstat(fh.fileno())
                rec0 = docs.FileRecord(
                    path, root.key, rel, kind.value, owner, st.st_mtime_ns, st.st_size, ""
                )
                if st.st_size > self.max_file_bytes:
                    mb = st.st_size / (1 << 20)
                    limit = self.max_file_bytes / (1 << 20)
                    return _Loaded(
                        rec0, None, f"too large: {mb:.1f} MB > index.max_file_mb {limit:g} MB"
                    )
                first = snapshot_of(fh.fileno(), st)
            # An editor's save in progress (the file empty or cut short) is waited for, not
            # indexed: memd would otherwise forget, for a moment, every item after the cut.
            indexed = known[path][1] if path in known else None
            snap = self.files.read(Path(path), indexed=indexed, inside=[root.path], first=first)
            if snap.data is None:
                return None
            data = snap.data
        except (FileNotFoundError, fsio.NotRegularFile, PathError):
            return None  # gone, or no longer a regular file inside the root: deleted below
        except (OSError, SourceError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            return _Loaded(docs.FileRecord(path, root.key, rel, kind.value, owner, 0, 0, ""), None,
                           f"cannot read: {why}")  # fmt: skip
        sha = hashlib.sha256(data).hexdigest()
        mtime = snap.ident[3] if snap.ident is not None else st.st_mtime_ns
        rec = docs.FileRecord(path, root.key, rel, kind.value, owner, mtime, len(data), sha)
        unchanged = path in known and known[path][2] == sha
        return _parse(rec, data, unchanged=unchanged)

    def _apply(
        self,
        root: Root,
        to_read: Sequence[str],
        to_delete: Sequence[str],
        known: dict[str, tuple[int, int, str]],
        force: bool = False,
        progress: Task | None = None,
    ) -> IndexReport:
        report = IndexReport()
        # Reading and parsing the next batch overlaps with the writer committing this one, so a
        # cold index keeps both cores busy; at most one batch is in flight.
        in_flight: Future[IndexReport] | None = None
        for i in range(0, max(len(to_read), 1), BATCH):
            batch = [x for p in to_read[i : i + BATCH] if (x := self._load(root, p, known))]
            dels = list(to_delete) if i == 0 else []
            missing = [p for p in to_read[i : i + BATCH] if not fsio.is_regular(p)]
            dels += [p for p in missing if p in known or force]
            if progress is not None:
                progress.advance(len(to_read[i : i + BATCH]))
            if not batch and not dels:
                continue
            if in_flight is not None:
                report.merge(in_flight.result(120))
            in_flight = self.store.w.submit(_bind_write(self._write, batch, dels))
        if in_flight is not None:
            report.merge(in_flight.result(120))
        if report.indexed or report.deleted:
            self.last_indexed_at = time.time()
        return report

    def _report_links(self, root: Root, links: Sequence[str], *, full: bool = True) -> None:
        """List the links below `root` that leave every root in `problems` (and clear the
        entries of links gone or now pointing inside); `full`: `links` is every link of the root."""
        roots = [str(r) for r in self.root_paths()]
        leaving: dict[str, str] = {}
        for p in links:
            rel = os.path.relpath(p, root.path).replace(os.sep, "/")
            target = fsio.real(p)
            if fsio.inside_any(target, roots):
                continue
            if is_memory_file(rel) or os.path.isdir(p):
                leaving[p] = (
                    f"symbolic link to {target}, outside the memory folders: not read"
                    " (add that folder to memory.extra_roots to include it)"
                )
        base = str(root.path) + os.sep
        stale = [
            p.path for p in docs.problems(self.store.read())
            if p.reason.startswith(LINK_PROBLEM) and p.path not in leaving
            and (p.path in links or (full and p.path.startswith(base)))
        ]  # fmt: skip
        if not leaving and not stale:
            return

        def write(conn: Connection) -> None:
            for p, reason in leaving.items():
                docs.set_problem(conn, p, reason)
            for p in stale:
                docs.clear_problem(conn, p)

        self.store.w.run(write)

    def _write(self, conn: Connection, batch: list[_Loaded], dels: list[str]) -> IndexReport:
        report = IndexReport()
        changes: list[FileChange] = []
        for ld in batch:
            rec = ld.rec
            if ld.parsed is None and not ld.problem:
                docs.touch_file(conn, rec.path, rec.mtime_ns, rec.size)
                report.unchanged += 1
                continue
            if ld.parsed is None:
                docs.set_problem(conn, rec.path, ld.problem)
                report.problems += 1
                continue
            docs.upsert_file(conn, rec, ld.parsed)
            if ld.problem:
                docs.set_problem(conn, rec.path, ld.problem)
                report.problems += 1
            else:
                docs.clear_problem(conn, rec.path)
            report.indexed += 1
            report.bytes += rec.size
            report.changed_paths.append(rec.path)
            changes.append(
                FileChange(rec.path, rec.root, rec.rel, rec.kind, False, rec.sha256, ld.content)
            )
        for p in dels:
            row = docs.indexed_file(conn, p)
            if row is not None and docs.delete_file(conn, p):
                report.deleted += 1
                report.changed_paths.append(p)
                changes.append(FileChange(p, row.root, row.rel, row.kind, True))
            else:
                docs.clear_problem(conn, p)
        if changes:
            for hook in self.hooks:
                hook(conn, changes)
        return report


@dataclass(slots=True)
class _RootPlan:
    """What `index_paths` re-reads, drops and reports below one root."""

    root: Root
    read: list[str] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)

    def add(self, reader: Connection, p: str) -> None:
        # A path below a linked folder (a polling watcher may report one) is not below the
        # root at all: never walked nor read, only dropped if it was indexed.
        here = os.path.join(fsio.real(os.path.dirname(p)), os.path.basename(p))
        kind = _lkind(p) if fsio.within(here, str(self.root.path)) else ""
        if kind == "file":
            if is_memory_file(os.path.relpath(p, self.root.path).replace(os.sep, "/")):
                self.read.append(p)
            return
        if kind == "dir":
            sub = scan_root(Root(Path(p)), self.links)
            self.read.extend(sub)
            self.delete.extend(k for k in docs.paths_under(reader, p) if k not in sub)
            return
        # Gone, a FIFO or a link: its own path is never indexed (a link's target is, at its
        # own path, when it is inside a root).
        self.delete.append(p)
        self.delete.extend(docs.paths_under(reader, p))
        if kind == "link":
            self.links.append(p)


def _parse(rec: docs.FileRecord, data: bytes, *, unchanged: bool) -> _Loaded:
    """A file's bytes as what the index holds (`parsed` None: unchanged, or a problem)."""
    if looks_binary(data):
        return _Loaded(rec, None, "binary file (mostly NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _Loaded(rec, None, f"invalid UTF-8 at byte {exc.start}")
    if unchanged:
        return _Loaded(rec, None)
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    warnings: list[str] = []
    if "\0" in text:
        # A stray NUL (a paste, a tool's bug) does not make a text file binary: it is
        # indexed as text, the NUL shown as U+FFFD, and the file reported.
        warnings.append(f"{text.count(chr(0))} NUL bytes (indexed as \ufffd)")
        text = text.replace("\0", "\ufffd")
    # What the index holds is what memd serves (context, search, the memories the LLM is
    # shown, exports): secrets replaced and `<private>` spans left out, line numbers kept.
    # The file keeps what the user wrote; hooks get it as it is (sync redacts its own).
    try:
        parsed = parse_markdown(redact(text, keep_lines=True), fallback_title=Path(rec.rel).stem)
    except Exception as exc:  # one file memd cannot parse is a problem, never a stop
        log.exception("%s: cannot be parsed", rec.path)
        return _Loaded(rec, None, f"cannot be parsed: {type(exc).__name__}: {exc}"[:300])
    return _Loaded(rec, parsed, "; ".join([*parsed.warnings, *warnings]), text)


def _lkind(path: str) -> str:
    """What is at `path` itself: "file" (regular), "dir", "link", "other" or "" (nothing)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return ""
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "dir"
    return "file" if stat.S_ISREG(mode) else "other"


def _bind_write(
    fn: Callable[[Connection, list[_Loaded], list[str]], IndexReport],
    batch: list[_Loaded],
    dels: list[str],
) -> Callable[[Connection], IndexReport]:
    def run(conn: Connection) -> IndexReport:
        return fn(conn, batch, dels)

    return run
