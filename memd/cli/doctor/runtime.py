"""What memd runs on: a Python and a SQLite (with FTS5) new enough."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from memd.cli.doctor.check import Check, Measured, fail, ok
from memd.db.connection import SqliteFeatures

MIN_PYTHON = (3, 11)
# ON CONFLICT … DO UPDATE (upsert) arrived in SQLite 3.24.
MIN_SQLITE = (3, 24, 0)


def check_python(version: Sequence[int] = sys.version_info[:3]) -> Check:
    """Python new enough for memd."""
    text = ".".join(str(v) for v in version[:3])
    if tuple(version[:2]) < MIN_PYTHON:
        return fail(
            "python",
            f"Python {text} at {sys.executable}; memd needs {'.'.join(map(str, MIN_PYTHON))}+",
            "install memd into a newer Python (pipx install memd, or a 3.11+ venv)",
        )
    return ok("python", f"Python {text} at {sys.executable}", version=text)


def assess_sqlite(f: SqliteFeatures) -> Check:
    """SQLite recent enough, with FTS5 and the porter tokenizer (trigram is reported only)."""
    version = f.version
    parts = tuple(int(p) for p in version.split(".")[:3])
    trigram = "yes" if not f.trigram_error else "no"
    data: Measured = {"version": version, "fts5": not f.fts5_error,
                      "trigram": not f.trigram_error}  # fmt: skip
    fix = "use a Python built with a current SQLite (python.org, Homebrew, uv python install)"
    if f.fts5_error:
        how = "compiled without ENABLE_FTS5" if not f.compile_fts5 else f.fts5_error
        return fail("sqlite", f"SQLite {version} has no usable FTS5 ({how})", fix, data=data)
    if parts < MIN_SQLITE:
        need = ".".join(map(str, MIN_SQLITE))
        return fail("sqlite", f"SQLite {version} is older than {need}", fix, data=data)
    # memd indexes Chinese/Japanese as character bigrams, so the trigram tokenizer is optional.
    return ok("sqlite", f"SQLite {version}, FTS5 yes, trigram tokenizer {trigram}", data=data)
