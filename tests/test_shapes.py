"""One shape from feature to wire: typed results between layers, not `dict[str, Any]`.

A feature answers with a typed value (a dataclass or a msgspec `Struct`) and the socket's
message types are those values, or made from them once; a dictionary that the next layer
patches and then decodes hides what a result holds from the type checker and from the reader.
This walks the package and lists every public signature that passes an open mapping or an
untyped result:

- a parameter or return annotation naming ``dict[str, Any]`` (or ``Mapping``, ``object`` as
  the value type, ``Document``), or
- a return annotation that is bare ``dict``, ``Any`` or ``object``;

and every field of a socket message typed so. What is left is in one of two lists, each entry
with why, and where it may live is checked:

- `BETWEEN`: open between memd's own layers. Only what is JSON by the protocol itself (the
  wire's codec, a JSON-RPC error's data, the raw call on each side of the socket), in the
  wire's own modules (`WIRE`); a handful at most (`HANDFUL`).
- `EDGE`: data another program or a person wrote (a log line, an assistant's settings file, a
  model's answer, the settings file's tables), open where memd reads it: only in the modules
  that read such data (`EDGE_MODULES`), which then check it field by field.

Public: module-level functions and methods of module-level classes whose names do not start
with ``_`` (``__init__`` included).
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

# Between memd's own layers: only the wire's own JSON, in the wire's modules.
HANDFUL = 5
WIRE = ("memd/api/client.py", "memd/api/protocol.py", "memd/api/messages/decode.py",
        "memd/daemon/engine.py")  # fmt: skip
BETWEEN: dict[str, str] = {
    "memd/api/client.py:Client.call": "the raw JSON-RPC call by method name, params and answer as the wire's JSON (`request` is the typed form): for what reads a daemon of any version (the doctor, `memd workspace`) and tests that send params no type takes",
    "memd/api/messages/decode.py:to_builtins": "a message as JSON values (dicts, lists, …): the wire's own form",
    "memd/api/protocol.py:encode_error": "the `data` member of a JSON-RPC error object: JSON by the protocol",
    "memd/daemon/engine.py:Engine.handle": "the engine's raw entry point, as the socket is: a JSON-RPC params object before it is validated, and the answer as JSON (`Engine.call` is the typed form; memd itself calls only that, tests and benches drive this one in-process)",
}

# At the edge: where memd reads what another program or a person wrote (module or folder → what).
EDGE_MODULES: dict[str, str] = {
    "memd/conversations/formats/": "log lines and files as other assistants wrote them",
    "memd/conversations/sources.py": "the logs.sources tables of the settings file",
    "memd/core/jsontext.py": "JSON text from outside memd (a request line, an export file)",
    "memd/core/config_file.py": "the settings file as a person wrote it (its parsed TOML)",
    "memd/llm/": "a model's answer, and the JSON Schema its API takes",
    "memd/integrations/assistant_files.py": "an assistant's JSON settings file",
    "memd/integrations/claude_code.py": "Claude Code's settings file",
}
EDGE: dict[str, str] = {
    "memd/core/config_file.py:flatten": "the settings file's parsed TOML as a person wrote it,"
    " each value converted to its setting's type after",
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
    "memd/core/jsontext.py:loads": "JSON text from outside memd parsed: its values are the text's",
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

# Message fields at the edge: each in a message that carries data another program wrote, handed
# whole to the reader of that data (message → what and who reads it).
EDGE_MESSAGES: dict[str, str] = {
    "conversations:IngestParams": "turns in the generic JSONL shape as the sending program wrote"
    " them (a list in `turns`, or one turn as the params itself), read by the JSONL format's"
    " parser (memd/conversations/formats/), which names the turn and the field it refuses",
}
EDGE_FIELDS: dict[str, str] = {
    f"conversations:IngestParams.{name}": "one turn's field in the generic JSONL shape as the"
    " sender wrote it (see EDGE_MESSAGES)"
    for name in (
        "agent_id",
        "content",
        "id",
        "name",
        "project",
        "role",
        "session_id",
        "title",
        "ts",
    )  # fmt: skip
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
    listed = set(BETWEEN) | set(EDGE) | NOT_YET
    new = {k: v for k, v in found.items() if k not in listed}
    assert not new, "open mappings between layers (type the result, or list it with why):\n" + (
        "\n".join(f"{k}: {v}" for k, v in sorted(new.items()))
    )


def test_every_listed_signature_is_still_open() -> None:
    """A signature typed since must leave the lists (they only shrink)."""
    found = open_signatures()
    stale = sorted((set(BETWEEN) | set(EDGE) | NOT_YET) - set(found))
    assert not stale, "typed now, take off the list:\n" + "\n".join(stale)


def test_between_layers_only_the_wire_is_open_and_only_a_handful() -> None:
    assert len(BETWEEN) <= HANDFUL, sorted(BETWEEN)
    elsewhere = sorted(k for k in BETWEEN if not k.startswith(tuple(f"{m}:" for m in WIRE)))
    assert not elsewhere, "open between layers outside the wire's modules:\n" + "\n".join(elsewhere)


def test_the_edge_is_only_where_memd_reads_what_others_wrote() -> None:
    def module(key: str) -> str:
        return key.partition(":")[0]

    outside = sorted(k for k in EDGE if not module(k).startswith(tuple(EDGE_MODULES)))
    assert not outside, "at the edge but not in a module that reads foreign data:\n" + (
        "\n".join(outside)
    )
    assert not set(EDGE) & set(BETWEEN)
    unused = sorted(m for m in EDGE_MODULES if not any(module(k).startswith(m) for k in EDGE))
    assert not unused, "edge modules with nothing open (take them off):\n" + "\n".join(unused)


def test_no_open_message_field_but_the_listed() -> None:
    found = open_fields()
    new = {k: v for k, v in found.items() if k not in EDGE_FIELDS and k not in NOT_YET_FIELDS}
    assert not new, "open message fields:\n" + "\n".join(f"{k}: {v}" for k, v in new.items())
    stale = sorted((set(EDGE_FIELDS) | NOT_YET_FIELDS) - set(found))
    assert not stale, "typed now, take off the list:\n" + "\n".join(stale)
    loose = sorted(k for k in EDGE_FIELDS if k.rpartition(".")[0] not in EDGE_MESSAGES)
    assert not loose, "open fields of a message that does not carry foreign data:\n" + (
        "\n".join(loose)
    )


def test_counts_only_go_down() -> None:
    assert len(BETWEEN) + len(EDGE) + len(NOT_YET) <= BEFORE
    assert len(EDGE_FIELDS) + len(NOT_YET_FIELDS) <= BEFORE_FIELDS


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
