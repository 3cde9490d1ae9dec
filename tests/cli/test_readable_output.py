"""What a person reads: `status` as text (no JSON, no epoch numbers), `memories` a page at a
time, search snippets without memd's metadata comments."""

from __future__ import annotations

import json
import re

from tests.utils import DaemonProcess, wait_for


def test_status_is_text_with_a_jobs_table(daemon: DaemonProcess) -> None:
    out = daemon.cli("status")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert '{"' not in text and "': " not in text
    assert not re.search(r"\b1\d{9}(\.\d+)?\b", text), text  # no epoch seconds
    lines = text.splitlines()
    head = lines.index("jobs:") + 1
    assert lines[head].split() == ["job", "last", "run", "outcome", "next", "run", "every"]
    extract = next(line for line in lines[head:] if line.split()[0] == "extract")
    assert "never" in extract and "in " in extract and "30 min" in extract
    assert "llm: offline rules (auto: no Anthropic key," in text
    assert "sync: off - " in text
    st = json.loads(daemon.cli("status", "--json").stdout)
    assert isinstance(st["jobs"]["extract"]["interval_s"], int | float)


def test_memories_come_a_page_at_a_time(daemon: DaemonProcess) -> None:
    many = daemon.memory / "topics" / "many.md"
    many.write_text(
        "# Many\n\n## Facts\n" + "".join(f"- fact number {i:03d}\n" for i in range(130))
    )
    wait_for(lambda: daemon.call("memories", {"limit": 1})["total"] >= 130, 10)
    total = daemon.call("memories", {"limit": 1})["total"]

    page = daemon.cli("memories")
    items = [line for line in page.stdout.splitlines() if "fact number" in line]
    assert len(items) == 100
    assert f"1-100 of {total} memories; next page: memd memories --offset 100" in page.stdout

    last = daemon.cli("memories", "--offset", "125", "--limit", "10")
    items = [line for line in last.stdout.splitlines() if "fact number" in line]
    assert len(items) == total - 125 and "next page" not in last.stdout
    assert f"126-{total} of {total} memories" in last.stdout

    assert len(json.loads(daemon.cli("memories", "--json").stdout)["items"]) == total
    res = daemon.call("memories", {"limit": 2, "offset": 1})
    assert (len(res["items"]), res["total"], res["offset"]) == (2, total, 1)
    bad = daemon.cli("memories", "--limit", "-1")  # a usage error, naming the flag
    assert bad.returncode == 2 and "argument --limit: must be 0 or more" in bad.stderr


def test_memories_show_the_day_of_each_item(daemon: DaemonProcess) -> None:
    item = daemon.call("remember", {"text": "the kiwi build runs on Tuesdays"})
    meta = next(i["meta"] for i in daemon.call("memories", {})["items"] if i["id"] == item["id"])
    line = next(x for x in daemon.cli("memories").stdout.splitlines() if "kiwi build" in x)
    assert line.endswith(f"(added {meta['at']})"), line


def test_search_snippets_leave_out_memds_comments(daemon: DaemonProcess) -> None:
    daemon.call("remember", {"text": "always run the kiwi linter before pushing"})
    hits = wait_for(lambda: daemon.call("search", {"query": "kiwi"})["hits"], 10)
    assert "<!--" in (daemon.memory / "_core" / "notes.md").read_text()
    assert all("<!--" not in h["snippet"] and "memd id=" not in h["snippet"] for h in hits)
    assert "kiwi linter" in hits[0]["snippet"]
    out = daemon.cli("search", "kiwi").stdout
    assert "kiwi linter" in out and "<!--" not in out
