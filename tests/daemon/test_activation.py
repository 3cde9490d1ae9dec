"""Socket activation with real sockets passed the way systemd passes them.

The child is started as ``sh -c 'LISTEN_PID=$$ exec python …'`` so LISTEN_PID is the pid of the
process that reads it. POSIX sh only redirects single-digit fds, so the sockets ride in on
stdin/stdout and the shell moves them to fds 3 and 4 on the final exec.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memd.daemon import activation

REPO = Path(__file__).resolve().parents[2]
VARS = ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES")

pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX only"),
    pytest.mark.exec_memd,  # the process as systemd starts it
]


@pytest.fixture
def short_dir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="memd-") as d:
        yield Path(d)


def unix_listener(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.listen()
    return sock


def spawn_activated(
    code: str, report: Path, fd3: int, fd4: int | None = None, names: str | None = None
) -> subprocess.Popen[bytes]:
    redirs = "3<&0 0</dev/null"
    count = 1
    if fd4 is not None:
        redirs += " 4<&1 1>/dev/null"
        count = 2
    env = {k: v for k, v in os.environ.items() if k not in VARS}
    env.update({"LISTEN_FDS": str(count), "PYTHONPATH": str(REPO)})
    if names is not None:
        env["LISTEN_FDNAMES"] = names
    script = f'LISTEN_PID=$$ exec "$0" -c "$1" "$2" {redirs}'
    return subprocess.Popen(
        ["sh", "-c", script, sys.executable, code, str(report)],
        stdin=fd3,
        stdout=fd4 if fd4 is not None else subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        cwd=REPO,
    )


def finish(proc: subprocess.Popen[bytes], report: Path) -> dict[str, Any]:
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err.decode()
    result: dict[str, Any] = json.loads(report.read_text())
    return result


SERVE_ONE = r"""
import json, os, socket, sys
from memd.daemon import activation
VARS = ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES")
listener = activation.inherited_unix_listener()
fd = listener.fileno()
report = {
    "pid": os.getpid(),
    "fd": fd,
    "inheritable": os.get_inheritable(fd),
    "env_after": {k: os.environ.get(k) for k in VARS},
    "family": int(listener.family),
    "type": int(listener.type),
}
conn, _ = listener.accept()
conn.sendall(conn.recv(100).upper())
conn.close()
with open(sys.argv[1], "w") as fh:
    json.dump(report, fh)
"""


def test_child_serves_on_the_socket_passed_as_fd_3(short_dir: Path) -> None:
    path = short_dir / "memd.sock"
    report = short_dir / "report.json"
    with unix_listener(path) as listener:
        proc = spawn_activated(SERVE_ONE, report, listener.fileno(), names="memd")
    # The parent's copy is closed: only the child can be answering now.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(20)
        client.connect(str(path))
        client.sendall(b"ping")
        assert client.recv(100) == b"PING"
    result = finish(proc, report)
    assert result["pid"] == proc.pid
    assert result["fd"] == 3
    assert result["inheritable"] is False
    assert result["env_after"] == dict.fromkeys(VARS)
    assert result["family"] == socket.AF_UNIX
    assert result["type"] == socket.SOCK_STREAM


PICK_NAMED = r"""
import json, os, socket, sys
from memd.daemon import activation
# detach() hands back the fd without closing it, so this peek leaves fds 3 and 4 alone.
peek = [(name, s.detach()) for name, s in activation.listen_fds_with_names(unset_env=False)]
listener = activation.inherited_unix_listener()
try:
    os.fstat(3)
    fd3_open = True
except OSError:
    fd3_open = False
with open(sys.argv[1], "w") as fh:
    json.dump({"peek": peek, "chosen": listener.fileno(), "fd3_open": fd3_open}, fh)
"""


def test_listener_is_chosen_among_several_passed_sockets(short_dir: Path) -> None:
    report = short_dir / "report.json"
    dgram = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    dgram.bind(str(short_dir / "stats.sock"))
    with dgram, unix_listener(short_dir / "memd.sock") as listener:
        proc = spawn_activated(
            PICK_NAMED, report, dgram.fileno(), listener.fileno(), names="stats:memd"
        )
    result = finish(proc, report)
    assert result["peek"] == [["stats", 3], ["memd", 4]]
    assert result["chosen"] == 4
    assert result["fd3_open"] is False


NOT_A_SOCKET = r"""
import json, sys
from memd.daemon import activation
with open(sys.argv[1], "w") as fh:
    json.dump({"fds": len(activation.listen_fds())}, fh)
"""


def test_a_passed_fd_that_is_not_a_socket_is_skipped(short_dir: Path) -> None:
    report = short_dir / "report.json"
    plain = short_dir / "plain.txt"
    plain.write_text("not a socket")
    with plain.open("rb") as fh:
        proc = spawn_activated(NOT_A_SOCKET, report, fh.fileno())
    assert finish(proc, report)["fds"] == 0


def test_nothing_passed_outside_systemd(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in VARS:
        monkeypatch.delenv(var, raising=False)
    assert activation.listen_fds() == []
    assert activation.inherited_unix_listener() is None


def test_variables_for_another_process_are_ignored_and_unset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A pid that is not ours, so no fd of this test process is touched.
    monkeypatch.setenv("LISTEN_PID", str(os.getpid() + 1))
    monkeypatch.setenv("LISTEN_FDS", "1")
    monkeypatch.setenv("LISTEN_FDNAMES", "memd")
    assert activation.listen_fds() == []
    assert all(var not in os.environ for var in VARS)


def test_unset_env_false_keeps_the_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LISTEN_PID", str(os.getpid() + 1))
    monkeypatch.setenv("LISTEN_FDS", "1")
    assert activation.listen_fds(unset_env=False) == []
    assert os.environ["LISTEN_FDS"] == "1"


@pytest.mark.parametrize(("pid", "fds"), [("abc", "1"), ("self", "many"), ("self", "0")])
def test_malformed_variables_give_no_sockets(
    monkeypatch: pytest.MonkeyPatch, pid: str, fds: str
) -> None:
    monkeypatch.setenv("LISTEN_PID", str(os.getpid()) if pid == "self" else pid)
    monkeypatch.setenv("LISTEN_FDS", fds)
    assert activation.listen_fds() == []
