"""PURE rules of cloud sync: what a pulled row does, backoff, names, paths, namespaces.

No I/O here: `memd.sync.job` applies these decisions; the tests drive them with tables.
"""

from __future__ import annotations

import datetime as dt
import enum
import fnmatch
import hashlib
from collections.abc import Sequence
from pathlib import PurePosixPath

from memd.core.errors import SyncError
from memd.core.redact import redact
from memd.core.settings import Settings
from memd.memory.tree import TEMPLATES, is_memory_file
from memd.sync.outbox import TOMBSTONE, SessionSummary

BACKOFF_BASE_S = 2.0
_PRISTINE = {rel: hashlib.sha256(text.encode()).hexdigest() for rel, text in TEMPLATES.items()}


class Action(enum.StrEnum):
    """What a pulled row does to the local file."""

    OWN = "own"  # this device wrote it
    SAME = "same"  # already identical
    TAKE = "take"  # local unchanged since the last sync: the cloud version replaces it
    CONFLICT = "conflict"  # changed on both sides: keep local, copy the cloud version beside


def sha_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def plan_pull(
    *,
    remote_device: str,
    remote_sha: str,
    device_id: str,
    local_sha: str,
    base_sha: str,
    queued_sha: str | None,
    pristine_sha: str = "",
) -> Action:
    """PURE: decide what to do with another device's row.

    `remote_sha`, `local_sha`, `base_sha` and `queued_sha` hash the file *bytes* (TOMBSTONE
    for a deleted or missing file); `base_sha` is "" when the file was never synced and
    `queued_sha` is None when nothing is queued for it. `pristine_sha` is the hash of the
    first-start template of this path, if it has one.
    """
    if remote_device == device_id:
        return Action.OWN
    if local_sha == remote_sha:
        return Action.SAME
    if queued_sha is None and local_sha == base_sha:
        return Action.TAKE
    if base_sha == "":
        missing = local_sha == TOMBSTONE and queued_sha is None
        template = (
            bool(pristine_sha) and local_sha == pristine_sha and queued_sha in (None, local_sha)
        )
        if missing or template:
            return Action.TAKE
    return Action.CONFLICT


def backoff_delay(attempt: int, cap: float, rand: float, base: float = BACKOFF_BASE_S) -> float:
    """PURE: seconds to wait after the `attempt`-th consecutive failure (1, 2, ...).

    Exponential from `base`, capped at `cap`, with "equal jitter": the wait is between half
    and all of the exponential value, so devices that failed together do not retry together.
    """
    exp = min(float(cap), base * 2.0 ** max(0, min(attempt - 1, 40)))
    return exp / 2 + exp / 2 * rand


def conflict_name(rel: str, device_id: str, when: float) -> str:
    """PURE: ``topics/rust.md`` → ``topics/rust.conflict-<device8>-<UTC time>.md``."""
    p = PurePosixPath(rel)
    stamp = dt.datetime.fromtimestamp(when, dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    device = "".join(ch for ch in device_id if ch.isalnum())[:8] or "unknown"
    return str(p.with_name(f"{p.stem}.conflict-{device}-{stamp}{p.suffix}"))


def is_excluded(rel: str, patterns: Sequence[str]) -> bool:
    """Whether a tree-relative path matches a `sync.exclude` glob (`*` crosses folders)."""
    return any(fnmatch.fnmatchcase(rel, pat) for pat in patterns)


def safe_rel(rel: str) -> bool:
    """Whether a path from the cloud may be written below the memory root."""
    if not rel or "\\" in rel or "\0" in rel or rel.startswith("/"):
        return False
    parts = rel.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return False
    return is_memory_file(rel)


def namespace_of(settings: Settings, device_id: str) -> str:
    """The cloud namespace: the user id when shared per user, else this device's id."""
    if settings.sync_namespace == "user" and settings.sync_user_id:
        return settings.sync_user_id
    return device_id


def sync_config_fingerprint(settings: Settings) -> str:
    """A hash of the settings that decide where sync writes (parked ops retry when it changes)."""
    parts = (settings.sync_backend, settings.sync_dsn, settings.sync_url, settings.sync_key,
             settings.sync_table)  # fmt: skip
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def describe_error(exc: SyncError) -> str:
    return f"{exc} (hint: {exc.hint})" if exc.hint else str(exc)


def render_summary(s: SessionSummary) -> str:
    """A session summary as the Markdown document that is synced."""
    title = s.title or s.session_id
    started = dt.datetime.fromtimestamp(s.started_at, dt.UTC).isoformat(timespec="seconds")
    lines = [
        "---",
        f"session_id: {s.session_id}",
        f"source: {s.source}",
        f"started_at: {started}",
        f"summary_kind: {s.summary_kind or 'extractive'}",
    ]
    lines += [f"{k}: {v}" for k, v in (("agent_id", s.agent_id), ("project", s.project)) if v]
    lines += ["---", f"# {title}", "", s.summary.strip(), ""]
    return redact("\n".join(lines))


def pristine_sha(rel: str) -> str:
    """Hash of the first-start template memd writes at `rel`, or "" when it writes none."""
    return _PRISTINE.get(rel, "")
