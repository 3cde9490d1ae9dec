"""Merging a memd export (`memd.transfer.export`) into this memd: tree, memories, sessions and chats.

Merging is idempotent: sessions and chats already stored are left as they are; a tree file is
written only when it is missing, identical, still the first-start template or empty; a file
that differs keeps the local version and gets the imported one beside it as
`name.imported-<date>.md` (once: a copy already there with that content counts as present);
memories whose id is not in the index afterwards (an export made with `--no-tree`) are
appended to their file and section.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from memd.api.messages import MergedFiles, MergedMemories, MergeResult
from memd.conversations import repo as conversations
from memd.conversations.ingest import WriteReport, refresh_summary, set_title, write_turns
from memd.core import fsio
from memd.core.errors import EditConflict, SourceError
from memd.core.models import Turn
from memd.core.redact import redact
from memd.db import Connection, Store
from memd.history import Cause
from memd.memory import repo as memories
from memd.memory.edit import add_item
from memd.memory.files import MemoryFiles, Operation
from memd.memory.indexer import Indexer
from memd.memory.tree import TEMPLATES
from memd.transfer.export import FORMAT, Chat, ExportDocument, MemoryRecord, SessionRecord, TreeFile

BATCH_CHATS = 2000
IMPORTED_SECTION = "Imported"


@dataclass(slots=True)
class _TreeOutcome:
    written: list[str] = field(default_factory=list)
    identical: int = 0
    copies: list[str] = field(default_factory=list)


def apply_export(
    doc: ExportDocument,
    *,
    store: Store,
    indexer: Indexer,
    memory_root: Path,
    today: dt.date,
    now: float,
    source: str = "",
) -> MergeResult:
    """Merge a checked export into this memd: tree, then memories, then sessions and chats.

    The tree goes first so that the journal entries of imported sessions are already there
    when the journal catches up with them (it recognises entries by turn id). The files are
    written through the indexer's door to the memory files, as one `import` change of the
    history (`source`, the file imported, is its detail).
    """
    base = memory_root.resolve()
    for rel in [f.path for f in doc.tree] + [m.path for m in doc.memories if not m.root]:
        if not (memory_root / rel).resolve().is_relative_to(base):
            raise SourceError(f"{rel!r} resolves outside the memory tree {memory_root} (a symlink?)",
                              hint="nothing was imported")  # fmt: skip
    door = indexer.files
    with door.operation(Cause.IMPORT, source) as op:
        # Counted before the tree goes in: memories that arrive inside imported files are new.
        before = memories.present_items(store.read(), [m.id for m in doc.memories])
        files = _import_tree(door, op, doc.tree, memory_root, today)
        if files.written or files.copies:
            indexer.index_paths([str(memory_root / p) for p in (*files.written, *files.copies)])
        mem = _import_memories(door, op, doc.memories, store, indexer, memory_root, before)
    hashes = store.w.run(functools.partial(_import_memory_state, doc=doc, memory_root=memory_root))
    conv = _import_sessions(doc.sessions, store, now)
    # A memory that came inside a written file is counted once, as that file.
    new = (conv.new_sessions + conv.added + len(files.written) + len(files.copies)
           + mem.added - mem.with_files + hashes)  # fmt: skip
    return MergeResult(
        format=FORMAT, version=doc.version, exported_at=doc.exported_at, device_id=doc.device_id,
        sessions_in_export=conv.sessions_in_export, new_sessions=conv.new_sessions,
        added=conv.added, updated=conv.updated, sessions=conv.sessions,
        files=MergedFiles(in_export=len(doc.tree), written=len(files.written),
                          identical=files.identical, kept_local=files.copies),
        memories=mem, memory_hashes=hashes, new=new,
    )  # fmt: skip


def _import_tree(
    files: MemoryFiles, op: Operation, tree: Sequence[TreeFile], memory_root: Path, today: dt.date
) -> _TreeOutcome:
    out = _TreeOutcome()
    for f in tree:
        # Checked inside the tree by `apply_export`; a link is written at its target.
        dest = Path(fsio.real(memory_root / f.path))
        local = _read_local(dest)
        if local == f.content:
            out.identical += 1
        elif (local is None or not local.strip() or local == TEMPLATES.get(f.path)) and _wrote(
            files, op, dest, local, f.content
        ):
            out.written.append(f.path)
        else:
            copy = _beside(dest, f.content, today)
            if copy is None:
                out.identical += 1
            else:
                files.write_if(copy, None, f.content, op)
                out.copies.append(copy.relative_to(memory_root).as_posix())
    return out


def _wrote(files: MemoryFiles, op: Operation, dest: Path, local: str | None, content: str) -> bool:
    """Write an imported file over `local` (missing, empty or the template) unless it changed
    since it was read (then the import goes beside it)."""
    try:
        files.write_if(dest, local, content, op)
    except EditConflict:
        return False
    return True


def _read_local(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8", errors="surrogateescape")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc}") from exc


def _beside(dest: Path, content: str, today: dt.date) -> Path | None:
    """Where the imported version of a locally changed file goes; None when a copy is there."""
    for old in sorted(dest.parent.glob(f"{dest.stem}.imported-*{dest.suffix}")):
        if _read_local(old) == content:
            return None
    name = f"{dest.stem}.imported-{today.isoformat()}"
    copy, n = dest.with_name(name + dest.suffix), 2
    while copy.exists():
        copy, n = dest.with_name(f"{name}-{n}{dest.suffix}"), n + 1
    return copy


def _import_memories(
    files: MemoryFiles,
    op: Operation,
    records: Sequence[MemoryRecord],
    store: Store,
    indexer: Indexer,
    memory_root: Path,
    before: set[str],
) -> MergedMemories:
    """Append the memories still missing; count them against what was here `before` the
    import (the ids already in the index then): `with_files` came inside imported files."""
    present = memories.present_items(store.read(), [m.id for m in records])
    added = skipped = with_files = already = 0
    touched: set[str] = set()
    for m in records:
        if m.id in before:
            already += 1
            continue
        if m.id in present:
            with_files += 1
            continue
        if m.root:
            # Project memory of a workspace lives in that workspace (its own repository),
            # which this machine may not have: it is reported, not written elsewhere.
            skipped += 1
            continue
        path = indexer.resolve(memory_root / m.path)
        title = PurePosixPath(m.path).stem.replace("-", " ").title()
        item = add_item(path, m.section or IMPORTED_SECTION, redact(m.text), m.meta, title=title)
        files.edit(path, item, op)
        present.add(m.id)
        touched.add(str(path))
        added += 1
    if touched:
        indexer.index_paths(sorted(touched))
    return MergedMemories(in_export=len(records), added=added + with_files, with_files=with_files,
                          present=already, workspace_skipped=skipped)  # fmt: skip


def _import_memory_state(conn: Connection, doc: ExportDocument, memory_root: Path) -> int:
    """Item use (for decay) and the extraction job's record of what it wrote; returns new records."""
    memories.merge_usage(conn, [(m.id, m.last_used, m.uses) for m in doc.memories if m.last_used])
    return memories.add_memory_hashes(conn, [
        memories.MemoryHash(s, h, mid, redact(c), str(memory_root / p) if p and not p.startswith("/") else p,
                            sid, at)
        for s, h, mid, c, p, sid, at in doc.memory_hashes
    ])  # fmt: skip


def _turns_of(session: SessionRecord, chat: Chat) -> list[Turn]:
    f = session.fields
    base = Turn(
        chat.source or f["source"] or "import", session.session_id, chat.turn_id, chat.role, chat.text, chat.ts,
        source_path=chat.source_path, agent_id=chat.agent_id or f["agent_id"], project=chat.project or f["project"],
        line=chat.line, speaker=chat.speaker,
    )  # fmt: skip
    if not chat.parts:
        return [base]
    return [Turn(base.source, base.session_id, base.turn_id, base.role, text, base.ts, source_path=base.source_path,
                 agent_id=base.agent_id, project=base.project, line=seq, part_id=part_id, speaker=base.speaker)
            for part_id, seq, text in sorted(chat.parts, key=lambda p: (p[1], p[0]))]  # fmt: skip


@dataclass(frozen=True, slots=True)
class _SessionsMerged:
    sessions_in_export: int
    new_sessions: int
    added: int
    updated: int
    sessions: int


def _import_sessions(
    sessions: Sequence[SessionRecord], store: Store, now: float
) -> _SessionsMerged:
    existing = conversations.known_sessions(store.read(), [s.session_id for s in sessions])
    # Chats go in in their storage order across sessions, so on an empty memd every turn keeps
    # its place relative to the others (the tie-break of equal search scores).
    order: list[tuple[int, int, SessionRecord, Chat]] = []
    pos = 0
    for s in sessions:
        for c in s.chats:
            order.append((c.seq, pos, s, c))
            pos += 1
    order.sort(key=lambda x: (x[0], x[1]))
    total = WriteReport()
    for i in range(0, len(order), BATCH_CHATS):
        turns = [t for _, _, s, c in order[i : i + BATCH_CHATS] for t in _turns_of(s, c)]
        total.merge(
            store.w.run(functools.partial(write_turns, turns=turns, now=now, summaries=False))
        )
    new = [s for s in sessions if s.session_id not in existing]
    old = [s for s in sessions if s.session_id in existing]
    grown = total.sessions & existing
    for i in range(0, len(new), 200):
        store.w.run(functools.partial(_apply_new_sessions, sessions=new[i : i + 200], now=now))
    for i in range(0, len(old), 200):
        store.w.run(
            functools.partial(_merge_sessions, sessions=old[i : i + 200], grown=grown, now=now)
        )
    return _SessionsMerged(sessions_in_export=len(sessions), new_sessions=len(new),
                           added=total.added, updated=total.updated, sessions=len(total.sessions))  # fmt: skip


def _apply_new_sessions(conn: Connection, sessions: Sequence[SessionRecord], now: float) -> None:
    """Sessions new to this memd take every field of the export, their cursors included."""
    for s in sessions:
        f = s.fields
        count = conversations.turn_count(conn, s.session_id)
        summary_upto = min(f["summary_upto"], count)
        conversations.import_session(conn, conversations.SessionRow(
            0, s.session_id, f["source"], f["source_path"], redact(f["title"]), f["title_source"],
            f["agent_id"], f["project"], f["started_at"], f["updated_at"], count, redact(f["summary"]),
            f["summary_kind"], now, summary_upto,
            conversations.nth_turn_id(conn, s.session_id, f["extracted_upto"]), 0,
        ))  # fmt: skip
        if f["summary_kind"] == "llm":
            conversations.note_imported_llm_summary(
                conn, s.session_id, conversations.nth_turn_id(conn, s.session_id, summary_upto), now
            )


def _merge_sessions(
    conn: Connection, sessions: Sequence[SessionRecord], grown: set[str], now: float
) -> None:
    """Sessions this memd already had keep their cursors; they take a better title or an LLM
    summary from the export, and a new extractive summary when the import added turns."""
    for s in sessions:
        f = s.fields
        local = conversations.session(conn, s.session_id)
        if local is None:
            continue
        if f["title"] and f["title_source"] and f["title"] != local.title:
            set_title(conn, s.session_id, f["title"], f["title_source"])
        if f["summary_kind"] == "llm" and f["summary"] and local.summary_kind != "llm":
            conversations.set_llm_summary(
                conn, s.session_id, redact(f["summary"]), now, f["summary_upto"]
            )
        elif s.session_id in grown:
            refresh_summary(conn, s.session_id, now=now)
