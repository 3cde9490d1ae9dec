"""The engine: one method table, ordered middleware, typed calls, the same answers in-process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memd.api import messages as m
from memd.api.methods import Feature, Method, Middleware
from memd.app import Engine
from memd.core.errors import InvalidParams, MethodNotFound
from memd.core.settings import load
from memd.daemon import engine as engine_mod
from memd.db import Store


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    monkeypatch.setenv("MEMD_HOME", str(tmp_path / "h"))
    st = Store.open(load().db_path)
    yield st
    st.close()


def test_every_signature_is_served_and_every_method_is_declared(store: Store) -> None:
    e = Engine(load(), store)
    assert set(e.methods) == set(m.SIGNATURES)
    for name, method in e.methods.items():
        assert method.signature is m.SIGNATURES[name]
        assert method.why, f"{name}: where it runs must say why"


def test_middleware_runs_in_the_listed_order_around_the_methods_it_names(store: Store) -> None:
    seen: list[str] = []

    def handler(p: m.ReindexParams) -> m.ReindexResult:
        seen.append("handler")
        return m.ReindexResult(full=p.full)

    def mark(name: str) -> Middleware:
        def around(method: str, params: Any, call_next: Any) -> Any:
            seen.append(f"{name}>{method}")
            out = call_next(params)
            seen.append(f"<{name}")
            return out

        return Middleware(name, frozenset({"reindex"}), around)

    e = engine_mod.Engine(load(), store)
    e.add(Feature("t", methods=[Method(m.REINDEX, handler, why="test")]))
    e.use([mark("outer"), mark("inner")])
    assert e.handle("reindex", {"full": True})["full"] is True
    assert seen == ["outer>reindex", "inner>reindex", "handler", "<inner", "<outer"]
    with pytest.raises(ValueError, match="declared twice"):
        e.add(Feature("u", methods=[Method(m.REINDEX, handler, why="test")]))
    with pytest.raises(ValueError, match="unknown methods"):
        e.use([Middleware("x", frozenset({"nope"}), lambda *a: None)])


def test_typed_calls_are_checked_like_socket_calls(store: Store) -> None:
    e = Engine(load(), store)
    with pytest.raises(InvalidParams, match="param 'budget_tokens'"):
        e.call(m.CONTEXT, m.ContextParams(budget_tokens=-5))
    with pytest.raises(MethodNotFound):
        e.handle("nope", {})
    res = e.call(m.SEARCH, m.SearchParams(query="nothing here"))
    assert isinstance(res, m.SearchResult) and res.hits == []
    with pytest.raises(InvalidParams, match="'query' is required"):
        e.call(m.SEARCH, m.SearchParams(query="  "))


def test_search_is_sections_then_turns(store: Store) -> None:
    s = load()
    e = Engine(s, store)
    (s.memory_dir / "topics").mkdir(parents=True)
    (s.memory_dir / "topics" / "kyoto.md").write_text("# Kyoto\n\n## Trip\n- temples in Kyoto\n")
    e.indexer.reconcile()
    e.handle("ingest", {"session_id": "s1", "id": "q1", "role": "user", "content": "Kyoto trip?"})
    kinds = [h["kind"] for h in e.handle("search", {"query": "Kyoto"})["hits"]]
    assert kinds == ["section", "turn"]
    assert [
        h["kind"] for h in e.handle("search", {"query": "Kyoto", "scope": "memory"})["hits"]
    ] == ["section"]
    only = e.handle("search", {"query": "Kyoto", "scope": "conversations"})["hits"]
    assert [h["kind"] for h in only] == ["turn"]
