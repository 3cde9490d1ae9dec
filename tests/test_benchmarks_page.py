"""docs/benchmarks.md stays a page of today's figures that the bench scripts can keep writing.

Each `bench/` script replaces its own `<!-- bench:NAME -->` block (`bench.report.write_block`);
the page groups the blocks by area, and earlier figures live in docs/benchmarks-log.md. These
tests hold the layout a script's next run relies on: every block opened once and closed once,
titled one level below its area, dated with its command, listed in the page's table of areas;
replacing one block leaves every other byte of the page alone; the log holds no live block
(a script never writes into it).
"""

from __future__ import annotations

import re
from pathlib import Path

from bench.report import replace_block

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGE = DOCS / "benchmarks.md"
LOG = DOCS / "benchmarks-log.md"
MARKER = re.compile(r"^<!-- (/?)bench:([\w-]+) -->$", re.M)
BLOCK = re.compile(r"^<!-- bench:([\w-]+) -->\n(.*?)\n<!-- /bench:\1 -->$", re.M | re.S)
MEASURED = re.compile(
    r"^Measured \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC .*Command: `python -m bench\.", re.M
)


def blocks(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for m in BLOCK.finditer(text):
        assert m.group(1) not in found, f"block {m.group(1)} twice"
        found[m.group(1)] = m.group(2)
    return found


def test_every_marker_opens_or_closes_one_block_in_order() -> None:
    text = PAGE.read_text(encoding="utf-8")
    open_name = None
    seen: list[str] = []
    for m in MARKER.finditer(text):
        closing, name = m.group(1) == "/", m.group(2)
        if closing:
            assert open_name == name, f"</bench:{name}> closes {open_name}"
            open_name = None
        else:
            assert open_name is None, f"bench:{name} opened inside bench:{open_name}"
            assert name not in seen, f"bench:{name} twice"
            open_name = name
            seen.append(name)
    assert open_name is None
    assert seen == list(blocks(text))


def test_every_block_is_titled_under_an_area_dated_and_listed() -> None:
    text = PAGE.read_text(encoding="utf-8")
    areas_table = text[text.index("## Areas") :].split("\n## ", 1)[0]
    for name, body in blocks(text).items():
        assert body.startswith("### "), f"{name}: the block's title is a level-3 heading"
        assert MEASURED.search(body), f"{name}: no 'Measured <date> … Command: …' line"
        assert f"[`{name}`](#" in areas_table, f"{name}: missing from the table of areas"
        before = text[: text.index(f"<!-- bench:{name} -->")]
        area = re.findall(r"^## (.*)$", before, re.M)[-1]
        assert area not in ("Targets and the peer", "Areas"), f"{name}: not under an area"


def test_replacing_one_block_leaves_the_rest_of_the_page_alone() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for name, body in blocks(text).items():
        new = replace_block(text, name, "### new title\n\nnew figures")
        start = text.index(f"<!-- bench:{name} -->")
        assert new[:start] == text[:start]
        end = text.index(f"<!-- /bench:{name} -->") + len(f"<!-- /bench:{name} -->")
        assert new.endswith(text[end:])
        assert blocks(new)[name] == "### new title\n\nnew figures"
        assert replace_block(text, name, body) == text


def test_the_log_holds_no_block_a_script_would_write() -> None:
    assert not MARKER.search(LOG.read_text(encoding="utf-8"))
