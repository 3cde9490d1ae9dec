"""Recall by meaning: on, how far the vectors got, or why it is off."""

from __future__ import annotations

from msgspec import UNSET

from memd.api.messages import SemanticStatus
from memd.cli.doctor.check import Check, ok, warn
from memd.core.settings import Settings


def assess_semantic(sem: SemanticStatus | None, settings: Settings) -> Check:
    """Recall by meaning: on (the model, how far the backfill got) or why it is off, as the
    daemon sees it; without a daemon, as the settings and the installed packages make it."""
    explicit = settings.semantic_kind in ("packaged", "http")
    if sem is None:
        from memd.semantic.api import build

        a = build(settings, query=True)
        if a.on:
            return ok("semantic", f"{a.reason} (the daemon embeds in the background)", on=True)
        hint = "" if settings.semantic_kind == "off" else "see docs/retrieval.md"
        make = warn if explicit else ok
        return make("semantic", f"recall by meaning off: {a.reason}", hint, on=False)
    if not sem.on:
        make = warn if explicit and sem.reason != "starting" else ok
        return make("semantic", f"recall by meaning off: {sem.reason}", on=False)
    detail = sem.reason
    b = sem.backfill
    if b:
        detail += f"; vectors {b.done:,}/{b.total:,} ({b.state})"
    problem = (b.last_error if b else UNSET) or sem.query_error
    if problem:
        return warn("semantic", f"{detail}; last error: {problem}",
                     "check semantic.url / semantic.model, or the endpoint's log", on=True)  # fmt: skip
    return ok("semantic", detail, on=True)
