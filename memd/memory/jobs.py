"""What every memory job receives: settings, the store, the memory tree and its lock, a clock."""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memd.core.conditions import SystemState, day_of, probe_system
from memd.core.settings import Settings
from memd.db import Store
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
    # Markdown edits read and rewrite whole files: jobs (on the scheduler's threads) and socket
    # handlers that edit the tree share one lock, or one of two concurrent edits is lost.
    lock: AbstractContextManager[Any] = field(default_factory=threading.RLock)

    @property
    def memory_root(self) -> Path:
        return self.ops.memory_root

    def today(self) -> dt.date:
        return day_of(self.now())
