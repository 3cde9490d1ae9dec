"""Index Markdown memory files: read + hash + parse on the caller's thread, write in batches.

A file whose content hash is unchanged is not re-indexed (only its mtime is refreshed). Files
that cannot be indexed (invalid UTF-8, binary, too large) are recorded in `problems` with the
reason and never stop the others; broken front matter is indexed as plain text and reported.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from memd.core.models import ParsedFile
from memd.db import Connection, Store
from memd.memory import repo as docs
from memd.memory.parse import parse_markdown
from memd.memory.tree import classify, is_memory_file

log = logging.getLogger(__name__)
BATCH = 400


@dataclass(frozen=True, slots=True)
class Root:
    """A folder of Markdown memory: the user tree, or a workspace's project tier."""

    path: Path
    project_slug: str = ""  # non-empty: every file here belongs to this project

    @property
    def key(self) -> str:
        return str(self.path)


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


def scan_root(root: Root) -> dict[str, tuple[int, int]]:
    """path → (mtime_ns, size) of every memory file below a root (hidden folders skipped)."""
    out: dict[str, tuple[int, int]] = {}
    base = str(root.path)
    stack = [base]
    while stack:
        d = stack.pop()
        try:
            it = os.scandir(d)
        except OSError:
            continue
        with it:
            for e in it:
                if e.name.startswith("."):
                    continue
                try:
                    if e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
                    elif e.is_file():
                        rel = os.path.relpath(e.path, base).replace(os.sep, "/")
                        if is_memory_file(rel):
                            st = e.stat()
                            out[e.path] = (st.st_mtime_ns, st.st_size)
                except OSError:
                    continue
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
    ) -> None:
        self.store = store
        self.roots = list(roots)
        self.max_file_bytes = max_file_bytes
        self.hooks = list(hooks)
        self.last_indexed_at = 0.0

    def add_root(self, root: Root) -> bool:
        if any(r.path == root.path for r in self.roots):
            return False
        self.roots.append(root)
        return True

    def root_of(self, path: str) -> Root | None:
        best: Root | None = None
        for r in self.roots:
            base = str(r.path)
            if (path == base or path.startswith(base + os.sep)) and (
                best is None or len(base) > len(str(best.path))
            ):
                best = r
        return best

    def reconcile(self) -> IndexReport:
        """Scan every root and bring the index in line with the disk (startup and periodic)."""
        t0 = time.perf_counter()
        report = IndexReport()
        for root in self.roots:
            disk = scan_root(root) if root.path.is_dir() else {}
            known = docs.manifest(self.store.read(), root.key)
            to_read, to_delete = plan_reconcile(disk, known)
            report.merge(self._apply(root, to_read, to_delete, known))
        report.seconds = time.perf_counter() - t0
        return report

    def index_paths(self, paths: Iterable[str]) -> IndexReport:
        """Re-read the given paths (watcher events): changed, created, or gone."""
        t0 = time.perf_counter()
        report = IndexReport()
        by_root: dict[str, tuple[Root, list[str], list[str]]] = {}
        reader = self.store.read()
        for p in paths:
            root = self.root_of(p)
            if root is None:
                continue
            rel = os.path.relpath(p, root.path).replace(os.sep, "/")
            entry = by_root.setdefault(root.key, (root, [], []))
            if os.path.isfile(p) and is_memory_file(rel):
                entry[1].append(p)
            elif os.path.isdir(p):
                sub = scan_root(Root(Path(p)))
                entry[1].extend(sub)
                known_below = docs.paths_under(reader, p)
                entry[2].extend(k for k in known_below if k not in sub)
            else:
                entry[2].append(p)
                entry[2].extend(docs.paths_under(reader, p))
        for root, to_read, to_delete in by_root.values():
            known = docs.manifest_of(reader, to_read)
            report.merge(
                self._apply(root, sorted(set(to_read)), sorted(set(to_delete)), known, force=True)
            )
        report.seconds = time.perf_counter() - t0
        return report

    def _load(
        self, root: Root, path: str, known: dict[str, tuple[int, int, str]]
    ) -> _Loaded | None:
        rel = os.path.relpath(path, root.path).replace(os.sep, "/")
        kind, owner = classify(rel, project_tier=bool(root.project_slug))
        if root.project_slug:
            owner = root.project_slug
        try:
            st = os.stat(path)
            rec0 = docs.FileRecord(
                path, root.key, rel, kind.value, owner, st.st_mtime_ns, st.st_size, ""
            )
            if st.st_size > self.max_file_bytes:
                mb = st.st_size / (1 << 20)
                limit = self.max_file_bytes / (1 << 20)
                return _Loaded(
                    rec0, None, f"too large: {mb:.1f} MB > index.max_file_mb {limit:g} MB"
                )
            with open(path, "rb") as fh:
                data = fh.read()
        except FileNotFoundError:
            return None
        except OSError as exc:
            return _Loaded(docs.FileRecord(path, root.key, rel, kind.value, owner, 0, 0, ""), None,
                           f"cannot read: {exc.strerror or exc}")  # fmt: skip
        sha = hashlib.sha256(data).hexdigest()
        rec = docs.FileRecord(
            path, root.key, rel, kind.value, owner, st.st_mtime_ns, len(data), sha
        )
        if b"\0" in data[:8192]:
            return _Loaded(rec, None, "binary file (contains NUL bytes)")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return _Loaded(rec, None, f"invalid UTF-8 at byte {exc.start}")
        if path in known and known[path][2] == sha:
            return _Loaded(rec, None)
        text = text.removeprefix("\ufeff").replace("\r\n", "\n")
        parsed = parse_markdown(text, fallback_title=Path(rel).stem)
        return _Loaded(rec, parsed, "; ".join(parsed.warnings), text)

    def _apply(
        self,
        root: Root,
        to_read: Sequence[str],
        to_delete: Sequence[str],
        known: dict[str, tuple[int, int, str]],
        force: bool = False,
    ) -> IndexReport:
        report = IndexReport()
        # Reading and parsing the next batch overlaps with the writer committing this one, so a
        # cold index keeps both cores busy; at most one batch is in flight.
        in_flight: Future[IndexReport] | None = None
        for i in range(0, max(len(to_read), 1), BATCH):
            batch = [x for p in to_read[i : i + BATCH] if (x := self._load(root, p, known))]
            dels = list(to_delete) if i == 0 else []
            missing = [p for p in to_read[i : i + BATCH] if not os.path.exists(p)]
            dels += [p for p in missing if p in known or force]
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


def _bind_write(
    fn: Callable[[Connection, list[_Loaded], list[str]], IndexReport],
    batch: list[_Loaded],
    dels: list[str],
) -> Callable[[Connection], IndexReport]:
    def run(conn: Connection) -> IndexReport:
        return fn(conn, batch, dels)

    return run
