"""The docs that describe memd's shape say what the code composes.

docs/architecture.md has the method table (method, where it is declared, where it runs, whether
it writes) and the middleware in order; docs/protocol.md has a section per method. A method
added, moved or changed in `memd/app.py` or a feature's `api.py` without its docs fails here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from memd.app import Engine
from memd.core.settings import load
from memd.db import Store

DOCS = Path(__file__).resolve().parent.parent / "docs"
ROW = re.compile(r"^\| `(\w+)` \| ([\w/.]+)[^|]* \| (\w+)[^|]* \| (yes|no) \|", re.M)


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    monkeypatch.setenv("MEMD_HOME", str(tmp_path / "h"))
    store = Store.open(load().db_path)
    try:
        yield Engine(load(), store)
    finally:
        store.close()


def declared_in(module: str) -> str:
    """`memd.memory.api` -> `memory/api.py`."""
    return module.removeprefix("memd.").replace(".", "/") + ".py"


def test_the_method_table_in_the_architecture_doc_is_the_engines(engine: Engine) -> None:
    rows = {m[0]: m[1:] for m in ROW.findall((DOCS / "architecture.md").read_text())}
    assert sorted(rows) == sorted(engine.methods)
    for name, method in engine.methods.items():
        where, runs, writes = rows[name]
        assert where == declared_in(method.handler.__module__), name
        if isinstance(method.runs, str):
            assert runs == method.runs, name
        else:  # decided per call: the doc names the usual place and says when it differs
            assert runs in ("loop", "reader", "pool"), name
        assert writes == ("yes" if method.writes else "no"), name


def test_the_middleware_is_described_in_its_order(engine: Engine) -> None:
    text = (DOCS / "architecture.md").read_text()
    listed = text[text.index("Cross-cutting behaviour is middleware") :]
    places = [listed.find(f"`{mw.name}`") for mw in engine.middleware]
    assert -1 not in places, [mw.name for mw in engine.middleware]
    assert places == sorted(places)


def test_every_method_has_a_section_in_the_protocol_doc(engine: Engine) -> None:
    headings = re.findall(r"^### (.+)$", (DOCS / "protocol.md").read_text(), re.M)
    documented = {name for h in headings for name in re.findall(r"`(\w+)`", h.split(" — ")[0])}
    assert set(engine.methods) - documented == set()
