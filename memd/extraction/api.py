"""Extraction as the daemon runs it: the `extract` job and the LLM budget in `status`."""

from __future__ import annotations

from memd.api.methods import Feature, JobSpec
from memd.extraction import job as extraction
from memd.llm.budget import llm_status
from memd.memory.api import MemoryFeature


def feature(memory: MemoryFeature) -> Feature:
    """New conversation turns become typed memories, every `extract.interval_min`."""
    s = memory.host.settings
    return Feature(
        "extraction",
        jobs=[
            JobSpec(
                "extract",
                lambda: extraction.run_extraction(memory.job_context()),
                s.extract_interval_min * 60,
                120,
            )
        ],
        status=[lambda: {"llm": llm_status(memory.job_context())}],
    )
