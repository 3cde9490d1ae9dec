"""Byte-offset tailing of log files: real files in tmp_path."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from memd.conversations.tailer import HEAD_BYTES, Checkpoint, Chunk, read_new
from memd.core.fsio import NotRegularFile


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as f:
        f.write(data)


def drain(
    path: Path, previous: Checkpoint | None, max_bytes: int
) -> tuple[list[Chunk], Checkpoint]:
    """Call read_new until it returns no lines, as the ingest loop does."""
    chunks: list[Chunk] = []
    while True:
        chunk = read_new(str(path), previous, max_bytes=max_bytes)
        if not chunk.lines:
            return chunks, chunk.checkpoint
        chunks.append(chunk)
        previous = chunk.checkpoint


def test_appends_in_pieces_return_only_complete_lines(tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    log.write_bytes(b"one\ntw")
    first = read_new(str(log), None)
    assert first.lines == [(1, b"one")]
    assert not first.restarted
    cp = first.checkpoint
    assert (cp.path, cp.offset, cp.lineno, cp.size) == (str(log), 4, 1, 6)
    assert cp.inode == os.stat(log).st_ino
    assert cp.head == hashlib.sha1(b"one\n").hexdigest()

    same = read_new(str(log), cp)
    assert same.lines == [] and same.checkpoint == cp

    append(log, b"o\nthr")
    second = read_new(str(log), cp)
    assert second.lines == [(2, b"two")]
    append(log, b"ee\n\nfour\n")
    third = read_new(str(log), second.checkpoint)
    assert third.lines == [(3, b"three"), (4, b""), (5, b"four")]
    assert not third.restarted
    assert third.checkpoint.offset == log.stat().st_size


def test_empty_file_and_first_read(tmp_path: Path) -> None:
    log = tmp_path / "empty.jsonl"
    log.write_bytes(b"")
    chunk = read_new(str(log), None)
    assert chunk.lines == [] and not chunk.restarted
    assert (chunk.checkpoint.offset, chunk.checkpoint.lineno, chunk.checkpoint.size) == (0, 0, 0)
    assert chunk.checkpoint.head == hashlib.sha1(b"").hexdigest()
    append(log, b"x\n")
    assert read_new(str(log), chunk.checkpoint).lines == [(1, b"x")]


def test_truncation_restarts_from_the_beginning(tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    log.write_bytes(b"a\nb\nc\n")
    cp = read_new(str(log), None).checkpoint
    with log.open("r+b") as f:
        f.truncate(0)
    log.write_bytes(b"z\n")  # same inode, smaller than the offset
    chunk = read_new(str(log), cp)
    assert chunk.restarted
    assert chunk.lines == [(1, b"z")]
    assert chunk.checkpoint.offset == 2 and chunk.checkpoint.lineno == 1


def test_rewrite_in_place_with_new_first_bytes_restarts(tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    log.write_bytes(b"first\n")
    cp = read_new(str(log), None).checkpoint
    inode = log.stat().st_ino
    log.write_bytes(b"other\nlonger file now\n")  # same inode, bigger than the offset
    assert log.stat().st_ino == inode
    chunk = read_new(str(log), cp)
    assert chunk.restarted
    assert chunk.lines == [(1, b"other"), (2, b"longer file now")]


@pytest.mark.parametrize(
    ("new_content", "expected"),
    [
        (b"a\nb\n", [(1, b"a"), (2, b"b")]),
        (b"a\nb\nc\n", [(1, b"a"), (2, b"b"), (3, b"c")]),
        (b"new\n", [(1, b"new")]),
    ],
    ids=["identical", "identical-plus-more", "different"],
)
def test_replacement_by_a_new_file_restarts(
    tmp_path: Path, new_content: bytes, expected: list[tuple[int, bytes]]
) -> None:
    log = tmp_path / "s.jsonl"
    log.write_bytes(b"a\nb\n")
    cp = read_new(str(log), None).checkpoint
    fresh = tmp_path / "s.jsonl.tmp"
    fresh.write_bytes(new_content)
    os.replace(fresh, log)
    assert log.stat().st_ino != cp.inode
    chunk = read_new(str(log), cp)
    assert chunk.restarted
    assert chunk.lines == expected
    assert chunk.checkpoint.inode == log.stat().st_ino


def test_rotation_then_new_writes(tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    log.write_bytes(b"old 1\nold 2\n")
    cp = read_new(str(log), None).checkpoint
    os.rename(log, tmp_path / "s.jsonl.1")
    log.write_bytes(b"new 1\n")
    chunk = read_new(str(log), cp)
    assert chunk.restarted and chunk.lines == [(1, b"new 1")]
    append(log, b"new 2\n")
    nxt = read_new(str(log), chunk.checkpoint)
    assert not nxt.restarted and nxt.lines == [(2, b"new 2")]


def test_crlf_line_endings(tmp_path: Path) -> None:
    log = tmp_path / "win.jsonl"
    log.write_bytes(b'{"a":1}\r\n\r\nplain\nhalf\r')
    chunk = read_new(str(log), None)
    assert chunk.lines == [(1, b'{"a":1}'), (2, b""), (3, b"plain")]
    append(log, b"\n")
    assert read_new(str(log), chunk.checkpoint).lines == [(4, b"half")]


def test_line_longer_than_max_bytes_is_returned_whole(tmp_path: Path) -> None:
    log = tmp_path / "big.jsonl"
    long_line = b"x" * 1000
    log.write_bytes(b"s\n" + long_line + b"\nshort\n")
    first = read_new(str(log), None, max_bytes=16)
    assert first.lines == [(1, b"s")]
    second = read_new(str(log), first.checkpoint, max_bytes=16)
    assert second.lines == [(2, long_line)]
    third = read_new(str(log), second.checkpoint, max_bytes=16)
    assert third.lines == [(3, b"short")]
    assert third.checkpoint.offset == log.stat().st_size


def test_unfinished_long_line_is_left_for_later(tmp_path: Path) -> None:
    log = tmp_path / "big.jsonl"
    log.write_bytes(b"y" * 100)
    chunk = read_new(str(log), None, max_bytes=8)
    assert chunk.lines == [] and chunk.checkpoint.offset == 0
    append(log, b"y\n")
    done = read_new(str(log), chunk.checkpoint, max_bytes=8)
    assert not done.restarted
    assert done.lines == [(1, b"y" * 101)]


def test_line_numbers_continue_across_bounded_reads(tmp_path: Path) -> None:
    log = tmp_path / "many.jsonl"
    lines = [f"line {i} {'.' * (i % 7)}".encode() for i in range(1, 301)]
    log.write_bytes(b"\n".join(lines) + b"\n")
    chunks, cp = drain(log, None, max_bytes=64)
    assert len(chunks) > 10
    got = [item for chunk in chunks for item in chunk.lines]
    assert got == list(enumerate(lines, start=1))
    assert (cp.offset, cp.lineno) == (log.stat().st_size, 300)
    assert all(sum(len(r) + 1 for _, r in c.lines) <= 64 for c in chunks)


def test_growing_past_the_head_window_is_not_a_new_file(tmp_path: Path) -> None:
    log = tmp_path / "grow.jsonl"
    log.write_bytes(b"tiny\n")
    cp = read_new(str(log), None).checkpoint
    assert cp.head == hashlib.sha1(b"tiny\n").hexdigest()
    body = b"".join(b"%04d %s\n" % (i, b"z" * 40) for i in range(100))
    append(log, body)
    grown = read_new(str(log), cp)
    assert not grown.restarted and len(grown.lines) == 100
    expected_head = hashlib.sha1(log.read_bytes()[:HEAD_BYTES]).hexdigest()
    assert grown.checkpoint.head == expected_head
    append(log, b"last\n")
    last = read_new(str(log), grown.checkpoint)
    assert not last.restarted and last.lines == [(102, b"last")]


def test_a_change_inside_the_head_window_is_noticed_past_it(tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    log.write_bytes(b"A" * 2000 + b"\n")
    cp = read_new(str(log), None).checkpoint
    with log.open("r+b") as f:
        f.seek(1000)
        f.write(b"B")
    append(log, b"more\n")
    chunk = read_new(str(log), cp)
    assert chunk.restarted and [n for n, _ in chunk.lines] == [1, 2]


def test_missing_file_and_bad_limit(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_new(str(tmp_path / "nope.jsonl"), None)
    log = tmp_path / "s.jsonl"
    log.write_bytes(b"a\n")
    with pytest.raises(ValueError, match="max_bytes"):
        read_new(str(log), None, max_bytes=0)


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    """A FIFO named like a log would block `open` until a writer came: refused at once."""
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFile):
        read_new(str(fifo), None)


def test_a_link_to_a_log_is_read(tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    real.write_bytes(b'{"a": 1}\n')
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    assert [raw for _, raw in read_new(str(link), None).lines] == [b'{"a": 1}']
