"""Fixtures of the memory job tests (shared with other job tests in tests/jobenv.py)."""

from tests.jobenv import clock, env, server

__all__ = ["clock", "env", "server"]
