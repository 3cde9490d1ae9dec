"""Every assistant memd hears, and where and how its conversations are read.

One registry, `ASSISTANTS`: each `Assistant` names the `source` its turns carry (also their agent,
the name `memd integrate`, `--source` and `memd status` use), its folder(s) on this platform
(environment overrides such as ``CODEX_HOME`` included), its `Reader`s — which files below the
folder, read as which `Kind` by which pure parser — its settings (``logs.<name>`` on/off and
``logs.<name>_dir`` a folder of your own) and the user-level instructions file it reads at the
start of a session, where `memd integrate` keeps memd's block.

`configured(settings)` turns the registry and ``logs.sources`` into `LogSource`s, one per reader
and folder, which `memd.conversations.logs.LogIngestor` watches and reads. A new assistant is one
more entry here, one parser module in `formats/`, and its tests (docs/conversations.md, "Adding an
assistant").
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memd.conversations import databases, editors, pushed
from memd.conversations.formats import (
    aider,
    cline,
    codex,
    continue_dev,
    gemini,
    opencode,
    parse_jsonl_line,
)
from memd.conversations.formats.contract import (
    Describe,
    DocumentParser,
    FileContext,
    Kind,
    LineParser,
    Sections,
    no_facts,
)
from memd.conversations.tailer import Checkpoint
from memd.core.errors import ConfigError
from memd.core.models import Turn

MAX_DOCUMENT_BYTES = 256 << 20
# (database, checkpoint after the last read, rows at most) → a batch of turns (`sqlite` readers).
DatabaseReader = Callable[[str, Checkpoint | None, int], databases.DatabaseRead]


@dataclass(frozen=True, slots=True)
class Reader:
    """How one kind of an assistant's files is read.

    `format` is recorded with each file in the index; `folder` is below the assistant's folder
    ("" for the folder itself) and `patterns` are globs below that (``*`` within one name, ``**``
    any depth). A `lines` reader has `parse_line`, a `document` reader `parse_document`; a
    `sqlite` reader's database is read by `memd.conversations.databases`. `describe` finds what a
    file's surroundings say (its session, its project) once per read. A document only ever
    appended to in sections (Aider's history) has `sections`: it is read from its last section
    on (`memd.conversations.sections`), not whole.
    """

    format: str
    kind: Kind
    patterns: tuple[str, ...]
    folder: str = ""
    parse_line: LineParser | None = None
    parse_document: DocumentParser | None = None
    describe: Describe = no_facts
    max_bytes: int = MAX_DOCUMENT_BYTES  # a bigger document is reported, not read
    read_database: DatabaseReader | None = None
    recursive: bool = True  # False: only the folder's own entries are watched
    sections: Sections | None = None


@dataclass(frozen=True, slots=True)
class Where:
    """What finding an assistant's folders needs: the home folder, the environment, the platform
    (``sys.platform``)."""

    home: Path
    env: Mapping[str, str]
    platform: str = sys.platform

    @classmethod
    def here(cls) -> Where:
        """This process's home, environment and platform."""
        return cls(Path.home(), os.environ, sys.platform)

    def var(self, name: str) -> Path | None:
        """An environment variable naming a folder (``~`` expanded), None when unset or empty."""
        value = self.env.get(name, "")
        return (
            Path(value.replace("~", str(self.home), 1) if value.startswith("~") else value)
            if value
            else None
        )

    def data_home(self) -> Path:
        """``$XDG_DATA_HOME`` or ``~/.local/share`` (what XDG-following tools use on every
        platform)."""
        return self.var("XDG_DATA_HOME") or self.home / ".local" / "share"

    def config_home(self) -> Path:
        """``$XDG_CONFIG_HOME`` or ``~/.config``."""
        return self.var("XDG_CONFIG_HOME") or self.home / ".config"


@dataclass(frozen=True, slots=True)
class Assistant:
    """One assistant: its name (the `source` of its turns), its folders and how they are read.

    `folders(where)` are its default folders, the likeliest first (all are watched; most people
    have one). `enabled_key`/`folder_key` are its settings (default ``logs.<name>`` and
    ``logs.<name>_dir`` with ``-`` as ``_``). `instructions(where)` is the user-level file it reads
    at session start (memd keeps a block in it, `instructions_kind` "block"), or a folder of
    such files (memd owns one file there, "file"); None when it has none.
    """

    name: str
    title: str
    folders: Callable[[Where], list[Path]]
    readers: tuple[Reader, ...]
    instructions: Callable[[Where], Path | None] = lambda where: None
    instructions_kind: str = "block"
    enabled_key: str = ""
    folder_key: str = ""
    # Folders that come from other settings (`value(key)` reads one), read besides `folders`.
    more_folders: Callable[[Callable[[str], Any]], list[Path]] = lambda value: []

    @property
    def settings_keys(self) -> tuple[str, str]:
        """(on/off setting, folder setting)."""
        base = "logs." + self.name.replace("-", "_")
        return (self.enabled_key or base, self.folder_key or base + "_dir")

    def formats(self) -> frozenset[str]:
        return frozenset(r.format for r in self.readers)


# -- where each assistant keeps things ---------------------------------------------------------
def _claude_projects(where: Where) -> list[Path]:
    base = where.var("CLAUDE_CONFIG_DIR") or where.home / ".claude"
    return [base / "projects"]


def codex_home(where: Where) -> Path:
    """``$CODEX_HOME`` or ``~/.codex`` (the same on macOS and Windows)."""
    return where.var("CODEX_HOME") or where.home / ".codex"


def gemini_dir(where: Where) -> Path:
    """``$GEMINI_CLI_HOME/.gemini`` or ``~/.gemini``."""
    return (where.var("GEMINI_CLI_HOME") or where.home) / ".gemini"


def opencode_data(where: Where) -> Path:
    """OpenCode's data folder: ``$XDG_DATA_HOME/opencode`` or ``~/.local/share/opencode``
    (it follows XDG on macOS and Windows too)."""
    return where.data_home() / "opencode"


def opencode_config(where: Where) -> Path:
    """OpenCode's user config folder: ``$XDG_CONFIG_HOME/opencode`` or ``~/.config/opencode``."""
    return where.config_home() / "opencode"


# -- the formats -------------------------------------------------------------------------------
def _jsonl(raw: bytes, ctx: FileContext) -> list[Turn]:
    return parse_jsonl_line(raw, path=ctx.path, lineno=ctx.lineno)


def _pushed(raw: bytes, ctx: FileContext) -> list[Turn]:
    return pushed.parse_line(raw, path=ctx.path, lineno=ctx.lineno)


CLAUDE_CODE = Reader("claude-code", "lines", ("*/*.jsonl", "*/*/subagents/agent-*.jsonl"))
FORMATS: dict[str, Reader] = {
    r.format: r
    for r in (
        CLAUDE_CODE,
        Reader("jsonl", "lines", ("**/*.jsonl",), parse_line=_jsonl),
        Reader("openai", "lines", ("**/*.jsonl",), parse_line=_jsonl),
        Reader(pushed.FORMAT, "lines", ("*.jsonl",), parse_line=_pushed),
        Reader("codex", "lines", ("**/rollout-*.jsonl",), parse_line=codex.parse_line,
               describe=codex.describe),
        Reader("gemini", "lines", ("*/chats/session-*.jsonl",), parse_line=gemini.parse_line,
               describe=gemini.describe),
        Reader("gemini-chat", "document", ("*/chats/session-*.json",),
               parse_document=gemini.parse_document, describe=gemini.describe),
        Reader("gemini-logs", "document", ("*/logs.json",), parse_document=gemini.parse_logs,
               describe=gemini.describe_logs),
        Reader("opencode", "document", ("part/*/*.json",),
               parse_document=opencode.parse_part_file, describe=opencode.describe_part),
        # Only the folder's own entries: beside the database OpenCode keeps git snapshots of
        # every project (thousands of folders no watch should cover).
        # `opencode-<channel>.db` for a build of another channel than latest/beta/prod.
        Reader("opencode-db", "sqlite", ("opencode.db", "opencode-*.db"),
               read_database=databases.read_opencode, recursive=False),
        Reader("cline", "document", ("*/ui_messages.json",), parse_document=cline.parse_document,
               describe=cline.describe),
        Reader("roo-code", "document", ("*/ui_messages.json",),
               parse_document=cline.parse_document, describe=cline.describe),
        Reader("continue", "document", ("*.json",), parse_document=continue_dev.parse_document,
               describe=continue_dev.describe),
        # A project folder: only its own entries are watched, never the project's tree.
        Reader("aider", "document", (aider.HISTORY_NAME,), parse_document=aider.parse_document,
               describe=aider.describe, recursive=False,
               sections=Sections(aider.session_starts, aider.parse_section)),
    )
}  # fmt: skip
# What `logs.sources` may name (memd's own files are not a format a person configures).
CONFIGURABLE = tuple(f for f in FORMATS if f != pushed.FORMAT)


def _in(folder: str, reader: Reader) -> Reader:
    return dataclasses.replace(reader, folder=folder)


ASSISTANTS: tuple[Assistant, ...] = (
    Assistant(
        "claude-code", "Claude Code", _claude_projects, (CLAUDE_CODE,),
        instructions=lambda w: (w.var("CLAUDE_CONFIG_DIR") or w.home / ".claude") / "CLAUDE.md",
        enabled_key="logs.claude_code", folder_key="logs.claude_dir",
    ),
    Assistant(
        "codex", "Codex CLI", lambda w: [codex_home(w)],
        (_in("sessions", FORMATS["codex"]), _in("archived_sessions", FORMATS["codex"])),
        instructions=lambda w: codex_home(w) / "AGENTS.md",
    ),
    Assistant(
        "gemini", "Gemini CLI", lambda w: [gemini_dir(w)],
        tuple(_in("tmp", FORMATS[f]) for f in ("gemini", "gemini-chat", "gemini-logs")),
        instructions=lambda w: gemini_dir(w) / "GEMINI.md",
    ),
    Assistant(
        "opencode", "OpenCode", lambda w: [opencode_data(w)],
        (FORMATS["opencode-db"], _in("storage", FORMATS["opencode"])),
        instructions=lambda w: opencode_config(w) / "AGENTS.md",
    ),
    Assistant(
        "cline", "Cline",
        lambda w: editors.extension_storages(w.home, w.env, w.platform, editors.CLINE_ID),
        (_in("tasks", FORMATS["cline"]),),
        instructions=lambda w: editors.cline_rules(w.home, w.env, w.platform),
        instructions_kind="file",
    ),
    Assistant(
        "roo-code", "Roo Code",
        lambda w: editors.extension_storages(w.home, w.env, w.platform, editors.ROO_ID),
        (_in("tasks", FORMATS["roo-code"]),),
        instructions=lambda w: editors.roo_rules(w.home), instructions_kind="file",
    ),
    Assistant(
        "continue", "Continue", lambda w: [editors.continue_dir(w.home, w.env)],
        (_in("sessions", FORMATS["continue"]),),
        instructions=lambda w: editors.continue_dir(w.home, w.env) / "rules",
        instructions_kind="file",
    ),
    Assistant(
        "aider", "Aider", lambda w: [], (FORMATS["aider"],),
        instructions=lambda w: w.home / ".aider", instructions_kind="file",
        more_folders=editors.aider_projects,
    ),
)  # fmt: skip
BY_NAME = {a.name: a for a in ASSISTANTS}


def assistant_title(source: str) -> str:
    """How a turn's `source` is named to a person or a model ("Codex CLI"; an app's own name)."""
    known = BY_NAME.get(source)
    return known.title if known is not None else (source or "app")


def assistant_of_format(fmt: str) -> Assistant | None:
    """The assistant whose files are read in format `fmt` (None for the generic formats)."""
    return next((a for a in ASSISTANTS if fmt in a.formats()), None)


# -- sources -----------------------------------------------------------------------------------
@functools.lru_cache(maxsize=256)
def _pattern(glob: str) -> re.Pattern[str]:
    parts = []
    for seg in glob.split("/"):
        if seg == "**":
            parts.append("(?:[^/]+/)*")
            continue
        body = "".join(
            "[^/]*" if ch == "*" else "[^/]" if ch == "?" else re.escape(ch) for ch in seg
        )
        parts.append(body + "/")
    return re.compile("".join(parts)[:-1] + r"\Z")


@dataclass(frozen=True, slots=True)
class LogSource:
    """A folder (or one file) of logs in one format; `agent` names the agent of turns that
    name none; `assistant` the registry entry it was made for ("" for ``logs.sources``).

    Claude Code keeps one transcript per session in `<projects>/<project>/<session>.jsonl`;
    its subagent transcripts (`<project>/agent-*.jsonl`, `<project>/<session>/subagents/
    agent-*.jsonl`) only hold sidechain records, which are not what the user and the assistant
    said: they are read to count each run for its sub-agent, never turned into sessions or
    stored as text.
    """

    root: Path
    format: str
    agent: str = ""
    watched: bool = True  # False for memd's own files, which it reads when it wrote them
    assistant: str = ""
    # Claude Code project folders never read: those of the folder memd runs Claude Code in.
    skip: frozenset[str] = frozenset()

    @property
    def reader(self) -> Reader:
        return FORMATS[self.format]

    @property
    def kind(self) -> Kind:
        return self.reader.kind

    def accepts(self, path: str) -> bool:
        """Whether `path` is a log of this source (for a database, also its write-ahead log)."""
        root = str(self.root)
        if self.kind == "sqlite":
            path = path.removesuffix("-wal")
        if path == root:
            name = os.path.basename(root)
            return any(_pattern(p.rpartition("/")[2]).match(name) for p in self.reader.patterns)
        prefix = root.rstrip(os.sep) + os.sep
        if not path.startswith(prefix):
            return False
        rel = path[len(prefix) :].replace(os.sep, "/")
        if self.skip and rel.partition("/")[0] in self.skip:
            return False
        return any(_pattern(p).match(rel) for p in self.reader.patterns)

    def database(self, path: str) -> str:
        """The database a changed path belongs to (itself, or the file its ``-wal`` is for)."""
        return path.removesuffix("-wal") if self.kind == "sqlite" else path

    def files(self) -> list[str]:
        """The log files there now."""
        if self.root.is_file():
            return [str(self.root)] if self.accepts(str(self.root)) else []
        if not self.root.is_dir():
            return []
        found = (str(f) for pattern in self.reader.patterns for f in self.root.glob(pattern))
        # Only regular files (a link to one is fine): a FIFO named *.jsonl would block a read.
        return sorted({p for p in found if self.accepts(p) and os.path.isfile(p)})


def extra_sources(extra: Iterable[dict[str, Any]]) -> list[LogSource]:
    """The folders of ``logs.sources`` (`ConfigError` naming the entry when one is wrong)."""
    out = []
    for i, entry in enumerate(extra):
        path, fmt = entry.get("path"), entry.get("format", "jsonl")
        if not isinstance(path, str) or not path:
            raise ConfigError(
                f"logs.sources[{i}] needs a path",
                hint='logs.sources = [{path = "...", format = "jsonl"}]',
            )
        if fmt not in CONFIGURABLE:
            raise ConfigError(
                f"logs.sources[{i}]: unknown format {fmt!r}",
                hint=f"formats: {', '.join(CONFIGURABLE)}",
            )
        agent = entry.get("agent", "")
        if not isinstance(agent, str):
            raise ConfigError(f"logs.sources[{i}]: agent must be a string")
        owner = assistant_of_format(fmt)
        out.append(
            LogSource(Path(path).expanduser(), fmt, agent or (owner.name if owner else ""),
                      assistant=owner.name if owner else "")
        )  # fmt: skip
    return out


@dataclass(frozen=True, slots=True)
class Choice:
    """One assistant as configured: on or off, and its folders (a folder of your own or the
    defaults)."""

    assistant: Assistant
    enabled: bool
    folders: tuple[Path, ...]
    custom: bool = False
    skip: frozenset[str] = frozenset()  # folders below its own never read (see `LogSource`)

    def sources(self) -> list[LogSource]:
        a = self.assistant
        if not self.enabled:
            return []
        return [
            LogSource(
                home / r.folder if r.folder else home,
                r.format,
                a.name,
                assistant=a.name,
                skip=self.skip,
            )  # fmt: skip
            for home in self.folders
            for r in a.readers
        ]


def choices(
    value: Callable[[str], Any], where: Where | None = None, skip: Iterable[str] = ()
) -> list[Choice]:
    """Every assistant with its settings applied (`value(key)` reads a setting); `skip` names
    Claude Code project folders never read (those of memd's own Claude Code runs)."""
    where = where or Where.here()
    out = []
    for a in ASSISTANTS:
        on_key, dir_key = a.settings_keys
        custom = str(value(dir_key) or "")
        folders = (Path(custom).expanduser(),) if custom else tuple(a.folders(where))
        folders += tuple(f for f in a.more_folders(value) if f not in folders)
        mine = frozenset(skip) if a.name == "claude-code" else frozenset()
        out.append(Choice(a, bool(value(on_key)), folders, bool(custom), mine))
    return out


@dataclass(frozen=True, slots=True)
class Configured:
    """What the settings ask to read: every assistant's choice and the sources to tail."""

    choices: tuple[Choice, ...]
    sources: tuple[LogSource, ...] = field(default=())


def configured(
    value: Callable[[str], Any], where: Where | None = None, skip: Iterable[str] = ()
) -> Configured:
    """The assistants' choices and every source to tail: theirs, then ``logs.sources``."""
    picked = choices(value, where, skip)
    sources = [s for c in picked for s in c.sources()]
    sources += extra_sources(value("logs.sources") or [])
    return Configured(tuple(picked), tuple(sources))
