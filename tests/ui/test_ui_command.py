"""The `memd ui` command itself."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from tests import forkserver
from tests.ui.uihelp import UiProcess
from tests.utils import ROOT, memd_env


def run(home: Path, *args: str, code: str = "") -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-c", code, *args] if code else [sys.executable, "-m", "memd", *args]
    return forkserver.run(argv, env=memd_env(home), capture_output=True, text=True, timeout=60)


def test_ui_is_a_memd_command(home: Path) -> None:
    assert "ui" in run(home, "--help").stdout
    out = run(home, "ui", "--help")
    assert out.returncode == 0
    assert "--no-browser" in out.stdout and "--port" in out.stdout and "127.0.0.1" in out.stdout


def test_a_taken_port_is_a_clear_error(home: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        out = run(home, "ui", "--no-browser", "--port", str(port))
    assert out.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in out.stderr and "hint:" in out.stderr
    assert out.stdout == ""  # no URL, so no token, was printed


def test_without_jinja2_it_says_what_to_install(home: Path) -> None:
    code = "import sys; sys.modules['jinja2'] = None; from memd.cli import main; sys.exit(main(sys.argv[1:]))"
    out = run(home, "ui", "--no-browser", code=code)
    assert out.returncode == 1 and "`pip install .` in the clone" in out.stderr
    assert "pipx install --force ." in out.stderr
    # The README's Install section gives the same commands.
    readme = (ROOT / "README.md").read_text()
    assert "`pip install .` in the clone" in readme and "`pipx install --force .`" in readme


def test_the_page_comes_with_the_base_install() -> None:
    """`pip install .` (the quick start) is enough for `memd ui`: what the page imports is
    named in the base dependencies, not only in an extra."""
    import re
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = {re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0].lower() for d in project["dependencies"]}
    assert {"jinja2", "starlette", "uvicorn"} <= base
    # An install command written for an older memd still works (the extra adds nothing).
    assert project["optional-dependencies"]["ui"] == []


def test_with_no_daemon_and_no_index_the_page_says_so(home: Path) -> None:
    ui = UiProcess(home).start()
    try:
        cookie = ui.sign_in()
        status, _, body = ui.request("GET", "/memory", headers={"Cookie": cookie})
        assert status == 200
        assert "No daemon and no index to read" in body and "no index at" in body
        status, _, body = ui.request("GET", "/context?q=x", headers={"Cookie": cookie})
        assert status == 200 and "No daemon and no index" in body
    finally:
        assert ui.stop() == 0


def test_stopping_removes_an_unused_launch_file(home: Path, tmp_path: Path) -> None:
    from tests.utils import wait_for

    record = tmp_path / "argv"
    fake = tmp_path / "fake-browser"
    fake.write_text(
        f"#!{sys.executable}\nimport sys\nopen({str(record)!r}, 'w').write(sys.argv[1])\n"
    )
    fake.chmod(0o700)
    ui = UiProcess(home, open_browser=True, BROWSER=str(fake)).start()
    launch = Path(
        wait_for(lambda: record.exists() and record.read_text(), 10).removeprefix("file://")
    )
    assert launch.exists()
    assert ui.stop() == 0  # SIGTERM: a clean stop
    assert not launch.exists()
