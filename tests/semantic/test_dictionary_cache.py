"""The tests' shared dictionary cache file leaves nothing behind when its process ends."""

from __future__ import annotations

import gzip
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_cache_folder_goes_with_the_test_process(tmp_path: Path) -> None:
    tiny = gzip.compress("中國 中国 [zhong1 guo2] /China/\n".encode())
    code = textwrap.dedent(f"""
        from tests.semantic import dictionary_cache
        dictionary_cache._cedict_data = lambda: {tiny!r}
        path = dictionary_cache.built()
        assert path.is_file(), path
        print(path.parent)
    """)
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-s", "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True, env=env)  # fmt: skip
    folder = Path(out.stdout.strip())
    assert folder.name.startswith("memd-test-cedict-"), out.stdout
    assert not folder.exists()
