"""Aider keeps its chat history in the project folder it ran in, not in a folder of its own. The
registry reads it in every folder of ``memory.workspaces`` (and ``logs.aider_dir``); this finds
the other folders a conversation was held in — a session's project, as any assistant or client
named it — that have an Aider history, every ``logs.aider_folders_s`` (a minute), so they are read
too."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path

from memd.conversations import repo
from memd.conversations.formats.aider import AIDER_SOURCE, HISTORY_NAME
from memd.conversations.sources import LogSource
from memd.db import Store


class AiderFolders:
    """Finds project folders with an Aider history that no source reads yet."""

    def __init__(
        self, store: Store, enabled: Callable[[], bool], check_s: Callable[[], float]
    ) -> None:
        self.store = store
        self.enabled = enabled
        self.check_s = check_s  # the setting, read again at every look (a reload applies it)
        self._last = 0.0

    def due(self) -> bool:
        return self.enabled() and time.monotonic() - self._last >= self.check_s()

    def find(self, known: Iterable[Path]) -> list[LogSource]:
        """Sources for the folders sessions were held in that have an Aider history and are not
        in `known` (the folders read already)."""
        self._last = time.monotonic()
        read = set(known)
        found = []
        for project in repo.projects(self.store.read()):
            folder = Path(project)
            if folder in read or not folder.is_absolute():
                continue
            if (folder / HISTORY_NAME).is_file():
                found.append(LogSource(folder, AIDER_SOURCE, AIDER_SOURCE, assistant=AIDER_SOURCE))
                read.add(folder)
        return found
