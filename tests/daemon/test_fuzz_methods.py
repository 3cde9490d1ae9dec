"""Property-based fuzzing of the newer methods, of import payloads and of front matter, against
one real daemon (the protocol-level fuzzing is tests/daemon/test_fuzz.py).

Params are drawn by field: values of the field's own type most of the time (ids and change ids
that look real, paths inside the test's home, text with control characters and lone
surrogates), any JSON value otherwise, and numbers JSON's decoders choke on (5,000 digits,
NaN, Infinity, 1e999). Import payloads are memd exports and JSONL logs with the same values in
their fields. Front matter is YAML made of its own punctuation (anchors, aliases, tags, flow
and block collections). Whatever comes in: the daemon answers every line once, never with
-32000, and stays up.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memd.memory.parse import parse_markdown
from tests.daemon.test_fuzz import Conn, json_values
from tests.utils import DaemonProcess, wait_for

KNOWN_CODES = {-32700, -32600, -32601, -32602, -32001, -32002, -32003, -32005, -32006, -32007,
               -32008, -32009, -32010}  # fmt: skip
FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
BIG = "9" * 5000
# Placeholders replaced in the JSON text by what json.dumps cannot write.
RAW = {
    "\x00BIG\x00": BIG,
    "\x00NAN\x00": "NaN",
    "\x00INF\x00": "-Infinity",
    "\x00E999\x00": "1e999",
}


def dumps(value: Any) -> str:
    text = json.dumps(value)
    for marker, raw in RAW.items():
        text = text.replace(json.dumps(marker), raw)
    return text


unreadable = st.sampled_from(sorted(RAW))
hexes = st.text("0123456789abcdef", min_size=1, max_size=40)
_chars = st.characters(codec="utf-8")
_odd = st.sampled_from(["\x00", "\n", "\u2028", "-->", "<!-- memd ", "\ud800", "## ", "../", "\\"])
texts = st.lists(st.one_of(_chars, _chars, _chars, _chars, _chars, _odd), max_size=30).map("".join)


@pytest.fixture(scope="module")
def fuzzed() -> Iterator[tuple[DaemonProcess, Conn]]:
    with tempfile.TemporaryDirectory(prefix="memd-fm-", dir="/tmp") as home:
        d = DaemonProcess(Path(home), MEMD_LOGS_CLAUDE_CODE="false").start()
        notes = d.call("remember", {"text": "the fuzzed daemon's first memory"})
        (d.memory / "topics" / "vue.md").write_text("# Vue\n\n## Components\n- small ones\n")
        wait_for(lambda: d.search_paths("small"), 10)
        d.item_id = notes["id"]  # type: ignore[attr-defined]
        d.change_id = d.call("history", {"limit": 1})["changes"][0]["id"]  # type: ignore[attr-defined]
        yield d, Conn(d)
        assert d.proc is not None and d.proc.poll() is None, "the daemon died"
        assert d.call("status")["daemon"]["running"]
        d.stop()
        log = d.log.read_text()
        assert "Traceback" not in log, log[log.index("Traceback") - 2000 :][:6000]


def check(msg: dict[str, Any]) -> None:
    assert msg.get("jsonrpc") == "2.0"
    assert ("result" in msg) != ("error" in msg)
    if "error" in msg:
        assert msg["error"]["code"] in KNOWN_CODES, msg
        assert isinstance(msg["error"]["message"], str) and msg["error"]["message"]


def _field_values(d: DaemonProcess) -> dict[str, st.SearchStrategy[Any]]:
    home = str(d.home)
    item_ids = st.sampled_from([d.item_id, "m_00000000"]) | st.builds("m_{}".format, hexes)  # type: ignore[attr-defined]
    changes = st.sampled_from([d.change_id, "HEAD", "-1", "--all"]) | hexes  # type: ignore[attr-defined]
    paths = st.builds(lambda s: f"{home}/fz/{s}", texts) | st.sampled_from(
        ["topics/vue.md", "_core/notes.md", "journal/x.md", "../../etc/passwd", "/", ""]
    )
    rels = st.sampled_from(["topics/vue.md", "topics/new.md", "archive/x.md", "a/../b.md"]) | texts
    return {
        "id": item_ids, "expect_text": texts, "text": texts, "importance": st.integers(-5, 15),
        "pinned": st.booleans(), "expires": st.sampled_from(["2001-01-01", "never", "2999-12-31"]),
        "move_to": st.fixed_dictionaries({"path": rels}, optional={"section": texts}),
        "change": changes, "changes": st.lists(changes, max_size=3), "run": texts,
        "dry_run": st.booleans(), "path": paths, "since": texts | st.floats() | st.integers(),
        "limit": st.integers(-3, 1500), "name": st.sampled_from(["extract", "archive", "x"]) | texts,
        "agent_id": st.sampled_from(["claude-code", "", "../x"]) | texts,
        "format": st.sampled_from(["", "memd", "chatgpt", "jsonl", "openai", "claude-code", "x"]),
    }  # fmt: skip


NEWER = ["history", "show_change", "undo", "edit_item", "job_runs", "relationship"]


@pytest.mark.parametrize("method", NEWER)
def test_newer_methods_with_params_of_their_own_types(
    fuzzed: tuple[DaemonProcess, Conn], method: str
) -> None:
    import msgspec

    from memd.api import messages as m

    d, conn = fuzzed
    values = _field_values(d)
    fields = msgspec.structs.fields(m.SIGNATURES[method].params)
    anything = json_values | unreadable

    def value(name: str) -> st.SearchStrategy[Any]:
        own = values.get(name, anything)
        return st.one_of(own, own, own, own, anything)  # mostly the field's own type

    # What names the thing to act on is always there; the rest may be.
    given_ = {f.name for f in fields if f.required or f.name in ("id", "change")}

    # One call each that reaches into the method (past params validation) for sure.
    reaching = {
        "history": {"limit": 5}, "show_change": {"change": d.change_id},  # type: ignore[attr-defined]
        "undo": {"change": d.change_id, "dry_run": True},  # type: ignore[attr-defined]
        "edit_item": {"id": d.item_id, "pinned": True},  # type: ignore[attr-defined]
        "job_runs": {"limit": 3}, "relationship": {"agent_id": "claude-code"},
    }  # fmt: skip

    @FUZZ
    @example(params=reaching[method])
    @given(params=st.fixed_dictionaries(
        {f.name: value(f.name) for f in fields if f.name in given_},
        optional={f.name: value(f.name) for f in fields if f.name not in given_},
    ))  # fmt: skip
    def run(params: dict[str, Any]) -> None:
        req = {"jsonrpc": "2.0", "id": 9, "method": method, "params": params}
        answer = conn.ask(dumps(req).encode() + b"\n")
        check(answer)
        reached.append(answer.get("error", {}).get("code") != -32602)

    reached: list[bool] = []
    run()
    assert reached[0], f"the reaching example of {method} was refused as invalid params"


chats = st.fixed_dictionaries(
    {"turn_id": texts | hexes, "role": st.sampled_from(["user", "assistant", "x", ""]),
     "ts": st.floats() | st.integers() | unreadable | texts},
    optional={"seq": st.integers() | unreadable, "text": texts | json_values,
              "line": st.integers() | unreadable, "parts": st.lists(json_values, max_size=2)},
)  # fmt: skip
sessions = st.fixed_dictionaries(
    {"session_id": texts | hexes, "chats": st.lists(chats, max_size=3)},
    optional={"started_at": st.floats() | unreadable, "summary_upto": st.integers() | unreadable,
              "title": texts | json_values},
)  # fmt: skip
memories = st.fixed_dictionaries(
    {"id": st.builds("m_{}".format, hexes) | texts, "text": texts,
     "path": st.sampled_from(["topics/a.md", "_core/notes.md", "../x.md", "a\nb.md"]) | texts},
    optional={"section": texts, "meta": st.dictionaries(texts, texts | json_values, max_size=3),
              "last_used": st.floats() | unreadable, "uses": st.integers() | unreadable},
)  # fmt: skip
tree = st.fixed_dictionaries(
    {"path": st.sampled_from(["topics/fz.md", "journal/fz.md", "../fz.md"]) | texts,
     "content": st.builds(lambda fm, body: f"---\n{fm}\n---\n{body}", texts, texts) | texts},
)  # fmt: skip
exports = st.fixed_dictionaries(
    {"format": st.sampled_from(["memd-export", "x"]), "version": st.integers(-1, 3) | unreadable},
    optional={"sessions": st.lists(sessions, max_size=2), "memories": st.lists(memories, max_size=2),
              "tree": st.lists(tree, max_size=2), "memory_hashes": st.lists(json_values, max_size=2)},
)  # fmt: skip
log_lines = st.lists(
    st.fixed_dictionaries(
        {}, optional={"session_id": texts | json_values, "role": texts, "content": texts | json_values,
                      "ts": st.floats() | st.integers() | unreadable | texts,
                      "messages": st.lists(json_values, max_size=3)},
    ),
    min_size=1, max_size=4,
)  # fmt: skip


def test_import_payloads(fuzzed: tuple[DaemonProcess, Conn]) -> None:
    d, conn = fuzzed
    n = iter(range(1_000_000))

    @FUZZ
    @given(doc=exports | log_lines, deep=st.booleans())
    def run(doc: Any, deep: bool) -> None:
        i = next(n)
        if isinstance(doc, list):
            path = d.home / "fz-in" / f"log-{i}.jsonl"
            text = "\n".join(dumps(line) for line in doc) + "\n"
            if deep:
                text += '{"session_id": "s", "content": ' + "[" * 50_000 + "]" * 50_000 + "}\n"
        else:
            path = d.home / "fz-in" / f"export-{i}.json"
            text = dumps(doc)
            if deep:
                text = text[:-1] + ', "x": ' + "[" * 50_000 + "]" * 50_000 + "}"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        req = {"jsonrpc": "2.0", "id": 11, "method": "import", "params": {"path": str(path)}}
        check(conn.ask(json.dumps(req).encode() + b"\n"))

    run()


yaml_text = st.lists(
    st.sampled_from(list("&*!|>-:?[]{},'\"#%@` \n\tab12")) | st.sampled_from(
        ["&a ", "*a", "!!set ", "!!binary ", "!!python/object ", "<<: *a", "- ", "? ", "2024-01-01",
         "9" * 50, ".nan", ".inf", "\ufeff", "\x00", "...", "---"]
    ),
    max_size=80,
).map("".join)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(front=yaml_text, body=st.sampled_from(["# T\n\n## S\n- item one\n", "", "- x\n"]))
def test_front_matter_never_raises_and_is_json(front: str, body: str) -> None:
    parsed = parse_markdown(f"---\n{front}\n---\n{body}")
    json.dumps(parsed.front_matter)
    assert all(w.startswith("broken front matter") for w in parsed.warnings)


def test_front_matter_through_the_daemon(fuzzed: tuple[DaemonProcess, Conn]) -> None:
    d, conn = fuzzed
    n = iter(range(1_000_000))
    folder = d.memory / "topics" / "fm"
    folder.mkdir(exist_ok=True)

    @settings(max_examples=40, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
    @given(front=yaml_text)
    def run(front: str) -> None:
        word = f"zqfm{next(n)}x"
        f = folder / f"{word}.md"
        f.write_text(f"---\n{front}\n---\n# T\n\n## S\n- {word}\n", errors="surrogatepass")
        wait_for(lambda: d.search_paths(word) == {str(f)}, 10)

    run()
    check(conn.ask(b'{"jsonrpc":"2.0","id":12,"method":"reindex","params":{"full":true}}\n'))
