"""`search` puts memory and conversations on one page: a curated memory outranks the journal
line or the turn that repeats it (which are folded into it as its sources), scores mean the
same thing whatever the kind of hit, and a Chinese query finds a Chinese memory by its words.
Real daemon, real files, the socket."""

from __future__ import annotations

from typing import Any

from tests.utils import DaemonProcess, wait_for

NOTES = """# Notes

## Notes
- always use vitest <!-- memd id=m_5e1f0a77 imp=7 src=manual at=2026-11-01 -->
- The staging database password is in 1Password under "tidewater-staging"
- Dentist appointment moved to the second Thursday of December
- I prefer aisle seats on flights longer than three hours
- Standup is at 10:00; Singapore and Hangzhou share a time zone
- 我每天早上六点半去西湖边跑步，大概五公里
- 我对花生过敏，点外卖要备注
- Rereading "Designing Data-Intensive Applications", chapter 7
"""
# What memd's journal writes for an exchange that said the same thing.
JOURNAL = """# 2026-11-20

## Dashboard tests · 5f1c2d3e-8a41

- 10:32 **Q:** please always use vitest here **A:** Done. <!-- memd turn=u1 -->
"""


def search(d: DaemonProcess, query: str, **params: Any) -> list[dict[str, Any]]:
    hits: list[dict[str, Any]] = d.call("search", {"query": query, **params})["hits"]
    return hits


def found(d: DaemonProcess, query: str, *paths: str) -> list[dict[str, Any]]:
    """The hits of `query` once every path is indexed (as a hit or as a hit's source)."""

    def ready() -> list[dict[str, Any]] | None:
        hits = search(d, query)
        seen = {h["path"] for h in hits} | {s["path"] for h in hits for s in h.get("sources", [])}
        return hits if all(any(s.endswith(p) for s in seen) for p in paths) else None

    hits: list[dict[str, Any]] = wait_for(ready, 10)
    return hits


def test_a_curated_note_outranks_a_journal_line_quoting_it(daemon: DaemonProcess) -> None:
    (daemon.memory / "_core" / "notes.md").write_text(NOTES)
    (daemon.memory / "journal" / "2026-11-20.md").write_text(JOURNAL)
    hits = found(daemon, "vitest", "_core/notes.md", "journal/2026-11-20.md")
    assert hits[0]["path"].endswith("_core/notes.md"), [h["path"] for h in hits]
    # The journal line says nothing more: it is listed with the note, not as a hit of its own.
    assert not any(h["path"].endswith("2026-11-20.md") for h in hits)
    assert [s["kind"] for s in hits[0]["sources"]] == ["journal"]
    assert hits[0]["items"] == ["always use vitest"]


def test_a_turn_repeating_a_memory_is_one_of_its_sources(daemon: DaemonProcess) -> None:
    (daemon.memory / "_core" / "notes.md").write_text(NOTES)
    daemon.call("ingest", {"turns": [
        {"session_id": "s1", "id": "u1", "role": "user", "ts": 1763600000,
         "content": "From now on always use vitest for the frontend unit tests"},
        {"session_id": "s1", "id": "a1", "role": "assistant", "ts": 1763600060,
         "content": "Understood, I set the project up with it."},
    ]})  # fmt: skip
    found(daemon, "vitest", "_core/notes.md")
    wait_for(lambda: search(daemon, "vitest", scope="conversations"), 10)
    hits = search(daemon, "vitest")
    assert hits[0]["path"].endswith("_core/notes.md")
    assert not any(h["kind"] == "turn" and h["turn_id"] == "u1" for h in hits)
    assert [(s["kind"], s["turn_id"]) for s in hits[0]["sources"]] == [("turn", "u1")]


def test_scores_mean_the_same_for_every_kind_of_hit(daemon: DaemonProcess) -> None:
    """Sections and turns are on one page in the order of one score, between 0 and 1 (not a
    page of sections scored by bm25, then turns scored by their own ranker, in that order)."""
    (daemon.memory / "topics" / "deploy.md").write_text(
        "# Deploy\n\n## Servers\n- The staging server runs Debian 12\n- Backups run nightly\n"
    )
    daemon.call("ingest", {"turns": [
        {"session_id": "s2", "id": f"u{i}", "role": "user", "ts": 1763600000 + i,
         "content": f"The staging deploy fails again ({i}): the health check on fly.io times out"}
        for i in range(3)
    ]})  # fmt: skip
    wait_for(lambda: len(search(daemon, "staging deploy health check")) >= 4, 10)
    hits = search(daemon, "staging deploy health check")
    assert {h["kind"] for h in hits} == {"turn", "section"}, hits
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True) and all(0 < s <= 1 for s in scores), scores


def test_a_chinese_query_finds_a_chinese_memory_by_its_words(daemon: DaemonProcess) -> None:
    """A question written as one run of Chinese characters holds more words than the note it
    asks about; the note is found by the words they share."""
    (daemon.memory / "_core" / "notes.md").write_text(NOTES)
    hits = wait_for(lambda: search(daemon, "我每天早上几点跑步", scope="memory"), 10)
    assert hits[0]["path"].endswith("_core/notes.md")
    assert hits[0]["items"] == ["我每天早上六点半去西湖边跑步，大概五公里"]


CLUSTER = """# Kubernetes

## Homelab cluster
- Certificates: cert-manager with Let's Encrypt, DNS-01 through Cloudflare <!-- memd id=m_c3e1 src=s3#a3 -->
"""
# The journal line memd writes for the exchange the memory came from.
CLUSTER_JOURNAL = """# 2026-11-08

## k3s cluster · s3

- 12:13 **Q:** How do I renew the Traefik certificates automatically? **A:** Install cert-manager… <!-- memd turn=a3 -->
"""


def test_the_question_a_memory_answers_is_one_of_its_sources(daemon: DaemonProcess) -> None:
    """The memory records the answer (its `src` names the assistant's turn); the user's turn
    that asked for it matches the query better, word for word, but says what the memory says:
    it and the exchange's journal line are listed with the memory, not as hits of their own."""
    (daemon.memory / "topics" / "kubernetes.md").write_text(CLUSTER)
    (daemon.memory / "journal" / "2026-11-08.md").write_text(CLUSTER_JOURNAL)
    daemon.call("ingest", {"turns": [
        {"session_id": "s3", "id": "u3", "role": "user", "ts": 1762603980,
         "content": "How do I renew the Traefik certificates automatically?"},
        {"session_id": "s3", "id": "a3", "role": "assistant", "ts": 1762604040,
         "content": "Install cert-manager with a ClusterIssuer for Let's Encrypt; the DNS-01"
                    " challenge uses your Cloudflare API token."},
    ]})  # fmt: skip
    query = "renew traefik certificates automatically"
    found(daemon, query, "topics/kubernetes.md", "journal/2026-11-08.md")
    wait_for(lambda: search(daemon, query, scope="conversations"), 10)
    hits = search(daemon, query)
    assert hits[0]["path"].endswith("topics/kubernetes.md"), hits
    assert not any(h["kind"] == "turn" and h["turn_id"] == "u3" for h in hits), hits
    assert ("turn", "u3") in [(s["kind"], s["turn_id"]) for s in hits[0]["sources"]]


def test_the_answer_to_a_question_a_memory_names_is_one_of_its_sources(
    daemon: DaemonProcess,
) -> None:
    """The memory's `src` names the user's turn that decided it; the assistant's reply to that
    turn, which says it was done, is the same exchange."""
    (daemon.memory / "projects" / "api").mkdir(parents=True)
    (daemon.memory / "projects" / "api" / "context.md").write_text(
        "# Project api\n\n## Decisions\n- The webhook sender retries 3 times (timeout 10 s)"
        " <!-- memd id=m_9c8d src=s4#u2 -->\n"
    )
    daemon.call("ingest", {"turns": [
        {"session_id": "s4", "id": "u2", "role": "user", "ts": 1763370000,
         "content": "把超时也从 30 秒改成 10 秒。"},
        {"session_id": "s4", "id": "a2", "role": "assistant", "ts": 1763370060,
         "content": "Done: the webhook timeout is now 10 seconds (WEBHOOK_TIMEOUT_S in settings)."},
    ]})  # fmt: skip
    query = "webhook timeout seconds"
    found(daemon, query, "projects/api/context.md")
    wait_for(lambda: search(daemon, query, scope="conversations"), 10)
    hits = search(daemon, query)
    assert hits[0]["path"].endswith("projects/api/context.md"), hits
    assert not any(h["kind"] == "turn" and h["turn_id"] == "a2" for h in hits), hits
    assert ("turn", "a2") in [(s["kind"], s["turn_id"]) for s in hits[0]["sources"]]


GO = """# Go

## Style
- gofmt (tabs) and golangci-lint in CI
- Tabs in Go, 4 spaces in Python
"""


def test_the_turn_that_answers_outranks_a_note_sharing_one_of_its_words(
    daemon: DaemonProcess,
) -> None:
    """A curated note that holds one word of five ("go") is not what "who should close a Go
    channel, the producer or the consumer?" asks; the exchange that answers all of it comes
    first, shown by its answer with the question as its source."""
    (daemon.memory / "topics" / "go.md").write_text(GO)
    daemon.call("ingest", {"turns": [
        {"session_id": "s5", "id": "u5", "role": "user", "ts": 1763800000,
         "content": "In Go, who closes a channel: the producer or the consumer?"},
        {"session_id": "s5", "id": "a5", "role": "assistant", "ts": 1763800060,
         "content": "The producer closes the channel when it is done sending; a consumer"
                    " never closes a channel it receives from."},
    ]})  # fmt: skip
    query = "who should close a Go channel, the producer or the consumer?"
    found(daemon, query, "topics/go.md")
    wait_for(lambda: len(search(daemon, query, scope="conversations")) == 2, 10)
    hits = search(daemon, query)
    assert (hits[0]["kind"], hits[0]["turn_id"]) == ("turn", "a5"), hits
    assert [(s["kind"], s["turn_id"]) for s in hits[0]["sources"]] == [("turn", "u5")]
    assert any(h["path"].endswith("topics/go.md") for h in hits[1:]), hits


def test_a_question_is_shown_with_its_answer_not_above_it(daemon: DaemonProcess) -> None:
    """The user's question says the query's words again, its answer says what to do: the
    exchange is one hit, the answer, with the question as its source (beside sections, when
    the page mixes memory and conversations)."""
    (daemon.memory / "projects" / "api").mkdir(parents=True)
    (daemon.memory / "projects" / "api" / "context.md").write_text(
        "# Project api\n\n## Decisions\n- One alembic migration per PR\n"
    )
    daemon.call("ingest", {"turns": [
        {"session_id": "s6", "id": "u6", "role": "user", "ts": 1763900000,
         "content": "We have two alembic heads after merging main. How do I fix it?"},
        {"session_id": "s6", "id": "a6", "role": "assistant", "ts": 1763900060,
         "content": "Run alembic merge heads to create a merge revision, then upgrade."},
    ]})  # fmt: skip
    query = "two alembic heads after merging main"
    found(daemon, query, "projects/api/context.md")
    wait_for(lambda: len(search(daemon, query, scope="conversations")) == 2, 10)
    hits = search(daemon, query)
    turns = [h for h in hits if h["kind"] == "turn"]
    assert [t["turn_id"] for t in turns] == ["a6"], hits
    assert [(s["kind"], s["turn_id"]) for s in turns[0]["sources"]] == [("turn", "u6")]
    # Conversations alone keep their ranker's order, each turn a hit of its own.
    assert {h["turn_id"] for h in search(daemon, query, scope="conversations")} == {"u6", "a6"}


def test_a_note_outranks_the_turn_that_says_it_again_in_other_words(
    daemon: DaemonProcess,
) -> None:
    """The travel note and the reply it was made from share most of their words but not all
    ("fly" / "flights", "2.5" / "two and a half"): the reply, which holds more of the query's
    words, is the note's source, not a hit above it."""
    (daemon.memory / "topics" / "travel.md").write_text(
        "# Travel\n\n## Kyoto\n- Fly Shanghai Pudong to Kansai (about 2.5 hours); buy an ICOCA"
        " card at the airport\n"
    )
    daemon.call("ingest", {"turns": [
        {"session_id": "s7", "id": "a7", "role": "assistant", "ts": 1764000000,
         "content": "Direct flights from Shanghai Pudong to Kansai take about two and a half"
                    " hours; buy an ICOCA card at the airport for the trains."},
    ]})  # fmt: skip
    query = "direct flight to Kansai"
    found(daemon, query, "topics/travel.md")
    wait_for(lambda: search(daemon, query, scope="conversations"), 10)
    hits = search(daemon, query)
    assert hits[0]["path"].endswith("topics/travel.md"), hits
    assert [(s["kind"], s["turn_id"]) for s in hits[0]["sources"]] == [("turn", "a7")], hits
    assert not any(h["kind"] == "turn" for h in hits), hits


def test_a_query_about_something_never_heard_of_finds_nothing(daemon: DaemonProcess) -> None:
    """Three of the four words of "Kafka consumer group lag" are in no memory: the note that
    holds "group" (a fourth of it, about something else) is no answer and is not shown; a query
    the note does answer still finds it."""
    (daemon.memory / "topics" / "team.md").write_text(
        "# Team\n\n## Rituals\n- The platform group meets on Fridays at 16:00\n"
    )
    found(daemon, "when does the platform group meet", "topics/team.md")
    assert search(daemon, "Kafka consumer group lag") == []
    assert search(daemon, "which group meets on Fridays")[0]["path"].endswith("topics/team.md")


def test_a_page_of_turns_alone_judges_no_query_unheard(daemon: DaemonProcess) -> None:
    """A conversation's search (turns alone, as LoCoMo asks) keeps its ranker's order: the turn
    holding one word of a query it never heard the rest of is still found."""
    daemon.call("ingest", {"turns": [
        {"session_id": "s9", "id": "u9", "role": "user", "ts": 1763900000,
         "content": "The platform group meets on Fridays at 16:00"},
    ]})  # fmt: skip
    wait_for(lambda: search(daemon, "platform group", scope="conversations") or None, 10)
    assert search(daemon, "Kafka consumer group lag") == []
    hits = search(daemon, "Kafka consumer group lag", scope="conversations")
    assert [h["turn_id"] for h in hits] == ["u9"], hits
