"""Hand edits waiting to be recorded: each file once the editor has gone quiet.

The watcher notes every save it sees (`note`); a file is captured, with its content at that
time, `quiet_s` after its last note (a few seconds: an edit shows in the history almost at
once) or `coalesce_s` after its first (a file saved again and again is still recorded every
minute), so a burst of saves is one change. The commit thread takes the due files together
(`take_due`), at most every `min(quiet_s, coalesce_s) / HAND_BATCH_SHARE`. memd's own frequent
small writes (journal entries) wait here too, with their cause, each `coalesce_s` after its
first note.

A file memd is writing in an operation not yet recorded is **held**: its hand edits wait until
memd's change is queued, so a hand edit is never captured with memd's lines in it before memd's
own change (which would then seem to remove and re-add them).

`HandEdits` holds no lock: `History` uses it under its capture lock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memd.history.models import Cause

# Hand edits due about together are committed together: the commit thread takes due hand edits
# at most once per this share of the shorter wait. Each batch runs three git processes; a
# hundred files saved within a few seconds cost a few batches, not a hundred.
HAND_BATCH_SHARE = 4
QUIET_S = 3.0  # a file is recorded this long after its last save


@dataclass(slots=True)
class _Noted:
    first: float
    last: float
    cause: Cause


class HandEdits:
    """The tree-relative paths noted as changed and not yet taken, with when and why."""

    def __init__(
        self, coalesce_s: float, clock: Callable[[], float], quiet_s: float = QUIET_S
    ) -> None:
        self.coalesce_s = coalesce_s
        self.quiet_s = quiet_s
        self.clock = clock
        self._noted: dict[str, _Noted] = {}
        self._held: dict[str, int] = {}  # path -> open operations of memd that wrote it
        self._taken_at = float("-inf")  # when a batch last took due hand edits

    def __len__(self) -> int:
        return len(self._noted)

    def note(self, rel: str, cause: Cause) -> None:
        """`rel` changed; the first note of a file until it is taken gives its cause."""
        now = self.clock()
        seen = self._noted.get(rel)
        if seen is None:
            self._noted[rel] = _Noted(now, now, cause)
        else:
            seen.last = now

    def renote(self, noted: list[tuple[str, Cause]]) -> None:
        """Files taken but not captured (an editor was saving them): noted again."""
        for rel, cause in noted:
            self.note(rel, cause)

    def pending(self) -> list[str]:
        """The files noted and not recorded yet, sorted."""
        return sorted(self._noted)

    def hold(self, rel: str) -> None:
        """memd is writing `rel` in an operation: its hand edits wait until `release`."""
        self._held[rel] = self._held.get(rel, 0) + 1

    def release(self, rels: list[str]) -> None:
        """memd's change of `rels` is queued: their hand edits may be taken again."""
        for rel in rels:
            n = self._held.get(rel, 0) - 1
            if n > 0:
                self._held[rel] = n
            else:
                self._held.pop(rel, None)

    def held(self, rel: str) -> bool:
        return rel in self._held

    def _due_at(self, n: _Noted) -> float:
        if n.cause is not Cause.HAND:  # memd's own journal writes: per file and `coalesce_s`
            return n.first + self.coalesce_s
        return min(n.first + self.coalesce_s, n.last + self.quiet_s)

    def batch_at(self) -> float | None:
        """When the commit thread takes the hand edits that are due by then (None: none wait)."""
        waiting = [self._due_at(n) for r, n in self._noted.items() if r not in self._held]
        if not waiting:
            return None
        gap = min(self.quiet_s, self.coalesce_s) / HAND_BATCH_SHARE
        return max(min(waiting), self._taken_at + gap)

    def due_now(self) -> bool:
        """Whether the commit thread should take the due hand edits now."""
        at = self.batch_at()
        return at is not None and self.clock() >= at

    def next_due_in(self) -> float | None:
        """Seconds until `due_now` turns true (None: nothing waits)."""
        at = self.batch_at()
        return None if at is None else max(0.05, at - self.clock())

    def take_due(self, force: bool) -> list[tuple[str, Cause]]:
        """Remove and return, sorted, the files that are due (all: `force`); held files stay."""
        now = self.clock()
        due = [
            (r, n.cause)
            for r, n in self._noted.items()
            if (force or now >= self._due_at(n)) and r not in self._held
        ]
        for r, _ in due:
            del self._noted[r]
        if due:
            self._taken_at = now
        return sorted(due)
