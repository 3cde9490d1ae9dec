"""The bridge's dictionary cache file, built once per test process and put into the cache folder
of each semantic daemon a test starts: the daemon maps it instead of parsing CC-CEDICT (~2 s of
CPU per daemon otherwise), which is what a user's daemon does from its second start on."""

from __future__ import annotations

import atexit
import fcntl
import shutil
import tempfile
import threading
from pathlib import Path

from memd.semantic import bridge, bridge_cache
from memd.semantic.bridge import Dictionary, _cedict_data, _lines

_LOCK = threading.Lock()
_BUILT: list[Path] = []
# Under pytest-xdist, the folder of the run that holds every worker's own (tests/semantic/
# conftest.py): the workers share one cache file there.
RUN: list[Path] = []


def built() -> Path:
    """The cache file of the installed dictionary, written on the first call."""
    with _LOCK:
        if not _BUILT:
            data = _cedict_data()
            folder = Path(tempfile.mkdtemp(prefix="memd-test-cedict-"))
            # ~13 MB per test process: gone with it (a run left one per worker behind).
            atexit.register(shutil.rmtree, folder, True)
            path = bridge_cache.path_for(folder, data)
            if RUN:
                _from_the_run(RUN[0], path, data)
            else:
                bridge_cache.load(folder, data, lambda: _parsed(data))
            _BUILT.append(path)
        return _BUILT[0]


def _from_the_run(run: Path, path: Path, data: bytes) -> None:
    """Copy the run's cache file to `path`: the first worker to ask makes it, the others wait for
    it rather than each parse CC-CEDICT (~2.5 CPU-s a worker)."""
    shared = run / "memd-test-cedict"
    shared.mkdir(exist_ok=True)
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        kept = bridge_cache.path_for(shared, data)
        if not kept.is_file():  # written whole or not at all (bridge_cache.write)
            bridge_cache.load(shared, data, lambda: _parsed(data))
        shutil.copyfile(kept, path)


def _parsed(data: bytes) -> Dictionary:
    """The dictionary of `data`: the process's own (`Dictionary.load()`, parsed once per process
    and asked for by the bridge's tests too: ~2 CPU-s less in a process that runs both) where
    `data` is the installed dictionary's."""
    if data == bridge._cedict_data():
        return Dictionary.load()
    return Dictionary.from_lines(_lines(data))


def seed(memd_home: Path) -> None:
    """Put the cache file into the cache folder of a daemon on `memd_home`."""
    src = built()
    (memd_home / "cache").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, memd_home / "cache" / src.name)
