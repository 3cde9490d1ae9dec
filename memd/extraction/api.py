"""Extraction as the daemon runs it: the `extract` job and the LLM budget in `status`; and the
agents it keeps relationships with: the `relationship` method, the agents seen in `status` and
in `memories` with scope "agent"."""

from __future__ import annotations

import logging
import threading
import time

from memd.api import messages as msg
from memd.api.methods import Call, Feature, JobSpec, Method, Middleware
from memd.core.errors import InvalidParams
from memd.core.models import JobResult
from memd.core.settings import Settings
from memd.extraction.seen import agents_seen
from memd.llm.budget import llm_status
from memd.llm.choice import choose, forget_probes
from memd.memory.api import MemoryFeature

log = logging.getLogger(__name__)


def run_extraction(memory: MemoryFeature) -> JobResult:
    # The rules' lexicons take ~0.1 s to import: an engine built only to answer a query (the
    # CLI's and the hooks' fallback without a daemon) loads them only if a method needs them.
    from memd.extraction import job as extraction

    return extraction.run_extraction(memory.job_context())


def _choose_backend(settings: Settings) -> None:
    """Decide the LLM backend in the background, so `status` can name it without waiting for a
    probe (`claude auth status` takes a second)."""

    def decide() -> None:
        try:
            choose(settings)
        except Exception:  # a probe's failure is reported by the jobs that use the backend
            log.exception("choosing the LLM backend failed")

    threading.Thread(target=decide, name="memd-llm-choice", daemon=True).start()


def _reload(memory: MemoryFeature, new: Settings) -> None:
    memory.host.reschedule("extract", new.extract_interval_min * 60)
    forget_probes()  # a new key, path or URL is looked at again
    _choose_backend(new)


def extraction_progress(
    memory: MemoryFeature, p: msg.ExtractionProgressParams
) -> msg.ExtractionProgressResult:
    """How far the `extract` job read one session (the page's session view says it)."""
    from memd.extraction import repo

    if not p.session_id.strip():
        raise InvalidParams("param 'session_id' is required")
    found = repo.session_progress(memory.store.read(), p.session_id)
    turns, read = found or (0, 0)
    return msg.ExtractionProgressResult(
        session_id=p.session_id, found=found is not None, turns=turns, read=read
    )


def feature(memory: MemoryFeature) -> Feature:
    """New conversation turns become typed memories, every `extract.interval_min`."""
    s = memory.host.settings

    def llm_into(out: msg.StatusResult) -> None:
        out.llm = llm_status(memory.job_context())

    return Feature(
        "extraction",
        methods=[
            Method(
                msg.EXTRACTION_PROGRESS,
                lambda p: extraction_progress(memory, p),
                runs="reader",
                why="counts one session's turns by index: 0.06 ms, 0.6 ms at 10,000 turns",
            )
        ],
        jobs=[
            JobSpec(
                "extract",
                lambda: run_extraction(memory),
                s.extract_interval_min * 60,
                120,
            )
        ],
        status_into=[llm_into],
        on_start=[lambda: _choose_backend(memory.host.settings)],
        on_reload=[lambda new: _reload(memory, new)],
    )


class Agents:
    """The agents seen in the conversations and their relationship files, as the daemon serves
    them (the files themselves are kept by the `extract` job)."""

    def __init__(self, memory: MemoryFeature) -> None:
        self.memory = memory

    def relationship(self, p: msg.RelationshipParams) -> msg.RelationshipResult:
        from memd.extraction.agents import relationship_data  # the rules: see run_extraction

        if not p.agent_id.strip():
            raise InvalidParams("param 'agent_id' is required")
        return relationship_data(
            self.memory.store.read(), self.memory.host.settings.memory_dir, p.agent_id, time.time()
        )

    def seen(self) -> list[msg.AgentSeen]:
        return agents_seen(self.memory.store.read())

    def status_into(self, out: msg.StatusResult) -> None:
        """The agents seen, in `status`."""
        out.agents = self.seen()

    def list_agents(self, method: str, params: msg.Params, call_next: Call) -> msg.Result:
        """Middleware: `memories` with scope "agent" also lists every agent seen."""
        result: msg.Result = call_next(params)
        if (
            isinstance(params, msg.MemoriesParams)
            and params.scope == "agent"
            and isinstance(result, msg.MemoriesResult)
        ):
            result.agents = self.seen()
        return result

    def middleware(self) -> Middleware:
        return Middleware("agents", frozenset({"memories"}), self.list_agents)

    def feature(self) -> Feature:
        return Feature(
            "agents",
            methods=[
                Method(
                    msg.RELATIONSHIP,
                    self.relationship,
                    runs="reader",
                    why="reads one agent's sessions and its file: ~1 ms; 10 ms at 2,000 sessions",
                )
            ],
            status_into=[self.status_into],
        )
