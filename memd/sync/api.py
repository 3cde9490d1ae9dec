"""Cloud sync as the daemon serves it: `sync_status`, `sync_now`, `sync_init_schema`, the
`sync` job, the index hook that queues changed files, and the middleware that brings the next
run forward when a conversation is going on (every `context` call)."""

from __future__ import annotations

from memd.api import messages as msg
from memd.api.methods import Call, Feature, Host, JobSpec, Method, Middleware
from memd.db import Store
from memd.memory.api import MemoryFeature
from memd.sync.job import DEVICE_KEY, JOB, Syncer

__all__ = ["DEVICE_KEY", "Sync"]


class Sync:
    """The sync feature of one engine (its queue is written even when sync is off: never)."""

    def __init__(self, host: Host, store: Store, memory: MemoryFeature) -> None:
        self.host = host
        self.memory = memory
        self.syncer = Syncer(
            host.settings, store, memory.indexer, next_run=lambda: host.next_run(JOB),
        )  # fmt: skip
        self.syncer.wake = lambda delay_s: host.nudge(JOB, delay_s)

    def sync_now(self, p: msg.SyncNowParams) -> msg.SyncNowResult:
        self.syncer.prepare_now(retry_parked=p.retry_parked)
        if not self.host.in_daemon:
            self.memory.indexer.reconcile()  # no watcher in this process: catch up with the files
        run = self.host.run_job(JOB)
        return msg.SyncNowResult(
            job=run.job, outcome=run.outcome, message=run.message, counts=run.counts,
            status=self.syncer.status(),
        )  # fmt: skip

    def status_into(self, out: msg.StatusResult) -> None:
        """Cloud sync's part of `status`: the summary (`sync_status` has the details)."""
        out.sync = self.syncer.summary()

    def on_conversation(self, method: str, params: msg.Params, call_next: Call) -> msg.Result:
        """Middleware: a `context` call means a conversation: push what changed soon."""
        self.syncer.on_conversation()
        result: msg.Result = call_next(params)
        return result

    def middleware(self) -> list[Middleware]:
        if not self.syncer.enabled:
            return []
        return [Middleware("sync-on-conversation", frozenset({"context"}), self.on_conversation)]

    def feature(self) -> Feature:
        f = Feature(
            "sync",
            methods=[
                Method(msg.SYNC_STATUS, lambda p: self.syncer.status(), why="reads the outbox"),
                Method(msg.SYNC_NOW, self.sync_now, writes=True, why="talks to the cloud: seconds"),
                Method(
                    msg.SYNC_INIT_SCHEMA,
                    lambda p: self.syncer.init_schema(),
                    writes=True,
                    why="talks to the cloud",
                ),
            ],  # fmt: skip
            status_into=[self.status_into],
        )
        if self.syncer.enabled:
            self.memory.indexer.hooks.append(self.syncer.on_change)
            f.jobs.append(
                JobSpec(JOB, self.syncer.run, self.host.settings.sync_interval_s, first_delay_s=1.0)
            )
            f.on_stop.append(self.syncer.close)
        return f
