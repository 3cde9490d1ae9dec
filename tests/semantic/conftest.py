"""The semantic tests' shared set-up."""

from __future__ import annotations

import os

import pytest

from tests.semantic import dictionary_cache


@pytest.fixture(scope="session", autouse=True)
def _one_dictionary_cache_a_run(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Under pytest-xdist, the workers' dictionary cache file is made once for the run, in the
    folder that holds each worker's own folders (the run's: removed with them)."""
    if os.environ.get("PYTEST_XDIST_WORKER") and not dictionary_cache.RUN:
        dictionary_cache.RUN.append(tmp_path_factory.getbasetemp().parent)
