"""The real assistant CLIs the live tests drive: found where `scripts/install-clis` put them.

A test asks `cli("codex")` for the binary's path; when it is missing the test skips with the
command that installs it, and fails under `CI=true`, where `bash scripts/test` installs them
(a live test that silently skips on CI proves nothing).
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest

# The command each npm package puts in node_modules/.bin.
PACKAGES = {
    "claude": "@anthropic-ai/claude-code",
    "codex": "@openai/codex",
    "gemini": "@google/gemini-cli",
    "opencode": "opencode-ai",
}


def clis_dir() -> Path:
    """The folder `scripts/install-clis` installs into."""
    env = os.environ.get("MEMD_CLIS_DIR")
    # The account's home from the password database, not $HOME, which tests point elsewhere.
    return (
        Path(env) if env else Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "memd-test-clis"
    )


def cli(name: str) -> Path:
    """The installed binary `name` (see PACKAGES); skips (fails under CI) when it is missing."""
    path = clis_dir() / "node_modules" / ".bin" / name
    if path.exists():
        return path
    why = f"{PACKAGES[name]} is not installed in {clis_dir()} (bash scripts/install-clis)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{why}: CI must run the live {name} tests")
    pytest.skip(why)
