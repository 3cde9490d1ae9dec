"""`ReaderPool`: the query threads, the one that went idle last served first.

`ThreadPoolExecutor` hands work to whichever of its idle threads wakes first, so a client asking
one question after another is answered by every thread in turn, and each thread's reader (with
its large SQLite page cache) fills with the same pages. Here a task goes to the thread that went
idle last: sequential queries keep to one warm thread and cache, and the others are started (and
their caches filled) only when queries really overlap.
"""

from __future__ import annotations

import collections
import functools
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

_Task = tuple[Future[Any], Callable[..., Any], tuple[Any, ...], dict[str, Any]]


class _Slot:
    """An idle thread waiting for its next task (None: stop)."""

    def __init__(self) -> None:
        self.ready = threading.Event()
        self.task: _Task | None = None


class ReaderPool(Executor):
    """At most `size` threads named `<name>_<n>`; each runs `initializer` once when it starts."""

    def __init__(self, size: int, name: str, initializer: Callable[[], None] | None = None) -> None:
        self.size = max(1, size)
        self.name = name
        self._initializer = initializer
        self._lock = threading.Lock()
        self._idle: list[_Slot] = []  # a stack: the last one to go idle is on top
        self._backlog: collections.deque[_Task] = collections.deque()
        self._threads: list[threading.Thread] = []
        self._shutdown = False

    @property
    def threads(self) -> int:
        """How many threads have been started."""
        return len(self._threads)

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        fut: Future[Any] = Future()
        task: _Task = (fut, fn, args, kwargs)
        with self._lock:
            if self._shutdown:
                raise RuntimeError("cannot schedule new futures after shutdown")
            if self._idle:
                slot = self._idle.pop()
                slot.task = task
                slot.ready.set()
            elif len(self._threads) < self.size:
                t = threading.Thread(
                    target=self._work,
                    args=(task,),
                    name=f"{self.name}_{len(self._threads)}",
                    daemon=True,
                )
                self._threads.append(t)
                t.start()
            else:
                self._backlog.append(task)
        return fut

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._shutdown = True
            if cancel_futures:
                while self._backlog:
                    self._backlog.popleft()[0].cancel()
            for slot in self._idle:
                slot.task = None
                slot.ready.set()
            self._idle.clear()
            threads = list(self._threads)
        if wait:
            for t in threads:
                t.join()

    def _work(self, task: _Task | None) -> None:
        if self._initializer is not None:
            self._initializer()
        slot = _Slot()
        while task is not None:
            answer = _call(task)
            # Idle (or holding its next task) before the answer goes out: the next query a
            # client sends on receiving it finds this thread, not an empty stack.
            task, wait = self._next(slot)
            answer()
            answer = _nothing  # what the task returned is not kept alive while this thread waits
            if wait:
                slot.ready.wait()
                task, slot.task = slot.task, None

    def _next(self, slot: _Slot) -> tuple[_Task | None, bool]:
        """A waiting task; else this thread goes idle (True: wait on `slot`); or stops."""
        with self._lock:
            if self._backlog:
                return self._backlog.popleft(), False
            if self._shutdown:
                return None, False
            slot.ready.clear()
            self._idle.append(slot)
            return None, True


def _nothing() -> None:
    pass


def _call(task: _Task) -> Callable[[], None]:
    """Run a task; return what hands its outcome to its future."""
    fut, fn, args, kwargs = task
    if not fut.set_running_or_notify_cancel():
        return _nothing
    try:
        result = fn(*args, **kwargs)
    except BaseException as exc:
        return functools.partial(fut.set_exception, exc)
    return functools.partial(fut.set_result, result)
