"""A broken settings file gets a one-line error (doctor included), a typo a suggestion, and
`memd config` prints TOML that reads back as the same settings."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from memd.core import settings
from tests import forkserver
from tests.utils import memd_env

COMMANDS = (["status"], ["search", "x"], ["context"], ["config"], ["memories"])


def _memd(home: Path, *args: str, drop_root: bool = False) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "memd", *args]
    if drop_root and os.geteuid() == 0:
        # root reads any file: without these two capabilities it obeys file modes like a user.
        cmd = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *cmd]
    return forkserver.run(
        cmd, env=memd_env(home), capture_output=True, text=True, timeout=60, cwd=home
    )


def _one_clear_line(res: subprocess.CompletedProcess[str], *want: str) -> None:
    assert res.returncode == 1, res
    assert "Traceback" not in res.stderr, res.stderr
    first = res.stderr.strip().splitlines()[0]
    for w in want:
        assert w in first, res.stderr


@pytest.mark.skipif(
    os.geteuid() == 0 and shutil.which("setpriv") is None, reason="root without setpriv"
)
def test_an_unreadable_settings_file_is_one_line_for_every_command(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text("[index]\ndebounce_ms = 100\n")
    cfg.chmod(0)
    for args in COMMANDS:
        res = _memd(tmp_path, *args, drop_root=True)
        _one_clear_line(res, str(cfg), "permission denied")
        assert "chmod" in res.stderr
    doc = _memd(tmp_path, "doctor", drop_root=True)
    assert "Traceback" not in doc.stderr, doc.stderr
    assert doc.returncode == 1
    assert "fail  config" in doc.stdout and "permission denied" in doc.stdout
    assert "sqlite" in doc.stdout  # the other checks still ran


def test_a_folder_in_place_of_the_settings_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "config.toml").mkdir()
    for args in COMMANDS:
        _one_clear_line(_memd(tmp_path, *args), "config.toml", "is a folder")
    doc = _memd(tmp_path, "doctor")
    assert "Traceback" not in doc.stderr, doc.stderr
    assert "fail  config" in doc.stdout and "is a folder" in doc.stdout


@pytest.mark.parametrize(
    ("toml", "suggestion"),
    [
        ("[index]\ndebounce = 100\n", "index.debounce_ms"),
        ("[sever]\nsocket = '/tmp/x.sock'\n", "server.socket"),
        ("[logs]\nclaude_directory = '~/x'\n", "logs.claude_dir"),
        ("[server]\npoll_s = 3\n", "logs.poll_s"),  # the right name in the wrong section
    ],
)
def test_a_mistyped_key_gets_a_suggestion(tmp_path: Path, toml: str, suggestion: str) -> None:
    (tmp_path / "config.toml").write_text(toml)
    res = _memd(tmp_path, "status")
    _one_clear_line(res, "unknown setting")
    assert f"did you mean {suggestion!r}" in res.stderr


def test_memd_config_prints_toml_that_reads_back_as_the_same_settings(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        "[memory]\nworkspaces = ['~/code/a \"quoted\" one', '/srv/日本']\nenabled_default = false\n"
        "[index]\ndebounce_ms = 80\nmax_file_mb = 2.5\n"
        "[logs]\nclaude_code = false\nsources = [{path = '~/chatlogs', format = 'openai'},"
        " {path = '/var/log/x', format = 'jsonl'}]\n"
        "[extract]\napi_key = 'sk-ant-secret-value'\nmodel = 'claude \\\\ odd'\n"
    )
    res = _memd(tmp_path, "config")
    assert res.returncode == 0, res.stderr
    assert "True" not in res.stdout and "''" not in res.stdout
    assert "sk-ant-secret-value" not in res.stdout
    doc = tomllib.loads(res.stdout)
    assert doc["memory"]["enabled_default"] is False
    assert doc["logs"]["sources"][0] == {"path": "~/chatlogs", "format": "openai"}
    assert "api_key" not in doc["extract"]  # a secret is shown commented out, never pasted
    pasted = tmp_path / "pasted.toml"
    pasted.write_text(res.stdout)
    env = memd_env(tmp_path)
    original = settings.load(cfg, env=env)
    again = settings.load(pasted, env=env)
    assert [k for k in original.changed(again) if k != "extract.api_key"] == []
    assert again.extract_api_key == ""
