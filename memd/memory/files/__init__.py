"""The memory files and the one door through which memd writes them (`MemoryFiles`).

The door (`door.py`: `MemoryFiles`, which also keeps the per-file locks and what memd knows of
each file) is built on parts no other feature imports (a contract in pyproject.toml says so):
`settle` (reading a file once an editor's save is done), `disk` (one checked replacement of a
file), `guard` (memd's recent item changes, re-applied over an editor's older copy) and
`operation` (the text edits one operation makes, and what it wrote, recorded as one change
of the history).
"""

from memd.memory.files.door import FileBusy, MemoryFiles, Written
from memd.memory.files.operation import Operation, TextEdit
from memd.memory.files.settle import Snapshot, decode, encode

__all__ = [
    "FileBusy",
    "MemoryFiles",
    "Operation",
    "Snapshot",
    "TextEdit",
    "Written",
    "decode",
    "encode",
]
