"""Where memd keeps things: platformdirs by default, one folder when MEMD_HOME is set."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from memd.core.errors import PathError
from memd.core.fsio import make_private_dir

APP = "memd"
# sun_path is 108 bytes on Linux and 104 on macOS, including the terminating NUL.
MAX_SOCKET_PATH = 100


@dataclass(frozen=True, slots=True)
class Paths:
    """Every location memd reads or writes."""

    home: Path | None
    config_file: Path
    memory_root: Path
    data_dir: Path
    state_dir: Path
    runtime_dir: Path
    log_dir: Path
    cache_dir: Path
    """What memd can build again from what is installed (the bridge's dictionary)."""

    @property
    def index_path(self) -> Path:
        return self.data_dir / "index.db"

    @property
    def default_socket(self) -> Path:
        return self.runtime_dir / "memd.sock"


def resolve_paths(env: Mapping[str, str] | None = None) -> Paths:
    """Resolve memd's folders from MEMD_HOME, or from platformdirs when it is unset."""
    env = os.environ if env is None else env
    home = env.get("MEMD_HOME")
    if home:
        root = Path(home).expanduser().absolute()
        return Paths(
            home=root,
            config_file=root / "config.toml",
            memory_root=root / "memory",
            data_dir=root / "data",
            state_dir=root / "state",
            runtime_dir=root / "run",
            log_dir=root / "log",
            cache_dir=root / "cache",
        )
    import platformdirs

    dirs = platformdirs.PlatformDirs(APP, appauthor=False)
    data = Path(dirs.user_data_dir)
    try:
        # Without XDG_RUNTIME_DIR (cron, ssh) platformdirs warns and falls back to a private temp
        # dir; the daemon and its clients compute the same fallback, so the warning is noise.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runtime = Path(dirs.user_runtime_dir)
    except PermissionError:
        import tempfile  # rare: no runtime folder; imported here to keep hooks starting fast

        runtime = Path(tempfile.gettempdir()) / f"memd-{os.getuid()}"
    return Paths(
        home=None,
        config_file=Path(dirs.user_config_dir) / "config.toml",
        memory_root=data / "memory",
        data_dir=data,
        state_dir=Path(dirs.user_state_dir),
        runtime_dir=runtime,
        log_dir=Path(dirs.user_log_dir),
        cache_dir=Path(dirs.user_cache_dir),
    )


def usable_socket_path(wanted: Path) -> Path:
    """Return `wanted`, or a short stable path under the temp dir when it is too long for AF_UNIX."""
    if len(os.fsencode(wanted)) <= MAX_SOCKET_PATH:
        return wanted
    import hashlib
    import tempfile

    digest = hashlib.sha256(os.fsencode(wanted)).hexdigest()[:12]
    short = Path(tempfile.gettempdir()) / f"memd-{os.getuid()}-{digest}" / "memd.sock"
    if len(os.fsencode(short)) > MAX_SOCKET_PATH:
        raise PathError(
            f"socket path {wanted} is too long for a Unix socket",
            hint="set MEMD_SOCKET or server.socket to a shorter path",
        )
    return short


def ensure_private_dir(path: Path) -> None:
    """Create `path` with mode 0700 (or tighten it) and refuse one owned by another user."""
    make_private_dir(path)
    st = path.stat()
    if st.st_uid != os.getuid():
        raise PathError(f"{path} belongs to uid {st.st_uid}, not to you")
    if st.st_mode & 0o077:
        os.chmod(path, 0o700)


# -- workspaces ----------------------------------------------------------------------------------
WORKSPACE_DIR = Path(".memd") / "memory"


def find_workspace(start: Path, *, top: Path, include_top: bool = True) -> Path | None:
    """The workspace holding `start`: the nearest folder from `start` up to `top` (included
    unless `include_top` is false) with a `.memd/memory/` folder, else the nearest with `.git`;
    None when there is neither."""
    chain = [start, *(p for p in start.parents if p.is_relative_to(top))]
    if not include_top:
        chain = [d for d in chain if d != top]
    for d in chain:
        if (d / WORKSPACE_DIR).is_dir():
            return d
    for d in chain:
        if (d / ".git").exists():
            return d
    return None


def _below(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def project_base(
    folder: str,
    *,
    home: str,
    workspaces: Sequence[str],
    private: Sequence[str] = (),
    trusted: bool = False,
) -> str | None:
    """The folder a project folder is accepted under: the configured workspace holding it,
    else the user's home when it is below it (the home itself is no project), else, for a
    `trusted` folder (one a person named: their shell's folder), the root of the file system;
    None: refused, and also for anything inside memd's own folders (`private`) and for the
    home itself and the root.

    All are real paths (every symbolic link followed).
    """
    if any(_below(folder, p) for p in private):
        return None
    for ws in workspaces:
        if _below(folder, ws):
            return ws
    if folder != home and _below(folder, home):
        return home
    anchor = os.path.splitdrive(folder)[0] + os.sep
    if trusted and folder not in (home, anchor) and not _below(home, folder):
        return anchor
    return None


def caller_project(
    cwd: str, *, workspaces: Sequence[str], private: Sequence[Path], trusted: bool = False
) -> str:
    """The `project` a client sends by default from the folder it runs in: that folder when
    the daemon would accept it as a project (below the home or in a configured workspace, or
    anywhere when `trusted`: a person's shell or session; never in memd's own folders), else
    "" (no project, and no error)."""
    real = os.path.realpath(cwd)
    base = project_base(
        real,
        home=os.path.realpath(Path.home()),
        workspaces=[os.path.realpath(Path(w).expanduser()) for w in workspaces],
        private=[os.path.realpath(p) for p in private],
        trusted=trusted,
    )
    return cwd if base is not None else ""
