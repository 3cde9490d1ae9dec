"""The Anthropic key: the one the running daemon uses, else the one this shell would give it.
The key itself is never shown."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memd.cli.doctor.check import Check, fail, ok, warn
from memd.core.settings import Settings


def check_anthropic(settings: Settings, daemon_llm: Mapping[str, Any] | None = None) -> Check:
    """The Anthropic key the running daemon uses (its `status`), else what this shell would give
    a daemon started from it. The key itself is never shown."""
    shell = "extract.api_key" if settings.extract_api_key else "ANTHROPIC_API_KEY"
    shell_key = settings.anthropic_key
    if daemon_llm is None:
        if not shell_key:
            return ok("anthropic", "API key not set — extraction runs offline (rule-based)",
                       "set ANTHROPIC_API_KEY or extract.api_key for LLM extraction and summaries",
                       key="not set")  # fmt: skip
        if not shell_key.startswith("sk-ant-"):
            return warn("anthropic", f"API key set ({shell}), but it does not look like an Anthropic key (sk-ant-…)",
                         "check the value; a wrong key makes every extraction run fail with 401", key="set")  # fmt: skip
        return ok("anthropic", f"API key set ({shell}), model {settings.extract_model}; no daemon"
                   " is running to ask which key it uses", key="set")  # fmt: skip
    return assess_daemon_llm(daemon_llm, shell if shell_key else "", settings)


def assess_daemon_llm(llm: Mapping[str, Any], shell_source: str, settings: Settings) -> Check:
    """The running daemon's LLM against the key this shell sees (`shell_source`, "" for none)."""
    data = {"daemon_mode": llm.get("mode"), "daemon_key_source": llm.get("key_source") or None,
            "shell_key_source": shell_source or None}  # fmt: skip
    if llm.get("mode") == "anthropic":
        detail = f"the daemon uses Anthropic {llm.get('model')} (key from {llm.get('key_source') or '?'})"
        if llm.get("config_error"):
            return fail("anthropic", f"{detail}, and the API refused it: {llm['config_error']}",
                         "fix the key (see below), then restart memd", data=data, key="set")  # fmt: skip
        return ok("anthropic", detail, data=data, key="set")
    if shell_source:
        return warn(
            "anthropic",
            f"{shell_source} is set in this shell, but the running daemon sees no key and"
            " extracts with the offline rules",
            "a daemon started by the service manager does not get this shell's variables: run"
            " `memd service install --env ANTHROPIC_API_KEY` (a file only you can read), or set"
            f" extract.api_key in {settings.paths.config_file} (chmod 600); then restart memd",
            data=data,
            key="set in this shell only",
        )
    return ok("anthropic", "no API key: the daemon extracts with the offline rules",
               "set ANTHROPIC_API_KEY or extract.api_key for LLM extraction and summaries",
               data=data, key="not set")  # fmt: skip
