"""`memd demo`: runs from any folder, cleans up after itself."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.utils import ROOT


def test_demo_runs_beside_a_memd_folder_and_removes_its_home(tmp_path: Path) -> None:
    """Run from the folder holding the clone, `python -m memd` would import the clone folder
    instead of the installed package; the demo's home must not outlive the demo."""
    parent = tmp_path / "src"
    (parent / "memd" / "memd").mkdir(parents=True)
    (parent / "memd" / "README.md").write_text("a clone, seen from its parent folder\n")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMD_", "PYTHON"))}
    env["TMPDIR"] = str(scratch)
    # The installed package, as `memd demo` runs it: started by path, not from the repository.
    code = f"import sys; sys.path.remove({str(ROOT)!r}) if {str(ROOT)!r} in sys.path else None; "
    code += "from memd.cli import main; raise SystemExit(main(['demo']))"
    proc = subprocess.run(
        [sys.executable, "-P", "-c", code],
        cwd=parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "memd daemon running" in proc.stdout and "Pinia" in proc.stdout
    assert list(scratch.iterdir()) == []
