"""Shared fixtures: an isolated environment, a real daemon, a store on disk."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import cpustat, forkserver, utils
from tests.pgserver import pg  # noqa: F401  (one PostgreSQL cluster for the whole session)
from tests.utils import KEPT_ENV, PRIVATE_ENV, DaemonProcess, user_dirs

_SESSION: dict[str, str] = {}


def _private() -> list[str]:
    """The variables of this process that point at a person's files (`utils.PRIVATE_ENV`)."""
    return [k for k in os.environ if k.startswith(PRIVATE_ENV) and k not in KEPT_ENV]


def pytest_configure(config: pytest.Config) -> None:
    """The whole test process runs as a throwaway user, from before the first import of a test.

    Library code a test calls resolves `~`, platformdirs and the assistants' folders from these;
    module- and session-scoped fixtures, which start before any test's own `_isolate_env`, see
    this HOME too (and their daemons get one of their own: `utils.memd_env`).
    """
    cpustat.register(config)
    if _SESSION:
        return
    _SESSION.update(os.environ)
    root = Path(tempfile.mkdtemp(prefix="memd-tests-home-", dir="/tmp"))
    _SESSION["__root__"] = str(root)
    for k in _private():
        del os.environ[k]
    os.environ.update(user_dirs(root / "home"))
    (root / "home").mkdir()
    # Recall by meaning is on by default where the extra is installed (as here); the tests
    # that exercise it turn it on themselves, the others keep the full-text path.
    os.environ["MEMD_SEMANTIC_KIND"] = "off"


def pytest_unconfigure(config: pytest.Config) -> None:
    if not _SESSION:
        return
    shutil.rmtree(_SESSION.pop("__root__"), ignore_errors=True)
    os.environ.clear()
    os.environ.update(_SESSION)
    _SESSION.clear()


@pytest.fixture(autouse=True)
def _isolate_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the developer's real config, memory or assistants' logs: each test has its
    own HOME and XDG folders, and its daemons and CLIs inherit them (`utils.memd_env`)."""
    for k in _private():
        monkeypatch.delenv(k)
    monkeypatch.setenv("MEMD_SEMANTIC_KIND", "off")
    user_home = tmp_path / "home"
    user_home.mkdir(exist_ok=True)
    for k, v in user_dirs(user_home).items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr(utils, "TEST_HOME", user_home)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked `exec_memd` (one about the memd process itself: its start, lifecycle,
    signals) execs every memd process it starts, module-scoped fixtures' included; the others
    fork them from this process's fork server (tests/forkserver.py)."""
    forkserver.EXEC_ONLY = item.get_closest_marker("exec_memd") is not None


@pytest.fixture
def home() -> Iterator[Path]:
    """A short MEMD_HOME (AF_UNIX paths must stay under ~100 bytes)."""
    with tempfile.TemporaryDirectory(prefix="memd-t-", dir="/tmp") as d:
        yield Path(d)


# Linux's folder in memory (tmpfs), where the system has one: on this VM's disk (ext4) making a
# file cost ~0.3 ms of system CPU, ten times as much as there (8,000 small files: 2.4-3.5 CPU-s
# against 0.3).
RAM_DIR = "/dev/shm" if os.access("/dev/shm", os.W_OK | os.X_OK) else "/tmp"


@pytest.fixture
def ram_home() -> Iterator[Path]:
    """A short MEMD_HOME in memory, for a test that makes a tree of thousands of files whose
    assertions are about the daemon's work on it, not about the disk under it (no test of
    durability across a crash of the machine uses it)."""
    with tempfile.TemporaryDirectory(prefix="memd-r-", dir=RAM_DIR) as d:
        yield Path(d)


@pytest.fixture
def daemon(home: Path) -> Iterator[DaemonProcess]:
    d = DaemonProcess(home).start()
    yield d
    if d.proc and d.proc.poll() is None:
        d.stop()


@pytest.fixture(scope="module")
def module_daemon() -> Iterator[DaemonProcess]:
    """One daemon for the tests of a module that each leave it as they found it (a request
    refused, a read, a write of their own that no other test looks at). Starting a daemon costs
    about half a second of CPU, and the suite's CPU is what its run waits for; a parametrized
    test of refusals on the per-test `daemon` started one per case. Its HOME is a folder of its
    own (`utils.memd_env`)."""
    with tempfile.TemporaryDirectory(prefix="memd-m-", dir="/tmp") as d:
        shared = DaemonProcess(Path(d)).start()
        yield shared
        if shared.proc and shared.proc.poll() is None:
            shared.stop()


# -- a step of one marker collects only the files that name it -----------------------------
# scripts/test's stress (`slow`) and wall-clock (`serial`) steps select a few tests of a few
# files; collecting them imports every test module (~4 s of CPU in each of their processes).
# With `--files-naming MARKER` a test file whose text has no `mark.MARKER` is not collected.
# That drops no test: every run checks that each test carrying one of these markers is in a
# file that names it (a marker added from elsewhere, a conftest say, fails the run instead).
_FILE_MARKERS = ("slow", "serial")
_texts: dict[Path, str] = {}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--files-naming",
        choices=_FILE_MARKERS,
        help="collect only the test files whose text names this marker (scripts/test's steps)",
    )


def _names(path: Path, marker: str) -> bool:
    if path not in _texts:
        _texts[path] = path.read_text(encoding="utf-8")
    return f"mark.{marker}" in _texts[path]


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    marker = config.getoption("--files-naming")
    if marker is None or collection_path.suffix != ".py" or collection_path.name == "conftest.py":
        return None
    return True if not _names(collection_path, marker) else None


def _check_marked_files(items: list[pytest.Item]) -> None:
    for item in items:
        for marker in (*_FILE_MARKERS, _SPREAD):
            if item.get_closest_marker(marker) and not _names(item.path, marker):
                raise pytest.UsageError(
                    f"{item.nodeid} is marked {marker} but its file does not name the marker:"
                    f" scripts/test would not see the marker where it looks for it"
                )


# -- a file of long tests, spread over the workers -----------------------------------------
# scripts/test's parallel step hands each worker a whole test file at a time (--dist loadfile:
# a file's module-scoped daemon starts once). A file whose tests each run for many seconds and
# share nothing (the extraction sets' floors: 16 sets, ~300 s on one worker) would end the run
# alone on one worker: the tests of a file that names `mark.spread` go to the workers one by one
# instead. The scheduler runs in pytest-xdist's controller, which collects nothing: it sees only
# the tests' ids, so it reads the file's text, as --files-naming does (and every run checks that
# no test marked `spread` is in a file that does not name it).
_SPREAD = "spread"


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling  # type: ignore[import-untyped]

    root = config.rootpath

    class FilesOrTheirTests(LoadFileScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            file = _file_of(nodeid)
            return nodeid if _names(root / file, _SPREAD) else file

    return FilesOrTheirTests(config, log)


# -- longest test files first --------------------------------------------------------------
# scripts/test hands each pytest-xdist worker one test file at a time; a long file that starts
# last ends the run alone. Each run's seconds per file go into pytest's cache, and the next run
# starts the longest files first (files not timed yet count as the median). A fresh clone (CI)
# has no cache: it starts from tests/file-seconds.json, the times of one full run committed as a
# hint (refresh: copy .pytest_cache/v/memd/file-seconds over it after a full run).
_FILE_SECONDS = "memd/file-seconds"
_SEED = Path(__file__).with_name("file-seconds.json")
_seconds: dict[str, float] = {}


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _check_marked_files(items)  # a conftest's hook runs before -m deselects: it sees every test
    cache = getattr(config, "cache", None)
    seed: dict[str, float] = json.loads(_SEED.read_text()) if _SEED.is_file() else {}
    known = {**seed, **(cache.get(_FILE_SECONDS, {}) if cache is not None else {})}
    if not known:
        return
    typical = statistics.median(known.values())
    # A stable sort: each file's tests stay together and in their order.
    items.sort(key=lambda item: -known.get(_file_of(item.nodeid), typical))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    file = _file_of(report.nodeid)
    _seconds[file] = _seconds.get(file, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    cache = getattr(session.config, "cache", None)
    # Under xdist the controller sees every worker's reports; the workers do not write.
    if cache is None or hasattr(session.config, "workerinput") or not _seconds:
        return
    cache.set(_FILE_SECONDS, {**cache.get(_FILE_SECONDS, {}), **_seconds})
