"""What a memd process imports before it does its work.

Every command and hook is a new Python process (the hooks on each of an assistant's prompts),
and every module it imports is paid on each call, so these pin the thin paths: a command or
hook that asks a running daemon imports the parser, the socket client, the message types and
the renderer (memd.cli, memd.api, memd.core), none of the features; a daemon's start does not
load the offline extractor's rule lexicons, which only the `extract` job and `relationship`
use. `bench/start_cost.py` measures what each of these costs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.utils import DaemonProcess, memd_env

pytestmark = pytest.mark.exec_memd  # what a fresh process imports

# What a command asking the daemon may import of memd (a module or a package's modules).
CLIENT = ("memd", "memd.cli", "memd.api", "memd.core")
# The hooks add their own module, and the CLI's fallback for the case no daemon answers (it
# imports the engine only when it is called).
HOOK = (*CLIENT, "memd.integrations.hooks")


def _memd_modules(importtime: str) -> set[str]:
    """memd's modules in `python -X importtime` output (on stderr)."""
    names = {line.rsplit("|", 1)[1].strip() for line in importtime.splitlines()
             if line.startswith("import time:") and "self [us]" not in line}  # fmt: skip
    return {n for n in names if n == "memd" or n.startswith("memd.")}


def _outside(modules: set[str], allowed: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if not any(m == a or m.startswith(a + ".") for a in allowed))


@pytest.mark.parametrize(
    "args",
    [
        ["context", "database"],
        ["search", "database"],
        ["recall", "database"],
        ["memories"],
        ["status"],
        ["history"],
        ["remember", "We deploy on Fridays"],
    ],
    ids=lambda a: a[0],
)
def test_a_command_asking_the_daemon_imports_no_feature(
    module_daemon: DaemonProcess, args: list[str]
) -> None:
    res = module_daemon.cli(*args, PYTHONPROFILEIMPORTTIME="1")
    assert res.returncode == 0, res.stderr[-2000:]
    assert "answering from the index" not in res.stderr and "writing directly" not in res.stderr
    modules = _memd_modules(res.stderr)
    assert "memd.api.client" in modules  # it did ask the socket
    assert _outside(modules, CLIENT) == []


@pytest.mark.parametrize("event", ["user-prompt", "session-start"])
def test_a_hook_asking_the_daemon_imports_no_feature(
    module_daemon: DaemonProcess, event: str
) -> None:
    payload = {"session_id": "s1", "cwd": "/", "prompt": "which database do we use?",
               "hook_event_name": "UserPromptSubmit" if event == "user-prompt" else "SessionStart"}  # fmt: skip
    res = module_daemon.cli("hook", event, input=json.dumps(payload), PYTHONPROFILEIMPORTTIME="1")
    assert res.returncode == 0, res.stderr[-2000:]
    modules = _memd_modules(res.stderr)
    # Without an answer from the socket it would have answered from the index: memd.app.
    assert "memd.api.client" in modules and "memd.app" not in modules
    assert _outside(modules, HOOK) == []


def test_a_daemon_reports_ready_without_the_extraction_rules(home: Path) -> None:
    # The daemon's ready status lists the agents seen (memd.extraction.seen): that must not
    # load memd.extraction.rules, ~0.1 s of CPU at every start.
    code = (
        "import json, sys\n"
        "from memd.app import Engine\n"
        "from memd.core.settings import load\n"
        "from memd.daemon.api import status_of\n"
        "from memd.db import Store\n"
        "s = load()\n"
        "store = Store.open(s.db_path)\n"
        "engine = Engine(s, store)\n"
        "status = status_of(engine)\n"
        "store.close()\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('memd.extraction'))))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], env=memd_env(home), capture_output=True,
                         text=True, timeout=60)  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    loaded = json.loads(res.stdout.strip().splitlines()[-1])
    assert "memd.extraction.seen" in loaded  # the status did list the agents
    assert [m for m in loaded if m.startswith("memd.extraction.rules")] == []
