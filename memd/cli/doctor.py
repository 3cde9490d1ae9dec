"""`memd doctor`: check everything memd depends on and say how to fix what is wrong.

Each check returns a `Check` (ok / warn / fail, what was found, how to fix it). `run_checks`
runs them all against a `Settings`; `render` and `as_dict` present them; `exit_code` is 1 when
any check failed. The assessments are pure functions of what was measured (`assess_inotify`,
`assess_daemon`, `assess_service`, …) so each verdict can be tested on its own, and the
measuring shell around them never raises: a check that cannot run says so in its result.

Secrets are never printed: the Anthropic key is reported as "set" or "not set", cloud
backends scrub their own messages, and every text leaving this module is scrubbed again of
every configured secret.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from memd import __version__
from memd.cli.service import Runner, service_status
from memd.core import settings as settings_mod
from memd.core.errors import ConfigError, DaemonNotRunning, MemdError, SyncRetryable
from memd.core.settings import Settings
from memd.db import DatabaseError
from memd.db.connection import connect, quick_check, sqlite_features
from memd.memory import repo as docs
from memd.memory.indexer import Root, plan_reconcile, scan_root
from memd.memory.ops import resolve_project
from memd.sync.backend import make_backend

Status = Literal["ok", "warn", "fail"]
MIN_PYTHON = (3, 11)
# ON CONFLICT … DO UPDATE (upsert) arrived in SQLite 3.24.
MIN_SQLITE = (3, 24, 0)
RSS_WARN_MB = 150.0
LAG_WARN_S = 60.0
INOTIFY_DIR = Path("/proc/sys/fs/inotify")


@dataclass(frozen=True, slots=True)
class Check:
    """The verdict of one check."""

    name: str
    status: Status
    detail: str
    hint: str = ""
    data: dict[str, Any] = field(default_factory=dict)


def _ok(
    name: str, detail: str, hint: str = "", data: Mapping[str, Any] | None = None, **more: Any
) -> Check:
    return Check(name, "ok", detail, hint, {**(data or {}), **more})


def _warn(
    name: str, detail: str, hint: str = "", data: Mapping[str, Any] | None = None, **more: Any
) -> Check:
    return Check(name, "warn", detail, hint, {**(data or {}), **more})


def _fail(
    name: str, detail: str, hint: str = "", data: Mapping[str, Any] | None = None, **more: Any
) -> Check:
    return Check(name, "fail", detail, hint, {**(data or {}), **more})


# -- the settings file ------------------------------------------------------------------------
def load_settings(
    config_file: Path | None, overrides: Mapping[str, Any] | None = None
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
        failed = _fail("config", str(exc), exc.hint or "fix the file; `memd config` prints a valid one",
                       file=str(file))  # fmt: skip
        try:
            return settings_mod.load(config_file, overrides=overrides, use_file=False), failed
        except ConfigError:
            return None, failed
    if not s.source:
        return s, _ok(
            "config", f"no settings file at {file}: defaults and environment", file=str(file)
        )
    if _secret_readable_by_others(Path(s.source), s):
        return s, _warn("config", f"{file} holds a secret (an API key, a password) and other users"
                        " can read it", f"chmod 600 {file}", file=str(file))  # fmt: skip
    return s, _ok("config", f"{file} read", file=str(file))


def _secret_readable_by_others(path: Path, s: Settings) -> bool:
    try:
        if not path.stat().st_mode & 0o077:
            return False
        text = path.read_text(encoding="utf-8")
    except OSError:
        return False
    return any(secret in text for secret in _secrets(s))


# -- Python and SQLite -------------------------------------------------------------------------
def check_python(version: Sequence[int] = sys.version_info[:3]) -> Check:
    """Python new enough for memd."""
    text = ".".join(str(v) for v in version[:3])
    if tuple(version[:2]) < MIN_PYTHON:
        return _fail(
            "python",
            f"Python {text} at {sys.executable}; memd needs {'.'.join(map(str, MIN_PYTHON))}+",
            "install memd into a newer Python (pipx install memd, or a 3.11+ venv)",
        )
    return _ok("python", f"Python {text} at {sys.executable}", version=text)


def assess_sqlite(f: Mapping[str, Any]) -> Check:
    """SQLite recent enough, with FTS5 and the porter tokenizer (trigram is reported only)."""
    version = str(f["version"])
    parts = tuple(int(p) for p in version.split(".")[:3])
    trigram = "yes" if not f["trigram_error"] else "no"
    data = {"version": version, "fts5": not f["fts5_error"], "trigram": not f["trigram_error"]}
    fix = "use a Python built with a current SQLite (python.org, Homebrew, uv python install)"
    if f["fts5_error"]:
        how = "compiled without ENABLE_FTS5" if not f["compile_fts5"] else f["fts5_error"]
        return _fail("sqlite", f"SQLite {version} has no usable FTS5 ({how})", fix, data=data)
    if parts < MIN_SQLITE:
        need = ".".join(map(str, MIN_SQLITE))
        return _fail("sqlite", f"SQLite {version} is older than {need}", fix, data=data)
    # memd indexes Chinese/Japanese as character bigrams, so the trigram tokenizer is optional.
    return _ok("sqlite", f"SQLite {version}, FTS5 yes, trigram tokenizer {trigram}", data=data)


# -- folders and permissions -------------------------------------------------------------------
def _folder_problem(path: Path) -> str:
    if not path.exists():
        return ""
    if not path.is_dir():
        return f"{path} is not a folder"
    if not os.access(path, os.W_OK | os.X_OK):
        return f"{path} is not writable by you"
    return ""


def check_folders(settings: Settings) -> Check:
    """The memory tree and the data folder exist (or can be created) and are writable."""
    places = {"memory": settings.memory_dir, "data": settings.db_path.parent}
    problems = [p for p in (_folder_problem(path) for path in places.values()) if p]
    missing = [f"{k} {v}" for k, v in places.items() if not v.exists()]
    data = {k: str(v) for k, v in places.items()}
    if problems:
        return _fail(
            "folders",
            "; ".join(problems),
            "fix the owner/mode (chown, chmod u+rwx) or move memory.root",
            data,
        )
    if missing:
        return _warn(
            "folders",
            f"not created yet: {', '.join(missing)}",
            "`memd serve` creates them with templates on first start",
            data=data,
        )
    wide = _readable_by_others(settings)
    if wide:
        return _warn(
            "folders",
            "other users can read " + ", ".join(f"{p} ({m})" for p, m in wide),
            f"chmod go-rwx {' '.join(str(p) for p, _ in wide)} (memd does this for its own"
            " folders and index when it starts)",
            data=data,
        )
    return _ok("folders", f"memory {places['memory']}, index {settings.db_path}", data=data)


def _readable_by_others(settings: Settings) -> list[tuple[Path, str]]:
    """memd's folders and index files whose mode lets other users in."""
    db = settings.db_path
    out = []
    for p in (settings.memory_dir, settings.paths.data_dir, db, Path(f"{db}-wal")):
        st = _stat(p)
        if st is not None and st.st_mode & 0o077:
            out.append((p, oct(stat.S_IMODE(st.st_mode))))
    return out


def assess_permissions(
    folder: Path,
    folder_st: os.stat_result | None,
    sock: Path,
    sock_st: os.stat_result | None,
    uid: int,
) -> Check:
    """The socket's folder is 0700 and the socket 0600, both owned by `uid`."""
    data = {"runtime_dir": str(folder), "socket": str(sock)}
    if folder_st is None:
        return _ok(
            "permissions", f"{folder} does not exist yet (the daemon creates it 0700)", data=data
        )
    data["runtime_dir_mode"] = oct(stat.S_IMODE(folder_st.st_mode))
    if folder_st.st_uid != uid:
        return _fail(
            "permissions",
            f"{folder} belongs to uid {folder_st.st_uid}, not to you (uid {uid})",
            "set MEMD_SOCKET (or server.socket) to a path in a folder you own",
            data=data,
        )
    wide: list[str] = []
    if folder_st.st_mode & 0o077:
        wide.append(f"{folder} is {data['runtime_dir_mode']} (should be 0o700)")
    if sock_st is not None:
        data["socket_mode"] = oct(stat.S_IMODE(sock_st.st_mode))
        if sock_st.st_uid != uid:
            return _fail(
                "permissions",
                f"{sock} belongs to uid {sock_st.st_uid}, not to you",
                "stop whatever owns it, remove it, and start memd again",
                data=data,
            )
        if not stat.S_ISSOCK(sock_st.st_mode):
            return _fail(
                "permissions", f"{sock} exists but is not a socket", f"remove it: rm {sock}", data
            )
        if sock_st.st_mode & 0o077:
            wide.append(f"{sock} is {data['socket_mode']} (should be 0o600)")
    if wide:
        # Not fatal: the daemon still refuses other users by peer uid; this is the second wall.
        return _warn(
            "permissions",
            "; ".join(wide),
            f"chmod 700 {folder}" + (f" && chmod 600 {sock}" if sock_st is not None else ""),
            data=data,
        )
    shown = "0o600" if sock_st is not None else "not created yet"
    return _ok("permissions", f"{folder} 0o700, socket {shown}", data=data)


def _stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except OSError:
        return None


def check_permissions(settings: Settings) -> Check:
    sock = settings.socket_path
    return assess_permissions(sock.parent, _stat(sock.parent), sock, _stat(sock), os.getuid())


# -- inotify -----------------------------------------------------------------------------------
def count_dirs(roots: Iterable[Path], limit: int = 1_000_000) -> int:
    """Folders below (and including) each root: a recursive inotify watch needs one each."""
    n = 0
    for root in roots:
        if not root.is_dir():
            continue
        for _dirpath, dirnames, _files in os.walk(root):
            n += 1
            dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(_dirpath, d))]
            if n >= limit:
                return n
    return n


def assess_inotify(max_watches: int | None, max_instances: int | None, dirs: int) -> Check:
    """Whether the per-user inotify limits leave room for memd's recursive watches."""
    data = {"max_user_watches": max_watches, "max_user_instances": max_instances, "folders": dirs}
    if max_watches is None:
        return _ok("inotify", "no inotify limits to check on this system", data=data)
    hint = (
        "raise the limit: echo fs.inotify.max_user_watches=524288 | sudo tee "
        "/etc/sysctl.d/90-memd.conf && sudo sysctl --system"
    )
    plural = "s" if dirs != 1 else ""
    detail = f"{dirs:,} folder{plural} to watch, max_user_watches {max_watches:,}"
    if dirs >= max_watches:
        return _fail("inotify", detail + ": memd falls back to polling", hint, data=data)
    # Editors, IDEs and sync clients share the same per-user budget.
    if dirs * 2 > max_watches:
        return _warn("inotify", detail + ": little room left for other programs", hint, data=data)
    if max_instances is not None and max_instances < 8:
        return _warn(
            "inotify",
            f"max_user_instances is {max_instances}",
            "raise fs.inotify.max_user_instances (memd uses 2, many programs use some)",
            data=data,
        )
    return _ok("inotify", detail, data=data)


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def watched_roots(settings: Settings) -> list[Path]:
    """Every folder the daemon watches: memory tree, project tiers, assistant log folders."""
    roots = [settings.memory_dir]
    for ws in settings.memory_workspaces:
        project = resolve_project(str(Path(ws).expanduser()))
        if project.memory_dir is not None:
            roots.append(project.memory_dir)
    if settings.logs_claude_code:
        roots.append(settings.claude_dir)
    roots += [
        Path(str(src.get("path", ""))).expanduser()
        for src in settings.logs_sources
        if src.get("path")
    ]
    return roots


def check_inotify(settings: Settings) -> Check:
    if not sys.platform.startswith("linux"):
        return _ok("inotify", f"not Linux ({sys.platform}): no inotify limits apply")
    dirs = count_dirs(watched_roots(settings))
    return assess_inotify(
        _read_int(INOTIFY_DIR / "max_user_watches"),
        _read_int(INOTIFY_DIR / "max_user_instances"),
        dirs,
    )


# -- the daemon --------------------------------------------------------------------------------
def fetch_status(socket_path: Path, timeout: float) -> tuple[dict[str, Any] | None, str]:
    """The daemon's `status` answer, or None and why it could not be had."""
    from memd.api import client

    try:
        st = client.call(socket_path, "status", {}, timeout=timeout)
    except DaemonNotRunning as exc:
        return None, str(exc)
    except MemdError as exc:
        return None, f"the daemon answered with an error: {exc}"
    except (OSError, ValueError) as exc:
        return None, f"{type(exc).__name__}: {exc}"
    return (st if isinstance(st, dict) else None), ""


def assess_daemon(
    status: Mapping[str, Any] | None, why: str, socket_path: Path, version: str = __version__
) -> list[Check]:
    """Reachability and health (RSS, version, watcher mode) from the daemon's status answer."""
    if status is None:
        stale = socket_path.exists() and "no memd daemon is listening" in why
        detail = f"no daemon answers on {socket_path}" + (
            " (a stale socket file is left)" if stale else ""
        )
        return [
            _fail(
                "daemon",
                f"{detail}: {why}" if why and "no memd daemon" not in why else detail,
                "start it: `memd service install` (at login) or `memd serve`; queries still work "
                "read-only without it, but nothing is watched, recorded or extracted",
            )
        ]
    d = status.get("daemon", {})
    rss = float(d.get("rss_mb", 0.0) or 0.0)
    data = {k: d.get(k) for k in ("pid", "uptime_s", "rss_mb", "cpu_s", "threads")}
    detail = (
        f"pid {d.get('pid')}, up {float(d.get('uptime_s', 0) or 0):.0f} s, RSS {rss:.1f} MB, "
        f"CPU {d.get('cpu_s', 0)} s, {d.get('threads', '?')} threads"
    )
    out: list[Check] = []
    if status.get("version") and status["version"] != version:
        out.append(_warn(
            "daemon",
            f"{detail}; it runs memd {status['version']}, this command is {version}",
            "restart the daemon to run the installed version (systemctl --user restart memd)",
            data=data,
        ))  # fmt: skip
    elif rss > RSS_WARN_MB:
        out.append(_warn(
            "daemon",
            f"{detail}: more memory than expected (< {RSS_WARN_MB:.0f} MB)",
            "restart it; if it grows again, report it with `memd status --json`",
            data=data,
        ))  # fmt: skip
    else:
        out.append(_ok("daemon", detail, data=data))
    mode = str(status.get("watcher", {}).get("mode", ""))
    if mode.startswith("polling"):
        out.append(_warn(
            "watcher",
            mode,
            "raise fs.inotify.max_user_watches / max_user_instances and restart memd; polling "
            "notices edits later and costs CPU",
            mode=mode,
        ))  # fmt: skip
    elif mode == "native":
        out.append(_ok("watcher", "native file events (inotify / FSEvents)", mode=mode))
    else:
        out.append(
            _warn("watcher", f"watcher {mode or 'unknown'}", "restart the daemon", mode=mode)
        )
    return out


# -- the service -------------------------------------------------------------------------------
def assess_service(report: Mapping[str, Any], daemon_pid: int | None) -> Check:
    """Installed and active as a user service (systemd or launchd)?"""
    manager = report.get("manager") or "service manager"
    active: dict[str, str] = dict(report.get("active") or {})
    data = {
        "manager": report.get("manager"),
        "installed": report.get("installed"),
        "active": active,
    }
    by_hand = f"; the daemon runs without it (pid {daemon_pid})" if daemon_pid else ""
    if report.get("manager") is None:
        return _warn("service", f"{report.get('detail') or 'no supported service manager'}{by_hand}",
                     "run `memd serve` from your own supervisor", data=data)  # fmt: skip
    if not report.get("installed"):
        return _warn(
            "service",
            f"not installed as a {manager} user service{by_hand}",
            "`memd service install` starts memd at login and restarts it after a crash",
            data=data,
        )
    if not report.get("manager_available"):
        detail = report.get("detail") or f"{manager} cannot be asked"
        return _warn(
            "service",
            f"installed, but {manager} is not reachable: {detail}{by_hand}",
            "run this from a login session; for systemd without one: loginctl enable-linger $USER",
            data=data,
        )
    states = ", ".join(f"{unit} {state}" for unit, state in active.items())
    if any(state == "failed" for state in active.values()):
        return _fail(
            "service",
            f"installed: {states}",
            "see why: journalctl --user -u memd.service -n 50; then systemctl --user restart memd",
            data=data,
        )
    if any(state in ("active", "running") for state in active.values()):
        return _ok("service", f"installed: {states}", data=data)
    return _warn(
        "service",
        f"installed but not running: {states}",
        "systemctl --user enable --now memd.socket memd.service"
        if report.get("manager") == "systemd"
        else "memd service install (bootstraps it again)",
        data=data,
    )


def check_service(settings: Settings, daemon_pid: int | None, runner: Runner) -> Check:
    try:
        report = service_status(settings, runner=runner)
    except (MemdError, OSError) as exc:
        return _warn("service", f"cannot tell: {exc}")
    return assess_service(report, daemon_pid)


# -- keys and the cloud ------------------------------------------------------------------------
def check_anthropic(settings: Settings, daemon_llm: Mapping[str, Any] | None = None) -> Check:
    """The Anthropic key the running daemon uses (its `status`), else what this shell would give
    a daemon started from it. The key itself is never shown."""
    shell = "extract.api_key" if settings.extract_api_key else "ANTHROPIC_API_KEY"
    shell_key = settings.anthropic_key
    if daemon_llm is None:
        if not shell_key:
            return _ok("anthropic", "API key not set — extraction runs offline (rule-based)",
                       "set ANTHROPIC_API_KEY or extract.api_key for LLM extraction and summaries",
                       key="not set")  # fmt: skip
        if not shell_key.startswith("sk-ant-"):
            return _warn("anthropic", f"API key set ({shell}), but it does not look like an Anthropic key (sk-ant-…)",
                         "check the value; a wrong key makes every extraction run fail with 401", key="set")  # fmt: skip
        return _ok("anthropic", f"API key set ({shell}), model {settings.extract_model}; no daemon"
                   " is running to ask which key it uses", key="set")  # fmt: skip
    return assess_daemon_llm(daemon_llm, shell if shell_key else "", settings)


def assess_daemon_llm(llm: Mapping[str, Any], shell_source: str, settings: Settings) -> Check:
    """The running daemon's LLM against the key this shell sees (`shell_source`, "" for none)."""
    data = {"daemon_mode": llm.get("mode"), "daemon_key_source": llm.get("key_source") or None,
            "shell_key_source": shell_source or None}  # fmt: skip
    if llm.get("mode") == "anthropic":
        detail = f"the daemon uses Anthropic {llm.get('model')} (key from {llm.get('key_source') or '?'})"
        if llm.get("config_error"):
            return _fail("anthropic", f"{detail}, and the API refused it: {llm['config_error']}",
                         "fix the key (see below), then restart memd", data=data, key="set")  # fmt: skip
        return _ok("anthropic", detail, data=data, key="set")
    if shell_source:
        return _warn(
            "anthropic",
            f"{shell_source} is set in this shell, but the running daemon sees no key and"
            " extracts with the offline rules",
            "a daemon started by the service manager does not get this shell's variables: run"
            " `memd service install --env ANTHROPIC_API_KEY` (a file only you can read), or set"
            f" extract.api_key in {settings.paths.config_file} (chmod 600); then restart memd",
            data=data,
            key="set in this shell only",
        )
    return _ok("anthropic", "no API key: the daemon extracts with the offline rules",
               "set ANTHROPIC_API_KEY or extract.api_key for LLM extraction and summaries",
               data=data, key="not set")  # fmt: skip


def assess_semantic(sem: Mapping[str, Any] | None, settings: Settings) -> Check:
    """Recall by meaning: on (the model, how far the backfill got) or why it is off, as the
    daemon sees it; without a daemon, as the settings and the installed packages make it."""
    explicit = settings.semantic_kind in ("packaged", "http")
    if sem is None:
        from memd.semantic.api import build

        a = build(settings, query=True)
        if a.on:
            return _ok("semantic", f"{a.reason} (the daemon embeds in the background)", on=True)
        hint = "" if settings.semantic_kind == "off" else "see docs/retrieval.md"
        make = _warn if explicit else _ok
        return make("semantic", f"recall by meaning off: {a.reason}", hint, on=False)
    if not sem.get("on"):
        reason = str(sem.get("reason", ""))
        make = _warn if explicit and reason != "starting" else _ok
        return make("semantic", f"recall by meaning off: {reason}", on=False)
    detail = str(sem.get("reason", ""))
    b = sem.get("backfill") or {}
    if b:
        detail += f"; vectors {b.get('done', 0):,}/{b.get('total', 0):,} ({b.get('state', '')})"
    problem = b.get("last_error") or sem.get("query_error")
    if problem:
        return _warn("semantic", f"{detail}; last error: {problem}",
                     "check semantic.url / semantic.model, or the endpoint's log", on=True)  # fmt: skip
    return _ok("semantic", detail, on=True)


BackendFactory = Callable[[Settings, float], Any]


def check_sync(settings: Settings, timeout: float, factory: BackendFactory = make_backend) -> Check:
    """Cloud sync: off, or configured and answering `check()` within `timeout` seconds."""
    if not settings.sync_backend:
        return _ok("sync", "cloud sync not configured (memory stays on this machine)", backend="")
    name = settings.sync_backend
    result: dict[str, Any] = {}

    def probe() -> None:
        backend = None
        try:
            backend = factory(settings, timeout)
            result["ok"] = backend.check()
        except Exception as exc:  # reported below: a broken backend must not break the doctor
            result["error"] = exc
        finally:
            if backend is not None:
                with contextlib.suppress(Exception):
                    backend.close()

    # DNS lookups ignore socket timeouts: the probe runs in a thread the doctor can abandon.
    t = threading.Thread(target=probe, name="memd-doctor-sync", daemon=True)
    t.start()
    t.join(timeout + 2.0)
    # Unreachable is a failure even when it may pass: nothing reaches the cloud right now.
    if t.is_alive():
        return _fail("sync", f"{name}: no answer within {timeout + 2:.0f} s",
                     "check the network and sync.url / sync.dsn; changes wait in the outbox", backend=name)  # fmt: skip
    if "ok" in result:
        return _ok("sync", str(result["ok"]), backend=name)
    exc = result["error"]
    hint = getattr(exc, "hint", "")
    if isinstance(exc, SyncRetryable):
        return _fail("sync", f"{name} unreachable: {exc}", hint or "check the network and the server; "
                     "changes wait in the outbox and are retried with backoff", backend=name)  # fmt: skip
    return _fail(
        "sync", f"{name}: {exc}", hint or "check the sync.* settings (memd config)", backend=name
    )


# -- the index ---------------------------------------------------------------------------------
def _index_roots(settings: Settings) -> list[Root]:
    roots = [Root(settings.memory_dir)]
    for ws in settings.memory_workspaces:
        project = resolve_project(str(Path(ws).expanduser()))
        if project.memory_dir is not None:
            roots.append(Root(project.memory_dir, project.slug))
    return roots


def inspect_index(settings: Settings) -> dict[str, Any]:
    """Read the index file directly (read-only): integrity, counts, last indexing, stale files."""
    path = settings.db_path
    if not path.exists():
        return {"exists": False, "path": str(path)}
    conn = connect(path, readonly=True)
    try:
        quick = quick_check(conn)
        counts = docs.counts(conn)
        last = docs.last_indexed_at(conn)
        problems = docs.problems(conn)
        bad = {p["path"] for p in problems}
        stale: list[str] = []
        for root in _index_roots(settings):
            disk = scan_root(root) if root.path.is_dir() else {}
            to_read, to_delete = plan_reconcile(disk, docs.manifest(conn, root.key))
            stale += [p for p in (*to_read, *to_delete) if p not in bad]
    except DatabaseError as exc:
        return {"exists": True, "path": str(path), "error": str(exc)}
    finally:
        conn.close()
    return {
        "exists": True,
        "path": str(path),
        "quick_check": quick,
        "counts": counts,
        "last_indexed_at": float(last),
        "stale": sorted(stale),
        "problems": problems,
    }


def _ago(ts: float, now: float) -> str:
    s = max(0.0, now - ts)
    if s < 120:
        return f"{s:.0f} s ago"
    if s < 7200:
        return f"{s / 60:.0f} min ago"
    if s < 172800:
        return f"{s / 3600:.0f} h ago"
    return f"{s / 86400:.0f} days ago"


def assess_index(ix: Mapping[str, Any], status: Mapping[str, Any] | None, now: float) -> Check:
    """Index present and sound, and caught up with the files (lag, stale files)."""
    rebuild = "the index is a cache: `memd reindex --full` rebuilds it from your files"
    if not ix.get("exists"):
        return _warn(
            "index", f"no index yet at {ix.get('path')}", "start the daemon once (`memd serve`)"
        )
    if "error" in ix:
        return _fail("index", f"cannot read {ix['path']}: {ix['error']}", rebuild)
    if ix["quick_check"] != "ok":
        return _fail("index", f"{ix['path']} is damaged: {ix['quick_check']}", rebuild)
    c = ix["counts"]
    lag = float((status or {}).get("index", {}).get("lag_s", 0.0) or 0.0)
    last = float(ix.get("last_indexed_at") or 0.0)
    stale: list[str] = list(ix.get("stale", []))
    data = {"files": c["files"], "sections": c["sections"], "items": c["items"], "lag_s": lag,
            "last_indexed_at": last or None, "stale_files": len(stale)}  # fmt: skip
    detail = (
        f"{c['files']:,} files, {c['sections']:,} sections, {c['items']:,} items; "
        f"last indexed {_ago(last, now) if last else 'never'}"
    )
    if lag > LAG_WARN_S:
        return _warn("index", f"{detail}; {lag:.0f} s behind the last change",
                     "the daemon is busy or stuck: check `memd status`, restart it if it stays", data=data)  # fmt: skip
    if stale:
        shown = ", ".join(stale[:3]) + (f" and {len(stale) - 3} more" if len(stale) > 3 else "")
        how = ("the daemon picks them up within seconds; if not, `memd reindex`" if status
               else "no daemon is running: `memd reindex` (or start the daemon)")  # fmt: skip
        return _warn(
            "index", f"{detail}; {len(stale)} changed since indexed: {shown}", how, data=data
        )
    return _ok("index", detail + ("; up to date" if status else "; matches the files"), data=data)


def assess_problems(problems: Sequence[Mapping[str, Any]]) -> Check:
    """Memory files that could not be indexed (too large, not UTF-8, binary, …)."""
    if not problems:
        return _ok("problems", "every memory file is indexed", count=0)
    shown = "; ".join(f"{p['path']}: {p['reason']}" for p in problems[:5])
    more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
    return _warn(
        "problems",
        f"{len(problems)} file(s) not indexed: {shown}{more}",
        "fix or move these files (they are re-read when they change); `memd status` lists them",
        count=len(problems),
        files=[dict(p) for p in problems],
    )


# -- running it all ----------------------------------------------------------------------------
def _secrets(settings: Settings) -> list[str]:
    found = [settings.anthropic_key, settings.sync_key, settings.sync_dsn]
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


def run_checks(
    settings: Settings,
    *,
    timeout: float = 3.0,
    runner: Runner = subprocess.run,
    backend_factory: BackendFactory = make_backend,
) -> list[Check]:
    """Run every check; `timeout` bounds the socket and cloud probes (seconds each)."""
    checks = [check_python(), assess_sqlite(sqlite_features()), check_folders(settings),
              check_permissions(settings), check_inotify(settings)]  # fmt: skip
    status, why = fetch_status(settings.socket_path, timeout)
    checks += assess_daemon(status, why, settings.socket_path)
    pid = (status or {}).get("daemon", {}).get("pid")
    checks.append(check_service(settings, pid, runner))
    try:
        ix = inspect_index(settings)
    except (MemdError, OSError) as exc:
        ix = {"exists": True, "path": str(settings.db_path), "error": str(exc)}
    checks.append(assess_index(ix, status, time.time()))
    problems = status["problems"] if status is not None else ix.get("problems", [])
    checks.append(assess_problems(problems))
    checks.append(check_anthropic(settings, status.get("llm") if status is not None else None))
    checks.append(check_sync(settings, timeout, backend_factory))
    checks.append(assess_semantic(status.get("semantic") if status else None, settings))
    secrets = _secrets(settings)
    return [scrub(c, secrets) for c in checks]


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
