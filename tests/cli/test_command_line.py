"""The command line around the commands: options before the command, a settings file named
with --config, and typos of commands, flags and values."""

from __future__ import annotations

from pathlib import Path

import pytest

from memd.cli.parser import main


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var in ("MEMD_CONFIG", "MEMD_SOCKET"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MEMD_HOME", str(tmp_path / "home"))
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as ended:
        raise SystemExit(main(list(argv)))
    out = capsys.readouterr()
    return int(ended.value.code or 0), out.out, out.err


def test_a_missing_config_file_is_an_error_after_the_command(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run(capsys, "status", "--config", str(tmp_path / "nonexistent.toml"))
    assert code == 1 and out == ""
    assert "nonexistent.toml: no such settings file" in err
    assert "hint:" in err


def test_global_options_work_before_the_command(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(capsys, "--config", str(tmp_path / "nope.toml"), "status")
    assert code == 1 and "nope.toml: no such settings file" in err
    assert "invalid choice" not in err
    cfg = tmp_path / "cfg.toml"
    cfg.write_text("[context]\nbudget_tokens = 1234\n")
    code, out, err = run(capsys, f"--config={cfg}", "--json", "config")
    assert code == 0, err
    assert '"value": 1234' in out  # the file was read, and --json applied


def test_a_named_config_file_is_read(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.toml"
    cfg.write_text("[context]\nbudget_tokens = 1234\n")
    code, out, _ = run(capsys, "config", "--config", str(cfg))
    assert code == 0 and "budget_tokens = 1234" in out


def test_a_mistyped_command_gets_the_nearest_one_not_the_list(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "serch", "vitest")
    assert code == 2 and out == ""
    assert "did you mean `memd search`?" in err
    assert "remember" not in err  # not every command listed
    code, _, err = run(capsys, "zzzzqqq")
    assert code == 2 and "unknown command 'zzzzqqq'" in err and "memd --help" in err


def test_a_mistyped_flag_is_named_with_the_nearest_and_the_commands_usage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run(capsys, "search", "vitest", "--limt", "5")
    assert code == 2
    assert "unknown option --limt; did you mean --limit?" in err
    assert "usage: memd search" in err
    code, _, err = run(capsys, "history", "--sinse=2026-01-01")
    assert code == 2 and "did you mean --since?" in err and "usage: memd history" in err


def test_an_out_of_range_value_names_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "context", "x", "--budget", "-5")
    assert code == 2
    assert "--budget" in err and "budget_tokens" not in err
    assert "from 0 to 200,000, not -5" in err
    code, _, err = run(capsys, "search", "x", "--limit", "0")
    assert code == 2 and "argument --limit: must be from 1 to 1,000, not 0" in err


def test_a_param_error_from_the_socket_names_the_flag() -> None:
    from memd.cli.argv import command_parsers, flag_names
    from memd.cli.parser import build_parser

    context = command_parsers(build_parser())["context"]
    said = "param 'budget_tokens': expected int >= 0"
    assert flag_names(said, context) == "--budget: expected int >= 0"
    assert flag_names("param 'session_id': too long", context) == "--session: too long"
    assert flag_names("param 'other': x", context) == "param 'other': x"
