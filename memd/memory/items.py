"""PURE: the item-level text edits memd makes (no I/O): add lines to a section, find items.

Line numbers are the file's own, front matter included (`memd.memory.parse`).
"""

from __future__ import annotations

import re
import unicodedata

from memd.core.errors import InvalidParams, SourceError
from memd.core.models import ParsedFile
from memd.core.text import normalize
from memd.memory.parse import format_meta, item_prefix, parse_markdown

ItemAt = tuple[int, str, dict[str, str]]  # 0-based line, text, metadata


def clean_text(text: str) -> str:
    """Text that can sit on one Markdown line: control characters (a NUL byte, escapes, line
    and paragraph separators) become spaces, runs of white space one space."""
    if text.isascii() and text.isprintable():
        return " ".join(text.split())
    out = [
        " " if (ch.isspace() or unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp")) else ch
        for ch in text
    ]
    return " ".join("".join(out).split())


# The start of a memd metadata comment as the parser finds it (`<!-- memd`, `<!--memd:` ...).
_META_OPEN = re.compile(r"<!--(?=\s*memd)")
# What a heading memd writes may not hold: it is one line of Markdown, and a line break would
# add headings or items after it (the same rule an import's sections are held to).
_CONTROL = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")
HEADING_MAX_CHARS = 200


def check_item_text(text: str, param: str = "text") -> None:
    """Refuse text that holds a memd metadata comment: the parser would read it as the item's
    metadata (`superseded`, `pinned`, `expires` ...). `InvalidParams` naming the param."""
    if _META_OPEN.search(text):
        raise InvalidParams(
            f"param {param!r}: holds a memd metadata comment ('<!-- memd'), which memd writes"
            " itself; nothing was written",
            hint="remove the comment from the text and try again",
        )


def heading_problem(text: str) -> str:
    """Why `text` cannot be a `## heading` memd writes ("" when it can)."""
    if _CONTROL.search(text):
        return "a heading is one line: no line breaks or control characters"
    if len(text) > HEADING_MAX_CHARS:
        return f"a heading is at most {HEADING_MAX_CHARS} characters"
    if _META_OPEN.search(text):
        return "a heading cannot hold a memd metadata comment ('<!-- memd')"
    return ""


def heading_text(text: str) -> str:
    """`text` made fit for a heading memd writes: one line, no metadata comment, not too long
    (the callers a person drives refuse such text first: `heading_problem`)."""
    if not heading_problem(text):
        return text
    return neutral(clean_text(text))[:HEADING_MAX_CHARS]


def neutral(text: str) -> str:
    """`text` with every memd metadata comment made plain text (`&lt;!-- memd`, which reads
    the same once rendered): text memd's jobs write never becomes an item's metadata."""
    return _META_OPEN.sub("&lt;!--", text) if "<!--" in text else text


def item_body(text: str, meta: dict[str, str]) -> str:
    """An item's line after its marker: the text (any metadata comment in it neutralised) and
    its own metadata comment."""
    text = neutral(text)
    return f"{text} {format_meta(meta)}" if meta else text


def item_line(text: str, meta: dict[str, str], prefix: str = "- ") -> str:
    return prefix + item_body(text, meta)


def body_of(line: str) -> str:
    """The part of an item line after its marker and task box, stripped."""
    return line[len(item_prefix(line)) :].strip()


# -- the pure edits --------------------------------------------------------------------------
def _parse(lines: list[str]) -> ParsedFile:
    return parse_markdown("\n".join(lines))


def _item_lines(parsed: ParsedFile) -> set[int]:
    """1-based numbers of the lines that are list items with text."""
    return {it.line for s in parsed.sections for it in s.items}


def _find_section(parsed: ParsedFile, section: str) -> tuple[int, int] | None:
    """0-based [heading line, end) of the first level-2 section called `section`."""
    want = section.strip().lower()
    for s in parsed.sections:
        if s.level == 2 and s.heading.lower() == want:
            return s.start_line - 1, s.end_line
    return None


def insert_lines(
    current: str | None,
    section: str,
    new_lines: list[str],
    title: str,
    where: str = "the file",
    parsed: ParsedFile | None = None,
) -> tuple[str, int]:
    """PURE: `current` with `new_lines` at the end of `## section` (created when missing);
    returns the text and the 1-based line of the first new line. `parsed` is `current`
    parsed already, when the caller has it."""
    section, title = heading_text(section), heading_text(title)
    lines = current.split("\n") if current else []
    if not lines or lines == [""]:
        lines, parsed = [f"# {title}", ""], None
    span = _find_section(parsed or _parse(lines), section)
    if span is None:
        while lines and lines[-1] == "":
            lines.pop()
        lines += ["", f"## {section}", ""]
        span = (len(lines) - 2, len(lines))
    start, end = span
    # Insert after the last non-blank line of the section so items stay together.
    insert_at = end
    while insert_at > start + 1 and lines[insert_at - 1].strip() == "":
        insert_at -= 1
    # A blank line before the item ends an HTML block it would otherwise continue.
    for before in ([], [""]):
        new = [*lines[:insert_at], *before, *new_lines, *lines[insert_at:]]
        at = insert_at + len(before)
        if insert_at == end < len(lines):  # keep a blank line before the next heading
            new.insert(at + len(new_lines), "")
        if new[-1] != "":
            new.append("")
        if at + 1 in _item_lines(_parse(new)):
            return "\n".join(new), at + 1
    raise SourceError(
        f"cannot add to {where}: line {insert_at + 1}, where section {section!r} ends, is inside"
        " a code block or HTML block that is never closed, so a list item there would not be one",
        hint="close the code fence (``` or ~~~) or the HTML block in that file",
    )


def items_of(text: str | ParsedFile) -> list[ItemAt]:
    """(0-based line, text, meta) of every list item (of a text, or of it parsed)."""
    parsed = parse_markdown(text) if isinstance(text, str) else text
    return [(it.line - 1, it.text, dict(it.meta)) for s in parsed.sections for it in s.items]


def same_item(text: str, items: list[ItemAt]) -> ItemAt | None:
    """The item in effect (not superseded or archived) of `items` saying the same as `text`."""
    want = normalize(text)
    for i, t, meta in items:
        if normalize(t) == want and not meta.get("superseded") and not meta.get("archived"):
            return i, t, meta
    return None


def bumped(meta: dict[str, str], day: str) -> dict[str, str]:
    try:
        hits = int(meta.get("hits", "1"))
    except ValueError:
        hits = 1
    out = {**meta, "hits": str(hits + 1)}
    if day:
        out["seen"] = day
    return out
