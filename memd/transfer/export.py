"""The memd export: one versioned JSON document of sessions (chats nested), memories and the tree.

Version 1 of the document (seed 003's nested, versioned export, plus what a second machine needs
to answer the same)::

    {"format": "memd-export", "version": 1, "exported_at": "2026-04-27T06:12:22+08:00",
     "memd_version": "…", "device_id": "…",            # device_id only when sync assigned one
     "sessions": [{"session_id", "title", "title_source", "summary", "summary_kind",
                   "summary_upto", "extracted_upto", "source", "source_path", "agent_id",
                   "project", "started_at", "updated_at",
                   "chats": [{"seq", "turn_id", "role", "text", "ts", "source_path", "line",
                              "speaker"?, "source"?, "agent_id"?, "project"?,
                              "parts"?: [{"part_id", "seq", "text"}]}]}],
     "memories": [{"id", "text", "type", "scope", "owner", "meta", "path", "section",
                   "root"?, "last_used"?, "uses"?}],
     "memory_hashes": [{"scope", "hash", "memory_id", "content", "path", "session_id", "created_at"}],
     "tree": [{"path": "_core/profile.md", "content": "…", "sha256": "…"}]}

A session is matched by its `session_id` (the uuid of seed 003) and a chat by its `turn_id`
within it. Chats are in storage order (`seq`); a chat without `source`, `agent_id` or `project`
has its session's. `summary_upto` and `extracted_upto` count the chats (in that order) the
summary and the extraction job have covered, so neither is redone on the importing machine.
Memory `path`s are relative to the memory tree (or to `root`, a workspace's project memory
folder); times are epoch seconds. Turn texts were redacted when they were stored; Markdown and
memory texts are redacted on the way out, as for cloud sync.

Reading an export back checks all of it before anything is written (`memd.transfer.merge` merges it),
so a damaged file writes nothing.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any

from memd import __version__
from memd.api.messages.transfer import ExportResult
from memd.conversations import repo as conversations
from memd.core import fsio, jsontext
from memd.core.errors import MemdError, PathError, SourceError
from memd.core.fsio import atomic_file
from memd.core.jsontext import Unreadable
from memd.core.models import MAX_TS
from memd.core.redact import redact
from memd.db import Connection, Store, snapshot
from memd.memory import authorship
from memd.memory import repo as memories
from memd.memory.tree import is_memory_file

FORMAT = "memd-export"
VERSION = 1
MAX_IMPORT_BYTES = 2 << 30
SNIFF_BYTES = 64 * 1024
MEMORY_KINDS = ("core", "topic", "note", "project", "agent")
_SESSION_STR = (
    "title",
    "title_source",
    "summary",
    "summary_kind",
    "source",
    "source_path",
    "agent_id",
    "project",
)
_CHAT_OPTIONAL = ("speaker", "source", "agent_id", "project")
_FORMAT_KEY = re.compile(r'"format"\s*:\s*"' + FORMAT + '"')


@dataclass(frozen=True, slots=True)
class Chat:
    """One exported turn: a whole text, or the records (`parts`) it was stored from."""

    seq: int
    turn_id: str
    role: str
    text: str
    ts: float
    source_path: str
    line: int
    speaker: str = ""
    source: str = ""
    agent_id: str = ""
    project: str = ""
    parts: tuple[tuple[str, int, str], ...] = ()  # (part_id, seq, text)


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """One exported session with its chats."""

    session_id: str
    fields: dict[str, Any]
    chats: tuple[Chat, ...]


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """One exported list item with its metadata and place."""

    id: str
    text: str
    meta: dict[str, str]
    path: str
    section: str
    root: str = ""
    last_used: float = 0.0
    uses: int = 0


@dataclass(frozen=True, slots=True)
class TreeFile:
    """One Markdown file of the memory tree."""

    path: str
    content: str


@dataclass(frozen=True, slots=True)
class ExportDocument:
    """A memd export read back and checked (`read_export`)."""

    version: int
    exported_at: str
    device_id: str
    sessions: tuple[SessionRecord, ...]
    memories: tuple[MemoryRecord, ...]
    memory_hashes: tuple[tuple[str, str, str, str, str, str, float], ...]
    tree: tuple[TreeFile, ...]


# -- export ------------------------------------------------------------------------------------
def check_destination(dest: Path, *, overwrite: bool, private: Sequence[Path]) -> Path:
    """Where an export may be written: `dest` made absolute, when it is not in one of memd's
    own folders (`private`: the memory roots, the data folder) and, unless `overwrite`, does
    not exist; an existing file is replaced only when it is a regular file. `PathError` else.
    """
    dest = Path(os.path.abspath(dest.expanduser()))
    if not dest.parent.is_dir():
        raise PathError(
            f"{dest.parent} is not a folder", hint="create it first, or export to another path"
        )
    where = fsio.real(dest)
    for folder in private:
        if fsio.within(where, fsio.real(folder)):
            raise PathError(
                f"{dest} is inside memd's folder {folder}; an export there could replace memory"
                " or the index",
                hint="export to a file outside the memory and data folders",
            )
    if os.path.lexists(dest):
        if not overwrite:
            raise PathError(f"{dest} exists; nothing was written (overwrite replaces it)",
                            hint="pick a new file name, or pass overwrite (`--overwrite`)")  # fmt: skip
        if not fsio.is_regular(dest):
            raise PathError(f"{dest} is not a regular file; only a regular file is replaced")
    return dest


def write_export(
    store: Store,
    dest: Path,
    *,
    memory_root: Path,
    tree: bool = True,
    device_id: str = "",
    now: Callable[[], float] = time.time,
    overwrite: bool = False,
    private: Sequence[Path] = (),
) -> ExportResult:
    """Write the export document to `dest`, streamed into a temp file and renamed into place.

    `dest` is checked first (`check_destination`; the memory tree is always one of the folders
    refused). Everything read from the index comes from one read transaction, so sessions,
    chats and memories are a consistent snapshot. The file is mode 0600: it holds private data.
    """
    started = time.monotonic()
    dest = check_destination(dest, overwrite=overwrite, private=[memory_root, *private])
    conn = store.read()
    try:
        # Private data: the file is the owner's alone, whatever was at `dest` before.
        with atomic_file(dest, mode=0o600, replace=overwrite) as fh, snapshot(conn):
            counts = _write_document(
                fh, conn, memory_root, tree=tree, device_id=device_id, now=now()
            )
    except FileExistsError as exc:
        raise PathError(f"{dest} was created while the export ran; nothing was written to it",
                        hint="pick a new file name, or pass overwrite (`--overwrite`)") from exc  # fmt: skip
    except OSError as exc:
        raise PathError(f"cannot write {dest}: {exc}") from exc
    sessions, chats, memories, files = counts
    return ExportResult(path=str(dest), sessions=sessions, chats=chats, memories=memories,
                        files=files, bytes=dest.stat().st_size,
                        seconds=round(time.monotonic() - started, 3))  # fmt: skip


def _write_document(
    fh: IO[str],
    conn: Connection,
    memory_root: Path,
    *,
    tree: bool,
    device_id: str,
    now: float,
) -> tuple[int, int, int, int]:
    def dump(v: Any) -> str:
        return json.dumps(v, ensure_ascii=False)

    head: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": dt.datetime.fromtimestamp(now).astimezone().isoformat(timespec="seconds"),
        "memd_version": __version__,
    }
    if device_id:
        head["device_id"] = device_id
    fh.write(dump(head)[:-1] + ',\n"sessions": [')
    n_sessions = n_chats = 0
    for i, s in enumerate(_sessions(conn)):
        fh.write(("\n" if i == 0 else ",\n") + dump(s))
        n_sessions += 1
        n_chats += len(s["chats"])
    fh.write('\n],\n"memories": [')
    n_memories = 0
    for i, m in enumerate(_memories(conn, memory_root)):
        fh.write(("\n" if i == 0 else ",\n") + dump(m))
        n_memories += 1
    fh.write('\n],\n"memory_hashes": [')
    root_prefix = str(memory_root) + os.sep
    for i, r in enumerate(memories.memory_hashes(conn)):
        path = r.path[len(root_prefix) :] if r.path.startswith(root_prefix) else r.path
        row = {"scope": r.scope, "hash": r.hash, "memory_id": r.memory_id, "content": redact(r.content),
               "path": path, "session_id": r.session_id, "created_at": r.created_at}  # fmt: skip
        fh.write(("\n" if i == 0 else ",\n") + dump(row))
    fh.write('\n],\n"tree": [')
    n_files = 0
    if tree:
        for i, (rel, content) in enumerate(_tree_files(memory_root)):
            sha = hashlib.sha256(content.encode()).hexdigest()
            fh.write(
                ("\n" if i == 0 else ",\n") + dump({"path": rel, "content": content, "sha256": sha})
            )
            n_files += 1
    fh.write("\n]}\n")
    return n_sessions, n_chats, n_memories, n_files


def _sessions(conn: Connection) -> Iterator[dict[str, Any]]:
    for s in conversations.all_sessions(conn):
        sid = s.session_id
        parts: dict[str, list[dict[str, Any]]] = {}
        for turn_id, part_id, seq, text in conversations.parts_of(conn, sid):
            parts.setdefault(turn_id, []).append({"part_id": part_id, "seq": seq, "text": text})
        chats = []
        extracted = 0
        for t in conversations.turns_of(conn, sid):
            chat: dict[str, Any] = {"seq": t.id, "turn_id": t.turn_id, "role": t.role, "text": t.text,
                                    "ts": t.ts, "source_path": t.source_path, "line": t.line}  # fmt: skip
            if t.speaker:
                chat["speaker"] = t.speaker
            for k in ("source", "agent_id", "project"):
                if getattr(t, k) != getattr(s, k):
                    chat[k] = getattr(t, k)
            if t.turn_id in parts:
                chat["parts"] = parts[t.turn_id]
            if t.id <= s.extracted_upto:
                extracted += 1
            chats.append(chat)
        yield {
            "session_id": sid,
            **{k: getattr(s, k) for k in _SESSION_STR},
            "summary_upto": s.summary_upto,
            "extracted_upto": extracted,
            "started_at": s.started_at,
            "updated_at": s.updated_at,
            "chats": chats,
        }


def _memories(conn: Connection, memory_root: Path) -> Iterator[dict[str, Any]]:
    user_root = str(memory_root)
    for r in memories.export_items(conn, MEMORY_KINDS, user_root):
        meta = json.loads(r.meta) if r.meta else {}
        # As `memories` lists them: the status lines memd keeps travel in their file only.
        if not authorship.is_memory(authorship.writer(r.rel, r.heading, r.text, meta)):
            continue
        m: dict[str, Any] = {
            "id": r.item_id,
            "text": redact(r.text),
            "type": meta.get("type", ""),
            "scope": {"project": "project", "agent": "agent"}.get(r.kind, "user"),
            "owner": r.owner,
            "meta": meta,
            "path": r.rel,
            "section": r.heading if r.level == 2 else "",
        }
        if r.root != user_root:
            m["root"] = r.root
        if r.last_used is not None:
            m["last_used"], m["uses"] = r.last_used, r.uses
        yield m


def _tree_files(memory_root: Path) -> Iterator[tuple[str, str]]:
    """(tree-relative path, redacted text) of every Markdown file of the tree, in path order.

    Only regular files inside the tree: symbolic links are not followed (a link's target in
    the tree is exported at its own path), and FIFOs or devices are never opened.
    """
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(memory_root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            rel = os.path.relpath(os.path.join(dirpath, name), memory_root).replace(os.sep, "/")
            if _tree_path_ok(rel):
                found.append(rel)
    for rel in sorted(found):
        try:
            text = fsio.read_regular(memory_root / rel, inside=[memory_root]).decode("utf-8")
        except (OSError, UnicodeDecodeError, MemdError):
            # Gone since the walk, a link, a FIFO, or not text: the indexer reports such files.
            continue
        yield rel, redact(text)


def _tree_path_ok(rel: str) -> bool:
    return rel == "README.md" or is_memory_file(rel)


# -- reading an export back --------------------------------------------------------------------
def is_export_file(path: Path) -> bool:
    """Whether `path` is a file that starts like a memd export (`"format": "memd-export"`).

    Only a regular file is opened (a FIFO would block the reader until someone writes to it).
    """
    try:
        with os.fdopen(fsio.open_regular(path, follow=True), "rb") as f:
            head = f.read(SNIFF_BYTES)
    except (OSError, MemdError):
        return False
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    return text.startswith("{") and _FORMAT_KEY.search(text) is not None


class _Invalid(Exception):
    """A field of the document is missing or of the wrong type (message names where)."""


def _get(
    obj: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str, default: Any = ...
) -> Any:
    if key not in obj or obj[key] is None:
        if default is ...:
            raise _Invalid(f"{where}: missing {key!r}")
        return default
    v = obj[key]
    if isinstance(v, Unreadable):
        raise _Invalid(f"{where}.{key}: {v.what}")
    if isinstance(v, bool) or not isinstance(v, kind):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise _Invalid(f"{where}.{key}: expected {names}, got {type(v).__name__}")
    if isinstance(v, int) and not -(1 << 63) <= v < 1 << 63:  # what SQLite stores
        raise _Invalid(f"{where}.{key}: {str(v)[:24]}… is out of range")
    return v


def _time(obj: dict[str, Any], key: str, where: str, default: Any = ...) -> float:
    """A time in seconds since 1970, up to the end of the year 9999."""
    t = float(_get(obj, key, (int, float), where, default))
    if not 0 <= t <= MAX_TS:
        raise _Invalid(f"{where}.{key}: {t:g} is not a time (seconds since 1970, before 10000)")
    return t


def _obj_list(obj: dict[str, Any], key: str, where: str) -> list[dict[str, Any]]:
    items = _get(obj, key, list, where, [])
    for i, it in enumerate(items):
        if not isinstance(it, dict):
            raise _Invalid(f"{where}.{key}[{i}]: expected an object")
    return items  # type: ignore[no-any-return]


def _nonempty(obj: dict[str, Any], key: str, where: str) -> str:
    v: str = _get(obj, key, str, where)
    if not v.strip():
        raise _Invalid(f"{where}.{key}: must not be empty")
    return v


def read_export(path: Path, *, max_bytes: int = MAX_IMPORT_BYTES) -> ExportDocument:
    """Read and check a whole export; any damage is a `SourceError` naming the place."""
    hint = "nothing was imported; make a new export with `memd export FILE`"
    try:
        with os.fdopen(fsio.open_regular(path, follow=True), "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > max_bytes:
                raise SourceError(
                    f"{path} is {size >> 20} MB; memd imports exports up to {max_bytes >> 20} MB"
                )
            data = jsontext.loads(f.read())
    except fsio.NotRegularFile as exc:
        raise SourceError(f"{exc}; memd imports a regular file", hint=hint) from exc
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise SourceError(f"{path} is not UTF-8 text: {exc}", hint=hint) from exc
    except json.JSONDecodeError as exc:
        if exc.msg == jsontext.DEEP:
            raise SourceError(f"{path}: {jsontext.DEEP}", hint=hint) from exc
        raise SourceError(
            f"{path} is not a complete JSON document ({exc.msg} at line {exc.lineno}, column {exc.colno});"
            " the file looks truncated or damaged",
            hint=hint,
        ) from exc
    try:
        return _document(data)
    except _Invalid as exc:
        raise SourceError(f"{path} is not a valid memd export: {exc}", hint=hint) from exc


def _document(data: Any) -> ExportDocument:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise _Invalid(f'the top level must be an object with "format": "{FORMAT}"')
    version = _get(data, "version", int, "document")
    if version > VERSION:
        raise _Invalid(
            f"version {version} was written by a newer memd (this one reads up to {VERSION}); upgrade memd"
        )
    if version < 1:
        raise _Invalid(f"unknown version {version}")
    sessions, seen = [], set()
    for i, s in enumerate(_obj_list(data, "sessions", "document")):
        rec = _session(s, f"sessions[{i}]")
        if rec.session_id in seen:
            raise _Invalid(f"sessions[{i}]: session {rec.session_id!r} appears twice")
        seen.add(rec.session_id)
        sessions.append(rec)
    memories = [
        _memory(m, f"memories[{i}]") for i, m in enumerate(_obj_list(data, "memories", "document"))
    ]
    hashes = []
    for i, h in enumerate(_obj_list(data, "memory_hashes", "document")):
        w = f"memory_hashes[{i}]"
        hashes.append((_nonempty(h, "scope", w), _nonempty(h, "hash", w), _get(h, "memory_id", str, w, ""),
                       _get(h, "content", str, w, ""), _get(h, "path", str, w, ""), _get(h, "session_id", str, w, ""),
                       _time(h, "created_at", w, 0.0)))  # fmt: skip
    tree, paths = [], set()
    for i, f in enumerate(_obj_list(data, "tree", "document")):
        w = f"tree[{i}]"
        rel, content = _nonempty(f, "path", w), _get(f, "content", str, w)
        if not _safe_rel(rel):
            raise _Invalid(f"{w}.path: {rel!r} is not a Markdown file inside the memory tree")
        if rel in paths:
            raise _Invalid(f"{w}.path: {rel!r} appears twice")
        sha = _get(f, "sha256", str, w, "")
        if sha and sha != hashlib.sha256(content.encode()).hexdigest():
            raise _Invalid(f"{w}: the content of {rel!r} does not match its sha256")
        paths.add(rel)
        tree.append(TreeFile(rel, content))
    return ExportDocument(
        version, _get(data, "exported_at", str, "document", ""), _get(data, "device_id", str, "document", ""),
        tuple(sessions), tuple(memories), tuple(hashes), tuple(tree),
    )  # fmt: skip


def _session(s: dict[str, Any], where: str) -> SessionRecord:
    sid = _nonempty(s, "session_id", where)
    fields: dict[str, Any] = {k: _get(s, k, str, where, "") for k in _SESSION_STR}
    for k in ("summary_upto", "extracted_upto"):
        fields[k] = max(0, _get(s, k, int, where, 0))
    for k in ("started_at", "updated_at"):
        fields[k] = _time(s, k, where, 0.0)
    chats, ids = [], set()
    for j, c in enumerate(_obj_list(s, "chats", where)):
        w = f"{where}.chats[{j}]"
        tid = _nonempty(c, "turn_id", w)
        if tid in ids:
            raise _Invalid(f"{w}: turn {tid!r} appears twice in session {sid!r}")
        ids.add(tid)
        parts = tuple(
            (_nonempty(p, "part_id", f"{w}.parts[{k}]"), _get(p, "seq", int, f"{w}.parts[{k}]", k),
             _get(p, "text", str, f"{w}.parts[{k}]"))
            for k, p in enumerate(_obj_list(c, "parts", w))
        )  # fmt: skip
        text = _get(c, "text", str, w, "" if parts else ...)
        extra = {k: _get(c, k, str, w, "") for k in _CHAT_OPTIONAL}
        chats.append(Chat(
            _get(c, "seq", int, w, -1), tid, _nonempty(c, "role", w), text, _time(c, "ts", w),
            _get(c, "source_path", str, w, ""), _get(c, "line", int, w, 0), parts=parts, **extra,
        ))  # fmt: skip
    return SessionRecord(sid, fields, tuple(chats))


def _memory(m: dict[str, Any], where: str) -> MemoryRecord:
    meta = _get(m, "meta", dict, where, {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items()):
        raise _Invalid(f"{where}.meta: keys and values must be strings")
    rel, root = _nonempty(m, "path", where), _get(m, "root", str, where, "")
    if not root and not _safe_rel(rel):
        raise _Invalid(f"{where}.path: {rel!r} is not a Markdown file inside the memory tree")
    rec = MemoryRecord(
        _nonempty(m, "id", where), _nonempty(m, "text", where), meta, rel, _get(m, "section", str, where, ""),
        root, _time(m, "last_used", where, 0.0), _get(m, "uses", int, where, 0),
    )  # fmt: skip
    _check_markdown(rec, where)
    return rec


# What an item's parts may not hold: each is written into one line of Markdown (the heading of
# its section, the item's metadata comment), and a line break there would add headings or items.
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")
_META_KEY = re.compile(r"[A-Za-z_][\w-]*\Z")
_META_COMMENT = re.compile(r"<!--[ \t]*memd")
MAX_SECTION_CHARS = 200


def _check_markdown(rec: MemoryRecord, where: str) -> None:
    """Refuse an item whose section or metadata would change the Markdown around it."""
    item = f"(item {rec.id!r})"
    if _CONTROL.search(rec.section) or len(rec.section) > MAX_SECTION_CHARS:
        raise _Invalid(f"{where}.section: a heading is one line of at most {MAX_SECTION_CHARS}"
                       f" characters without control characters {item}")  # fmt: skip
    if _META_COMMENT.search(rec.text):
        raise _Invalid(f"{where}.text: holds a memd metadata comment {item}")
    for k, v in rec.meta.items():
        if not _META_KEY.match(k):
            raise _Invalid(f"{where}.meta: key {k!r} is not a metadata name {item}")
        if _CONTROL.search(v) or "-->" in v or ('"' in v and " " in v):
            raise _Invalid(f"{where}.meta.{k}: the value would break out of the item's"
                           f" metadata comment (line break, '-->' or a quote) {item}")  # fmt: skip


def _safe_rel(rel: str) -> bool:
    if "\\" in rel or rel.startswith("/") or _CONTROL.search(rel):
        return False
    parts = PurePosixPath(rel).parts
    if not parts or any(p in ("", ".", "..") for p in parts):
        return False
    return _tree_path_ok(rel)
