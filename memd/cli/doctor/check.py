"""A check's verdict (`Check`: ok, warn or fail, what was found, how to fix it) and the report
of them all (`Report`, printed as JSON by `memd doctor --json`): text (`render`) and the exit
code, scrubbed of secrets."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias

from memd.core.settings import Settings

Status = Literal["ok", "warn", "fail"]
# What a check measured, as `memd doctor --json` prints it: JSON values only.
JSON: TypeAlias = "str | int | float | bool | None | Sequence[JSON] | Mapping[str, JSON]"
Measured: TypeAlias = Mapping[str, JSON]


@dataclass(frozen=True, slots=True)
class Check:
    """The verdict of one check."""

    name: str
    status: Status
    detail: str
    hint: str = ""
    data: Measured = field(default_factory=dict)


def ok(name: str, detail: str, hint: str = "", data: Measured | None = None, **more: JSON) -> Check:
    """A passing verdict; `data` and `more` are what was measured."""
    return Check(name, "ok", detail, hint, {**(data or {}), **more})


def warn(
    name: str, detail: str, hint: str = "", data: Measured | None = None, **more: JSON
) -> Check:
    """A verdict that works but wants fixing (`hint`)."""
    return Check(name, "warn", detail, hint, {**(data or {}), **more})


def fail(
    name: str, detail: str, hint: str = "", data: Measured | None = None, **more: JSON
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


@dataclass(frozen=True, slots=True)
class Report:
    """Every check's verdict, and how many of each (`memd doctor --json`)."""

    ok: bool
    summary: dict[Status, int]
    checks: list[Check]


def report(checks: Sequence[Check]) -> Report:
    """The verdicts as a report: ok unless a check failed, the count of each verdict."""
    return Report(
        ok=exit_code(checks) == 0,
        summary={s: sum(c.status == s for c in checks) for s in ("ok", "warn", "fail")},
        checks=list(checks),
    )


def render(checks: Sequence[Check]) -> str:
    """The result as text: one line per check, a fix hint under each that is not ok."""
    width = max(len(c.name) for c in checks)
    lines = []
    for c in checks:
        lines.append(f"{c.status:<4}  {c.name:<{width}}  {c.detail}")
        if c.hint and c.status != "ok":
            lines.append(f"{'':<4}  {'':<{width}}  fix: {c.hint}")
    n = report(checks).summary
    lines.append("")
    lines.append(f"{n['fail']} failed, {n['warn']} warning(s), {n['ok']} ok")
    return "\n".join(lines)
