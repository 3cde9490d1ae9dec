"""The bridge's dictionary cache file, built once per test process and put into the cache folder
of each semantic daemon a test starts: the daemon maps it instead of parsing CC-CEDICT (~2 s of
CPU per daemon otherwise), which is what a user's daemon does from its second start on."""

from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
from pathlib import Path

from memd.semantic import bridge, bridge_cache
from memd.semantic.bridge import Dictionary, _cedict_data, _lines

_LOCK = threading.Lock()
_BUILT: list[Path] = []


def built() -> Path:
    """The cache file of the installed dictionary, written on the first call."""
    with _LOCK:
        if not _BUILT:
            data = _cedict_data()
            folder = Path(tempfile.mkdtemp(prefix="memd-test-cedict-"))
            # ~13 MB per test process: gone with it (a run left one per worker behind).
            atexit.register(shutil.rmtree, folder, True)
            bridge_cache.load(folder, data, lambda: _parsed(data))
            _BUILT.append(bridge_cache.path_for(folder, data))
        return _BUILT[0]


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
