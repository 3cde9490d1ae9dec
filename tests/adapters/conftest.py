"""Path setup for the adapter tests (the session's `pg` cluster is registered in tests/conftest.py)."""

from __future__ import annotations

import sys
from pathlib import Path

# The repo root is not on sys.path when pytest runs from the venv's bin; the tests import
# `memd` and the shared helpers as `tests.pgserver` / `tests.fakes`.
_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
