"""PURE: Markdown text → `ParsedFile` (front matter, title, `## Section` chunks, list items)."""

from __future__ import annotations

import re
from typing import Any

import yaml

from memd.core.models import Item, ParsedFile, Section

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+(?:\[[ xX]\][ \t]+)?(.*)$")
_META = re.compile(r"[ \t]*<!--[ \t]*memd[: ]?(.*?)-->[ \t]*$")
_META_PAIR = re.compile(r"([A-Za-z_][\w-]*)=(\"[^\"]*\"|\S+)")
# libyaml's safe loader is ~10x faster than the pure-Python one; both are safe.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# Sections are split at levels 1 and 2; deeper headings stay inside their section.
SPLIT_LEVEL = 2


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


def split_front_matter(text: str) -> tuple[dict[str, Any], str, int, str | None]:
    """Return (front matter, body, number of lines the front matter used, error or None).

    Broken YAML is reported, and the whole text is kept as body so nothing is lost.
    """
    if not text.startswith("---"):
        return {}, text, 0, None
    lines = text.split("\n")
    if lines[0].strip() != "---":
        return {}, text, 0, None
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            raw = "\n".join(lines[1:i])
            body = "\n".join(lines[i + 1 :])
            try:
                data = yaml.load(raw, Loader=_YAML_LOADER) if raw.strip() else {}
            except yaml.YAMLError as exc:
                first = str(exc).splitlines()[0] if str(exc) else "invalid YAML"
                return {}, body, i + 1, f"broken front matter: {first}"
            if data is None:
                data = {}
            if not isinstance(data, dict):
                return {}, body, i + 1, "broken front matter: not a key/value mapping"
            return {str(k): v for k, v in data.items()}, body, i + 1, None
    return {}, text, 0, "broken front matter: no closing '---'"


def parse_markdown(text: str, fallback_title: str = "") -> ParsedFile:
    """Parse a memory file. Never raises on content: problems become `warnings`."""
    fm, body, offset, err = split_front_matter(text)
    warnings = (err,) if err else ()
    lines = body.split("\n")
    title = ""
    sections: list[Section] = []
    cur_heading, cur_level, cur_start = "", 0, offset + 1
    buf: list[str] = []
    items: list[Item] = []
    in_fence = False

    def flush(end_line: int) -> None:
        content = "\n".join(buf).strip("\n")
        if content.strip() or cur_heading:
            sections.append(
                Section(
                    ordinal=len(sections),
                    heading=cur_heading,
                    level=cur_level,
                    start_line=cur_start,
                    end_line=max(cur_start, end_line),
                    text=content,
                    items=tuple(items),
                )
            )

    for idx, line in enumerate(lines):
        lineno = offset + idx + 1
        if _FENCE.match(line):
            in_fence = not in_fence
        m = None if in_fence else _HEADING.match(line)
        if m and len(m.group(1)) <= SPLIT_LEVEL:
            level, heading = len(m.group(1)), m.group(2).strip()
            if level == 1 and not title:
                title = heading
                if not sections and not "".join(buf).strip():
                    cur_start = lineno + 1
                    continue
            flush(lineno - 1)
            cur_heading, cur_level, cur_start = heading, level, lineno
            buf, items = [], []
            continue
        buf.append(line)
        if not in_fence:
            it = split_item(line)
            if it is not None and it[0]:
                items.append(Item(line=lineno, text=it[0], meta=it[1]))
    flush(offset + len(lines))
    if not title:
        t = fm.get("title")
        title = str(t) if t else fallback_title
    if sections and not sections[0].heading and title:
        s0 = sections[0]
        sections[0] = Section(s0.ordinal, title, 1, s0.start_line, s0.end_line, s0.text, s0.items)
    return ParsedFile(title=title, front_matter=fm, sections=tuple(sections), warnings=warnings)


def strip_meta_comments(text: str) -> str:
    """Section text without memd metadata comments (what goes into a prompt)."""
    return "\n".join(_META.sub("", line) for line in text.split("\n"))
