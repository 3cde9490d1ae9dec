"""Fixtures of the memory job tests (shared with other job tests in tests/jobenv.py), and each
test's reports kept on it (`report_setup`, `report_call`, `report_teardown`) for fixtures that
keep what a failed test leaves."""

from collections.abc import Generator

import pytest

from tests.jobenv import clock, env, server

__all__ = ["clock", "env", "server"]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report
