"""The one LLM interface the jobs use, over whichever backend answers.

`LLM.extract` (memories and signals of a batch of turns) and `LLM.summarize` (a session's title
and summary) build the prompt in the backend's style, send it, find the JSON object in the
answer and validate it (`memd.llm.answers`). An answer that cannot be read is asked for once
more, saying why; a second bad answer raises `LLMBadAnswer` carrying what both cost, and nothing
of either is returned. A `Backend` only carries a prompt to a model and its text back, and
turns its transport's failures into the memd error tree:

- `LLMRetryable`: rate limits, overload, server errors, timeouts, the network; a later run.
- `LLMDeferred`: a usage limit that resets later; the job waits.
- `LLMConfigError`: a bad key, not logged in, an unknown model; stop and tell the user.
- `LLMBadAnswer`: the model answered, but not usably (refused, empty, cut off).
- `LLMError`: anything else.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from memd.core.errors import LLMBadAnswer
from memd.core.models import Turn
from memd.llm.answers import (
    COMPACT_EXTRACTION_SCHEMA,
    EXTRACTION_SCHEMA,
    NO_USAGE,
    SUMMARY_SCHEMA,
    ExtractionResult,
    LLMUsage,
    SummaryResult,
    bad_answer,
    parse_object,
    read_extraction,
    read_summary,
)
from memd.llm.prompts import Prompt, Style, extraction_prompt, summary_prompt

__all__ = ["LLM", "Backend", "Reply"]

T = TypeVar("T")

log = logging.getLogger(__name__)
# One retry of an unreadable answer: a second try fixes most slips of a small model, a third
# rarely does and costs as much.
ATTEMPTS = 2


@dataclass(frozen=True, slots=True)
class Reply:
    """A model's text and what the request cost; `truncated` when it ran out of tokens."""

    text: str
    usage: LLMUsage
    truncated: bool = False


class Backend(Protocol):
    """Carries one prompt to a model and its text back (see the module docstring for errors)."""

    @property
    def name(self) -> str:
        """The backend's name: "anthropic", "claude-code" or "openai"."""
        ...

    @property
    def model(self) -> str: ...

    @property
    def style(self) -> Style:
        """How prompts are written for it (`memd.llm.prompts`)."""
        ...

    def ask(self, prompt: Prompt, schema: dict[str, Any], max_tokens: int) -> Reply: ...


class LLM:
    """Extraction and summaries through one `Backend`, answers validated the same way."""

    def __init__(self, backend: Backend, *, max_tokens: int = 1500) -> None:
        self.backend = backend
        self.max_tokens = max_tokens

    def __repr__(self) -> str:
        return f"LLM({self.backend!r})"

    @property
    def name(self) -> str:
        return self.backend.name

    @property
    def model(self) -> str:
        return self.backend.model

    def extract(self, turns: Sequence[Turn], known: Sequence[str] = ()) -> ExtractionResult:
        """The memories and signals in `turns`; `known` are memories already stored, which the
        model is told not to repeat (exact repeats are dropped)."""
        if not turns:
            return ExtractionResult([], NO_USAGE)
        prompt = extraction_prompt(self.backend.style, turns, known)
        ids = [(t.turn_id, t.role) for t in turns]
        schema = COMPACT_EXTRACTION_SCHEMA if self.backend.style == "compact" else EXTRACTION_SCHEMA
        return self._ask(prompt, schema, ("memories",),
                         lambda data, usage: read_extraction(data, ids, known, usage))  # fmt: skip

    def summarize(self, turns: Sequence[Turn]) -> SummaryResult:
        """A short title and a summary of a session."""
        if not turns:
            return SummaryResult("", "", NO_USAGE)
        prompt = summary_prompt(self.backend.style, turns)
        return self._ask(prompt, SUMMARY_SCHEMA, ("title", "summary"), read_summary)

    def _ask(
        self,
        prompt: Prompt,
        schema: dict[str, Any],
        keys: tuple[str, ...],
        read: Callable[[dict[str, Any], LLMUsage], T],
    ) -> T:
        """The answer read by `read`, asking once more after an unreadable one."""
        spent = NO_USAGE
        why: LLMBadAnswer | None = None
        for attempt in range(ATTEMPTS):
            asked = prompt if attempt == 0 else prompt.again()
            try:
                reply = self.backend.ask(asked, schema, self.max_tokens)
            except LLMBadAnswer as exc:
                spent += LLMUsage(exc.input_tokens, exc.output_tokens, exc.requests)
                why = exc
                continue
            spent += reply.usage
            try:
                return read(parse_object(reply.text, keys), spent)
            except ValueError as exc:
                why = bad_answer(_unreadable(exc, reply, self.max_tokens), spent)
            except LLMBadAnswer as exc:
                why = exc
            log.info(
                "%s %s: unreadable answer (try %d): %s", self.name, self.model, attempt + 1, why
            )
        assert why is not None
        times = "twice" if spent.requests > 1 else "once"
        raise bad_answer(f"{why} (asked {times})", spent, why.hint)


def _unreadable(exc: ValueError, reply: Reply, max_tokens: int) -> str:
    if reply.truncated:
        return f"malformed JSON from model: the answer was cut off at {max_tokens} tokens"
    return f"malformed JSON from model: {exc}"
