"""The backfill worker over a real index file: what it embeds, what it embeds again, what it
keeps, and the vector index it builds. The embeddings come from a local OpenAI-compatible
server (`FakeEmbeddings`: each text's vector is a hash of it), through the real HTTP backend.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from memd.conversations.ingest import write_turns
from memd.conversations.repo import delete_turns
from memd.core.models import Turn
from memd.daemon.api import rebuild
from memd.db import Store
from memd.memory.api import MarkdownIndex
from memd.memory.indexer import Indexer, Root
from memd.semantic import repo
from memd.semantic.backfill import Backfill
from memd.semantic.index import VectorIndex
from memd.semantic.remote import HttpEmbedder
from memd.semantic.texts import text_hash, turn_passage
from tests.semantic.fake_embeddings import FakeEmbeddings, Reply

DIM = 16


@pytest.fixture
def server() -> Iterator[FakeEmbeddings]:
    with FakeEmbeddings(dim=DIM) as s:
        yield s


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.open(tmp_path / "index.db")
    yield s
    s.close()


def embedder(server: FakeEmbeddings, model: str = "m1") -> HttpEmbedder:
    return HttpEmbedder(server.url, model, retries=0)


def embedded(server: FakeEmbeddings) -> list[str]:
    """Every text the server was asked to embed, in order."""
    return [t for body in server.requests for t in body["input"]]


def turn(
    tid: str,
    text: str,
    session: str = "s1",
    speaker: str = "",
    project: str = "",
    agent_id: str = "",
) -> Turn:
    return Turn("ingest", session, tid, "user", text, 1_700_000_000.0 + int(tid), speaker=speaker,
                project=project, agent_id=agent_id)  # fmt: skip


def stored(store: Store, kind: str, model: str = "m1") -> dict[str, str]:
    return repo.keys(store.read(), kind, f"http:{model}@{embedder_url(store)}")


_URLS: dict[int, str] = {}


def embedder_url(store: Store) -> str:
    return _URLS[id(store)]


def fill(store: Store, server: FakeEmbeddings, model: str = "m1") -> Backfill:
    e = embedder(server, model)
    _URLS[id(store)] = e.url
    b = Backfill(store, e, VectorIndex(store, e.model_id), batch=4)
    b.run_until_idle(60)
    return b


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def test_sections_are_embedded_once_and_kept_when_their_file_is_reindexed(
    store: Store, server: FakeEmbeddings, tmp_path: Path
) -> None:
    mem = tmp_path / "memory"
    write_tree(mem, {"topics/pets.md": "# Pets\n\n## Cat\n\nMiso is our cat.\n\n## Dog\n\nRex barks.\n",
                     "topics/empty.md": "# Empty\n\n## Nothing here\n\n<!-- only a comment -->\n"})  # fmt: skip
    ix = Indexer(store, [Root(mem)])
    ix.reconcile()
    b = fill(store, server)
    first = embedded(server)
    assert sorted(first) == ["pets › Cat\nMiso is our cat.", "pets › Dog\nRex barks."]
    assert b.progress.done == b.progress.total == 2
    # A new section at the top gives every section of the file a new id: only it is embedded.
    write_tree(mem, {"topics/pets.md": "# Pets\n\n## Fish\n\nBubbles swims.\n\n## Cat\n\nMiso is"
                     " our cat.\n\n## Dog\n\nRex barks.\n"})  # fmt: skip
    ix.reconcile()
    b.run_until_idle(60)
    assert embedded(server)[len(first) :] == ["pets › Fish\nBubbles swims."]
    assert len(stored(store, repo.SECTION)) == 3
    # A section that is gone takes its vector with it.
    write_tree(mem, {"topics/pets.md": "# Pets\n\n## Cat\n\nMiso is our cat.\n"})
    ix.reconcile()
    b.run_until_idle(60)
    assert len(stored(store, repo.SECTION)) == 1
    snap = b.index.snapshot(repo.SECTION) if b.index else None
    assert snap is not None and snap.rows == 1


def test_a_changed_turn_and_the_turn_after_it_are_embedded_again(
    store: Store, server: FakeEmbeddings
) -> None:
    store.w.run(lambda c: write_turns(c, [turn("1", "How was the trip?", speaker="Ann"),
                                          turn("2", "Great, we saw whales.", speaker="Bo"),
                                          turn("3", "Lucky you!", speaker="Ann")]))  # fmt: skip
    b = fill(store, server)
    assert len(embedded(server)) == 3
    before = len(embedded(server))
    store.w.run(lambda c: write_turns(c, [turn("2", "Great, we saw dolphins.", speaker="Bo")]))
    b.run_until_idle(60)
    again = embedded(server)[before:]
    # (a batch is embedded shortest first)
    assert sorted(again) == ["Ann: How was the trip?\nBo: Great, we saw dolphins.",
                             "Bo: Great, we saw dolphins.\nAnn: Lucky you!"]  # fmt: skip
    ids = [r[0] for r in store.read().execute("SELECT id FROM turns ORDER BY id")]
    hashes = stored(store, repo.TURN)
    assert hashes[str(ids[2])] == text_hash(turn_passage("Ann", "Lucky you!", "Bo",
                                                         "Great, we saw dolphins."))  # fmt: skip
    assert store.read().execute("SELECT count(*) FROM vector_dirty").fetchone()[0] == 0


def test_a_forgotten_turn_takes_its_vector_and_its_successor_s_at_once(
    store: Store, server: FakeEmbeddings
) -> None:
    store.w.run(lambda c: write_turns(c, [turn("1", "Hi."), turn("2", "My PIN is 4711."),
                                          turn("3", "Noted.")]))  # fmt: skip
    b = fill(store, server)
    ids = [str(r[0]) for r in store.read().execute("SELECT id FROM turns ORDER BY id")]
    store.w.run(lambda c: delete_turns(c, "s1", ["2"]))
    # Nothing derived from the forgotten text is left, even before the worker runs again.
    assert set(stored(store, repo.TURN)) == {ids[0]}
    before = len(embedded(server))
    b.run_until_idle(60)
    assert embedded(server)[before:] == ["user: Hi.\nuser: Noted."]
    assert set(stored(store, repo.TURN)) == {ids[0], ids[2]}
    assert all("4711" not in t for t in embedded(server)[before:])
    # The last turn of a session has no successor: the matrix drops it all the same.
    store.w.run(lambda c: delete_turns(c, "s1", ["3"]))
    assert b.step() is False  # nothing to embed: only the matrix to rebuild
    snap = b.index.snapshot(repo.TURN) if b.index else None
    assert snap is not None and [str(d) for d in snap.docs] == [ids[0]]


def test_a_passage_that_did_not_change_is_not_embedded_again(
    store: Store, server: FakeEmbeddings
) -> None:
    # The next turn's passage holds only the first 300 characters of this one: a change past
    # them re-embeds this turn but not the next.
    long = "word " * 65
    store.w.run(lambda c: write_turns(c, [turn("1", long + "end"), turn("2", "Reply.")]))
    b = fill(store, server)
    before = len(embedded(server))
    store.w.run(lambda c: write_turns(c, [turn("1", long + "finish")]))
    b.run_until_idle(60)
    again = embedded(server)[before:]
    assert len(again) == 1 and again[0].endswith("finish")
    # A turn's own text is embedded up to TURN_TOKENS: a change past them re-embeds nothing.
    longer = "word " * 200
    store.w.run(lambda c: write_turns(c, [turn("1", longer + "end")]))
    b.run_until_idle(60)
    before = len(embedded(server))
    store.w.run(lambda c: write_turns(c, [turn("1", longer + "finish")]))
    b.run_until_idle(60)
    assert embedded(server)[before:] == []


def test_a_turn_changed_while_its_old_text_is_embedded_is_embedded_again(
    store: Store, server: FakeEmbeddings
) -> None:
    store.w.run(lambda c: write_turns(c, [turn("1", "first")]))
    b = fill(store, server)
    # The answer for the first change is slow; a second change lands while it is in flight.
    server.enqueue(Reply(delay=1.0))
    store.w.run(lambda c: write_turns(c, [turn("1", "second")]))

    def change_again() -> None:
        time.sleep(0.4)
        store.w.run(lambda c: write_turns(c, [turn("1", "third")]))

    t = threading.Thread(target=change_again)
    t.start()
    b.run_until_idle(60)
    t.join()
    b.run_until_idle(60)
    (tid,) = [str(r[0]) for r in store.read().execute("SELECT id FROM turns")]
    assert stored(store, repo.TURN)[tid] == text_hash(turn_passage("user", "third"))


def test_another_model_s_vectors_are_dropped_and_everything_is_recomputed(
    store: Store, server: FakeEmbeddings, tmp_path: Path
) -> None:
    write_tree(tmp_path / "memory", {"topics/a.md": "# A\n\n## One\n\nalpha\n\n## Two\n\nbeta\n"})
    Indexer(store, [Root(tmp_path / "memory")]).reconcile()
    store.w.run(lambda c: write_turns(c, [turn("1", "hello"), turn("2", "world")]))
    fill(store, server, "m1")
    fill(store, server, "m2")
    models = repo.models(store.read())
    assert list(models) == [f"http:m2@{embedder_url(store)}"]
    assert models[f"http:m2@{embedder_url(store)}"] == 4


def test_a_full_reindex_keeps_the_vectors(
    store: Store, server: FakeEmbeddings, tmp_path: Path
) -> None:
    write_tree(tmp_path / "memory", {"topics/a.md": "# A\n\n## One\n\nalpha\n\n## Two\n\nbeta\n"})
    ix = Indexer(store, [Root(tmp_path / "memory")])
    ix.reconcile()
    store.w.run(lambda c: write_turns(c, [turn("1", "hello")]))
    b = fill(store, server)
    before = len(embedded(server))
    rebuild(store, MarkdownIndex(ix))
    b.run_until_idle(60)
    assert len(embedded(server)) == before
    assert len(stored(store, repo.SECTION)) == 2 and len(stored(store, repo.TURN)) == 1


def test_the_index_ranks_by_cosine_within_the_scope_asked(
    store: Store, server: FakeEmbeddings
) -> None:
    store.w.run(lambda c: write_turns(c, [
        turn("1", "the blue car", session="a", project="p1"),
        turn("2", "the red bike", session="b", project="p2"),
        turn("3", "a green boat", session="c", project="p1", agent_id="bot"),
    ]))  # fmt: skip
    b = fill(store, server)
    assert b.index is not None
    snap = b.index.snapshot(repo.TURN)
    assert snap is not None and snap.rows == 3
    e = embedder(server)
    q = e.embed([turn_passage("user", "the red bike")], kind="query")[0]
    ids = {r[1]: r[0] for r in store.read().execute("SELECT id, text FROM turns")}
    docs, cos = snap.top(q, 3)
    assert docs[0] == ids["the red bike"] and cos[0] == pytest.approx(1.0, abs=0.01)
    docs, _ = snap.top(q, 3, snap.where("project", ["p1"]))
    assert set(docs) == {ids["the blue car"], ids["a green boat"]}
    docs, _ = snap.top(q, 3, snap.where("agent", ["bot"]))
    assert docs == [ids["a green boat"]]
    docs, _ = snap.top(q, 3, ~snap.where("session", ["b"]))
    assert ids["the red bike"] not in docs
    # Rows are kept in one byte per dimension: unit length within the rounding.
    rows = snap.matrix.astype(np.float32) * snap.scale[:, None]
    assert np.isclose(np.linalg.norm(rows, axis=1), 1.0, atol=0.01).all()


NOTES = ("# Notes\n\n## Notes\n- We adopted a cat named Miso <!-- memd id=m_1 -->\n"
         "- 我的妹妹住在柏林 <!-- memd id=m_2 -->\n")  # fmt: skip


def test_memories_in_a_section_of_several_get_vectors_of_their_own(
    store: Store, server: FakeEmbeddings, tmp_path: Path
) -> None:
    mem = tmp_path / "memory"
    write_tree(mem, {"_core/notes.md": NOTES,
                     "topics/one.md": "# One\n\n## Single\n- The only memory <!-- memd id=m_3 -->\n",
                     "topics/plain.md": "# Plain\n\n## List\n- a plain item\n- another one\n"})  # fmt: skip
    ix = Indexer(store, [Root(mem)])
    ix.reconcile()
    b = fill(store, server)
    sections = [t for t in embedded(server) if " › " in t]
    assert len(sections) == 3
    assert sorted(set(embedded(server)) - set(sections)) == ["We adopted a cat named Miso",
                                                             "我的妹妹住在柏林"]  # fmt: skip
    # One more memory: it and its section are embedded, the memories already there are not.
    before = len(embedded(server))
    write_tree(
        mem, {"_core/notes.md": NOTES + "- The dentist moved to Thursday <!-- memd id=m_4 -->\n"}
    )
    ix.reconcile()
    b.run_until_idle(60)
    again = embedded(server)[before:]
    assert len(again) == 2 and "The dentist moved to Thursday" in again
    assert [t for t in again if t != "The dentist moved to Thursday"][0].startswith("notes › Notes")
    # The section ranks by its nearest memory and names it.
    assert b.index is not None
    snap = b.index.snapshot(repo.SECTION)
    assert snap is not None and snap.rows == 3 + 3
    notes_id = store.read().execute("SELECT id FROM sections WHERE heading = 'Notes'").fetchone()[0]
    q = embedder(server).embed(["我的妹妹住在柏林"], kind="query")[0]
    items: dict[int, str] = {}
    docs, cos = snap.top(q, 3, best_items=items)
    assert docs[0] == notes_id and cos[0] == pytest.approx(1.0, abs=0.01)
    assert items[notes_id] == "我的妹妹住在柏林"


def test_new_turns_are_added_to_the_index_without_reading_it_again(
    store: Store, server: FakeEmbeddings
) -> None:
    store.w.run(lambda c: write_turns(c, [turn("1", "the blue car", session="a"),
                                          turn("2", "the red bike", session="a")]))  # fmt: skip
    b = fill(store, server)
    assert b.index is not None
    rebuilds = b.index.rebuilds
    store.w.run(lambda c: write_turns(c, [turn("3", "a green boat", session="b", project="p"),
                                          turn("4", "the red bike", session="c")]))  # fmt: skip
    b.run_until_idle(60)
    assert b.index.rebuilds == rebuilds and b.index.appends >= 1
    snap = b.index.snapshot(repo.TURN)
    assert snap is not None and snap.rows == 4
    ids = {r[1]: r[0] for r in store.read().execute("SELECT id, text FROM turns WHERE id > 2")}
    q = embedder(server).embed([turn_passage("user", "a green boat")], kind="query")[0]
    docs, _ = snap.top(q, 1, snap.where("project", ["p"]))
    assert docs == [ids["a green boat"]]
    # A turn whose text changed has a row already: that kind is read again instead.
    store.w.run(lambda c: write_turns(c, [turn("3", "a yellow boat", session="b", project="p")]))
    b.run_until_idle(60)
    assert b.index.rebuilds == rebuilds + 1
    assert b.index.snapshot(repo.TURN).rows == 4  # type: ignore[union-attr]


def test_a_text_embedded_before_is_not_embedded_again(
    store: Store, server: FakeEmbeddings, tmp_path: Path
) -> None:
    # The same exchange in two sessions (a conversation read from two logs): the second
    # session's passages are the first's, and their vectors are copied.
    store.w.run(lambda c: write_turns(c, [turn("1", "How was the trip?", session="a"),
                                          turn("2", "We saw whales.", session="a")]))  # fmt: skip
    b = fill(store, server)
    before = len(embedded(server))
    store.w.run(lambda c: write_turns(c, [turn("3", "How was the trip?", session="b"),
                                          turn("4", "We saw whales.", session="b"),
                                          turn("5", "Ciao.", session="c"),
                                          turn("6", "Ciao.", session="d")]))  # fmt: skip
    b.run_until_idle(60)
    # Turns 3 and 4 are copies; turns 5 and 6 are new and alike: embedded once.
    assert embedded(server)[before:] == ["user: Ciao."]
    assert b.progress.reused == 3
    assert len(stored(store, repo.TURN)) == 6
    snap = b.index.snapshot(repo.TURN) if b.index else None
    assert snap is not None and snap.rows == 6
    q = embedder(server).embed(["user: How was the trip?"], kind="query")[0]
    docs, _ = snap.top(q, 5, snap.where("session", ["b"]))
    assert docs[0] == 3
