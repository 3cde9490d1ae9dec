"""Aider chat histories: `.aider.chat.history.md` at the root of a project
(`parse_aider_history`), dated by the `.aider.input.history` beside it when there is one.

Aider appends to the Markdown file as the chat goes (`aider/io.py`):

- `# aider chat started at YYYY-MM-DD HH:MM:SS` (local time) opens each run: a session;
- what the user typed: one `#### <line>` per line, each ending in two spaces (a Markdown line
  break), a blank line between two inputs; an empty input is `#### <blank>`;
- what Aider itself printed (status, warnings, `/run` output, confirmations, token counts,
  commits): `> <line>  `;
- the model's reply: the lines in between, as the model wrote them.

Not said, and so not read as turns: slash and `!` commands (`/code x` is logged, then `x` again
as the message), confirmation answers logged as input, the `> ` lines, reasoning spans left
inline in a reply (Aider's `thinking-content-…` tag, `<think>`; unclosed when a reply was
interrupted), the file edits in a reply (SEARCH/REPLACE blocks, diffs, whole files after their
file name) and, in architect mode, the architect's reply logged again as `#### ` lines when it is
handed to the editor model.

`.aider.input.history` (prompt_toolkit's format: `# <local time with microseconds>` then
`+<line>` per line) gives each input its own time; a turn without a match there gets its
session's start.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, tzinfo

from memd.conversations.formats.contract import Facts, FileContext
from memd.conversations.formats.document import ParsedDocument, strip_reasoning
from memd.core.models import Turn

AIDER_SOURCE = "aider"
HISTORY_NAME = ".aider.chat.history.md"
INPUT_HISTORY_NAME = ".aider.input.history"

_HEADER = re.compile(r"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$")
# A run's header, a line of input (`#### …`) or of Aider's output (`> …`); both of the latter
# end in two spaces, which the model's own headings and quotes do not.
_MARKER = re.compile(r"^(?:# aider chat started at [^\n]*|#### [^\n]*  |>[^\n]*  )$", re.MULTILINE)
_CONFIRM = re.compile(r"\((?:Y)es/\(N\)o")
_MESSAGE_COMMANDS = re.compile(r"^/(?:ask|code|architect|chat|context|edit)\s+", re.IGNORECASE)
# A fenced block (its closing fence as long as its opening one), and an unfenced edit.
_FENCED = re.compile(
    r"^(?P<fence>`{3,}|~{3,})[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.MULTILINE | re.DOTALL
)
_BARE_EDIT = re.compile(
    r"^<<<<<<< SEARCH[ \t]*\n.*?^>>>>>>> REPLACE[^\n]*$", re.MULTILINE | re.DOTALL
)
_FILE_NAME = re.compile(r"^(?:[\w.\-]+[/\\])*[\w.\-]*\w\.[A-Za-z0-9]{1,8}$")
_SEARCH = "<<<<<<< SEARCH"


@dataclass(slots=True)
class _Session:
    session_id: str
    start: float
    header_line: int
    turns: list[Turn] = field(default_factory=list)
    last_assistant: str = ""
    last_user_ts: float = 0.0


def parse_aider_history(
    data: bytes,
    *,
    path: str,
    project: str = "",
    input_history: bytes | None = None,
    tz: tzinfo | None = None,
    first_line: int = 1,
    earlier: Callable[[str], int] | None = None,
) -> ParsedDocument:
    """The turns of one `.aider.chat.history.md` (`data`), or of its part from a run's header
    on (`first_line`: that header's line in the file; `earlier(start)`: how many runs before the
    part started at the same time, which their session ids count).

    `project` is the folder it sits in (Aider's root); `input_history` the
    `.aider.input.history` beside it; times without a zone are read in `tz` (default: this
    machine's). Session ids come from the file's path and each run's start; turn ids are the
    line of the turn counted from its session's header, so an appended file keeps them.
    """
    problems: list[tuple[int, str]] = []
    if b"\x00" in data[:4096]:
        return ParsedDocument([], [(0, "binary data, not an Aider chat history")])
    text = data.decode("utf-8", errors="replace")
    if "\ufffd" in text:
        problems.append((0, "bytes that are not UTF-8 were replaced"))
    inputs = _input_times(input_history or b"", tz)
    reader = _Reader(path=path, project=project or "", tz=tz, inputs=inputs, problems=problems,
                     earlier=earlier or _none_before)  # fmt: skip
    text = text.replace("\r\n", "\n")
    # Aider's own lines (run headers, inputs, its output) are found by one regular expression;
    # what lies between them is the model's reply, taken whole.
    pos, lineno = 0, first_line
    for marker in _MARKER.finditer(text):
        between = text[pos : marker.start()]
        reader.between(lineno, between)
        lineno += between.count("\n")
        reader.marker(lineno, marker.group())
        pos = marker.end()
    reader.between(lineno, text[pos:])
    reader.flush()
    return ParsedDocument(reader.turns, problems)


def _none_before(started: str) -> int:
    return 0


# A run's header as `_HEADER` reads it, in the bytes of a file (\r\n line ends included).
_HEADER_BYTES = re.compile(
    rb"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)[ \t\r\f\v]*$", re.MULTILINE
)


def session_starts(data: bytes) -> list[tuple[int, int, str]]:
    """Where each run starts in `data`: (byte offset of its header, lines before it, its start
    as written), in file order. A history is read again from its last run's header on."""
    out = []
    lines, pos = 0, 0
    for m in _HEADER_BYTES.finditer(data):
        lines += data.count(b"\n", pos, m.start())
        pos = m.start()
        out.append((m.start(), lines, m.group(1).decode("ascii")))
    return out


@dataclass(slots=True)
class _Reader:
    path: str
    project: str
    tz: tzinfo | None
    inputs: list[tuple[float, str]]
    problems: list[tuple[int, str]]
    earlier: Callable[[str], int]
    turns: list[Turn] = field(default_factory=list)
    session: _Session | None = None
    user: list[str] = field(default_factory=list)
    user_line: int = 0
    reply: list[str] = field(default_factory=list)
    reply_line: int = 0
    next_input: int = 0
    adjacent: bool = False
    ids: dict[str, int] = field(default_factory=dict)

    def marker(self, lineno: int, line: str) -> None:
        """One of Aider's own lines: a run's header, a line of input, a line of its output."""
        if line.startswith("#### "):
            self._end_reply()
            if self.user and not self.adjacent:
                self._end_user()
            if not self.user:
                self.user_line = lineno
            self.user.append(line[5:].rstrip())
        elif header := _HEADER.match(line):
            self.flush()
            self._open(lineno, header.group(1))
        else:
            self._end_user()
            self._end_reply()

    def between(self, lineno: int, text: str) -> None:
        """What lies between two of Aider's lines (`lineno`: where it starts): nothing (the
        lines touch), blank lines, or a reply."""
        self.adjacent = text in ("", "\n")
        if self.adjacent:
            return
        self._end_user()
        if not text.strip():
            return
        body = text.lstrip("\n")
        self.reply_line = lineno + len(text) - len(body)
        self.reply.append(body.rstrip("\n"))

    def flush(self) -> None:
        self._end_user()
        self._end_reply()

    def _open(self, lineno: int, started: str) -> None:
        start = _local_seconds(started, self.tz)
        if start is None:
            self.problems.append((lineno, f"unreadable session start {started!r}"))
            start = 0.0
        key = f"{self.path}\n{started}"
        n = self.ids[key] = (self.ids[key] if key in self.ids else self.earlier(started)) + 1
        digest = hashlib.sha1(f"{key}\n{n}".encode()).hexdigest()[:16]
        self.session = _Session(f"aider-{digest}", start, lineno)

    def _end_user(self) -> None:
        if not self.user:
            return
        text = "\n".join(self.user).strip()
        self.user = []
        session = self.session
        if session is None or not _said_by_user(text):
            return
        if _same(text, session.last_assistant):
            return  # architect mode: its reply handed to the editor model
        ts = self._input_time(text, session)
        session.last_user_ts = ts
        self._add(session, "user", text, ts, self.user_line)

    def _end_reply(self) -> None:
        if not self.reply:
            return
        raw = strip_reasoning("\n".join(self.reply))
        self.reply = []
        session = self.session
        if session is None or not raw:
            return
        session.last_assistant = raw
        text = drop_edits(raw)
        if text:
            self._add(
                session, "assistant", text, session.last_user_ts or session.start, self.reply_line
            )

    def _add(self, session: _Session, role: str, text: str, ts: float, lineno: int) -> None:
        turn = Turn(
            source=AIDER_SOURCE,
            session_id=session.session_id,
            turn_id=f"L{lineno - session.header_line}",
            role=role,
            text=text,
            ts=ts,
            source_path=self.path,
            agent_id=AIDER_SOURCE,
            project=self.project,
            parent_id=session.turns[-1].turn_id if session.turns else "",
            line=lineno,
        )
        session.turns.append(turn)
        self.turns.append(turn)

    def _input_time(self, text: str, session: _Session) -> float:
        """The time the input was typed, from the input history (in order, within the run)."""
        wanted = _norm(text)
        for i in range(self.next_input, len(self.inputs)):
            ts, typed = self.inputs[i]
            if ts + 1 < session.start:
                continue
            if _norm(_MESSAGE_COMMANDS.sub("", typed, count=1)) == wanted or _norm(typed) == wanted:
                self.next_input = i + 1
                return max(ts, session.last_user_ts)
        return max(session.start, session.last_user_ts)


def _said_by_user(text: str) -> bool:
    if not text or text == "<blank>":
        return False
    if text[0] in "/!":
        return False  # a command; `/code x` and the like log `x` again as the message
    return not _CONFIRM.search(text)


def _same(a: str, b: str) -> bool:
    return bool(b) and _norm(a) == _norm(b)


def _norm(text: str) -> str:
    return " ".join(text.split())


def drop_edits(text: str) -> str:
    """A reply without the file edits in it: fenced blocks holding SEARCH/REPLACE or a diff, a
    whole file's fenced content after its file name, and bare SEARCH/REPLACE blocks (each with
    the file name line before it)."""
    if "```" not in text and "~~~" not in text and _SEARCH not in text:
        return text
    text = _cut(text, _FENCED, lambda m, named: named or _is_edit(m.group("body")))
    text = _cut(text, _BARE_EDIT, lambda m, named: True)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _cut(
    text: str, pattern: re.Pattern[str], is_edit: Callable[[re.Match[str], bool], bool]
) -> str:
    """`text` without the matches of `pattern` that `is_edit` says are edits, each with the line
    before it when that line is a file name."""
    out: list[str] = []
    pos = 0
    for m in pattern.finditer(text):
        line_start = text.rfind("\n", 0, max(m.start() - 1, 0)) + 1
        name = text[line_start : m.start()].strip() if m.start() > 0 else ""
        named = bool(name) and _FILE_NAME.match(name) is not None
        if not is_edit(m, named):
            continue
        out.append(text[pos : line_start if named else m.start()])
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def _is_edit(body: str) -> bool:
    if _SEARCH in body:
        return True
    head = body.lstrip("\n").split("\n", 2)
    return len(head) >= 2 and head[0].startswith("--- ") and head[1].startswith("+++ ")


def _local_seconds(value: str, tz: tzinfo | None) -> float | None:
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    moment = moment.replace(tzinfo=tz) if tz is not None else moment.astimezone()
    try:
        return moment.timestamp()
    except (OverflowError, ValueError, OSError):
        return None


def _input_times(data: bytes, tz: tzinfo | None) -> list[tuple[float, str]]:
    """(time, text) of each input in a prompt_toolkit history file, in file order."""
    entries: list[tuple[float, str]] = []
    ts: float | None = None
    lines: list[str] = []
    for raw in data.decode("utf-8", errors="replace").replace("\r\n", "\n").split("\n"):
        if raw.startswith("# "):
            if ts is not None and lines:
                entries.append((ts, "\n".join(lines)))
            ts, lines = _local_seconds(raw[2:].strip(), tz), []
        elif raw.startswith("+"):
            lines.append(raw[1:])
    if ts is not None and lines:
        entries.append((ts, "\n".join(lines)))
    return entries


def parse_document(data: bytes, ctx: FileContext) -> ParsedDocument:
    """The reader's entry: a history with the input history `describe` found beside it."""
    return parse_section(data, ctx, 0, _none_before)


def parse_section(
    data: bytes, ctx: FileContext, lines_before: int, earlier: Callable[[str], int]
) -> ParsedDocument:
    """The part of a history from a run's header on (`lines_before` it in the file; `earlier`
    as `parse_aider_history` takes it), with the input history `describe` found beside it."""
    inputs = ctx.facts.extra.get("input_history", "")
    return parse_aider_history(
        data, path=ctx.path, project=ctx.facts.project, input_history=inputs.encode() or None,
        first_line=lines_before + 1, earlier=earlier,
    )  # fmt: skip


def describe(path: str) -> Facts:
    """The project (the history's folder) and the `.aider.input.history` beside it."""
    folder = os.path.dirname(path)
    try:
        with open(os.path.join(folder, INPUT_HISTORY_NAME), "rb") as f:
            inputs = f.read(32 << 20).decode("utf-8", errors="replace")
    except OSError:
        inputs = ""
    return Facts(project=folder, extra={"input_history": inputs} if inputs else {})
