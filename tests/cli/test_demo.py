"""`memd demo`: runs from any folder, cleans up after itself."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.utils import ROOT

pytestmark = pytest.mark.exec_memd  # the demo's own processes


def test_demo_runs_beside_a_memd_folder_and_removes_its_home(tmp_path: Path) -> None:
    """Run from the folder holding the clone, `python -m memd` would import the clone folder
    instead of the installed package; the demo's home must not outlive the demo."""
    parent = tmp_path / "src"
    (parent / "memd" / "memd").mkdir(parents=True)
    (parent / "memd" / "README.md").write_text("a clone, seen from its parent folder\n")
    # The demo's home goes in TMPDIR and its socket under it: a short folder (a test's tmp_path
    # under pytest-xdist is too deep for an AF_UNIX path).
    scratch = Path(tempfile.mkdtemp(prefix="memd-demo-tmp-", dir="/tmp"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMD_", "PYTHON"))}
    env["TMPDIR"] = str(scratch)
    # The installed package, as `memd demo` runs it: started by path, not from the repository.
    code = f"import sys; sys.path.remove({str(ROOT)!r}) if {str(ROOT)!r} in sys.path else None; "
    code += "from memd.cli import main; raise SystemExit(main(['demo']))"
    proc = subprocess.run(
        [sys.executable, "-P", "-c", code],
        cwd=parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "memd daemon running" in proc.stdout and "Pinia" in proc.stdout
    assert list(scratch.iterdir()) == []
    scratch.rmdir()


def test_demo_ignores_the_shells_memd_variables(tmp_path: Path) -> None:
    """A shell with MEMD_HOME, MEMD_SOCKET, MEMD_CONFIG (and any other MEMD_ setting) pointing
    at the user's own memd: the demo's daemon and its client use the demo's home only, and
    leave the user's folders alone."""
    mine = tmp_path / "my-memd"
    scratch = Path(tempfile.mkdtemp(prefix="memd-demo-tmp-", dir="/tmp"))  # short: see above
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMD_", "PYTHON"))}
    env.update(
        TMPDIR=str(scratch),
        PYTHONPATH=str(ROOT),
        MEMD_HOME=str(mine),
        MEMD_SOCKET=str(mine / "elsewhere.sock"),
        MEMD_CONFIG=str(mine / "config.toml"),
        MEMD_MEMORY_ROOT=str(mine / "real-memory"),
    )
    proc = subprocess.run(
        [sys.executable, "-m", "memd", "demo"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "memd daemon running" in proc.stdout and "Pinia" in proc.stdout
    assert not mine.exists()
    assert list(scratch.iterdir()) == []
    scratch.rmdir()


def test_the_demo_environment_keeps_nothing_of_the_users_memd(tmp_path: Path) -> None:
    from memd.cli.demo import demo_env

    shell = {
        "PATH": "/usr/bin",
        "MEMD_SOCKET": "/run/user/1000/memd/memd.sock",
        "MEMD_CONFIG": "/home/u/.config/memd/config.toml",
        "MEMD_SYNC_BACKEND": "postgres",
        "LISTEN_FDS": "1",
        "NOTIFY_SOCKET": "/run/systemd/notify",
    }
    env = demo_env(tmp_path, shell)
    assert env["PATH"] == "/usr/bin"
    assert env["MEMD_HOME"] == str(tmp_path)
    assert env["MEMD_SOCKET"] == str(tmp_path / "run" / "memd.sock")
    assert "MEMD_CONFIG" not in env and "MEMD_SYNC_BACKEND" not in env
    assert "LISTEN_FDS" not in env and "NOTIFY_SOCKET" not in env
    assert env["MEMD_LOGS_CLAUDE_CODE"] == "false"


# A process that takes `seconds` to end after SIGTERM (a daemon finishing its work), saying
# "ready" once its handler is in place.
SLOW_TO_STOP = (
    "import signal, sys, time\n"
    "def stop(*_):\n"
    "    time.sleep(float(sys.argv[1]))\n"
    "    raise SystemExit(0)\n"
    "signal.signal(signal.SIGTERM, stop)\n"
    "print('ready', flush=True)\n"
    "time.sleep(120)\n"
)


def _slow_to_stop(seconds: float) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-c", SLOW_TO_STOP, str(seconds)],
                            stdout=subprocess.PIPE)  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    return proc


def test_the_demo_waits_for_a_daemon_slow_to_stop() -> None:
    """The demo waited 10 s for its daemon to stop, which may take up to its stop deadline
    (15 s): on a loaded machine the wait raised, the demo failed with a traceback, and its
    daemon and throwaway home were left behind."""
    from memd.cli.demo import stop_daemon

    proc = _slow_to_stop(11)
    try:
        stop_daemon(proc)
        assert proc.returncode == 0  # it ended on its own: waited for, not killed
    finally:
        proc.kill()
        proc.wait()


def test_the_demo_kills_a_daemon_that_does_not_stop() -> None:
    from memd.cli.demo import stop_daemon

    proc = _slow_to_stop(60)
    try:
        stop_daemon(proc, wait_s=0.5)
        assert proc.returncode == -signal.SIGKILL
    finally:
        proc.kill()
        proc.wait()
