"""The line scan and the CommonMark parser agree on every file the scan is allowed to take."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memd.memory.parse import needs_full_parse, parse_markdown, split_front_matter, split_item

# Lines a memory file is made of, including every construct that `needs_full_parse` sends to
# the parser and the ones it lets through (block quotes, empty items, closed ATX headings...).
LINES = [
    "", "", "text words here", "中文的句子，没有空格", "more text  ", "- item", "- item <!-- memd id=m_1 imp=3 -->",
    "* star item", "+ plus item", "  - nested", "   - three spaces", "- [ ] task", "- [x] done",
    "* ", "-\ttab item", "- - double", "- # heading in item", "# Title", "## Section",
    "## 测试", "##\tTabbed", "## closed ##", "## C#", "##", "#", "### deeper", "#hashtag",
    "####### seven", "> quote", "> - quoted item", "> ## quoted heading", ">- tight quote",
    "[ref]: /url", "[ref]:", "text with `code` and *em*", "-- not an item", "+", "\\- escaped",
    "\ufeff# bom", "-->", "x\x0by", "a\u2028b", "\xa0## nbsp",
    # Constructs the scan may not read: the parser decides.
    "```", "~~~", "````", "```py", "~~~ md", "- ```", "> ```", "    indented", "    - deep item", "\t- tab item", "\tTabbed",
    "  \tmixed", "---", "===", "-", "   ---", "***", "* * *", "- - -", "_ _ _", "<div>",
    "<!-- c -->", "<!-- memd id=m_2 --> at the start", "<!--", "- ", "</details>", "1. one", "2. two", "10) ten", " 1. spaced",
    "  # indented heading", " ## x", "text\rmore",
]  # fmt: skip

docs = st.lists(st.sampled_from(LINES), max_size=30).map("\n".join)
front = st.sampled_from(["", "---\n---\n", "---\ntitle: T\n---\n", "---\nk: [\n---\n"])


def _same(doc: str) -> None:
    body = split_front_matter(doc).body
    if needs_full_parse(body):
        return
    assert parse_markdown(doc, "f", full=False) == parse_markdown(doc, "f", full=True)


@settings(max_examples=1500, deadline=None, derandomize=True, database=None)
@given(front, docs)
def test_the_scan_agrees_with_commonmark_where_it_is_used(fm: str, body: str) -> None:
    _same(fm + body)


@settings(max_examples=500, deadline=None, derandomize=True, database=None)
@given(
    st.text(alphabet=st.sampled_from(list("#-*+ \t\n>`~=_<1.)[]xa中\r\x0b\u2028\xa0")), max_size=80)
)
def test_the_scan_agrees_with_commonmark_on_arbitrary_text(doc: str) -> None:
    _same(doc)


@settings(max_examples=500, deadline=None, derandomize=True, database=None)
@given(front, docs)
def test_sections_tile_the_file_and_items_point_at_their_lines(fm: str, body: str) -> None:
    doc = fm + body
    lines = doc.split("\n")
    p = parse_markdown(doc)
    last = 0
    for s in p.sections:
        assert last < s.start_line <= s.end_line <= len(lines)
        last = s.end_line
        for it in s.items:
            assert s.start_line <= it.line <= s.end_line
            assert split_item(lines[it.line - 1]) == (it.text, it.meta)


def test_the_generated_files_take_both_paths() -> None:
    # Guards the property above against a gate that sends everything to the parser.
    assert not needs_full_parse("\n".join(LINES[: LINES.index("```")]))
    for risky in LINES[LINES.index("```") :]:
        assert needs_full_parse(risky), risky
