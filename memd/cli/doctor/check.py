"""A check's verdict (`Check`: ok, warn or fail, what was found, how to fix it) and the report
of them all: text (`render`), JSON (`as_dict`) and the exit code, scrubbed of secrets."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from memd.core.settings import Settings

Status = Literal["ok", "warn", "fail"]


@dataclass(frozen=True, slots=True)
class Check:
    """The verdict of one check."""

    name: str
    status: Status
    detail: str
    hint: str = ""
    data: dict[str, Any] = field(default_factory=dict)


def ok(
    name: str, detail: str, hint: str = "", data: Mapping[str, Any] | None = None, **more: Any
) -> Check:
    """A passing verdict; `data` and `more` are what was measured."""
    return Check(name, "ok", detail, hint, {**(data or {}), **more})


def warn(
    name: str, detail: str, hint: str = "", data: Mapping[str, Any] | None = None, **more: Any
) -> Check:
    """A verdict that works but wants fixing (`hint`)."""
    return Check(name, "warn", detail, hint, {**(data or {}), **more})


def fail(
    name: str, detail: str, hint: str = "", data: Mapping[str, Any] | None = None, **more: Any
) -> Check:
    """A failed check: `memd doctor` exits 1."""
    return Check(name, "fail", detail, hint, {**(data or {}), **more})


def configured_secrets(settings: Settings) -> list[str]:
    """Every secret value the settings hold (keys, the DSN and the password in it), longest first."""
    found = [settings.anthropic_key, settings.llm_api_key, settings.extract_api_key,
             settings.sync_key, settings.sync_dsn]  # fmt: skip
    dsn = settings.sync_dsn
    found += re.findall(r"://[^:/@\s]*:([^@\s]+)@", dsn)
    found += re.findall(r"password\s*=\s*'?([^'\s]+)", dsn)
    # Short values would garble ordinary words; no real secret is that short.
    return sorted({s for s in found if len(s) >= 4}, key=len, reverse=True)


def scrub(check: Check, secrets: Sequence[str]) -> Check:
    """`check` with every secret value replaced by ***, wherever it appears."""

    def clean(value: Any) -> Any:
        if isinstance(value, str):
            for s in secrets:
                value = value.replace(s, "***")
            return value
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    return replace(
        check, detail=clean(check.detail), hint=clean(check.hint), data=clean(check.data)
    )


def exit_code(checks: Sequence[Check]) -> int:
    """1 when any check failed, else 0 (warnings do not fail)."""
    return 1 if any(c.status == "fail" for c in checks) else 0


def as_dict(checks: Sequence[Check]) -> dict[str, Any]:
    """The result as JSON-ready data (`memd doctor --json`)."""
    return {
        "ok": exit_code(checks) == 0,
        "summary": {s: sum(c.status == s for c in checks) for s in ("ok", "warn", "fail")},
        "checks": [asdict(c) for c in checks],
    }


def render(checks: Sequence[Check]) -> str:
    """The result as text: one line per check, a fix hint under each that is not ok."""
    width = max(len(c.name) for c in checks)
    lines = []
    for c in checks:
        lines.append(f"{c.status:<4}  {c.name:<{width}}  {c.detail}")
        if c.hint and c.status != "ok":
            lines.append(f"{'':<4}  {'':<{width}}  fix: {c.hint}")
    n = as_dict(checks)["summary"]
    lines.append("")
    lines.append(f"{n['fail']} failed, {n['warn']} warning(s), {n['ok']} ok")
    return "\n".join(lines)
