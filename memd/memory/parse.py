"""PURE: Markdown text → `ParsedFile` (front matter, title, `## Section` chunks, list items).

Which lines are headings (ATX and setext), code (fenced or indented) and list items is
CommonMark's answer, from markdown-it-py's block parser; line numbers are those of the file,
front matter included, because edits rewrite files by line. Most memory files hold only `#`
headings, bullet lists and prose, where a plain line scan gives the same answer at a fraction
of the cost: `needs_full_parse` sends every file with a construct where the two could differ
(code fences, setext underlines and thematic breaks, indentation of four columns, HTML blocks,
ordered lists, indented headings) to the parser, and a property test holds both paths to one
result.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import yaml

from memd.core.models import Item, ParsedFile, Section

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+(?:\[[ xX]\][ \t]+)?(.*)$")
_META = re.compile(r"[ \t]*<!--[ \t]*memd[: ]?(.*?)-->[ \t]*$")
_META_PAIR = re.compile(r"([A-Za-z_][\w-]*)=(\"[^\"]*\"|\S+)")
# An ATX heading that starts in column 0 (CommonMark allows three spaces of indentation; such
# lines go to the full parser, because inside a list item they are not top-level headings).
_ATX = re.compile(r"(#{1,6})(?=[ \t]|$)")
# Lines on which a line scan and CommonMark can disagree about headings, code or list items.
# Searched in "\n" + body: a literal first character lets `re` skip ahead to line starts.
_NEEDS_PARSER = re.compile(
    r"\n(?:"
    r" {0,3}(?:=+|-+)[ \t]*$"  # setext underline, or `---` as a thematic break
    r"| {0,3}([-*_])[ \t]*(?:\1[ \t]*){2,}$"  # thematic break (`* * *` is not a list item)
    r"| {0,3}\t| {4}"  # indented code, or content nested deeper than a line scan can tell
    r"| {0,3}<"  # HTML block: `## x` or `- x` inside it is neither heading nor item
    r"| {1,3}#"  # an indented heading may belong to a list item
    r"|[ \t]*\d+[.)]"  # ordered list: whether `2.` starts an item depends on what precedes it
    r")",
    re.M,
)
# libyaml's safe loader is ~10x faster than the pure-Python one; both are safe.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# Front matter is a few lines of settings. Longer or deeper YAML is reported, not read: libyaml
# composes nested values recursively (and crashes the process past ~50,000 levels), and the
# value ends up in the index as JSON.
FRONT_MATTER_MAX_CHARS = 64 * 1024
FRONT_MATTER_MAX_DEPTH = 64
# Sections are split at levels 1 and 2; deeper headings stay inside their section.
SPLIT_LEVEL = 2
# markdown-it stops descending past this many open blocks (its default of 20 would hide list
# items in a deeply nested list); each level costs a few stack frames.
_MAX_NESTING = 100


def parse_meta(comment_body: str) -> dict[str, str]:
    """Parse ``id=m_1 type=preference imp=6`` into a dict (quoted values may hold spaces)."""
    return {k: v.strip('"') for k, v in _META_PAIR.findall(comment_body)}


def format_meta(meta: dict[str, str]) -> str:
    """The inline comment that carries an item's metadata on its own line."""
    parts = []
    for k, v in meta.items():
        v = str(v)
        parts.append(f'{k}="{v}"' if (" " in v or not v) else f"{k}={v}")
    return "<!-- memd " + " ".join(parts) + " -->"


def split_item(line: str) -> tuple[str, dict[str, str]] | None:
    """If `line` is a list item, return (text without the metadata comment, metadata)."""
    m = _ITEM.match(line)
    if not m:
        return None
    body = m.group(1)
    meta: dict[str, str] = {}
    mm = _META.search(body)
    if mm:
        meta = parse_meta(mm.group(1))
        body = body[: mm.start()]
    return body.strip(), meta


def item_prefix(line: str) -> str:
    """What precedes an item's text: indentation, marker and task box (`  - [x] `)."""
    m = _ITEM.match(line)
    return line[: m.start(1)] if m else ""


@dataclass(frozen=True, slots=True)
class FrontMatter:
    """A Markdown file's front matter split off: the YAML as the person wrote it (`data`: their
    keys and values, as plain JSON data), the text after it (`body`), the number of lines it
    used and why it was not read (`error`, None when it was)."""

    data: dict[str, Any]
    body: str
    lines: int = 0
    error: str | None = None


def split_front_matter(text: str) -> FrontMatter:
    """The front matter at the top of `text`, and the text after it.

    Broken YAML is reported, and the whole text is kept as body so nothing is lost. So is YAML
    that uses aliases (``*name``: a few bytes of them expand into megabytes, or a value that
    contains itself), nests deeper than `FRONT_MATTER_MAX_DEPTH` or is longer than
    `FRONT_MATTER_MAX_CHARS`. The front matter's data is plain JSON data: text keys, lists,
    and dates and other YAML scalars as their text.
    """
    if not text.startswith("---"):
        return FrontMatter({}, text)
    lines = text.split("\n")
    if lines[0].strip() != "---":
        return FrontMatter({}, text)
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            raw = "\n".join(lines[1:i])
            body = "\n".join(lines[i + 1 :])
            data, err = _load_yaml(raw)
            if err is not None:
                return FrontMatter({}, body, i + 1, f"broken front matter: {err}")
            return FrontMatter(data, body, i + 1)
    return FrontMatter({}, text, 0, "broken front matter: no closing '---'")


def _load_yaml(raw: str) -> tuple[dict[str, Any], str | None]:
    """Front matter's YAML as plain data, or ({}, why it is not read)."""
    if not raw.strip():
        return {}, None
    if len(raw) > FRONT_MATTER_MAX_CHARS:
        return {}, f"longer than {FRONT_MATTER_MAX_CHARS // 1024} KiB"
    try:
        if _may_refuse(raw):
            # Events first (libyaml's parser keeps its own stack): aliases and depth are checked
            # before anything is composed.
            refused = _refused(yaml.parse(raw, Loader=_YAML_LOADER))
            if refused:
                return {}, refused
        data = yaml.load(raw, Loader=_YAML_LOADER)
    except (yaml.YAMLError, RecursionError, ValueError, OverflowError) as exc:
        return {}, str(exc).splitlines()[0] if str(exc) else "invalid YAML"
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return {}, "not a key/value mapping"
    return {str(k): _plain(v) for k, v in data.items()}, None


def _may_refuse(raw: str) -> bool:
    """Whether `raw` could hold an alias or nest too deep (else the check of its events, which
    costs as much as loading it, is skipped). An alias needs a `*`; nesting needs a `[`, `{` or
    `-` per level, or indentation that grows by a column per level (~d²/2 characters)."""
    return (
        "*" in raw
        or len(raw) > 1024
        or raw.count("[") + raw.count("{") + raw.count("-") > FRONT_MATTER_MAX_DEPTH
    )


def _refused(events: Iterable[yaml.Event]) -> str:
    """Why YAML with these events is not read ("" when it is)."""
    depth = 0
    for ev in events:
        if isinstance(ev, yaml.AliasEvent):
            return f"uses an alias (*{ev.anchor}); write the value out instead"
        if isinstance(ev, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            depth += 1
            if depth > FRONT_MATTER_MAX_DEPTH:
                return f"nested deeper than {FRONT_MATTER_MAX_DEPTH} levels"
        elif isinstance(ev, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            depth -= 1
    return ""


def _plain(v: Any) -> Any:
    """A YAML value as JSON holds it (nesting is bounded by `_refused`)."""
    if v is None or isinstance(v, bool | int | float | str):
        return v
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    if isinstance(v, set | frozenset):
        return sorted((_plain(x) for x in v), key=str)
    return str(v)  # dates, times, binary


def needs_full_parse(body: str) -> bool:
    """True when a line scan could misread `body`'s headings, code or items (see module doc)."""
    return (
        "```" in body
        or "~~~" in body
        or "\r" in body  # CommonMark breaks lines at a lone CR; memd's line numbers do not
        or _NEEDS_PARSER.search("\n" + body) is not None
    )


@dataclass(frozen=True, slots=True)
class _Heading:
    level: int
    span: int  # lines the heading takes: 1 for ATX, 2 or more for setext
    text: str


def _atx_text(line: str) -> str:
    """The text of an ATX heading line, without its `#` marks and optional closing sequence."""
    rest = line.lstrip(" \t").lstrip("#").rstrip(" \t")
    bare = rest.rstrip("#")
    if len(bare) < len(rest) and (not bare or bare[-1] in " \t"):
        rest = bare
    return rest.strip()


def _scan_outline(lines: list[str]) -> dict[int, _Heading]:
    """Headings of a body that needs no parser: ATX lines in column 0."""
    headings: dict[int, _Heading] = {}
    for idx, line in enumerate(lines):
        if line.startswith("#"):
            m = _ATX.match(line)
            if m and len(m.group(1)) <= SPLIT_LEVEL:
                text = _atx_text(line)
                if text:
                    headings[idx] = _Heading(len(m.group(1)), 1, text)
    return headings


@functools.cache
def _markdown_it() -> MarkdownIt:
    from markdown_it import MarkdownIt

    # Block structure only: inline parsing (emphasis, links) is most of markdown-it's work and
    # none of memd's business.
    md = MarkdownIt("commonmark", {"maxNesting": _MAX_NESTING}).disable(["inline", "text_join"])
    # One instance serves every thread; parsing once compiles its rule chains, the only state
    # a parse would otherwise build lazily on first use.
    md.parse("# x\n\ny\n")
    return md


def _parse_outline(body: str, lines: list[str]) -> tuple[dict[int, _Heading], frozenset[int]]:
    """Top-level level-1/2 headings and the first line of every list item, by CommonMark."""
    # A lone CR would be a line break to markdown-it and shift every later line number.
    tokens = _markdown_it().parse(body.replace("\r", " "))
    headings: dict[int, _Heading] = {}
    items: set[int] = set()
    for tok in tokens:
        if tok.map is None:
            continue
        if tok.type == "list_item_open":
            items.add(tok.map[0])
        elif tok.type == "heading_open" and tok.level == 0 and tok.tag in ("h1", "h2"):
            start, end = tok.map
            if tok.markup.startswith("#"):
                text = _atx_text(lines[start])
            else:  # setext: the paragraph lines above the underline
                text = " ".join(line.strip() for line in lines[start : end - 1]).strip()
            if text:
                headings[start] = _Heading(int(tok.tag[1]), end - start, text)
    return headings, frozenset(items)


def parse_markdown(text: str, fallback_title: str = "", *, full: bool | None = None) -> ParsedFile:
    """Parse a memory file. Never raises on content: problems become `warnings`.

    `full` forces (True) or forbids (False) the CommonMark parser; by default it runs only on
    files that `needs_full_parse`.
    """
    front = split_front_matter(text)
    body = front.body
    lines = body.split("\n")
    item_lines: frozenset[int] | None = None  # None: every line that looks like an item is one
    if full or (full is None and needs_full_parse(body)):
        headings, item_lines = _parse_outline(body, lines)
    else:
        headings = _scan_outline(lines)
    title, sections = _split_sections(lines, front.lines, headings, item_lines)
    if not title:
        t = front.data.get("title")
        title = str(t) if t else fallback_title
    if sections and not sections[0].heading and title:
        s0 = sections[0]
        sections[0] = Section(s0.ordinal, title, 1, s0.start_line, s0.end_line, s0.text, s0.items)
    warnings = (front.error,) if front.error else ()
    return ParsedFile(
        title=title, front_matter=front.data, sections=tuple(sections), warnings=warnings
    )


def _split_sections(
    lines: list[str],
    offset: int,
    headings: dict[int, _Heading],
    item_lines: frozenset[int] | None,
) -> tuple[str, list[Section]]:
    """The title (first level-1 heading) and a section per level-1/2 heading.

    `offset` is the number of front matter lines before `lines`; line numbers are 1-based.
    """
    title = ""
    sections: list[Section] = []
    heading, level, first = "", 0, 0  # the current section; `first`: its first body line
    start = offset + 1
    for idx in [*sorted(headings), len(lines)]:
        h = headings.get(idx)
        if h is not None and h.level == 1 and not title:
            title = h.text
            # A title line that opens the file starts no section of its own.
            if not sections and not heading and not "".join(lines[first:idx]).strip():
                start, first = offset + idx + 1 + h.span, idx + h.span
                continue
        content = "\n".join(lines[first:idx]).strip("\n")
        if content.strip() or heading:
            items = _items(lines, range(first, idx), offset, item_lines)
            end = max(start, offset + idx)
            sections.append(Section(len(sections), heading, level, start, end, content, items))
        if h is not None:
            heading, level, start, first = h.text, h.level, offset + idx + 1, idx + h.span
    return title, sections


def _items(
    lines: list[str], span: range, offset: int, item_lines: frozenset[int] | None
) -> tuple[Item, ...]:
    items = []
    for idx in span:
        if item_lines is None or idx in item_lines:
            it = split_item(lines[idx])
            if it is not None and it[0]:
                items.append(Item(line=offset + idx + 1, text=it[0], meta=it[1]))
    return tuple(items)


def strip_meta_comments(text: str) -> str:
    """Section text without memd metadata comments (what goes into a prompt)."""
    return "\n".join(_META.sub("", line) for line in text.split("\n"))
