"""The settings file: readable, valid, and not open to other users when it holds a secret."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from memd.cli.doctor.check import Check, configured_secrets, fail, ok, warn
from memd.core import settings as settings_mod
from memd.core.errors import ConfigError
from memd.core.settings import Settings, SettingValue


def load_settings(
    config_file: Path | None, overrides: Mapping[str, SettingValue] | None = None
) -> tuple[Settings | None, Check]:
    """The settings and the verdict on the settings file.

    A file that cannot be read or holds a bad key fails this check, and the other checks run on
    the settings without it (defaults and the environment), so one bad line does not hide the
    rest. None when even those cannot be had (a bad MEMD_* variable).
    """
    file = settings_mod.config_path(config_file)
    try:
        s = settings_mod.load(config_file, overrides=overrides)
    except ConfigError as exc:
        failed = fail("config", str(exc), exc.hint or "fix the file; `memd config` prints a valid one",
                       file=str(file))  # fmt: skip
        try:
            return settings_mod.load(config_file, overrides=overrides, use_file=False), failed
        except ConfigError:
            return None, failed
    if not s.source:
        return s, ok(
            "config", f"no settings file at {file}: defaults and environment", file=str(file)
        )
    if _secret_readable_by_others(Path(s.source), s):
        return s, warn("config", f"{file} holds a secret (an API key, a password) and other users"
                        " can read it", f"chmod 600 {file}", file=str(file))  # fmt: skip
    return s, ok("config", f"{file} read", file=str(file))


def _secret_readable_by_others(path: Path, s: Settings) -> bool:
    try:
        if not path.stat().st_mode & 0o077:
            return False
        text = path.read_text(encoding="utf-8")
    except OSError:
        return False
    return any(secret in text for secret in configured_secrets(s))
