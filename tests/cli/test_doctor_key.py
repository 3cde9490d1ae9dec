"""`memd doctor` reports the LLM backend and key the running daemon uses, not its shell's."""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_doctor import ANTHROPIC_SECRET, run_doctor
from tests.utils import DaemonProcess


def test_a_key_only_in_the_shell_is_not_reported_as_the_daemons(home: Path) -> None:
    d = DaemonProcess(home).start()  # started without a key, like a service
    try:
        code, checks, raw = run_doctor(home, ANTHROPIC_API_KEY=ANTHROPIC_SECRET)
        key = checks["llm"]
        assert key["status"] == "warn", raw
        assert (
            "ANTHROPIC_API_KEY is set in this shell, but the running daemon sees no key"
            in key["detail"]
        )
        assert "memd service install --env ANTHROPIC_API_KEY" in key["hint"]
        assert key["data"]["backend"] == "off" and key["data"]["shell_backend"] == "anthropic"
        assert ANTHROPIC_SECRET not in raw
    finally:
        d.stop()


def test_the_daemons_own_key_is_reported_from_a_shell_without_one(home: Path) -> None:
    (home / "config.toml").write_text(f"[extract]\napi_key = '{ANTHROPIC_SECRET}'\n")
    (home / "config.toml").chmod(0o644)
    d = DaemonProcess(home).start()
    try:
        (home / "config.toml").write_text("")  # this shell's settings no longer hold a key
        code, checks, raw = run_doctor(home)
        key = checks["llm"]
        assert key["status"] == "ok", raw
        assert key["detail"].startswith(
            "the daemon uses anthropic claude-haiku-4-5 (auto: an Anthropic key is set"
            " (extract.api_key)), key from extract.api_key; today 0 LLM requests, 0 of 200,000 tokens"
        ), key["detail"]
        assert ANTHROPIC_SECRET not in raw
    finally:
        d.stop()


def test_a_settings_file_with_a_key_that_others_can_read_is_a_warning(home: Path) -> None:
    cfg = home / "config.toml"
    cfg.write_text(f"[extract]\napi_key = '{ANTHROPIC_SECRET}'\n")
    cfg.chmod(0o644)
    code, checks, raw = run_doctor(home)
    assert checks["config"]["status"] == "warn" and checks["config"]["hint"] == f"chmod 600 {cfg}"
    cfg.chmod(0o600)
    code, checks, raw = run_doctor(home)
    assert checks["config"]["status"] == "ok"
    assert ANTHROPIC_SECRET not in raw
