"""Fixtures for the adapter tests: `pg`, one throwaway PostgreSQL cluster per session."""

from __future__ import annotations

import sys
from pathlib import Path

# The repo root is not on sys.path when pytest runs from the venv's bin; the tests import
# `memd` and the shared helpers as `tests.pgserver` / `tests.fakes`.
_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from tests.pgserver import pg  # noqa: E402, F401  (registers the session fixture)
