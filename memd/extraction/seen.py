"""The agents seen in the conversations, as `status` and `memories` with scope "agent" list
them: their interactions, and the familiarity and trust last written to their relationship
files (`memd.extraction.agents` keeps those files). Apart from the relationship rules, so a
daemon's `status` does not load the offline extractor's lexicons (`memd.extraction.rules`)."""

from __future__ import annotations

from memd.api.messages import AgentSeen
from memd.conversations import repo as conversations
from memd.conversations.formats import CLAUDE_CODE_AGENT
from memd.db import Connection
from memd.extraction import repo
from memd.memory.tree import slugify

SUBAGENT_FALLBACK = f"{CLAUDE_CODE_AGENT}-subagent"


def subagent_id(agent_type: str) -> str:
    """The agent id of a Claude Code sub-agent of this type ("Explore" → claude-code-explore)."""
    return f"{CLAUDE_CODE_AGENT}-{slugify(agent_type)}" if agent_type.strip() else SUBAGENT_FALLBACK


def agents_seen(conn: Connection) -> list[AgentSeen]:
    """Every agent seen, the most recent first: interactions, and the familiarity and trust
    last written to its file (None before the first)."""
    seen: dict[str, AgentSeen] = {}

    def add(
        agent: str, subagent: bool, sessions: int, turns: int, first: float, last: float
    ) -> None:
        a = seen.setdefault(agent, AgentSeen(agent_id=agent, subagent=subagent, sessions=0,
                                             turns=0, first_at=first, last_at=last,
                                             familiarity=None, trust=None))  # fmt: skip
        a.subagent = a.subagent and subagent
        a.sessions += sessions
        a.turns += turns
        a.first_at, a.last_at = min(a.first_at, first), max(a.last_at, last)

    for raw, sessions, turns, first, last in repo.agent_totals(conn):
        add(slugify(raw), False, sessions, turns, first, last)
    for kind, runs, turns, first, last in conversations.subagent_totals(conn):
        add(subagent_id(kind), True, runs, turns, first, last)
    states = repo.agent_states(conn)
    for agent, a in seen.items():
        st = states.get(agent)
        if st is not None:
            a.familiarity, a.trust = st.familiarity, st.trust
    return sorted(seen.values(), key=lambda a: (-a.last_at, a.agent_id))
