"""memd's own export document as the daemon serves it: `export`, and the memd half of
`import` (`import_export`; the composition root sends other formats to conversations)."""

from __future__ import annotations

import datetime as dt
import os
import stat
import time
from collections.abc import Callable
from pathlib import Path

from memd.api import messages as msg
from memd.api.methods import Feature, Method
from memd.core.errors import InvalidParams, PathError
from memd.memory.api import MemoryFeature
from memd.transfer import export, merge


class Transfer:
    """Export and import of one engine; `device_id` names this device in the document."""

    def __init__(self, memory: MemoryFeature, device_id: Callable[[], str]) -> None:
        self.memory = memory
        self.device_id = device_id

    def export(self, p: msg.ExportParams) -> msg.ExportResult:
        if not p.path or not os.path.isabs(p.path):
            raise InvalidParams(
                "param 'path' (an absolute file path; the daemon writes it) is required"
            )
        mem = self.memory
        s = mem.host.settings
        # No export lands in memd's own folders: it could replace memory or the index.
        private = [*mem.indexer.root_paths(), s.paths.data_dir, s.db_path.parent]
        return export.write_export(mem.store, Path(p.path), memory_root=s.memory_dir, tree=p.tree,
                                   device_id=self.device_id(), overwrite=p.overwrite,
                                   private=private)  # fmt: skip

    @staticmethod
    def check_source(p: msg.ImportParams) -> None:
        """Refuse an `import` path that is neither a regular file nor a folder (a FIFO would
        block the reader until someone writes to it)."""
        try:
            mode = os.stat(p.path).st_mode
        except OSError:
            return  # missing or unreadable: the importer says so
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise PathError(f"param 'path': {p.path} is not a regular file or a folder;"
                            " memd imports files and folders only")  # fmt: skip

    @staticmethod
    def is_export(p: msg.ImportParams) -> bool:
        """Whether an `import` is of a memd export (by `format`, else by the file's content)."""
        return p.format == "memd" or (not p.format and export.is_export_file(Path(p.path)))

    def import_export(self, p: msg.ImportParams) -> msg.MergeResult:
        mem = self.memory
        mem.ops.require_enabled()
        # A merge does not count its steps: the task shows that it runs, and for how long.
        with mem.host.progress.task(f"importing {Path(p.path).name}", unit=""):
            doc = export.read_export(Path(p.path))
            return merge.apply_export(
                doc, store=mem.store, indexer=mem.indexer, memory_root=mem.host.settings.memory_dir,
                today=dt.date.today(), now=time.time(), source=p.path,
            )  # fmt: skip

    def feature(self) -> Feature:
        return Feature(
            "transfer", methods=[Method(msg.EXPORT, self.export, why="writes a file: seconds")]
        )
