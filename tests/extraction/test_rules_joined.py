"""A new employer said as "Started at …" or "joined …" in a sentence that goes on about "they"
(`rules.moves`), and the same shapes said of someone else or of a team.

The messages are not from any extraction set.
"""

from __future__ import annotations

from tests.extraction.session import extract


def _employers(*texts: str) -> list[tuple[str, str]]:
    """(turn, content) of the memories keyed `employer`."""
    return [(m.source_turn_ids[0], m.content) for m in extract(*texts) if m.subject == "employer"]


def test_started_at_or_joined_an_organisation_is_the_new_employer() -> None:
    for later in (
        "Started at Monzo on Monday, same role, but they deploy with Nomad instead of Kubernetes.",
        "Joined Monzo on Monday, same role, but they deploy with Nomad instead of Kubernetes.",
        "Left Klarna in May and joined Monzo, where they deploy with Nomad.",
    ):
        assert _employers("I'm a backend engineer at Klarna.", later) == [
            ("t0", "User works at Klarna"),
            ("t1", "User works at Monzo"),
        ], later


def test_someone_else_joining_or_a_team_joined_is_no_employer() -> None:
    for text in (
        "My girlfriend just joined Spotify's Stockholm office, but they gave her a Windows laptop.",
        "A former colleague, Rahul, just joined Canva as a staff engineer.",
        "She joined Stripe in May, where they deploy with Nomad.",
        "I joined the Payments team this month, but they deploy with Nomad.",
    ):
        assert _employers(text) == [], text
