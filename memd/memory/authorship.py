"""PURE: who wrote a list item of the memory tree, as far as the item and its place tell.

- `MEMORY`: a memory memd wrote (remember, extraction, an import): its metadata comment has an
  `id`. It is the user's to forget or change.
- `STATUS`: a line memd keeps in an agent's relationship file (`Trust Level:`, `Familiarity:`,
  … in `## Basic Status` and `## Current Mood`): rewritten after every finished session, so
  forgetting it would only bring it back. The user edits it in the file (memd goes on from an
  edited trust).
- `JOURNAL`: a conversation record in `journal/` (memd writes one per exchange). It goes with
  its conversation: `forget_conversation` removes it with the turns, everywhere.
- `HAND`: a line without memd's metadata: written by hand (or by another program).

`forget` and `memories` offer `MEMORY` and `HAND` items only (`is_memory`); the page says who
wrote each line.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath

from memd.memory.relationship import owned_key

MEMORY = "memory"
STATUS = "status"
JOURNAL = "journal"
HAND = "hand"


def writer(rel: str, heading: str, text: str, meta: Mapping[str, str]) -> str:
    """Who wrote the item `text` (with `meta`) under `## heading` of the file `rel` (relative
    to the memory tree)."""
    parts = PurePosixPath(rel).parts
    if parts[:1] == ("journal",):
        return JOURNAL
    if meta.get("id"):
        return MEMORY
    relationship = len(parts) == 3 and parts[0] == "agents" and parts[2] == "relationship.md"
    return STATUS if relationship and owned_key(heading, text) else HAND


def is_memory(who: str) -> bool:
    """Whether items of this writer are memories a person forgets or changes one by one."""
    return who in (MEMORY, HAND)
