"""Composition root: which features a memd engine has, how they compose, in which order.

Everything here is wiring. The features declare their methods, jobs and status in their own
`api` modules; the daemon package serves an engine without knowing any feature. This file
is the one place that shows:

- the features, in start order (their `on_stop` run in reverse);
- the compositions: `search` = Markdown sections and conversation turns ranked together;
  `import` = a memd export, else conversation logs; `context` = the Markdown tiers plus the
  conversation tier;
- the middleware, in order (the first is the outermost);
- recall by meaning (`memd.semantic`) is handed to memory and conversations, which fuse it
  into `search`, `recall` and `context` (their full-text path alone while it is off);
- the history of the memory tree: started and closed by the memory feature, whose door to
  the memory files (`memd.memory.files.MemoryFiles`) records every operation through it as
  one change; read and undone through the history feature;
- writing while no daemon runs (`writing_engine`): the CLI's and the page's changes then.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from memd.api import messages as msg
from memd.api.methods import Feature, Method, Middleware, Periodic
from memd.conversations.api import Conversations
from memd.core.errors import DaemonAlreadyRunning, DaemonStarting, InvalidParams
from memd.core.settings import Settings, SettingValue
from memd.daemon import engine as engine_mod
from memd.daemon.api import daemon_feature
from memd.daemon.lock import InstanceLock
from memd.daemon.process import Daemon, setup_logging
from memd.db import Store
from memd.extraction import api as extraction_api
from memd.history import History
from memd.history.api import HistoryFeature
from memd.integrations import instructions
from memd.memory import repo as docs
from memd.memory.api import MemoryFeature
from memd.semantic.api import SemanticFeature
from memd.sync.api import DEVICE_KEY, Sync
from memd.transfer.api import Transfer

__all__ = ["Engine", "daemon", "setup_logging"]


class Engine(engine_mod.Engine):
    """A memd engine with every feature: what the daemon serves and the CLI falls back to."""

    def __init__(
        self, settings: Settings, store: Store, *, started_at: float | None = None
    ) -> None:
        super().__init__(settings, store, started_at=started_at)
        history = History.from_settings(settings)
        semantic = SemanticFeature(self, store)
        memory = MemoryFeature(self, store, history, semantic.recall)
        conversations = Conversations(self, store, memory, semantic.recall)
        sync = Sync(self, store, memory)
        transfer = Transfer(memory, device_id=lambda: docs.get_state(store.read(), DEVICE_KEY))
        agents = extraction_api.Agents(memory)
        # Kept for callers that drive an engine directly (jobs in tests, benches).
        self.memory = memory
        self.indexer = memory.indexer
        self.ops = memory.ops
        self.markdown_lock = memory.lock
        self.history = history
        past = HistoryFeature(
            history, apply=memory.apply_undo, reindex=memory.indexer.index_paths, lock=memory.lock
        )
        self.semantic = semantic

        features = [
            daemon_feature(self, memory.index),
            semantic.feature(),
            memory.feature(providers=[conversations.provider]),
            conversations.feature(),
            extraction_api.feature(memory),
            agents.feature(),
            sync.feature(),
            transfer.feature(),
            past.feature(),
            Feature("search", methods=[search_method(conversations)]),
            Feature("import", methods=[import_method(transfer, conversations)]),
            instructions_feature(self),
        ]
        for f in features:
            self.add(f)
        middleware: list[Middleware] = [
            *sync.middleware(),  # a `context` call brings the next sync run forward
            memory.usage_middleware(),  # what `context` and `search` returned counts as used
            agents.middleware(),  # `memories` with scope "agent" lists the agents seen
        ]
        self.use(middleware)


def instructions_feature(engine: Engine) -> Feature:
    """memd's block in the instructions files `memd integrate` registered: the memory context
    and the latest conversations, kept current (`memd.integrations.instructions`)."""

    def context(assistant: str) -> str:
        budget = engine.settings.instructions_budget_tokens  # read again: a reload applies
        return instructions.memory_text(engine.call, assistant, budget)

    keeper = instructions.Keeper(instructions.Targets.of(engine.settings), context)

    def refresh() -> None:
        keeper.recent_every_s = engine.settings.instructions_recent_every_min * 60  # a reload
        keeper.quiet_s = engine.settings.instructions_quiet_s
        keeper.refresh()

    return Feature(
        "instructions", status_into=[keeper.status_into], on_start=[refresh],
        periodic=[Periodic("instructions", lambda: engine.settings.instructions_refresh_s, refresh)],
    )  # fmt: skip


def search_method(conversations: Conversations) -> Method[Any, Any]:
    """`search`: Markdown sections and conversation turns on one page, ranked together
    (`memd.conversations.ranking`; `scope` picks either)."""

    def search(p: msg.SearchParams) -> msg.SearchResult:
        if not p.query.strip():
            raise InvalidParams("param 'query' is required")
        return msg.SearchResult(query=p.query, hits=conversations.search(p))

    return Method(
        msg.SEARCH, search, runs="reader",
        why="FTS over sections p50 ~1 ms, p99 6 ms; over 100k turns up to 100 ms",
    )  # fmt: skip


def import_method(transfer: Transfer, conversations: Conversations) -> Method[Any, Any]:
    """`import`: a memd export (by `format` or content), else conversation logs."""

    def import_(p: msg.ImportParams) -> msg.MergeResult | msg.LogsImported | msg.ChatGPTImported:
        transfer.check_source(p)
        if transfer.is_export(p):
            return transfer.import_export(p)
        return conversations.import_logs(p)

    return Method(msg.IMPORT, import_, writes=True, why="reads a file: seconds")


def daemon(
    settings: Settings,
    *,
    config_file: Path | None = None,
    overrides: Mapping[str, SettingValue] | None = None,
) -> Daemon:
    """The `memd serve` process, serving an `Engine` with every feature."""
    return Daemon(settings, Engine, config_file=config_file, overrides=overrides)


@contextlib.contextmanager
def writing_engine(settings: Settings) -> Iterator[Engine]:
    """An engine over the index opened for writing, for a change made while no daemon runs
    (the CLI's and the memory page's: both write then, the same way).

    It holds the daemon's instance lock while it is open, so it never writes beside a daemon
    and no daemon starts in the middle of the change; a daemon that holds the lock without
    answering on this socket yet (starting, or listening on another socket) is
    `DaemonStarting`: ask it again in a moment. A damaged index is moved aside and rebuilt
    from the files (`engine.recovered` says so).
    """
    from memd.db import recovery

    lock = InstanceLock(settings.lock_path)
    try:
        lock.acquire()
    except DaemonAlreadyRunning as exc:
        raise DaemonStarting(
            f"{exc}, but does not answer on {settings.socket_path}",
            hint="it is starting: try again in a moment (or it listens on another socket:"
            " check MEMD_SOCKET and server.socket)",
        ) from None
    try:
        store, recovered = recovery.open_store(settings.db_path)
        try:
            engine = Engine(settings, store)
            engine.recovered = recovered
            yield engine
        finally:
            store.close()
    finally:
        lock.release()
