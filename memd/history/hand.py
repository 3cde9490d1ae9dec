"""Hand edits waiting to be recorded: each file once, `coalesce_s` after it was first noted.

The watcher notes every save it sees (`note`); a file is captured once its first note is
`coalesce_s` old, with its content at that time, so a file saved ten times in a minute is one
change. The commit thread takes the due files together (`take_due`), at most every
`coalesce_s / HAND_BATCH_SHARE` (so each lands 60-75 s after its first save with the default
minute). memd's own frequent small writes (journal entries) wait here too, with their cause.

A file memd is writing in an operation not yet recorded is **held**: its hand edits wait until
memd's change is queued, so a hand edit is never captured with memd's lines in it before memd's
own change (which would then seem to remove and re-add them).

`HandEdits` holds no lock: `History` uses it under its capture lock.
"""

from __future__ import annotations

from collections.abc import Callable

from memd.history.models import Cause

# Hand edits due about together are committed together: the commit thread takes due hand edits
# at most once per this share of `coalesce_s` (15 s of the default minute). Each batch runs
# three git processes; a hundred files saved within a minute cost a few batches, not a hundred.
HAND_BATCH_SHARE = 4


class HandEdits:
    """The tree-relative paths noted as changed and not yet taken, with when and why."""

    def __init__(self, coalesce_s: float, clock: Callable[[], float]) -> None:
        self.coalesce_s = coalesce_s
        self.clock = clock
        self._noted: dict[str, tuple[float, Cause]] = {}  # path -> (first noted, cause)
        self._held: dict[str, int] = {}  # path -> open operations of memd that wrote it
        self._taken_at = float("-inf")  # when a batch last took due hand edits

    def __len__(self) -> int:
        return len(self._noted)

    def note(self, rel: str, cause: Cause) -> None:
        """`rel` changed; the first note of a file until it is taken gives its time and cause."""
        self._noted.setdefault(rel, (self.clock(), cause))

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

    def batch_at(self) -> float | None:
        """When the commit thread takes the hand edits that are due by then (None: none wait)."""
        waiting = [t for r, (t, _) in self._noted.items() if r not in self._held]
        if not waiting:
            return None
        first = min(waiting)
        return max(first + self.coalesce_s, self._taken_at + self.coalesce_s / HAND_BATCH_SHARE)

    def due_now(self) -> bool:
        """Whether the commit thread should take the due hand edits now."""
        at = self.batch_at()
        return at is not None and self.clock() >= at

    def next_due_in(self) -> float | None:
        """Seconds until `due_now` turns true (None: nothing waits)."""
        at = self.batch_at()
        return None if at is None else max(0.05, at - self.clock())

    def take_due(self, force: bool) -> list[tuple[str, Cause]]:
        """Remove and return, sorted, the files noted `coalesce_s` ago or more (all: `force`);
        held files stay."""
        now = self.clock()
        due = [
            (r, cause)
            for r, (t, cause) in self._noted.items()
            if (force or now - t >= self.coalesce_s) and r not in self._held
        ]
        for r, _ in due:
            del self._noted[r]
        if due:
            self._taken_at = now
        return sorted(due)
