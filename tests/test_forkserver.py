"""The tests' fork server (tests/forkserver.py): a forked `python -m` process is given what an
exec'd one is, and is a real process a test signals and waits for."""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests import forkserver
from tests.utils import ROOT, DaemonProcess, memd_env, run_memd, wait_for

PROBE = [sys.executable, "-m", "tests.fixtures.fork.probe"]


@pytest.fixture(autouse=True)
def _forking(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(forkserver.SWITCH, raising=False)  # this module tests the fork path


def _env(home: Path, **extra: str) -> dict[str, str]:
    return memd_env(home, PROBE_WORD="zqprobe", TZ="Asia/Tokyo", TMPDIR=str(home), **extra)


def _probe(forked: bool, home: Path, cwd: Path, *args: str, **extra: str) -> dict[str, Any]:
    argv, env = [*PROBE, *args], _env(home, **extra)
    if forked:
        with forkserver.popen(argv, env=env, cwd=cwd, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as p:  # fmt: skip
            assert isinstance(p, forkserver.ForkedPopen)
            out, err = p.communicate("fed on stdin\n", timeout=60)
    else:
        r = subprocess.run(argv, env=env, cwd=cwd, input="fed on stdin\n", capture_output=True,
                           text=True, timeout=60)  # fmt: skip
        p, out, err = r, r.stdout, r.stderr  # type: ignore[assignment]
    assert err == "to stderr\n"
    return {**json.loads(out), "returncode": p.returncode}


def test_a_forked_process_is_given_what_an_exec_one_is(home: Path, tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        exec_ = _probe(False, home, tmp_path, "one", "two words", PROBE_EXIT="3")
        forked = _probe(True, home, tmp_path, "one", "two words", PROBE_EXIT="3")
    finally:
        os.umask(old)
    assert forked.pop("random") != exec_.pop("random")
    assert forked == exec_
    assert forked["returncode"] == 3 and forked["umask"] == 0o027
    assert forked["argv"] == ["one", "two words"] and forked["path0"] == str(tmp_path)
    assert forked["env"] == {"PROBE_WORD": "zqprobe", "PROBE_EXIT": "3"}
    assert forked["tz"] == ["JST", "JST"] and forked["tmp"] == str(home)
    assert forked["fds"] == ["0", "1", "2", "3"] and forked["threads"] == forked["tasks"] == 1
    assert forked["stdin"] == "fed on stdin\n"


@pytest.mark.parametrize(
    "how", [["return"], ["code", "3"], ["code", "0"], ["message", "said on the way out"],
            ["raise", "uncaught"]],
)  # fmt: skip
def test_a_forked_process_ends_as_an_exec_one_does(
    home: Path, tmp_path: Path, how: list[str]
) -> None:
    """Its threads, atexit handlers (the preload's too), streams, status and message; the
    fork server's child skips only the interpreter's teardown of its objects."""
    argv, env = [sys.executable, "-m", "tests.fixtures.fork.ending", *how], memd_env(home)
    ended = []
    for forked in (True, False):
        if forked:
            with forkserver.popen(argv, env=env, cwd=ROOT, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) as p:  # fmt: skip
                assert isinstance(p, forkserver.ForkedPopen)
                out, err = p.communicate(timeout=60)
            ended.append((p.returncode, out, err))
        else:
            r = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=60)
            ended.append((r.returncode, r.stdout, r.stderr))
    # A traceback names the frames it went through: the fork server's too.
    last_line = [(code, out, err.splitlines()[-1:]) for code, out, err in ended]
    assert last_line[0] == last_line[1]
    code, out, err = ended[0]
    assert out == (
        "unflushed; a thread that was not a daemon finished; second atexit handler; "
        "first atexit handler; held until logging's exit\n"
    )
    assert code == (int(how[1]) if how[0] == "code" else 0 if how[0] == "return" else 1)
    assert ("said on the way out" in err) == (how[0] == "message")
    assert ("ValueError: uncaught" in err) == (how[0] == "raise")


def test_each_forked_process_draws_its_own_random_numbers(home: Path, tmp_path: Path) -> None:
    draws = {_probe(True, home, tmp_path)["random"] for _ in range(3)}
    assert len(draws) == 3


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_forked_process_is_signalled_and_waited_for_as_a_child(
    home: Path, tmp_path: Path, sig: int
) -> None:
    with forkserver.popen([*PROBE, "sleep"], env=_env(home), cwd=tmp_path,
                          stdout=subprocess.PIPE) as p:  # fmt: skip
        assert isinstance(p, forkserver.ForkedPopen)
        assert p.stdout is not None and p.stdout.readline() == b"sleeping\n"
        assert p.poll() is None
        with pytest.raises(subprocess.TimeoutExpired):
            p.wait(0.2)
        os.kill(p.pid, sig)  # its pid is the process's own
        assert p.wait(30) == -sig
    assert p.poll() == -sig
    wait_for(lambda: not Path(f"/proc/{p.pid}").exists())  # reaped by its parent, the server


def test_a_timeout_kills_the_forked_process(home: Path, tmp_path: Path) -> None:
    with pytest.raises(subprocess.TimeoutExpired):
        forkserver.run([*PROBE, "sleep"], env=_env(home), cwd=tmp_path, timeout=1,
                       capture_output=True)  # fmt: skip


def test_memd_forked_answers_as_memd_exec(home: Path) -> None:
    env = memd_env(home)
    assert run_memd("remember", "forked or not zqfork", env=env).returncode == 0
    for args in (["memories", "--json"], ["nosuchcmd"], ["--help"]):
        forked = run_memd(*args, env=env)
        exec_ = subprocess.run([sys.executable, "-m", "memd", *args], env=env,
                               capture_output=True, text=True, timeout=60)  # fmt: skip
        assert (forked.returncode, forked.stdout) == (exec_.returncode, exec_.stdout)
        # The index's age in seconds may differ by one.
        assert re.sub(r"\d+ s ago", "", forked.stderr) == re.sub(r"\d+ s ago", "", exec_.stderr)
    assert "zqfork" in forked.stdout or "zqfork" in run_memd("memories", env=env).stdout


@pytest.mark.parametrize(
    ("argv", "kwargs"),
    [
        ([sys.executable, "-X", "importtime", "-m", "memd", "--help"], {}),
        ([sys.executable, "-c", "print()"], {}),
        ([*PROBE], {"start_new_session": True}),
        ([*PROBE], {"pass_fds": (0,)}),
    ],
)
def test_what_a_fork_cannot_stand_for_is_exec(
    home: Path, argv: list[str], kwargs: dict[str, Any]
) -> None:
    with forkserver.popen(argv, env=_env(home), stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, **kwargs) as p:  # fmt: skip
        assert type(p) is subprocess.Popen
        p.wait(60)


def test_other_interpreter_settings_are_exec(home: Path) -> None:
    # The test process's server is started by its first call, with that call's interpreter
    # settings: as the first test of its process, this test's call would have started one of
    # its own (and been forked from it). The usual server first, as any other test's call makes.
    assert forkserver.Server.for_env(_env(home)) is not None
    with forkserver.popen(PROBE, env=_env(home, PYTHONHASHSEED="7"), stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL) as p:  # fmt: skip
        assert type(p) is subprocess.Popen
        p.wait(60)


def test_the_switch_turns_forking_off(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(forkserver.SWITCH, "0")
    with forkserver.popen(PROBE, env=_env(home), stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL) as p:  # fmt: skip
        assert type(p) is subprocess.Popen
        p.wait(60)


@pytest.mark.exec_memd
def test_a_test_marked_exec_memd_execs(home: Path) -> None:
    with forkserver.popen(PROBE, env=_env(home), stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL) as p:  # fmt: skip
        assert type(p) is subprocess.Popen
        p.wait(60)


def test_the_tests_daemons_are_forked(home: Path) -> None:
    d = DaemonProcess(home).start()
    assert isinstance(d.proc, forkserver.ForkedPopen)
    assert d.call("remember", {"text": "a forked daemon writes zqforked"})
    assert d.stop() == 0
    assert "zqforked" in (d.memory / "_core" / "notes.md").read_text()


def test_a_request_it_cannot_serve_is_refused_and_it_serves_on(home: Path, tmp_path: Path) -> None:
    server = forkserver.Server.for_env(_env(home))
    assert server is not None
    with pytest.raises(forkserver.Refused, match="2 descriptors, not 3"):
        server.fork("tests.fixtures.fork.probe", [], _env(home), str(tmp_path), [0, 1])
    assert _probe(True, home, tmp_path)["returncode"] == 0


def test_a_preload_that_sets_up_logging_or_a_signal_is_refused() -> None:
    before = forkserver._process_state()
    handler = logging.NullHandler()
    logging.root.addHandler(handler)
    try:
        with pytest.raises(RuntimeError, match="changed the process's state"):
            forkserver._check_process_state(before)
    finally:
        logging.root.removeHandler(handler)
    old = signal.signal(signal.SIGUSR1, lambda *_: None)
    try:
        with pytest.raises(RuntimeError, match="changed the process's state"):
            forkserver._check_process_state(before)
    finally:
        signal.signal(signal.SIGUSR1, old)
    forkserver._check_process_state(before)


def test_a_server_that_cannot_start_says_why_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "psutil.py").write_text("raise ImportError('no psutil here zqfail')\n")
    base = tmp_path / "servers"
    base.mkdir()
    monkeypatch.setattr(forkserver.Server, "base", str(base))
    with pytest.raises(RuntimeError, match="zqfail"):
        forkserver.Server({"PYTHONPATH": f"{shadow}:{forkserver.ROOT}"}, os.environ["PATH"])
    assert list(base.iterdir()) == []
