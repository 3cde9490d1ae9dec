"""Where the editor-based assistants and Aider keep their files, on every platform: the VS Code
family's ``User/globalStorage`` folders (Cline, Roo Code), Continue's global folder, the
folders Cline and Roo Code read global rules from, and the projects Aider's histories are in.
Used by the registry (`memd.conversations.sources`) and by `memd integrate`."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

# The VS Code family: their user config folders have the same layout.
EDITORS = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")
CLINE_ID = "saoudrizwan.claude-dev"
ROO_ID = "rooveterinaryinc.roo-cline"


def editor_roots(home: Path, env: Mapping[str, str], platform: str) -> list[Path]:
    """The user config folders of the VS Code family on `platform` (``sys.platform``), and a
    remote VS Code's (``~/.vscode-server/data``)."""
    if platform == "darwin":
        base = home / "Library" / "Application Support"
    elif platform == "win32":
        base = Path(env.get("APPDATA") or home / "AppData" / "Roaming")
    else:
        base = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    return [base / editor for editor in EDITORS] + [home / ".vscode-server" / "data"]


def extension_storages(
    home: Path, env: Mapping[str, str], platform: str, ext_id: str
) -> list[Path]:
    """An extension's ``globalStorage`` folder in every editor; for Cline also its CLI's
    ``~/.cline/data`` (``$CLINE_DATA_DIR``), laid out the same way."""
    found = [root / "User" / "globalStorage" / ext_id for root in editor_roots(home, env, platform)]
    if ext_id == CLINE_ID:
        found.append(Path(env.get("CLINE_DATA_DIR") or home / ".cline" / "data"))
    return found


def documents_dir(home: Path, env: Mapping[str, str], platform: str) -> Path:
    """The user's Documents folder, where Cline keeps global rules (XDG's on Linux)."""
    if platform.startswith("linux"):
        run_env = {"HOME": str(home), "PATH": os.environ.get("PATH", os.defpath)}
        if env.get("XDG_CONFIG_HOME"):
            run_env["XDG_CONFIG_HOME"] = env["XDG_CONFIG_HOME"]
        try:
            out = subprocess.run(["xdg-user-dir", "DOCUMENTS"], capture_output=True, text=True,
                                 timeout=5, check=False, env=run_env)  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            out = None
        folder = out.stdout.strip() if out is not None and out.returncode == 0 else ""
        if folder and folder != str(home):
            return Path(folder)
    return home / "Documents"


def cline_rules(home: Path, env: Mapping[str, str], platform: str) -> Path:
    return documents_dir(home, env, platform) / "Cline" / "Rules"


def roo_rules(home: Path) -> Path:
    return home / ".roo" / "rules"


def continue_dir(home: Path, env: Mapping[str, str]) -> Path:
    """Continue's global folder: ``$CONTINUE_GLOBAL_DIR`` or ``~/.continue``."""
    return (
        Path(env["CONTINUE_GLOBAL_DIR"]) if env.get("CONTINUE_GLOBAL_DIR") else home / ".continue"
    )


def aider_projects(value: Callable[[str], Any]) -> list[Path]:
    """The folders whose Aider history memd reads: every workspace of ``memory.workspaces``."""
    return [
        Path(w).expanduser() for w in value("memory.workspaces") or [] if isinstance(w, str) and w
    ]
