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


def _parsed(parser: object, words: list[str]) -> object:
    import argparse

    assert isinstance(parser, argparse.ArgumentParser)
    try:
        return vars(parser.parse_known_args(words)[0])
    except SystemExit as e:  # a required argument missing, a choice refused
        return ("exit", e.code)


def test_each_command_parsed_alone_is_parsed_as_among_all() -> None:
    """`main` builds the parser of the command it was given only (`build_parser(only=…)`):
    each command's help, usage and defaults are those it has among all the others."""
    from memd.cli.argv import command_parsers
    from memd.cli.parser import DELEGATED, build_parser

    every = command_parsers(build_parser())
    assert len(every) > 25
    for name, parser in every.items():
        if name in DELEGATED:
            assert command_parsers(build_parser(only=name)) == {}
            continue
        [(alone_name, alone)] = command_parsers(build_parser(only=name)).items()
        assert alone_name == name
        assert alone.format_help() == parser.format_help()
        for words in ([], ["--json"], ["x"], ["x", "y"]):  # what it sets without being told
            assert _parsed(alone, words) == _parsed(parser, words), (name, words)
    assert command_parsers(build_parser(only="serch")) == {}


def test_a_command_builds_the_parser_of_that_command_only(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Building every command's parser took ~11 ms of CPU, most of a `memd status` that finds
    no daemon (each hook and command line an assistant runs)."""
    import argparse

    built: list[str] = []
    init = argparse.ArgumentParser.__init__

    def counting(self: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        built.append(str(kwargs.get("prog") or ""))
        init(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(argparse.ArgumentParser, "__init__", counting)
    monkeypatch.setenv("MEMD_HOME", str(tmp_path))
    assert main(["--timeout", "1", "status"]) == 1  # no daemon
    assert len(built) <= 3, built  # memd's, the common options', the command's
    assert "daemon" in capsys.readouterr().err


def test_each_command_waits_for_the_daemon_as_long_as_its_help_says(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """30 s unless `--timeout`; 600 s for the commands whose work can take minutes. (Import's
    and export's 600 s were set on the option object every command shares: `memd search`
    waited ten minutes for a daemon that had stopped answering.)"""
    from memd.cli.commands import daemon, memory, transfer

    waits: list[tuple[str, float]] = []

    def record(args: object) -> int:
        waits.append((getattr(args, "command", ""), getattr(args, "timeout", 0.0)))
        return 0

    for module, name in ((daemon, "cmd_status"), (memory, "cmd_search"),
                         (transfer, "cmd_import"), (transfer, "cmd_export"),
                         (daemon, "cmd_reindex"), (daemon, "cmd_job")):  # fmt: skip
        monkeypatch.setattr(module, name, record)
    for argv in (["status"], ["search", "x"], ["import", "f"], ["export", "f"], ["reindex"],
                 ["extract", "--now"], ["--timeout", "5", "export", "f"],
                 ["status", "--timeout", "7"]):  # fmt: skip
        assert main(argv) == 0
    assert waits == [("status", 30.0), ("search", 30.0), ("import", 600.0), ("export", 600.0),
                     ("reindex", 600.0), ("extract", 600.0), ("export", 5.0), ("status", 7.0)]  # fmt: skip
    shown = " ".join(run(capsys, "status", "--help")[1].split())
    assert "socket timeout in seconds (default 30; 600 for archive, export, extract," in shown
