"""SQL only in repositories: no module of the package but the store and the features'
repositories calls `execute`, `executemany` or `executescript`.

The import contract (pyproject `[tool.importlinter]`) keeps `sqlite3` out of the other modules;
this walks the code itself, so a connection reached without importing `sqlite3` (a
`memd.db.Connection` parameter) cannot carry SQL into a feature module either.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "memd"
SQL_CALLS = frozenset({"execute", "executemany", "executescript"})

# Where SQL may be written, relative to the package folder ("db/" = the whole store package).
STORE = ("db/",)
REPOSITORIES = (
    "memory/repo/",
    "conversations/repo/",
    "extraction/repo.py",
    "llm/repo.py",
    "semantic/repo.py",
    "sync/outbox.py",
    "daemon/repo.py",
)
# The cloud backends speak to the remote database (psycopg, postgrest), never to the index.
CLOUD_BACKENDS = ("sync/postgres.py", "sync/supabase.py")
# Temporary exceptions, each with the reason it is not in a repository yet; keep this empty.
NOT_YET_IN_REPOSITORIES: tuple[str, ...] = ()

ALLOWED = (*STORE, *REPOSITORIES, *CLOUD_BACKENDS, *NOT_YET_IN_REPOSITORIES)


def allowed(rel: str) -> bool:
    return any(rel == a or (a.endswith("/") and rel.startswith(a)) for a in ALLOWED)


def sql_calls(source: str) -> list[tuple[int, str]]:
    """(line, method) of every `<anything>.execute(...)`-style call in `source`."""
    return [
        (node.lineno, node.func.attr)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in SQL_CALLS
    ]


def test_sql_is_written_only_in_the_store_and_the_repositories() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if allowed(rel):
            continue
        found += [f"memd/{rel}:{line}: .{name}(" for line, name in sql_calls(path.read_text())]
    assert not found, "SQL outside a repository:\n" + "\n".join(found)


def test_every_allowed_place_exists() -> None:
    """A renamed repository must not leave a stale entry that would allow SQL elsewhere."""
    for entry in ALLOWED:
        assert (PACKAGE / entry).exists(), entry


@pytest.mark.parametrize(
    "source",
    [
        "conn.execute('SELECT 1')",
        "self.store.read().execute('SELECT 1').fetchone()",
        "c.executemany('DELETE FROM t WHERE id = ?', rows)",
        "getattr(x, 'y').executescript('')",
    ],
)
def test_the_walk_sees_every_form_of_call(source: str) -> None:
    assert sql_calls(source)


def test_a_name_that_only_looks_alike_is_not_sql() -> None:
    assert sql_calls("run(execute)\nexecute_plan(x)\nobj.execute_later()") == []
