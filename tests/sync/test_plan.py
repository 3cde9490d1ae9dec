"""The pure parts of sync: pull decisions, backoff, conflict names, excludes, safe paths."""

from __future__ import annotations

import pytest

from memd.core.settings import Settings, SettingValue, load
from memd.sync.outbox import TOMBSTONE
from memd.sync.rules import (
    Action,
    backoff_delay,
    conflict_name,
    is_excluded,
    namespace_of,
    plan_pull,
    safe_rel,
    sync_config_fingerprint,
)

ME, OTHER = "dev-me", "dev-other"
A, B, C, T = "sha-a", "sha-b", "sha-c", "sha-template"


@pytest.mark.parametrize(
    ("remote_device", "remote", "local", "base", "queued", "pristine", "expected"),
    [
        # this device's own row coming back
        (ME, B, A, A, None, "", Action.OWN),
        # already identical (also two identical edits on both sides)
        (OTHER, B, B, A, None, "", Action.SAME),
        (OTHER, TOMBSTONE, TOMBSTONE, A, None, "", Action.SAME),
        # unchanged locally since the last sync: the cloud wins
        (OTHER, B, A, A, None, "", Action.TAKE),
        (OTHER, TOMBSTONE, A, A, None, "", Action.TAKE),
        # a file this device never had
        (OTHER, B, TOMBSTONE, "", None, "", Action.TAKE),
        # a never-synced file still equal to its first-start template (queued or not)
        (OTHER, B, T, "", None, T, Action.TAKE),
        (OTHER, B, T, "", T, T, Action.TAKE),
        # changed on both sides
        (OTHER, B, C, A, None, "", Action.CONFLICT),
        (OTHER, B, A, A, C, "", Action.CONFLICT),  # queued change not yet on disk? still local
        (OTHER, B, C, "", None, "", Action.CONFLICT),  # never synced, edited
        (OTHER, B, C, "", C, T, Action.CONFLICT),  # template edited before the first sync
        (OTHER, TOMBSTONE, C, A, C, "", Action.CONFLICT),  # deleted there, edited here
        (OTHER, B, TOMBSTONE, A, TOMBSTONE, "", Action.CONFLICT),  # edited there, deleted here
        (OTHER, B, TOMBSTONE, "", TOMBSTONE, "", Action.CONFLICT),
    ],
)
def test_plan_pull(
    remote_device: str, remote: str, local: str, base: str, queued: str | None, pristine: str,
    expected: Action,
) -> None:  # fmt: skip
    got = plan_pull(
        remote_device=remote_device, remote_sha=remote, device_id=ME, local_sha=local,
        base_sha=base, queued_sha=queued, pristine_sha=pristine,
    )  # fmt: skip
    assert got is expected


@pytest.mark.parametrize(
    ("attempt", "rand", "expected"),
    [(1, 0.0, 1.0), (1, 1.0, 2.0), (2, 0.5, 3.0), (3, 1.0, 8.0), (4, 0.0, 5.0), (4, 1.0, 10.0),
     (1000, 1.0, 10.0)],
)  # fmt: skip
def test_backoff_doubles_with_equal_jitter_and_is_capped(
    attempt: int, rand: float, expected: float
) -> None:
    # base 2 s: 2, 4, 8, 16 → capped at 10; the jitter keeps between half and all of it
    assert backoff_delay(attempt, cap=10, rand=rand) == pytest.approx(expected)


def test_conflict_name_sits_beside_the_file_and_names_device_and_time() -> None:
    when = 1767607810.0  # 2026-01-05 10:10:10 UTC
    assert conflict_name("topics/rust.md", "1a2b-3c4d-5e6f", when) == (
        "topics/rust.conflict-1a2b3c4d-20260105T101010Z.md"
    )
    assert conflict_name("_core/profile.md", "", when).startswith("_core/profile.conflict-unknown-")


@pytest.mark.parametrize(
    ("rel", "patterns", "expected"),
    [
        ("journal/2026-01-05.md", ["journal/*"], True),
        ("agents/bot/topics/x.md", ["agents/*/topics/*"], True),
        ("topics/secret.private.md", ["*.private.md"], True),
        ("topics/rust.md", ["journal/*", "*.private.md"], False),
        ("topics/rust.md", [], False),
    ],
)
def test_exclude_globs_match_tree_paths(rel: str, patterns: list[str], expected: bool) -> None:
    assert is_excluded(rel, patterns) is expected


@pytest.mark.parametrize(
    ("rel", "ok"),
    [
        ("topics/rust.md", True),
        ("_core/profile.md", True),
        ("../etc/passwd.md", False),
        ("/etc/x.md", False),
        ("topics/../../x.md", False),
        ("topics//x.md", False),
        ("topics/x.sh", False),
        ("README.md", False),
        ("topics\\x.md", False),
        (".hidden/x.md", False),
        ("", False),
    ],
)
def test_only_memory_paths_inside_the_tree_are_pulled(rel: str, ok: bool) -> None:
    assert safe_rel(rel) is ok


def _settings(**overrides: SettingValue) -> Settings:
    return load(
        env={"MEMD_HOME": "/nonexistent/memd"},
        overrides={k.replace("_", ".", 1): v for k, v in overrides.items()},
    )


def test_namespace_is_the_user_when_shared_else_the_device() -> None:
    assert namespace_of(_settings(sync_user_id="alice"), "dev1") == "alice"
    assert namespace_of(_settings(sync_user_id="alice", sync_namespace="device"), "dev1") == "dev1"
    assert namespace_of(_settings(), "dev1") == "dev1"


def test_fingerprint_changes_with_where_sync_writes_but_hides_the_key() -> None:
    a = _settings(sync_backend="supabase", sync_key="k1")
    assert sync_config_fingerprint(a) != sync_config_fingerprint(
        _settings(sync_backend="supabase", sync_key="k2")
    )
    assert sync_config_fingerprint(a) == sync_config_fingerprint(
        _settings(sync_backend="supabase", sync_key="k1")
    )
    assert "k1" not in sync_config_fingerprint(a)
