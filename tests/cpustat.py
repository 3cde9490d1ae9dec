"""The CPU each test file costs, its processes' included (`MEMD_TEST_CPU=folder`).

The suite's run waits on its CPU (2 cores), and most of that CPU is not the test process's own:
the daemons and CLI calls it starts (forked by its fork server, or exec'd), the assistants' CLIs
(node), Chromium, PostgreSQL. `resource.getrusage(RUSAGE_CHILDREN)` counts only the children a
process has waited for, so a file's CPU is read from /proc instead, at its first test's start
and its last test's end: the CPU of the test process's tree (every live descendant's own time,
plus what each has counted of the children it waited for: a daemon forked by the fork server is
counted, once it has ended, in the server's), plus the PostgreSQL clusters the process started
(their server is not its descendant: pg_ctl leaves it to init). A session-scoped fixture's
start (PostgreSQL, Chromium) counts in the file that first uses it. A process that leaves the
tree before it ends (its parent ended first, as a daemon left running by a fork server that
closed) takes its CPU so far with it: such a file counts less, even below zero.

Each test process writes `cpu-<pid>.json` into the folder at its end; `python -m tests.cpustat
FOLDER` sums them by file and by kind of process. Each test's start, end and the test process's
own CPU in it are kept too, with the step (its `-m`) and the xdist worker: `--own FOLDER` lists
the tests and files by the test processes' own CPU, `--idle FOLDER [SECONDS]` each step's
workers, when they ended, their idle time and what they ran in the step's last seconds. Off
unless the variable is set.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

SWITCH = "MEMD_TEST_CPU"
_TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class _Proc:
    pid: int
    ppid: int
    own: float  # utime + stime, seconds
    waited: float  # cutime + cstime: the children it has waited for
    kind: str


def _kind(pid: int, comm: str) -> str:
    """What a process is, for the by-kind table."""
    if comm.startswith("python"):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return "python"
        text = b" ".join(argv).decode(errors="replace")
        if "tests.forkserver" in text:
            return "fork server"
        if "-m memd" in text or "memd serve" in text:
            return "memd (exec'd)"
        if "pytest" in text or "xdist" in text or "execnet" in text:
            return "pytest"
        return "python (other)"
    if comm in ("postgres", "postmaster"):
        return "postgres"
    if comm.startswith(("chrom", "headless")):
        return "chromium"
    if comm in ("node", "MainThread", "codex", "opencode", "claude", "gemini"):
        return "node/CLI"
    return comm


def _read(pid: int) -> _Proc | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    comm = raw[raw.index("(") + 1 : raw.rindex(")")]
    fields = raw[raw.rindex(")") + 2 :].split()
    # fields[0] is field 3 (state): ppid 4, utime 14, stime 15, cutime 16, cstime 17.
    own = (int(fields[11]) + int(fields[12])) / _TICK
    waited = (int(fields[13]) + int(fields[14])) / _TICK
    return _Proc(pid, int(fields[1]), own, waited, _kind(pid, comm))


def _all() -> dict[int, _Proc]:
    procs = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            p = _read(int(name))
            if p is not None:
                procs[p.pid] = p
    return procs


def _postmasters() -> set[int]:
    """The pids of the PostgreSQL servers this process started (tests/pgserver.py)."""
    from tests import pgserver

    pids = set()
    for server in list(pgserver.LIVE):
        try:
            pids.add(int((server.data_dir / "postmaster.pid").read_text().split()[0]))
        except (OSError, ValueError, IndexError):
            pass
    return pids


def _tree(procs: dict[int, _Proc], roots: set[int]) -> Iterator[_Proc]:
    children: dict[int, list[int]] = {}
    for p in procs.values():
        children.setdefault(p.ppid, []).append(p.pid)
    seen: set[int] = set()
    todo = [r for r in roots if r in procs]
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        yield procs[pid]
        todo.extend(children.get(pid, ()))


# -- what each ended child cost, by command ---------------------------------------------------
# The tree's totals say where the CPU went (the test process, its waited children, the fork
# server's); to say what it went to, each child's own CPU (its descendants' included) is read as
# it is reaped: `os.wait4` for the children this process waits for, and for the forked ones the
# figure their fork server sends with their exit status (tests/forkserver.py).
_ENDED: dict[str, float] = {}
_ARGV: dict[int, list[str]] = {}


def command_kind(argv: list[str], forked: bool = False) -> str:
    """A child's kind, from its command line."""
    args = [str(a) for a in argv]
    name = Path(args[0]).name if args else "?"
    if "-m" in args[:3]:
        module = args[args.index("-m") + 1] if args.index("-m") + 1 < len(args) else "?"
        rest = args[args.index("-m") + 2 :]
        if module == "memd":
            what = "memd daemon" if rest[:1] == ["serve"] else "memd command"
            return f"{what} ({'forked' if forked else 'exec'})"
        return f"python -m {module}"
    if name.startswith("python"):
        return "python -c / script"
    if "memd-test-clis" in " ".join(args[:2]):
        return f"assistant CLI {name}"
    if name == "node" and any("playwright" in a for a in args[1:3]):
        return "Chromium (playwright driver)"
    if name in ("runuser", "pg_ctl", "initdb", "postgres", "psql"):
        return "PostgreSQL tools"
    return name


def record(argv: Any, cpu: float, forked: bool = False) -> None:
    """Count an ended child's CPU under its command's kind."""
    argv = [os.fsdecode(a) for a in argv] if isinstance(argv, list | tuple) else [str(argv)]
    kind = command_kind(argv, forked)
    _ENDED["ended: " + kind] = _ENDED.get("ended: " + kind, 0.0) + cpu
    _ENDED["ended#: " + kind] = _ENDED.get("ended#: " + kind, 0.0) + 1


def _install_reaping_counter() -> None:
    import subprocess

    real_init = subprocess.Popen.__init__

    def init(self: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        pid = getattr(self, "pid", None)
        if pid and not getattr(self, "_server", None):  # forked ones are counted by the server
            argv = self.args if isinstance(self.args, list | tuple) else [self.args]
            _ARGV[pid] = [os.fsdecode(a) if isinstance(a, str | bytes) else str(a) for a in argv]

    def waitpid(pid: int, options: int) -> tuple[int, int]:
        got, status, usage = os.wait4(pid, options)
        if got and (os.WIFEXITED(status) or os.WIFSIGNALED(status)):
            record(_ARGV.pop(got, ["(unknown)"]), usage.ru_utime + usage.ru_stime)
        return got, status

    real_poll = subprocess.Popen._internal_poll  # type: ignore[attr-defined]

    def poll(self: subprocess.Popen[Any], _deadstate: int | None = None, **_: Any) -> Any:
        return real_poll(self, _deadstate, _waitpid=waitpid)  # its default: the real waitpid

    subprocess.Popen.__init__ = init  # type: ignore[method-assign]
    subprocess.Popen._internal_poll = poll  # type: ignore[attr-defined]
    os.waitpid = waitpid


def snapshot() -> dict[str, float]:
    """CPU seconds so far by kind: each live process's own time under its kind, and what it
    counted of its waited children under "<kind>'s children"."""
    me = os.getpid()
    procs = _all()
    out: dict[str, float] = {}
    for p in _tree(procs, {me} | _postmasters()):
        kind = "test process" if p.pid == me else p.kind
        parent = procs.get(p.ppid)
        if kind == "fork server" and parent is not None and parent.kind == "fork server":
            kind = "memd (forked)"  # a forked child keeps its server's command line
        out[kind] = out.get(kind, 0.0) + p.own
        if p.waited:
            key = f"{kind}: waited children"
            out[key] = out.get(key, 0.0) + p.waited
    out.update(_ENDED)
    return out


@dataclass
class Recorder:
    """Per file: CPU by kind and wall seconds, from its first test's start to its last's end."""

    folder: Path
    files: dict[str, dict[str, float]] = field(default_factory=dict)
    # Per test: [node id, start and end (epoch seconds), this process's own CPU-s in it (its
    # set-up and tear-down included: a module fixture's start counts in its file's first test)].
    tests: list[tuple[str, float, float, float]] = field(default_factory=list)
    _start: dict[str, float] | None = None
    _wall: float = 0.0

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Iterator[None]:
        if self._start is None:
            self._start = snapshot()
            self._wall = time.monotonic()
        began, cpu = time.time(), time.process_time()
        yield
        self.tests.append((item.nodeid, began, time.time(), time.process_time() - cpu))
        if nextitem is None or nextitem.path != item.path:
            end = snapshot()
            file = item.nodeid.split("::", 1)[0]
            got = self.files.setdefault(file, {})
            for kind in end.keys() | self._start.keys():
                delta = end.get(kind, 0.0) - self._start.get(kind, 0.0)
                if delta:
                    got[kind] = got.get(kind, 0.0) + delta
            got["wall"] = got.get("wall", 0.0) + time.monotonic() - self._wall
            self._start = None

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not self.files:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        total = snapshot()
        # Which step and worker ran them: the timeline (`python -m tests.cpustat FOLDER --idle`).
        who = {"worker": os.environ.get("PYTEST_XDIST_WORKER", "-"),
               "step": session.config.getoption("markexpr") or ""}  # fmt: skip
        out = {"files": self.files, "process": total, "tests": self.tests, **who}
        (self.folder / f"cpu-{os.getpid()}.json").write_text(json.dumps(out))


def register(config: pytest.Config) -> None:
    """Record this test process's files' CPU when `MEMD_TEST_CPU` names a folder."""
    folder = os.environ.get(SWITCH)
    if folder and not config.pluginmanager.has_plugin("memd-cpustat"):
        config.pluginmanager.register(Recorder(Path(folder)), "memd-cpustat")
        _install_reaping_counter()


# -- the summary ---------------------------------------------------------------------------


def _cpu(kinds: dict[str, float]) -> float:
    return sum(v for k, v in kinds.items() if k != "wall" and not k.startswith("ended"))


def _sum(folder: Path) -> dict[str, dict[str, float]]:
    files: dict[str, dict[str, float]] = {}
    for path in sorted(folder.glob("cpu-*.json")):
        for file, kinds in json.loads(path.read_text())["files"].items():
            got = files.setdefault(file, {})
            for k, v in kinds.items():
                got[k] = got.get(k, 0.0) + v
    return files


def _by_kind(files: dict[str, dict[str, float]], total: float) -> list[str]:
    by_kind: dict[str, float] = {}
    for kinds in files.values():
        for k, v in kinds.items():
            if k != "wall":
                by_kind[k] = by_kind.get(k, 0.0) + v
    lines = ["", "| where (the process tree) | CPU-s | share |", "|---|---|---|"]
    for k, v in sorted(by_kind.items(), key=lambda kv: -kv[1]):
        if not k.startswith("ended"):
            lines.append(f"| {k} | {v:.1f} | {100 * v / total:.1f}% |")
    lines += ["", "| ended children, by command | CPU-s | share | processes | CPU-s each |",
              "|---|---|---|---|---|"]  # fmt: skip
    for k, v in sorted(by_kind.items(), key=lambda kv: -kv[1]):
        if k.startswith("ended: "):
            n = by_kind.get("ended#: " + k[7:], 0)
            each = f"{v / n:.2f}" if n else ""
            lines.append(f"| {k[7:]} | {v:.1f} | {100 * v / total:.1f}% | {n:.0f} | {each} |")
    return lines


def summary(folder: Path, top: int = 25) -> str:
    """The files by CPU (with their wall time and share of the files' CPU), then the kinds."""
    files = _sum(folder)
    total = sum(_cpu(k) for k in files.values())
    lines = [f"{len(files)} files, {total:.0f} CPU-s in their tests", "",
             "| file | CPU-s | wall s | share | its ended children's most |",
             "|---|---|---|---|---|"]  # fmt: skip
    for file, kinds in sorted(files.items(), key=lambda kv: -_cpu(kv[1]))[:top]:
        cpu = _cpu(kinds)
        parts = sorted(((v, k[7:]) for k, v in kinds.items() if k.startswith("ended: ")),
                       reverse=True)[:3]  # fmt: skip
        most = ", ".join(f"{k} {v:.0f}" for v, k in parts if v >= 0.5)
        lines.append(f"| {file} | {cpu:.1f} | {kinds.get('wall', 0):.1f} |"
                     f" {100 * cpu / total:.1f}% | {most} |")  # fmt: skip
    return "\n".join(lines + _by_kind(files, total))


def _tests(folder: Path) -> list[dict[str, Any]]:
    """Every test of every process: its id, step, worker, start, end and the test process's CPU."""
    out = []
    for path in sorted(folder.glob("cpu-*.json")):
        got = json.loads(path.read_text())
        for nodeid, start, end, cpu in got.get("tests", ()):
            step = got.get("step", "") or "-"
            out.append({"id": nodeid, "step": step, "worker": got.get("worker", "-"),
                        "start": start, "end": end, "cpu": cpu})  # fmt: skip
    return out


def own_cpu(folder: Path, top: int = 20) -> str:
    """The test processes' own CPU (not their children's), by test and by file."""
    tests = _tests(folder)
    total = sum(t["cpu"] for t in tests)
    lines = [f"{len(tests)} tests, {total:.0f} CPU-s of the test processes' own", "",
             "| test (the test process's own CPU, its set-up included) | CPU-s | wall s |",
             "|---|---|---|"]  # fmt: skip
    for t in sorted(tests, key=lambda t: -t["cpu"])[:top]:
        lines.append(f"| {t['id']} | {t['cpu']:.2f} | {t['end'] - t['start']:.1f} |")
    by_file: dict[str, list[float]] = {}
    for t in tests:
        got = by_file.setdefault(t["id"].split("::", 1)[0], [0.0, 0.0, 0])
        got[0] += t["cpu"]
        got[1] += t["end"] - t["start"]
        got[2] += 1
    lines += ["", "| file | CPU-s (own) | wall s | tests |", "|---|---|---|---|"]
    for file, (cpu, wall, n) in sorted(by_file.items(), key=lambda kv: -kv[1][0])[:top]:
        lines.append(f"| {file} | {cpu:.1f} | {wall:.0f} | {n:.0f} |")
    return "\n".join(lines)


def idle(folder: Path, last: float = 60.0) -> str:
    """Per step and worker: when it started and ended, its idle seconds between tests and after
    its last one to the step's end, and the tests it ran in the step's last `last` seconds."""
    steps: dict[str, list[dict[str, Any]]] = {}
    for t in _tests(folder):
        steps.setdefault(t["step"], []).append(t)
    first = min((t["start"] for ts in steps.values() for t in ts), default=0.0)
    lines = []
    for step, tests in sorted(steps.items(), key=lambda kv: min(t["start"] for t in kv[1])):
        begin, end = min(t["start"] for t in tests), max(t["end"] for t in tests)
        lines += ["", f"step `{step}`: {begin - first:.0f}-{end - first:.0f} s "
                  f"(from its first test's start), {len(tests)} tests", "",
                  "| worker | first test | last test ended | idle between tests | idle at the end |"
                  f" longest test in the last {last:.0f} s |",
                  "|---|---|---|---|---|---|"]  # fmt: skip
        workers: dict[str, list[dict[str, Any]]] = {}
        for t in tests:
            workers.setdefault(t["worker"], []).append(t)
        for worker, ts in sorted(workers.items()):
            ts.sort(key=lambda t: t["start"])
            gaps = sum(max(0.0, b["start"] - a["end"]) for a, b in zip(ts, ts[1:], strict=False))
            tail = [t for t in ts if t["end"] > end - last]
            longest = max(tail, key=lambda t: t["end"] - min(t["start"], end - last), default=None)
            said = (f"{longest['id']} ({longest['end'] - longest['start']:.0f} s)"
                    if longest else "")  # fmt: skip
            lines.append(f"| {worker} | {ts[0]['start'] - first:.0f} s | {ts[-1]['end'] - first:.0f} s"
                         f" | {gaps:.1f} s | {end - ts[-1]['end']:.1f} s | {said} |")  # fmt: skip
    return "\n".join(lines)


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--own"]:
        print(own_cpu(Path(args[1]), int(args[2]) if len(args) > 2 else 20))
    elif args[:1] == ["--idle"]:
        print(idle(Path(args[1]), float(args[2]) if len(args) > 2 else 60.0))
    else:
        print(summary(Path(args[0]), int(args[1]) if len(args) > 1 else 25))
