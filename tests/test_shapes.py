"""One shape from feature to wire: typed results between layers, not `dict[str, Any]`.

A feature answers with a typed value (a dataclass or a msgspec `Struct`) and the socket's
message types are those values, or made from them once; a dictionary that the next layer
patches and then decodes hides what a result holds from the type checker and from the reader.
This walks the package and lists every public signature that passes an open mapping or an
untyped result between layers:

- a parameter or return annotation naming ``dict[str, Any]`` (or ``Mapping``, ``object`` as
  the value type, ``Document``), or
- a return annotation that is bare ``dict``, ``Any`` or ``object``;

and every field of a socket message typed so. What is left is listed below, each with why it
is data by nature (JSON as another program wrote it, a parsed TOML file, a value whose type is
the caller's). Public: module-level functions and methods of module-level classes whose names
do not start with ``_`` (``__init__`` included).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "memd"
MESSAGES = PACKAGE / "api" / "messages"

OPEN_MAPPING = re.compile(
    r"\b(dict|Dict|Mapping|MutableMapping)\[str, (Any|typing\.Any|object)\]|\bDocument\b"
)
UNTYPED_RESULT = frozenset({"dict", "Any", "object", "typing.Any"})

# What this walk found on main before the results were typed (main at 91c1006): open public
# signatures (parameters and untyped results included) and open message fields.
BEFORE = 143
BEFORE_FIELDS = 26

# Signatures that stay open, with why.
ALLOWED: dict[str, str] = {
    "memd/memory/parse.py:split_front_matter": "the YAML front matter a person wrote at the top of"
    " a Markdown file, as JSON data: its keys and values are theirs",
    "memd/conversations/formats/fields.py:load_object": "the JSON object of a log line as another"
    " program wrote it, checked field by field after",
    "memd/conversations/formats/fields.py:id_field": "a field of a log line as another program"
    " wrote it (JSON of its own)",
    "memd/conversations/formats/fields.py:str_field": "a field of a log line as another program"
    " wrote it (JSON of its own)",
    "memd/conversations/formats/openai.py:parse_openai_conversation": "an OpenAI messages line as"
    " another program wrote it",
    "memd/conversations/formats/opencode.py:message_facts": "an OpenCode message file as OpenCode"
    " wrote it",
    "memd/conversations/formats/opencode.py:session_facts": "an OpenCode session file as OpenCode"
    " wrote it",
    "memd/conversations/sources.py:extra_sources": "the logs.sources entries of the parsed TOML"
    " settings file, as a person wrote them",
    "memd/api/client.py:Client.call": "a call by method name: its params and answer as the JSON of the wire (`Client.request` is the typed form)",
    "memd/api/client.py:call": "a call by method name: its params and answer as the JSON of the wire (`request` is the typed form)",
    "memd/api/messages/decode.py:to_builtins": "a message as JSON values (dicts, lists, …): the wire's own form",
    "memd/api/protocol.py:encode_error": "the `data` member of a JSON-RPC error object: JSON by the protocol",
    "memd/daemon/engine.py:Engine.handle": "a JSON-RPC params object before it is validated, and the answer as the socket sends it (`Engine.call` is the typed form)",
    "memd/core/jsontext.py:loads": "JSON text parsed: its values are the text's",
    "memd/llm/answers.py:parse_object": "the JSON object a model wrote in its answer, before it is checked (read_extraction, read_summary)",
    "memd/llm/answers.py:read_extraction": "a model's answer as JSON, checked here field by field",
    "memd/llm/answers.py:read_summary": "a model's answer as JSON, checked here field by field",
    "memd/llm/client.py:Backend.ask": "the JSON Schema of the answer wanted, as the model's API takes it",
    "memd/llm/anthropic.py:AnthropicBackend.ask": "the JSON Schema of the answer wanted, as the model's API takes it",
    "memd/llm/claude_code.py:ClaudeCodeBackend.ask": "the JSON Schema of the answer wanted, as the model's API takes it",
    "memd/llm/openai_compat.py:OpenAIBackend.ask": "the JSON Schema of the answer wanted, as the model's API takes it",
    "memd/integrations/assistant_files.py:parse": "an assistant's JSON settings file as that program wrote it (memd changes only its own entries)",
    "memd/integrations/assistant_files.py:dump": "an assistant's JSON settings file as that program wrote it (memd changes only its own entries)",
    "memd/integrations/assistant_files.py:container": "an object of an assistant's JSON settings file as that program wrote it",
    "memd/integrations/claude_code.py:add_hooks": "Claude Code's settings file as Claude Code and the person wrote it (memd changes only its own hooks)",
    "memd/integrations/claude_code.py:remove_hooks": "Claude Code's settings file as Claude Code and the person wrote it (memd changes only its own hooks)",
    "memd/integrations/claude_code.py:server_entry": "an entry of Claude Code's JSON settings file, in Claude Code's format",
}

# Not typed yet: shrinks to nothing as each feature's results are typed.
NOT_YET: frozenset[str] = frozenset()

ALLOWED_FIELDS: dict[str, str] = {
    "conversations:IngestParams.agent_id": "a turn's field in the generic JSONL shape as the sender wrote it, checked by the JSONL parser, which names the turn and the field",
    "conversations:IngestParams.content": "a turn's field in the generic JSONL shape as the sender wrote it, checked by the JSONL parser, which names the turn and the field",
    "conversations:IngestParams.id": "a turn's field in the generic JSONL shape as the sender wrote it, checked by the JSONL parser, which names the turn and the field",
    "conversations:IngestParams.name": "a turn's field in the generic JSONL shape as the sender wrote it, checked by the JSONL parser, which names the turn and the field",
    "conversations:IngestParams.project": "a turn's field in the generic JSONL shape as the sender wrote it, checked by the JSONL parser, which names the turn and the field",
    "conversations:IngestParams.role": "a turn's field in the generic JSONL shape as the sender wrote it, checked by the JSONL parser, which names the turn and the field",
    "conversations:IngestParams.session_id": "a turn's field in the generic JSONL shape as the sender wrote it, checked by the JSONL parser, which names the turn and the field",
    "conversations:IngestParams.title": "a turn's field in the generic JSONL shape as the sender wrote it, checked by the JSONL parser, which names the turn and the field",
    "conversations:IngestParams.ts": "a turn's field in the generic JSONL shape as the sender wrote it, checked by the JSONL parser, which names the turn and the field",
}
NOT_YET_FIELDS: frozenset[str] = frozenset()


def _is_open(node: ast.expr | None) -> bool:
    return node is not None and OPEN_MAPPING.search(ast.unparse(node)) is not None


def _why_open(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    a = fn.args
    params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, (a.vararg, a.kwarg))]
    loose = [p.arg for p in params if _is_open(p.annotation)]
    if loose:
        return f"open mapping in {', '.join(loose)}"
    if _is_open(fn.returns):
        return "returns an open mapping"
    if fn.returns is not None and ast.unparse(fn.returns) in UNTYPED_RESULT:
        return f"returns {ast.unparse(fn.returns)}"
    return ""


def _public(name: str) -> bool:
    return not name.startswith("_") or name == "__init__"


def open_signatures(package: Path = PACKAGE) -> dict[str, str]:
    """`memd/<module>:<Class.>function` → why, for every open public signature."""
    found: dict[str, str] = {}
    for path in sorted(package.rglob("*.py")):
        rel = f"memd/{path.relative_to(package).as_posix()}"
        for node in ast.parse(path.read_text()).body:
            scope: list[tuple[str, ast.stmt]] = [("", node)]
            if isinstance(node, ast.ClassDef) and _public(node.name):
                scope = [(f"{node.name}.", n) for n in node.body]
            for prefix, fn in scope:
                if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) and _public(fn.name):
                    why = _why_open(fn)
                    if why:
                        found[f"{rel}:{prefix}{fn.name}"] = why
    return found


def open_fields(folder: Path = MESSAGES) -> dict[str, str]:
    """`<module>:<Struct>.<field>` → its annotation, for every message field typed open."""
    found: dict[str, str] = {}
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ClassDef):
                continue
            for stmt in node.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    text = ast.unparse(stmt.annotation)
                    if OPEN_MAPPING.search(text) or text in UNTYPED_RESULT:
                        found[f"{path.stem}:{node.name}.{stmt.target.id}"] = text
    return found


def test_no_open_signature_but_the_listed() -> None:
    found = open_signatures()
    new = {k: v for k, v in found.items() if k not in ALLOWED and k not in NOT_YET}
    assert not new, "open mappings between layers (type the result, or list it with why):\n" + (
        "\n".join(f"{k}: {v}" for k, v in sorted(new.items()))
    )


def test_every_listed_signature_is_still_open() -> None:
    """A signature typed since must leave the lists (they only shrink)."""
    found = open_signatures()
    stale = sorted((set(ALLOWED) | NOT_YET) - set(found))
    assert not stale, "typed now, take off the list:\n" + "\n".join(stale)


def test_no_open_message_field_but_the_listed() -> None:
    found = open_fields()
    new = {k: v for k, v in found.items() if k not in ALLOWED_FIELDS and k not in NOT_YET_FIELDS}
    assert not new, "open message fields:\n" + "\n".join(f"{k}: {v}" for k, v in new.items())
    stale = sorted((set(ALLOWED_FIELDS) | NOT_YET_FIELDS) - set(found))
    assert not stale, "typed now, take off the list:\n" + "\n".join(stale)


def test_counts_only_go_down() -> None:
    assert len(ALLOWED) + len(NOT_YET) <= BEFORE
    assert len(ALLOWED_FIELDS) + len(NOT_YET_FIELDS) <= BEFORE_FIELDS


def test_the_walk_sees_every_form() -> None:
    source = (
        "from typing import Any\n"
        "def a() -> dict[str, Any]: ...\n"
        "def b(x: Mapping[str, object]) -> None: ...\n"
        "def c() -> Any: ...\n"
        "def d() -> list[msg.Document]: ...\n"
        "class K:\n"
        "    def e(self) -> dict: ...\n"
        "    def _private(self) -> Any: ...\n"
        "def _hidden() -> dict[str, Any]: ...\n"
        "def typed() -> dict[str, int]: ...\n"
    )
    found = {}
    for node in ast.parse(source).body:
        fns = node.body if isinstance(node, ast.ClassDef) else [node]
        for fn in fns:
            if isinstance(fn, ast.FunctionDef) and _public(fn.name) and _why_open(fn):
                found[fn.name] = _why_open(fn)
    assert sorted(found) == ["a", "b", "c", "d", "e"], found
