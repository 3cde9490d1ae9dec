from __future__ import annotations

from memd.memory.parse import (
    format_meta,
    parse_markdown,
    parse_meta,
    split_item,
    strip_meta_comments,
)

DOC = """---
type: preference
tags: [typescript, testing]
updatedAt: 2026-02-11
source: auto
pinned: true
expires: 2027-01-01
---
# Preferences

Intro before any section.

## 测试偏好
- 使用 vitest 而非 jest <!-- memd id=m_1 type=preference imp=6 src=manual at=2026-11-21 -->
- [x] describe/it style

```md
## not a heading inside a fence
- not an item
```

## Tools
Uses VS Code.
### Sub heading stays in Tools
"""


def test_front_matter_title_sections_items() -> None:
    p = parse_markdown(DOC)
    assert p.title == "Preferences"
    assert p.front_matter["type"] == "preference"
    assert p.front_matter["tags"] == ["typescript", "testing"]
    assert p.front_matter["pinned"] is True
    assert [s.heading for s in p.sections] == ["Preferences", "测试偏好", "Tools"]
    intro, zh, tools = p.sections
    assert intro.text == "Intro before any section."
    assert [i.text for i in zh.items] == ["使用 vitest 而非 jest", "describe/it style"]
    assert zh.items[0].meta == {
        "id": "m_1",
        "type": "preference",
        "imp": "6",
        "src": "manual",
        "at": "2026-11-21",
    }
    assert zh.items[0].line == 14  # 1-based line in the file, front matter included
    assert "not a heading" in zh.text and "Sub heading" in tools.text
    assert zh.start_line == 13 and zh.end_line == 21


def test_broken_front_matter_is_reported_and_text_kept() -> None:
    p = parse_markdown("---\ntags: [unclosed\n---\n# T\n\n## S\nbody text\n")
    assert p.warnings and "broken front matter" in p.warnings[0]
    assert p.sections[-1].text == "body text"
    p2 = parse_markdown("---\nno closing\n# T\n")
    assert "no closing" in p2.warnings[0] and "no closing" in p2.sections[0].text
    p3 = parse_markdown("---\n- a list\n---\nx")
    assert "mapping" in p3.warnings[0]


def test_no_title_falls_back() -> None:
    p = parse_markdown("just text\n", fallback_title="notes")
    assert p.title == "notes" and p.sections[0].heading == "notes"
    assert parse_markdown("").sections == ()


def test_meta_roundtrip_and_item_split() -> None:
    meta = {"id": "m_9", "src": "session abc", "empty": ""}
    comment = format_meta(meta)
    assert parse_meta(comment[len("<!-- memd ") : -len(" -->")]) == meta
    assert split_item(f"  * hello {comment}") == ("hello", meta)
    assert split_item("1. numbered") == ("numbered", {})
    assert split_item("not an item") is None
    assert strip_meta_comments(f"- hello {comment}") == "- hello"
