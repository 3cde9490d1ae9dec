"""Pushed turns: what an `ingest` request becomes, and the files that keep it.

An `ingest` request's turns are checked (errors name the turn and field), redacted, stamped and
given ids a retry of the same request gets again (`turns_of_request`).

Every turn an app sends is in a file before it is stored: the index is a cache, and what memd
tails (Claude Code transcripts, configured logs) can be read again from the logs, what apps
push from these files. They are append-only
JSONL, one per UTC day, `<data>/conversations/pushed/YYYY-MM-DD.jsonl` (0600 in a 0700
folder), one line per turn in the generic JSONL shape (`memd.conversations.formats`) holding
the id, time and redacted text the turn was stored with: read again, a line gives the same
turn, with the same id. A write is flushed to disk (fsync) before the turns reach the index and
the request is answered. Forgetting a turn rewrites the files without its lines.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import errno
import hashlib
import json
import os
import tempfile
from collections import Counter
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from memd.conversations import repo
from memd.conversations.formats import parse_jsonl_line
from memd.conversations.ingest import clean_turn
from memd.conversations.tailer import HEAD_BYTES, Checkpoint
from memd.core.errors import InvalidParams, ParseError
from memd.core.fsio import TEMP_SUFFIX
from memd.core.models import Turn
from memd.core.paths import ensure_private_dir
from memd.db import Connection

FORMAT = "ingest"
SOURCE = "ingest"
# A turn pushed again without an id, a time or a request id within this long is a retry.
RETRY_WINDOW_S = 600.0


# -- requests ---------------------------------------------------------------------------------
def turns_of_request(
    conn: Connection, records: Sequence[Any], request_id: str, now: float
) -> list[Turn]:
    """The turns of an `ingest` request as they will be stored: checked (InvalidParams naming
    the turn and field), redacted, stamped `now` when they have no time, and with an id each.

    A turn without an id gets one that a retry of the same request gets again: from the request
    id and its place in the request when the client gives a `request_id`; else from its time
    when it has one; else from its session, role, text and how often that text came before in
    the request, within a window of `RETRY_WINDOW_S` (so saying the same thing again later is a
    new turn, sending it again after a timeout is not).
    """
    turns: list[Turn] = []
    by_content: list[tuple[int, list[str]]] = []  # (index, [id now, id a window ago])
    seen: Counter[tuple[str, str, str]] = Counter()
    window = int(now // RETRY_WINDOW_S)
    for i, rec in enumerate(records):
        for j, (t, own_id) in enumerate(_parse_record(i, rec)):
            if not own_id and request_id:
                t = dataclasses.replace(t, turn_id=_sha1(["request", request_id, i, j]))
            elif not own_id and not t.ts:
                what = (t.session_id, t.role, t.text)
                seen[what] += 1
                ids = [_sha1([*what, seen[what], w]) for w in (window, window - 1)]
                by_content.append((len(turns), ids))
            turns.append(t if t.ts else dataclasses.replace(t, ts=now))
    if by_content:
        keys = [(turns[at].session_id, x) for at, ids in by_content for x in ids]
        known = repo.existing_texts(conn, keys)
        for at, (current, earlier) in by_content:
            t = turns[at]
            tid = earlier if (t.session_id, earlier) in known else current
            turns[at] = dataclasses.replace(t, turn_id=tid)
    return turns


def _parse_record(i: int, rec: Any) -> list[tuple[Turn, bool]]:
    """The turns of the request's `i`-th record, redacted, each with whether its id is the
    client's own (a generic turn's `id`, or an OpenAI conversation's)."""
    if not isinstance(rec, dict):
        raise InvalidParams(f"turns[{i}] is not an object")
    try:
        parsed = parse_jsonl_line(json.dumps(rec).encode(), path="", lineno=i + 1)
    except ParseError as exc:
        raise InvalidParams(_where(i, exc)) from exc
    except RecursionError:
        raise InvalidParams(f"turns[{i}] is nested too deeply") from None
    own_id = "messages" in rec or rec.get("id") not in (None, "")
    return [(clean_turn(dataclasses.replace(t, source=SOURCE)), own_id) for t in parsed]


def _where(i: int, exc: ParseError) -> str:
    """`turns[i].field: what is wrong` for a parser error about one turn."""
    text = str(exc)
    if not exc.field:
        return f"turns[{i}]: {text}"
    for prefix in (f'"{exc.field}"', exc.field):
        if text.startswith(prefix):
            text = text[len(prefix) :].lstrip(": ")
            break
    return f"turns[{i}].{exc.field}: {text}"


def _sha1(values: list[Any]) -> str:
    encoded = json.dumps(values, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha1(encoded.encode("utf-8", "surrogatepass")).hexdigest()


# -- files ------------------------------------------------------------------------------------
class PushedLine(TypedDict):
    """A line of a pushed-turn file (the generic JSONL shape); the optional keys only when set."""

    session_id: str
    id: str
    role: str
    content: str
    ts: float
    agent_id: NotRequired[str]
    project: NotRequired[str]
    title: NotRequired[str]
    name: NotRequired[str]


def record_of(t: Turn) -> PushedLine:
    """A stored turn as one line of a pushed-turn file (the generic JSONL shape)."""
    rec = PushedLine(session_id=t.session_id, id=t.turn_id, role=t.role, content=t.text, ts=t.ts)
    if t.agent_id:
        rec["agent_id"] = t.agent_id
    if t.project:
        rec["project"] = t.project
    if t.session_title:
        rec["title"] = t.session_title
    if t.speaker:
        rec["name"] = t.speaker
    return rec


def encode(t: Turn) -> bytes:
    return json.dumps(record_of(t), ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def parse_line(raw: bytes, *, path: str, lineno: int) -> list[Turn]:
    """The turn of one line of a pushed-turn file (`ParseError` for a damaged line). Like a
    turn stored as it was pushed, it names no log file: the file is memd's copy, not a source."""
    return [
        dataclasses.replace(t, source=SOURCE, source_path="", line=0)
        for t in parse_jsonl_line(raw, path=path, lineno=lineno)
    ]


@dataclasses.dataclass(frozen=True, slots=True)
class Appended:
    """Where an append went: the file, its byte range, its lines, and the file's checkpoint
    right after it (what a reader that had read it all would record)."""

    path: Path
    start: int
    first_line: int
    checkpoint: Checkpoint


class PushedFiles:
    """The pushed-turn files of one data folder. Not thread-safe: the caller serialises."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lines: dict[Path, tuple[int, int]] = {}  # (size, lines) of the files appended to

    def path_for(self, now: float) -> Path:
        day = dt.datetime.fromtimestamp(now, dt.UTC).date().isoformat()
        return self.folder / f"{day}.jsonl"

    def files(self) -> list[str]:
        """The pushed-turn files there now, oldest first."""
        if not self.folder.is_dir():
            return []
        return sorted(str(p) for p in self.folder.glob("*.jsonl") if p.is_file())

    def append(self, lines: Sequence[bytes], now: float) -> Appended:
        """Append whole lines to the file of `now`'s day and flush them to disk.

        On failure (a full disk) the file is cut back to where it was, so no half line is left,
        and the OSError names the file.
        """
        ensure_private_dir(self.folder.parent)
        ensure_private_dir(self.folder)
        path = self.path_for(now)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            st = os.fstat(fd)
            start = st.st_size
            count = self._line_count(path, start)
            data = b"".join(lines)
            if start and not _ends_with_newline(fd, start):
                # A line cut short by a crash: end it, so it stays one bad line of its own.
                data = b"\n" + data
                count += 1
            try:
                _write_all(fd, data)
                os.fsync(fd)
            except OSError as exc:
                os.ftruncate(fd, start)
                raise OSError(exc.errno, exc.strerror, str(path)) from exc
            if start == 0:
                _fsync_dir(self.folder)
            end = start + len(data)
            head = hashlib.sha1(os.pread(fd, min(HEAD_BYTES, end), 0)).hexdigest()
        finally:
            os.close(fd)
        self._lines[path] = (end, count + len(lines))
        cp = Checkpoint(str(path), st.st_ino, end, end, count + len(lines), head)
        return Appended(path, start, count + 1, cp)

    def _line_count(self, path: Path, size: int) -> int:
        known = self._lines.get(path)
        if known is not None and known[0] == size:
            return known[1]
        if size == 0:
            return 0
        with open(path, "rb") as f:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))

    def remove(self, keys: Collection[tuple[str, str]]) -> int:
        """Rewrite the files holding lines of these (session id, turn id) keys without them;
        returns how many lines went. Lines that cannot be read are kept as they are."""
        needles = {json.dumps(sid, ensure_ascii=False).encode() for sid, _ in keys}
        return sum(self._remove(Path(f), keys, needles) for f in self.files())

    def _remove(self, p: Path, keys: Collection[tuple[str, str]], needles: set[bytes]) -> int:
        try:
            data = p.read_bytes()
        except FileNotFoundError:
            return 0
        if not any(n in data for n in needles):
            return 0
        kept: list[bytes] = []
        removed = 0
        for raw in data.splitlines(keepends=True):
            key = _key_of(raw)
            if key is not None and key in keys:
                removed += 1
            else:
                kept.append(raw)
        if removed:
            _replace(p, b"".join(kept))
            self._lines.pop(p, None)
        return removed


def _key_of(raw: bytes) -> tuple[str, str] | None:
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    sid, tid = obj.get("session_id"), obj.get("id")
    return (str(sid), str(tid)) if sid is not None and tid is not None else None


def _ends_with_newline(fd: int, size: int) -> bool:
    return os.pread(fd, 1, size - 1) == b"\n"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        if n <= 0:
            raise OSError(errno.EIO, "short write")
        view = view[n:]


def _replace(path: Path, data: bytes) -> None:
    """Replace a file with `data` in one step (mode 0600), flushed to disk."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
    try:
        _write_all(fd, data)
        os.fsync(fd)
        os.fchmod(fd, 0o600)
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
