"""Memory points: what the user says about how the assistant should work with them.

"keep your answers short from now on", "please always show the diff first", "别用表情",
"回答简短一点", "I often work late at night". Each is a standalone preference statement with a
`subject` key for its topic (`style:length`, `style:diff`, `style:emoji`, `reply-language`,
`schedule`, ...), so a later "be more detailed" (`style:length`) supersedes "keep answers short"
through the usual placement. A question about a style ("should answers be short?") is not a
request and gives nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import tzinfo

from memd.core.models import ExtractedMemory, Turn
from memd.extraction.rules.extract import extract_rules

# Subjects that are about working with the assistant rather than about the user's tools.
_POINT_SUBJECTS = frozenset({"reply-language", "schedule"})
_ABOUT_ASSISTANT_RE = re.compile(
    r"\b(?:the\s+assistant|answers?|replies|reply|responses?|explanations?)\b|回答|回复|解释|你",
    re.I,
)


def is_memory_point(memory: ExtractedMemory) -> bool:
    """Whether an extracted memory is about how the assistant should work with the user."""
    if memory.type != "preference":
        return False
    if memory.subject.startswith("style:") or memory.subject in _POINT_SUBJECTS:
        return True
    return bool(_ABOUT_ASSISTANT_RE.search(memory.content))


def memory_points(turns: Sequence[Turn], *, tz: tzinfo | None = None) -> list[ExtractedMemory]:
    """The memory points the user turns state, in order (type "preference", `subject` set when
    the topic is single-valued). The same turns' other memories come from `extract_rules`."""
    return [m for m in extract_rules(turns, tz=tz) if is_memory_point(m)]
