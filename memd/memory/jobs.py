"""What every memory job receives: settings, the store, the memory tree and its door, a clock."""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memd.core.conditions import SystemState, day_of, probe_system
from memd.core.settings import Settings
from memd.db import Store
from memd.memory.files import MemoryFiles
from memd.memory.indexer import Indexer
from memd.memory.ops import MemoryOps


@dataclass(frozen=True)
class JobContext:
    """Everything a memory job touches; `now` and `probe` are injectable for tests."""

    settings: Settings
    store: Store
    indexer: Indexer
    ops: MemoryOps
    now: Callable[[], float] = time.time
    probe: Callable[[], SystemState] = probe_system

    @property
    def files(self) -> MemoryFiles:
        """The door every write of a memory file goes through (one operation at a time)."""
        return self.ops.files

    @property
    def lock(self) -> threading.RLock:
        """Held by each operation of the door: jobs (on the scheduler's threads) and socket
        handlers that edit the tree share it, or one of two concurrent edits is lost."""
        return self.files.lock

    @property
    def memory_root(self) -> Path:
        return self.ops.memory_root

    def today(self) -> dt.date:
        return day_of(self.now())
