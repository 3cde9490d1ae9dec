"""Front matter a person (or an import) writes never stops the daemon nor bloats the index.

YAML aliases (`a: &a [*a]` makes a list that contains itself; a few hundred bytes of them expand
into megabytes), deep nesting, huge numbers and keys JSON has no form for are reported as
"broken front matter" — the file's text is still indexed and searchable, and `memd doctor`,
`memd status` and search agree on that — at start with a fresh or an existing index, while
running, on a rebuild, and after an import carrying such a file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memd.memory.parse import parse_markdown, split_front_matter
from tests.utils import ROOT, DaemonProcess, wait_for

SELF = "---\na: &a [*a]\n---\n# R\n\n## S\n- zebras graze here\n"
# 310 bytes of front matter; with aliases expanded, 9^6 strings (an 802 KB row before).
LAUGHS = (
    "---\n"
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "---\n# Laughs\n\n## S\n- okapis laugh here\n"
)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (SELF, "alias"),
        (LAUGHS, "alias"),
        ("---\nn: " + "9" * 5000 + "\n---\n# R\n\n## S\n- zebras graze here\n", "digits"),
        ("---\nx: " + "[" * 200 + "]" * 200 + "\n---\n# R\n\n## S\n- zebras graze here\n",
         "nested deeper than 64"),
        ("---\nx: '" + "y" * 70_000 + "'\n---\n# R\n\n## S\n- zebras graze here\n", "64 KiB"),
    ],
)  # fmt: skip
def test_front_matter_memd_does_not_read_is_a_warning_and_the_body_is_kept(
    text: str, why: str
) -> None:
    parsed = parse_markdown(text)
    assert parsed.front_matter == {}
    assert parsed.warnings and parsed.warnings[0].startswith("broken front matter")
    assert why in parsed.warnings[0]
    (section,) = parsed.sections
    assert section.items[0].text in ("zebras graze here", "okapis laugh here")
    # Line numbers count the front matter lines, as edits need them.
    assert section.items[0].line == text.split("\n").index("- " + section.items[0].text) + 1


def test_deep_nesting_ends_in_a_warning_not_a_crashed_process() -> None:
    # Past ~50,000 levels libyaml's composer overflows the C stack (a segfault): checked in a
    # child process so a crash shows as a failure, not as the end of the test run.
    code = (
        "from memd.memory.parse import split_front_matter;"
        "t = '---\\na: ' + '[' * 60000 + ']' * 60000 + '\\n---\\n# x\\n';"
        "print(split_front_matter(t).error)"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, cwd=ROOT)  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("broken front matter")


def test_front_matter_is_plain_json_data() -> None:
    front = split_front_matter(
        "---\ntitle: T\nwhen: 2024-05-01\nnested:\n  2020-01-02: x\n  7: seven\n"
        "tags: !!set {b, a}\npinned: true\n---\n# T\n"
    )
    assert front.error is None and front.lines == 9 and front.body == "# T\n"
    fm = front.data
    assert fm == {"title": "T", "when": "2024-05-01", "nested": {"2020-01-02": "x", "7": "seven"},
                  "tags": ["a", "b"], "pinned": True}  # fmt: skip
    json.dumps(fm)


# -- the daemon ----------------------------------------------------------------------------
def _problems(d: DaemonProcess) -> dict[str, dict[str, Any]]:
    return {p["path"]: p for p in d.call("status")["problems"]}


def _front_matter_sizes(home: Path) -> list[int]:
    with contextlib.closing(sqlite3.connect(home / "data" / "index.db")) as conn:
        return [r[0] for r in conn.execute("SELECT length(front_matter) FROM files")]


def test_an_alias_in_front_matter_is_a_listed_problem_never_a_stopped_daemon(home: Path) -> None:
    d = DaemonProcess(home)
    topics = d.memory / "topics"
    topics.mkdir(parents=True)
    r = topics / "r.md"
    r.write_text(SELF)
    d.start()  # a fresh index
    try:
        assert "alias" in _problems(d)[str(r)]["reason"]
        assert d.search_paths("zebras") == {str(r)}
        assert d.stop() == 0
        r.write_text(SELF + "- and wildebeest\n")  # read again at the next start
        d.start()  # an existing index
        assert d.search_paths("wildebeest") == {str(r)}
        laughs = topics / "laughs.md"
        laughs.write_text(LAUGHS)  # while running
        wait_for(lambda: str(laughs) in _problems(d), 10)
        assert d.search_paths("okapis") == {str(laughs)}
        assert max(_front_matter_sizes(home)) < 1000  # no 800 KB row
        rebuilt = d.cli("reindex", "--full")
        assert rebuilt.returncode == 0, rebuilt.stderr
        assert d.search_paths("zebras") == {str(r)} and d.proc and d.proc.poll() is None
        # doctor, status and search give one answer: indexed, with a problem.
        doctor = d.cli("doctor").stdout
        assert "indexed with a problem (searchable)" in doctor and str(r) in doctor, doctor
        assert "not indexed" not in doctor, doctor
        status = d.cli("status").stdout
        assert f"{r}: broken front matter" in status and "search finds it" in status, status
    finally:
        assert d.stop() == 0
    log = d.log.read_text()
    assert "Traceback" not in log and "Circular reference" not in log, log


def test_an_import_carrying_such_a_file_leaves_a_daemon_that_starts(home: Path) -> None:
    d = DaemonProcess(home).start()
    doc = home / "export.json"
    content = SELF.replace("zebras", "gazelles")
    tree = [{"path": "topics/imported.md", "content": content,
             "sha256": hashlib.sha256(content.encode()).hexdigest()}]  # fmt: skip
    doc.write_text(json.dumps({"format": "memd-export", "version": 1, "sessions": [],
                               "memories": [], "memory_hashes": [], "tree": tree}))  # fmt: skip
    try:
        d.call("import", {"path": str(doc)})
        imported = d.memory / "topics" / "imported.md"
        wait_for(lambda: d.search_paths("gazelles") == {str(imported)}, 10)
        assert "alias" in _problems(d)[str(imported)]["reason"]
        assert d.stop() == 0
        d.start()
        assert d.search_paths("gazelles") == {str(imported)}
    finally:
        assert d.stop() == 0
