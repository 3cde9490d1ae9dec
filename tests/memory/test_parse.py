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


def _outline(text: str, *, full: bool | None = None) -> list[tuple[str, int, int, int]]:
    """(heading, level, start_line, end_line) per section."""
    return [
        (s.heading, s.level, s.start_line, s.end_line)
        for s in parse_markdown(text, full=full).sections
    ]


def _items(text: str) -> list[tuple[int, str]]:
    return [(i.line, i.text) for s in parse_markdown(text).sections for i in s.items]


def test_a_fence_is_closed_only_by_its_own_kind_of_marker() -> None:
    backticks_around_tildes = (
        "# T\n\n```md\n~~~\n## in code\n- in code\n~~~\n```\n\n## Real\n- real\n"
    )
    tildes_around_backticks = (
        "# T\n\n~~~\n```\n## in code\n- in code\n```\n~~~\n\n## Real\n- real\n"
    )
    for doc in (backticks_around_tildes, tildes_around_backticks):
        assert _outline(doc) == [("T", 1, 2, 9), ("Real", 2, 10, 12)], doc
        assert _items(doc) == [(11, "real")]
        assert "## in code" in parse_markdown(doc).sections[0].text


def test_a_longer_fence_needs_a_closing_fence_at_least_as_long() -> None:
    doc = "# T\n\n````\n```\n## in code\n```\n````\n## Real\n- real\n"
    assert [h for h, *_ in _outline(doc)] == ["T", "Real"]
    assert _items(doc) == [(9, "real")]
    # An indented or shorter closing line leaves the fence open.
    doc2 = "# T\n~~~~\n~~~\n## in code\n"
    assert [h for h, *_ in _outline(doc2)] == ["T"]


def test_an_unclosed_fence_runs_to_the_end_of_the_file() -> None:
    doc = "# T\n\n## Before\n- one\n\n```sh\n## a shell comment\n- not an item\n\n## Also code\n"
    assert _outline(doc) == [("Before", 2, 3, 11)]
    assert _items(doc) == [(4, "one")]


def test_setext_headings_split_sections_like_atx_ones() -> None:
    doc = "Profile\n=======\n\nIntro.\n\nWork\n----\n- writes Rust\n\nTwo line\nheading\n--------\nbody\n"
    p = parse_markdown(doc)
    assert p.title == "Profile"
    assert [(s.heading, s.level, s.start_line, s.end_line) for s in p.sections] == [
        ("Profile", 1, 3, 5),
        ("Work", 2, 6, 9),
        ("Two line heading", 2, 10, 14),
    ]
    assert p.sections[0].text == "Intro."
    assert p.sections[1].items[0].line == 8 and p.sections[2].text == "body"
    # `---` after a blank line is a thematic break, not a heading; a list item is not underlined.
    assert [h for h, *_ in _outline("# T\n\ntext\n\n---\n- a\n---\n")] == ["T"]


def test_heading_forms() -> None:
    assert [h for h, *_ in _outline("## C#\n## Closed ##\n##\n#hashtag\n### Deeper\n")] == [
        "C#",
        "Closed",
    ]
    # Indented four columns it is code; inside a list item or a block quote it is not top level.
    doc = "# T\n\n    ## code\n\n- item\n  ## in the item\n\n> ## quoted\n"
    assert [h for h, *_ in _outline(doc)] == ["T"]


def test_html_blocks_hide_headings_and_items_but_memd_comments_stay_metadata() -> None:
    doc = (
        "# T\n\n<!--\n## commented out\n- commented out\n-->\n\n<details>\n- inside html\n</details>\n\n"
        "## Real\n- kept <!-- memd id=m_1 imp=3 -->\n"
    )
    p = parse_markdown(doc)
    assert [s.heading for s in p.sections] == ["T", "Real"]
    assert _items(doc) == [(13, "kept")]
    assert p.sections[1].items[0].meta == {"id": "m_1", "imp": "3"}


def test_items_by_commonmark() -> None:
    doc = (
        "# T\n\n1. first\n2) second\n\nSome text\n3. a paragraph line, not an item\n\n"
        "- [ ] task\n  - nested\n* * *\n> - quoted\n```\n- code\n```\n- after\n"
    )
    assert _items(doc) == [(3, "first"), (4, "second"), (9, "task"), (10, "nested"), (16, "after")]


def test_front_matter_edge_cases() -> None:
    # Empty front matter; a YAML comment that looks like a heading; `...` as the closing line.
    p = parse_markdown("---\n---\n# T\n## S\n- a\n")
    assert p.front_matter == {} and p.title == "T" and p.sections[0].items[0].line == 5
    p = parse_markdown("---\n# not a heading\nk: v\n...\nSetext\n======\n- a\n")
    assert p.front_matter == {"k": "v"} and p.title == "Setext"
    assert p.sections[0].start_line == 7 and p.sections[0].items[0].line == 7
    # Front matter only; four dashes or text before it are no front matter.
    assert parse_markdown("---\ntitle: Only\n---\n").title == "Only"
    assert parse_markdown("---\ntitle: Only\n---\n").sections == ()
    # `----` is a thematic break (preamble text), then `k: v` is a setext heading.
    p = parse_markdown("----\nk: v\n----\n", fallback_title="f")
    assert p.front_matter == {} and [(s.heading, s.text) for s in p.sections] == [
        ("f", "----"),
        ("k: v", ""),
    ]
    p = parse_markdown("text\n---\nk: v\n---\n", fallback_title="f")
    assert p.front_matter == {} and [s.heading for s in p.sections] == ["text", "k: v"]


def test_cjk_and_line_numbers() -> None:
    doc = "---\ntype: note\n---\n偏好\n====\n\n## 测试　工具\n- 使用 vitest <!-- memd id=m_1 -->\n\n```\n## 不是标题\n```\n"
    p = parse_markdown(doc)
    assert p.title == "偏好"
    assert [(s.heading, s.start_line) for s in p.sections] == [("测试　工具", 7)]
    assert p.sections[0].items[0].line == 8 and p.sections[0].items[0].text == "使用 vitest"


def test_a_lone_carriage_return_does_not_shift_line_numbers() -> None:
    doc = "# T\n```\ncode\r## still code\n```\n## S\n- a\n"
    assert _outline(doc) == [("T", 1, 2, 4), ("S", 2, 5, 7)]
    assert _items(doc) == [(6, "a")]


def test_a_title_after_a_section_heading_starts_its_own_section() -> None:
    p = parse_markdown("## A\n# T\nbody\n")
    assert p.title == "T"
    assert [(s.heading, s.start_line, s.text) for s in p.sections] == [
        ("A", 1, ""),
        ("T", 2, "body"),
    ]
