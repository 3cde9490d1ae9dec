"""The settings table: values from TOML, the environment and overrides are converted to each
row's type (by msgspec) with one error naming the key, and the `restart` column says which
changes only a restart applies."""

from __future__ import annotations

from pathlib import Path

import pytest

from memd.core import settings, settings_toml
from memd.core.errors import ConfigError


def _load(tmp_path: Path, toml: str = "", **env: str) -> settings.Settings:
    cfg = tmp_path / "config.toml"
    cfg.write_text(toml)
    return settings.load(cfg, env={"MEMD_HOME": str(tmp_path), **env})


@pytest.mark.parametrize(
    ("toml", "key", "typ"),
    [
        ("[index]\ndebounce_ms = 'fast'\n", "index.debounce_ms", "int"),
        ("[index]\ndebounce_ms = true\n", "index.debounce_ms", "int"),  # a bool is no number
        ("[index]\ndebounce_ms = 1.5\n", "index.debounce_ms", "int"),
        ("[logs]\npoll_s = false\n", "logs.poll_s", "float"),
        ("[journal]\nenabled = 1\n", "journal.enabled", "bool"),
        ("[log]\nlevel = 3\n", "log.level", "str"),
        ("[memory]\nworkspaces = ['a', 2]\n", "memory.workspaces", "list[str]"),
        ("[memory]\nworkspaces = 'a'\n", "memory.workspaces", "list[str]"),
        ("[logs]\nsources = ['x']\n", "logs.sources", "list[dict[str, Any]]"),
    ],
)
def test_a_value_of_the_wrong_type_names_the_key_the_type_and_the_file(
    tmp_path: Path, toml: str, key: str, typ: str
) -> None:
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, toml)
    assert str(err.value).startswith(f"{tmp_path / 'config.toml'}: setting {key!r} must be {typ}")
    assert err.value.hint is not None and err.value.hint.startswith(f"{key}: ")


def test_values_of_the_right_type_are_taken_ints_widen_to_floats(tmp_path: Path) -> None:
    s = _load(
        tmp_path,
        "[logs]\npoll_s = 3\nsources = [{path = '/x', format = 'jsonl'}]\n"
        "[memory]\nworkspaces = ['/a']\n[journal]\nenabled = false\n",
    )
    assert s.logs_poll_s == 3.0 and isinstance(s.logs_poll_s, float)
    assert s.logs_sources == [{"path": "/x", "format": "jsonl"}]
    assert s.memory_workspaces == ["/a"] and s.journal_enabled is False


@pytest.mark.parametrize(
    ("var", "raw", "attr", "want"),
    [
        ("MEMD_INDEX_DEBOUNCE_MS", " 80 ", "index_debounce_ms", 80),
        ("MEMD_LOGS_POLL_S", "0.25", "logs_poll_s", 0.25),
        ("MEMD_LOGS_CLAUDE_CODE", "off", "logs_claude_code", False),
        ("MEMD_LOGS_CLAUDE_CODE", "Yes", "logs_claude_code", True),
        ("MEMD_LOGS_CLAUDE_CODE", "0", "logs_claude_code", False),
        ("MEMD_LOG_LEVEL", "debug", "log_level", "debug"),
        ("MEMD_MEMORY_WORKSPACES", '["/a", "/b"]', "memory_workspaces", ["/a", "/b"]),
        ("MEMD_LOGS_SOURCES", '[{"path": "/l", "format": "jsonl"}]', "logs_sources",
         [{"path": "/l", "format": "jsonl"}]),
    ],
)  # fmt: skip
def test_environment_variables_are_read_from_their_text(
    tmp_path: Path, var: str, raw: str, attr: str, want: object
) -> None:
    assert getattr(_load(tmp_path, **{var: raw}), attr) == want


@pytest.mark.parametrize(
    ("var", "raw", "typ"),
    [
        ("MEMD_INDEX_DEBOUNCE_MS", "fast", "int"),
        ("MEMD_INDEX_DEBOUNCE_MS", "", "int"),
        ("MEMD_LOGS_POLL_S", "soon", "float"),
        ("MEMD_LOGS_CLAUDE_CODE", "maybe", "bool"),
        ("MEMD_MEMORY_WORKSPACES", "/a,/b", "list[str]"),
        ("MEMD_MEMORY_WORKSPACES", "[1]", "list[str]"),
        ("MEMD_LOGS_SOURCES", '["x"]', "list[dict[str, Any]]"),
    ],
)
def test_a_bad_environment_variable_is_one_error_naming_it(
    tmp_path: Path, var: str, raw: str, typ: str
) -> None:
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, **{var: raw})
    assert str(err.value) == f"environment variable {var}={raw!r} is not a valid {typ}"
    assert err.value.hint is not None and err.value.hint.endswith(
        next(s.help for s in settings.SETTINGS if s.env == var)
    )


def test_an_override_of_the_wrong_type_is_refused() -> None:
    with pytest.raises(ConfigError, match="override: setting 'server.workers' must be int"):
        settings.load(use_file=False, env={}, overrides={"server.workers": "8"})


def test_what_needs_a_restart_is_a_column_of_the_table() -> None:
    # The same keys a separate list named before the column existed.
    assert set(settings.restart_required()) == {
        "server.socket", "index.path", "memory.root", "memory.extra_roots", "server.workers",
        *(f"sync.{n}" for n in ("backend", "dsn", "url", "key", "table", "user_id", "namespace",
                               "exclude", "interval_s", "summaries", "push_delay_s",
                               "backoff_cap_s", "timeout_s")),
        *(f"semantic.{n}" for n in ("kind", "model", "url", "api_key_env", "dim", "threads",
                                   "batch", "timeout_s", "query_timeout_s", "query_wait_ms", "query_prefix",
                                   "passage_prefix")),
    }  # fmt: skip
    rows = {r.key: r for r in settings_toml.describe()}
    assert rows["server.socket"].restart is True
    assert rows["index.debounce_ms"].restart is False


def test_a_reload_keeps_the_running_values_of_restart_settings(tmp_path: Path) -> None:
    running = _load(tmp_path, "[server]\nworkers = 4\n")
    wanted = _load(tmp_path, "[server]\nworkers = 9\n[index]\ndebounce_ms = 50\n")
    applied = wanted.keeping_restart_values(running)
    assert applied.server_workers == 4  # only a restart changes the worker pool
    assert applied.index_debounce_ms == 50  # applied at once
    assert sorted(running.changed(applied)) == ["index.debounce_ms"]
