"""The one declared table of settings, loaded once from a TOML file and MEMD_* env vars.

Every field of `Settings` is a setting: its metadata gives the TOML key (``section.name``), a
help line and whether only a restart applies it. Values are checked and converted to the field's
type by msgspec (TOML values strictly, environment variables from their text). The environment
override is ``MEMD_`` + the key upper-cased, dots as underscores (``index.debounce_ms`` →
``MEMD_INDEX_DEBOUNCE_MS``). Only entry points call `load`.
"""

from __future__ import annotations

import dataclasses
import os
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from memd.core.config_file import flatten, read_config, suggest
from memd.core.errors import ConfigError
from memd.core.paths import Paths, resolve_paths, usable_socket_path

SettingValue = str | int | float | bool | list[str] | list[dict[str, Any]]  # a row's type


def _s(
    key: str,
    help: str,
    default: Any = dataclasses.MISSING,
    factory: Any = None,
    *,
    restart: bool = False,
) -> Any:
    """One row of the table: TOML key, help line, default, and whether only a restart applies it.

    A SIGHUP reload keeps the running value of a `restart=True` setting and `memd status`
    lists it; every other setting applies at once (the features' `on_reload` hooks apply what
    was built from it at start, the rest is read again on every use).
    """
    meta = {"key": key, "help": help, "restart": restart}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class Settings:
    """All of memd's settings. Field metadata holds the TOML key, the help text and whether
    only a restart applies a change (`_s`)."""

    # memory tree
    memory_root: str = _s(
        "memory.root", "Folder of the user-tier Markdown memory tree", "", restart=True
    )
    memory_workspaces: list[str] = _s(
        "memory.workspaces",
        "Workspaces whose .memd/memory/ folder is the project tier",
        factory=list,
    )
    memory_extra_roots: list[str] = _s(
        "memory.extra_roots",
        "More folders of user-tier Markdown memory kept outside memory.root; symbolic links"
        " in the tree may point into them",
        factory=list,
        restart=True,
    )
    memory_enabled_default: bool = _s(
        "memory.enabled_default", "Whether memory is on before `memd enable/disable` is used", True
    )
    # index
    index_path: str = _s("index.path", "SQLite index file (a rebuildable cache)", "", restart=True)
    index_debounce_ms: int = _s(
        "index.debounce_ms", "Quiet time before a changed file is read", 120
    )
    index_reconcile_s: int = _s(
        "index.reconcile_s", "Seconds between full reconcile scans of the memory roots", 300
    )
    index_max_file_mb: float = _s(
        "index.max_file_mb", "Markdown files larger than this are reported, not indexed", 10.0
    )
    # server
    server_socket: str = _s(
        "server.socket", "Unix socket path (MEMD_SOCKET also works)", "", restart=True
    )
    server_max_request_kb: int = _s("server.max_request_kb", "Largest request accepted", 1024)
    server_read_timeout_s: float = _s(
        "server.read_timeout_s", "Idle connections are closed after this many seconds", 60.0
    )
    server_max_connections: int = _s(
        "server.max_connections", "Connections served at once; more are refused", 2048
    )
    server_max_buffered_mb: int = _s(
        "server.max_buffered_mb",
        "Memory for requests still arriving, all connections together (MiB)",
        64,
    )
    server_workers: int = _s(
        "server.workers",
        "Threads answering slow methods (writes, imports, jobs run now)",
        8,
        restart=True,
    )
    # context
    context_budget_tokens: int = _s("context.budget_tokens", "Default context budget", 2000)
    context_user_tokens: int = _s("context.user_tokens", "Budget share of the user tier", 600)
    context_project_tokens: int = _s(
        "context.project_tokens", "Budget share of the project tier", 800
    )
    context_conversation_tokens: int = _s(
        "context.conversation_tokens", "Budget share of conversation memory", 600
    )
    # logs
    logs_claude_code: bool = _s(
        "logs.claude_code", "Tail Claude Code transcripts when their folder exists", True
    )
    logs_claude_dir: str = _s(
        "logs.claude_dir", "Claude Code projects folder (default ~/.claude/projects)", ""
    )
    logs_codex: bool = _s("logs.codex", "Read Codex CLI sessions when its folder exists", True)
    logs_codex_dir: str = _s("logs.codex_dir", "Codex CLI folder (default $CODEX_HOME or ~/.codex)", "")  # fmt: skip
    logs_gemini: bool = _s("logs.gemini", "Read Gemini CLI chats when its folder exists", True)
    logs_gemini_dir: str = _s("logs.gemini_dir", "Gemini CLI folder (default ~/.gemini, or under $GEMINI_CLI_HOME)", "")  # fmt: skip
    logs_opencode: bool = _s("logs.opencode", "Read OpenCode sessions when its folder exists", True)
    logs_opencode_dir: str = _s("logs.opencode_dir", "OpenCode data folder (default ~/.local/share/opencode)", "")  # fmt: skip
    logs_cline: bool = _s("logs.cline", "Read Cline tasks when its folder exists", True)
    logs_cline_dir: str = _s("logs.cline_dir", "Cline folder (default: every editor's)", "")
    logs_roo_code: bool = _s("logs.roo_code", "Read Roo Code tasks when its folder exists", True)
    logs_roo_code_dir: str = _s("logs.roo_code_dir", "Roo Code folder (default: every editor's)", "")  # fmt: skip
    logs_continue: bool = _s("logs.continue", "Read Continue sessions when its folder exists", True)
    logs_continue_dir: str = _s("logs.continue_dir", "Continue folder (default ~/.continue)", "")
    logs_aider: bool = _s("logs.aider", "Read Aider histories in memory.workspaces folders", True)
    logs_aider_dir: str = _s("logs.aider_dir", "One more folder with an Aider history", "")
    logs_aider_folders_s: float = _s("logs.aider_folders_s", "Seconds between looks for an Aider history in the folders conversations were held in", 60.0)  # fmt: skip
    logs_sources: list[dict[str, Any]] = _s(
        "logs.sources",
        'Extra log folders: [{path = "...", format = "jsonl", agent = "..."}] (agent: optional)',
        factory=list,
    )
    logs_poll_s: float = _s(
        "logs.poll_s", "Seconds between scans of the log folders (the watcher reacts at once)", 5.0
    )
    instructions_budget_tokens: int = _s("instructions.budget_tokens", "Tokens of memory memd keeps in an assistant's instructions file (`memd integrate`)", 1000)  # fmt: skip
    instructions_recent_every_min: float = _s("instructions.recent_every_min", "Minutes between rewrites of an assistant's instructions file when only its recent conversations changed (a changed memory is written at once; 0: every change)", 10.0)  # fmt: skip
    instructions_refresh_s: float = _s("instructions.refresh_s", "Seconds between looks at the instructions files `memd integrate` registered (is memd's block current?)", 5.0)  # fmt: skip
    instructions_quiet_s: float = _s("instructions.quiet_s", "Seconds an instructions file must have been left alone before memd rewrites its block (a person may be editing it)", 10.0)  # fmt: skip
    journal_enabled: bool = _s("journal.enabled", "Write journal/YYYY-MM-DD.md entries", True)
    journal_max_age_days: float = _s(
        "journal.max_age_days",
        "Exchanges older than this are not journaled (so imports of old history stay out)",
        2.0,
    )
    # extraction and summaries
    extract_api_key: str = _s(
        "extract.api_key", "Anthropic API key (ANTHROPIC_API_KEY also works); empty = offline", ""
    )
    extract_base_url: str = _s("extract.base_url", "Anthropic API base URL override", "")
    extract_model: str = _s(
        "extract.model", "Model used for extraction and summaries", "claude-haiku-4-5"
    )
    extract_interval_min: int = _s("extract.interval_min", "Minutes between extraction runs", 30)
    extract_daily_tokens: int = _s("extract.daily_tokens", "LLM tokens allowed per day", 200_000)
    extract_run_tokens: int = _s("extract.run_tokens", "LLM tokens allowed per run", 40_000)
    extract_timeout_s: float = _s("extract.timeout_s", "Timeout of one LLM request", 60.0)
    summary_idle_min: int = _s("summary.idle_min", "A session idle this long gets its summary", 10)
    llm_backend: str = _s("llm.backend", "auto, anthropic, claude-code, openai or off", "auto")
    llm_model: str = _s("llm.model", "Model; empty: extract.model, or haiku for claude-code", "")
    llm_base_url: str = _s("llm.base_url", "OpenAI-compatible API root (…/v1) or proxy", "")
    llm_api_key: str = _s("llm.api_key", "Key of the backend (ANTHROPIC_API_KEY also works)", "")
    llm_claude_path: str = _s("llm.claude_path", "claude command of claude-code; empty: PATH", "")
    llm_rpm: int = _s("llm.rpm", "Requests a minute to a local server (0: no cap)", 30)
    # archival
    archive_journal_days: int = _s("archive.journal_days", "Journal days kept before archival", 30)
    archive_unused_days: int = _s(
        "archive.unused_days", "Low-importance memories unused this long are archived", 90
    )
    archive_max_importance: int = _s(
        "archive.max_importance", "Only memories at or below this importance decay", 3
    )
    archive_max_loss: float = _s(
        "archive.max_loss", "A rewrite dropping more than this share of items is refused", 0.25
    )
    # load / battery
    jobs_min_battery: int = _s(
        "jobs.min_battery", "LLM jobs wait on battery below this percent", 30
    )
    # sync (the job and its outbox hook are built once, at start: a restart applies these)
    sync_backend: str = _s(
        "sync.backend", 'Cloud backend: "", "postgres" or "supabase"', "", restart=True
    )
    sync_dsn: str = _s(
        "sync.dsn", "Postgres connection string (postgres backend)", "", restart=True
    )
    sync_url: str = _s(
        "sync.url", "Supabase project URL (SUPABASE_URL also works)", "", restart=True
    )
    sync_key: str = _s("sync.key", "Supabase key (SUPABASE_KEY also works)", "", restart=True)
    sync_table: str = _s("sync.table", "Cloud table name", "memd_files", restart=True)
    sync_user_id: str = _s(
        "sync.user_id", "Links devices: rows are shared per user when set", "", restart=True
    )
    sync_namespace: str = _s(
        "sync.namespace", '"device" or "user" (shared across devices)', "user", restart=True
    )
    sync_exclude: list[str] = _s(
        "sync.exclude", "Glob patterns of memory paths never synced", factory=list, restart=True
    )
    sync_interval_s: int = _s("sync.interval_s", "Seconds between sync runs", 60, restart=True)
    sync_backoff_cap_s: int = _s(
        "sync.backoff_cap_s", "Longest wait between retries", 600, restart=True
    )
    sync_timeout_s: float = _s("sync.timeout_s", "Timeout of one cloud request", 10.0, restart=True)
    sync_summaries: bool = _s("sync.summaries", "Also sync session summaries", False, restart=True)
    sync_push_delay_s: float = _s(
        "sync.push_delay_s",
        "Seconds after a local change or a context request before an early sync run (0: wait)",
        5.0,
        restart=True,
    )
    # history
    history_keep_days: int = _s(
        "history.keep_days",
        "Days of memory-tree history kept; older changes are squashed into one (0 keeps all)",
        90,
    )
    # recall by meaning (docs/retrieval.md; the embedders and the backfill are built at start)
    semantic_kind: str = _s(
        "semantic.kind",
        'Recall by meaning: "auto" (on when memd[semantic] is installed), "off", "packaged" or "http"',
        "auto",
        restart=True,
    )
    semantic_model: str = _s(
        "semantic.model",
        "Model name the HTTP embeddings endpoint serves (http backend)",
        "",
        restart=True,
    )
    semantic_url: str = _s(
        "semantic.url",
        "OpenAI-compatible embeddings endpoint, e.g. http://127.0.0.1:11434/v1",
        "",
        restart=True,
    )
    semantic_api_key_env: str = _s(
        "semantic.api_key_env",
        "Environment variable holding the endpoint's API key (if any)",
        "",
        restart=True,
    )
    semantic_dim: int = _s(
        "semantic.dim",
        "Vector length the endpoint must return (0: learned from its answers)",
        0,
        restart=True,
    )
    semantic_threads: int = _s(
        "semantic.threads",
        "Threads of the packaged model (queries and backfill alike)",
        2,
        restart=True,
    )
    semantic_batch: int = _s(
        "semantic.batch",
        "Texts the background backfill embeds per call and write",
        16,
        restart=True,
    )
    semantic_timeout_s: float = _s(
        "semantic.timeout_s",
        "Timeout of one backfill request to the HTTP endpoint",
        30.0,
        restart=True,
    )
    semantic_query_timeout_s: float = _s(
        "semantic.query_timeout_s",
        "Longest a request waits, in all, for its query's vector over HTTP; past it the answer"
        " uses full-text search only",
        2.0,
        restart=True,
    )
    semantic_query_wait_ms: int = _s(
        "semantic.query_wait_ms",
        "Longest a request waits for its query's vector from the packaged model (0: until it is"
        " there); past it the answer uses full-text search, and the vector, finished, serves"
        " the next time the query is asked",
        30,
        restart=True,
    )
    semantic_query_prefix: str = _s(
        "semantic.query_prefix",
        'Prepended to queries for the HTTP model (e5: "query: ")',
        "",
        restart=True,
    )
    semantic_passage_prefix: str = _s(
        "semantic.passage_prefix",
        'Prepended to passages for the HTTP model (e5: "passage: ")',
        "",
        restart=True,
    )
    # logging
    log_level: str = _s("log.level", "Log level: DEBUG, INFO, WARNING, ERROR", "INFO")

    paths: Paths = field(default_factory=resolve_paths, metadata={"key": "", "help": ""})
    source: str = field(default="", metadata={"key": "", "help": ""})

    @property
    def memory_dir(self) -> Path:
        # The real path: memd compares paths under it, and links are judged by where they lead.
        p = Path(self.memory_root).expanduser() if self.memory_root else self.paths.memory_root
        return Path(os.path.realpath(p))

    @property
    def db_path(self) -> Path:
        return Path(self.index_path).expanduser() if self.index_path else self.paths.index_path

    @property
    def lock_path(self) -> Path:
        """The daemon's instance lock: one daemon per index, and no writer beside it (the CLI
        and the page take it to write while no daemon runs)."""
        return (
            self.paths.data_dir / "memd.lock"
            if not self.index_path
            else self.db_path.with_suffix(".lock")
        )

    @property
    def write_guard_path(self) -> Path:
        """Where the memory files' write guard keeps memd's recent item changes across a
        restart (one per index, beside its lock)."""
        lock = self.lock_path
        return lock.with_name(f"{lock.stem}-write-guard.json")

    @property
    def socket_path(self) -> Path:
        wanted = (
            Path(self.server_socket).expanduser()
            if self.server_socket
            else self.paths.default_socket
        )
        return usable_socket_path(wanted)

    @property
    def claude_dir(self) -> Path:
        if self.logs_claude_dir:
            return Path(self.logs_claude_dir).expanduser()
        base = os.environ.get("CLAUDE_CONFIG_DIR")
        return (Path(base) if base else Path.home() / ".claude") / "projects"

    @property
    def anthropic_key(self) -> str:
        return self.llm_api_key or self.extract_api_key or os.environ.get("ANTHROPIC_API_KEY", "")

    def value(self, key: str) -> SettingValue:
        return typing.cast(SettingValue, getattr(self, _BY_KEY[key].name))

    def keeping_restart_values(self, running: Settings) -> Settings:
        """These settings with `running`'s values where only a restart applies a change."""
        keep = {f.name: getattr(running, f.name) for f in _BY_KEY.values() if f.metadata["restart"]}
        return dataclasses.replace(self, **keep)

    def changed(self, other: Settings) -> list[str]:
        """Keys whose value differs between two settings (for SIGHUP reload)."""
        return [k for k, f in _BY_KEY.items() if getattr(self, f.name) != getattr(other, f.name)]

    def location_env(self) -> dict[str, str]:
        """The environment another process needs to find this memd: MEMD_HOME, MEMD_SOCKET and
        MEMD_CONFIG when they move memd's files from their defaults.

        Processes started by a service manager or by an assistant (the service unit, Claude
        Code's hooks and MCP server) do not inherit this shell's variables. Secrets never go
        here: unit files and assistant settings are readable by other programs.
        """
        env: dict[str, str] = {}
        if self.paths.home is not None:
            env["MEMD_HOME"] = str(self.paths.home)
        if self.server_socket:
            env["MEMD_SOCKET"] = str(Path(self.server_socket).expanduser().absolute())
        if self.source and Path(self.source) != self.paths.config_file:
            env["MEMD_CONFIG"] = str(Path(self.source).absolute())
        return env


@dataclass(frozen=True, slots=True)
class Setting:
    """One row of the declared table."""

    key: str
    type: Any
    default: Any
    help: str
    restart: bool = False

    @property
    def env(self) -> str:
        return "MEMD_" + self.key.upper().replace(".", "_")


_HINTS = typing.get_type_hints(Settings)
_BY_KEY: dict[str, dataclasses.Field[Any]] = {
    f.metadata["key"]: f for f in dataclasses.fields(Settings) if f.metadata.get("key")
}
SETTINGS: tuple[Setting, ...] = tuple(
    Setting(
        key,
        _HINTS[f.name],
        f.default if f.default is not dataclasses.MISSING else f.default_factory(),  # type: ignore[operator]
        f.metadata["help"],
        f.metadata["restart"],
    )
    for key, f in _BY_KEY.items()
)
LLM_BACKENDS = ("auto", "anthropic", "claude-code", "openai", "off")
_ENV_ALIASES = {
    "MEMD_SOCKET": "server.socket",
    "SUPABASE_URL": "sync.url",
    "SUPABASE_KEY": "sync.key",
}
# Spellings of a yes/no in an environment variable beyond msgspec's true/false/1/0.
_ENV_BOOLS = {"yes": "true", "on": "true", "no": "false", "off": "false"}


def restart_required() -> tuple[str, ...]:
    """The keys only a restart applies (the table's `restart` column)."""
    return tuple(s.key for s in SETTINGS if s.restart)


def type_name(typ: Any) -> str:
    """A setting's type as the docs and errors name it (`int`, `list[str]`)."""
    if isinstance(typ, type) and not isinstance(typ, types.GenericAlias):
        return typ.__name__
    return str(typ).replace("typing.", "")


def _coerce(setting: Setting, value: Any, where: str) -> Any:
    """`value` (from TOML or an override) as the setting's type: ints widen to floats, nothing
    else is converted (a bool is not an int, a string is not a number)."""
    try:
        return msgspec.convert(value, setting.type, strict=True)
    except msgspec.ValidationError as exc:
        raise ConfigError(
            f"{where}: setting {setting.key!r} must be {type_name(setting.type)}, got {value!r}",
            hint=f"{setting.key}: {setting.help}",
        ) from exc


def _from_env(setting: Setting, raw: str, var: str) -> Any:
    """An environment variable's text as the setting's type (lists are JSON)."""
    typ = setting.type
    if typing.get_origin(typ) is list:
        try:
            return msgspec.json.decode(raw, type=typ)
        except msgspec.DecodeError as exc:
            raise ConfigError(
                f"environment variable {var}={raw!r} is not a valid {type_name(typ)}",
                hint=f"{setting.key}: {setting.help}",
            ) from exc
    text = raw if typ is str else raw.strip()
    if typ is bool:
        text = _ENV_BOOLS.get(text.lower(), text)
    try:
        return msgspec.convert(text, typ, strict=False)
    except msgspec.ValidationError as exc:
        raise ConfigError(
            f"environment variable {var}={raw!r} is not a valid {type_name(typ)}",
            hint=f"{setting.key}: {setting.help}",
        ) from exc


def config_path(config_file: Path | None = None, env: Mapping[str, str] | None = None) -> Path:
    """The settings file `load` reads: `config_file`, else MEMD_CONFIG, else the default."""
    env = os.environ if env is None else env
    return config_file or Path(env.get("MEMD_CONFIG", "") or resolve_paths(env).config_file)


def load(
    config_file: Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, SettingValue] | None = None,
    *,
    use_file: bool = True,
) -> Settings:
    """Load settings: defaults < TOML file < environment < explicit overrides.

    Unknown or ill-typed keys, and a file that cannot be read, raise `ConfigError` naming the
    key and the file (with the nearest known key as a hint); so does a `config_file` that does
    not exist (one named on purpose, `--config`, is never silently replaced by the defaults).
    `use_file=False` skips the file (`memd doctor` still checks everything else when the file
    is broken).
    """
    env = os.environ if env is None else env
    paths = resolve_paths(env)
    cfg = config_path(config_file, env)
    values: dict[str, Any] = {}
    by_key = {s.key: s for s in SETTINGS}
    text = read_config(cfg) if use_file else None
    if text is None and use_file and config_file is not None:
        raise ConfigError(
            f"{cfg}: no such settings file",
            hint="check the path given to --config, or leave --config out to use"
            f" {config_path(None, env)}",
        )
    if text is not None:
        import tomllib  # only with a config file: hooks and one-shot calls start faster

        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{cfg}: not valid TOML: {exc}") from exc
        for key, value in flatten(doc, str(cfg)).items():
            if key not in by_key:
                raise ConfigError(
                    f"{cfg}: unknown setting {key!r}", hint=suggest(key, list(by_key))
                )
            values[key] = _coerce(by_key[key], value, str(cfg))
    for var, key in _ENV_ALIASES.items():
        if env.get(var):
            values[key] = env[var]
    for s in SETTINGS:
        if s.env in env:
            values[s.key] = _from_env(s, env[s.env], s.env)
    for key, value in (overrides or {}).items():
        if key not in by_key:
            raise ConfigError(f"unknown setting {key!r}", hint=suggest(key, list(by_key)))
        values[key] = _coerce(by_key[key], value, "override")
    kwargs = {_BY_KEY[k].name: v for k, v in values.items()}
    settings = Settings(paths=paths, source=str(cfg) if text is not None else "", **kwargs)
    if settings.log_level.upper() not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
        raise ConfigError(
            f"log.level must be DEBUG, INFO, WARNING or ERROR, not {settings.log_level!r}"
        )
    if settings.sync_backend not in {"", "postgres", "supabase"}:
        raise ConfigError(
            f"sync.backend must be empty, 'postgres' or 'supabase', not {settings.sync_backend!r}"
        )
    if settings.history_keep_days < 0:
        raise ConfigError(
            f"history.keep_days must be 0 (keep all) or more, not {settings.history_keep_days}"
        )
    if settings.semantic_kind not in {"auto", "off", "packaged", "http"}:
        raise ConfigError(
            "semantic.kind must be 'auto', 'off', 'packaged' or 'http',"
            f" not {settings.semantic_kind!r}"
        )
    if settings.llm_backend not in LLM_BACKENDS:
        raise ConfigError(f"llm.backend: one of {LLM_BACKENDS}, not {settings.llm_backend!r}")
    if settings.semantic_threads < 1 or settings.semantic_batch < 1:
        raise ConfigError("semantic.threads and semantic.batch must be at least 1")
    if settings.semantic_query_wait_ms < 0:
        raise ConfigError(
            "semantic.query_wait_ms must be 0 (wait until the vector is there) or more"
        )
    if settings.sync_namespace not in {"device", "user"}:
        raise ConfigError(
            f"sync.namespace must be 'device' or 'user', not {settings.sync_namespace!r}"
        )
    return settings


SECRETS = frozenset({"extract.api_key", "llm.api_key", "sync.key", "sync.dsn"})
