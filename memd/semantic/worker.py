"""The backfill's model in a process of its own, started when there is work and ended after.

`WorkerEmbedder` is an `Embedder` whose `embed` runs in a child process (``python -m
memd.semantic.worker``) that loads the packaged model. The daemon's backfill thread only
sends texts and waits for vectors on a pipe, so:

- a query never waits behind the backfill for the interpreter: embedding a batch holds no
  lock of the daemon's, and the child's model threads run at nice 19 as a process of their
  own (the daemon's query threads keep their priority);
- the daemon's memory does not carry the backfill: the model's weights mapped a second
  time, its per-call buffers (tens of MB for a batch of long texts) and what the C
  allocator keeps of them live in the child, which exits `IDLE_S` after its last batch;
- a crash of the engine ends the child, not the daemon: the backfill backs off and the
  next batch starts a new child.

The protocol on the child's stdin/stdout: each message is a 4-byte little-endian length and
a JSON object; a reply with vectors is followed by their float32 bytes. Texts are sent as
JSON, never on a command line.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import IO, Any

import numpy as np
import numpy.typing as npt

from memd.semantic.base import Kind
from memd.semantic.errors import EmbeddingError, EmbeddingRetryable

IDLE_S = 60.0
"""The child exits this long after its last batch (a new one starts it again: ~0.5 s)."""
NICE = 19
_HEADER = struct.Struct("<I")
_MAX_MESSAGE = 64 << 20


def _send(out: IO[bytes], obj: dict[str, Any], payload: bytes = b"") -> None:
    data = json.dumps(obj, ensure_ascii=False).encode("utf-8")
    out.write(_HEADER.pack(len(data)) + data + payload)
    out.flush()


def _read_exact(inp: IO[bytes], n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = inp.read(n - len(buf))
        if not chunk:
            raise EOFError("the other side closed the pipe")
        buf += chunk
    return buf


def _receive(inp: IO[bytes]) -> dict[str, Any]:
    (n,) = _HEADER.unpack(_read_exact(inp, _HEADER.size))
    if n > _MAX_MESSAGE:
        raise EOFError(f"a message of {n} bytes")
    obj: dict[str, Any] = json.loads(_read_exact(inp, n))
    return obj


class WorkerEmbedder:
    """The packaged model (`memd.semantic.packaged`) in a child process; thread-safe (one
    call at a time). `model_id` and `dim` are known without starting it."""

    def __init__(self, *, threads: int = 2, idle_s: float = IDLE_S, nice: int = NICE) -> None:
        from memd.semantic.packaged import DIM, packaged_model_id

        self.threads = threads
        self.idle_s = idle_s
        self.nice = nice
        self._model_id = packaged_model_id()
        self._dim = DIM
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._last = 0.0
        self.starts = 0

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def pid(self) -> int | None:
        """The child's pid while it runs."""
        p = self._proc
        return p.pid if p is not None and p.poll() is None else None

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage") -> npt.NDArray[np.float32]:
        """Embed in the child (started now if it is not running)."""
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        with self._lock:
            proc = self._running()
            assert proc.stdin is not None and proc.stdout is not None
            try:
                _send(proc.stdin, {"kind": kind, "texts": list(texts)})
                head = _receive(proc.stdout)
                if not head.get("ok"):
                    raise EmbeddingError(f"the embedding worker failed: {head.get('error')}")
                n, dim = int(head["n"]), int(head["dim"])
                raw = _read_exact(proc.stdout, n * dim * 4)
            except (OSError, EOFError, ValueError) as exc:
                code = self._end(proc)
                raise EmbeddingRetryable(
                    f"the embedding worker stopped (exit code {code}): {exc}"
                ) from exc
            finally:
                self._last = time.monotonic()
        out = np.frombuffer(raw, dtype="<f4").astype(np.float32).reshape(n, dim)
        if n != len(texts):
            raise EmbeddingError(
                f"the embedding worker returned {n} vectors for {len(texts)} texts"
            )
        return out

    def idle(self) -> bool:
        """End the child when it has had nothing to do for `idle_s`; True when it is stopped."""
        with self._lock:
            if self._proc is None:
                return True
            if time.monotonic() - self._last < self.idle_s:
                return False
            self._end(self._proc)
            return True

    def close(self) -> None:
        """End the child now (it is started again by the next `embed`)."""
        proc = self._proc
        if proc is not None:
            self._end(proc)

    def _running(self) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        argv = [sys.executable, "-m", "memd.semantic.worker", "--threads", str(self.threads),
                "--nice", str(self.nice)]  # fmt: skip
        try:
            self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          close_fds=True)  # fmt: skip
        except OSError as exc:
            raise EmbeddingRetryable(f"the embedding worker could not start: {exc}") from exc
        self.starts += 1
        return self._proc

    def _end(self, proc: subprocess.Popen[bytes]) -> int | None:
        """Close the child's stdin (it exits), wait a little, then kill it."""
        if self._proc is proc:
            self._proc = None
        with contextlib.suppress(OSError):
            if proc.stdin is not None:
                proc.stdin.close()
        try:
            return proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait(5)
        finally:
            with contextlib.suppress(OSError):
                if proc.stdout is not None:
                    proc.stdout.close()


def serve(threads: int, nice: int, inp: IO[bytes], out: IO[bytes]) -> int:
    """The child's loop: load the model at priority `nice`, embed what is asked."""
    if nice and sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, 0, nice)  # the model's threads inherit it
    from memd.semantic.packaged import PackagedEmbedder

    model = PackagedEmbedder(threads=threads)
    while True:
        try:
            req = _receive(inp)
        except EOFError:
            return 0
        try:
            m = model.embed(req["texts"], kind="query" if req.get("kind") == "query" else "passage")
        except (EmbeddingError, KeyError, TypeError) as exc:
            _send(out, {"ok": False, "error": str(exc)})
            continue
        _send(out, {"ok": True, "n": int(m.shape[0]), "dim": int(m.shape[1])},
              m.astype("<f4").tobytes())  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m memd.semantic.worker")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--nice", type=int, default=NICE)
    args = ap.parse_args(argv)
    # The pipe to the daemon is a copy of stdout; what the engine or a library prints on
    # stdout goes to stderr (the daemon's log) instead of into the protocol.
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return serve(max(1, args.threads), args.nice, sys.stdin.buffer, out)


if __name__ == "__main__":
    raise SystemExit(main())
