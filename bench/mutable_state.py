"""Module-level mutable state in the write path of the memory files: how many, and where.

State kept at module level is shared by everything in the process (two doors, two tests, a
CLI and a daemon thread) and hidden from whoever builds the object that uses it. This counts,
with an AST walk, what a module of the write path keeps at module level:

- a name bound to a mutable container (`{}`, `[]`, `set()`, a comprehension, `dict(...)`,
  `defaultdict(...)`, `OrderedDict(...)`, `deque(...)`);
- a name bound to an instance of a class (`GUARD = WriteGuard()`, `RENAMER = Renamer()`,
  a `ContextVar`), other than values that do not change (compiled patterns, type variables,
  frozensets, tuples, read-only mappings (`MappingProxyType`), strings, numbers, loggers);
- a function cached at module level (`functools.lru_cache` / `functools.cache`);
- a `global` statement.

    python bench/mutable_state.py                 # this checkout
    python bench/mutable_state.py --root OTHER    # another checkout (e.g. the round's start)
"""

from __future__ import annotations

import argparse
import ast
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The write path: the door and its parts, the item edits, the history (recording and undo),
# and the core modules they stand on. Names that do not exist in a checkout are skipped.
WRITE_PATH = [
    "memd/memory/files/*.py",
    "memd/memory/safe_write.py",
    "memd/memory/settled.py",
    "memd/memory/guard.py",
    "memd/memory/edit.py",
    "memd/memory/items.py",
    "memd/history/*.py",
    "memd/core/fsio.py",
    "memd/core/rename.py",
    "memd/core/writers.py",
    "memd/core/lease.py",
]
_IMMUTABLE_CALLS = {
    "compile", "TypeVar", "frozenset", "tuple", "getLogger", "Path", "PurePosixPath",
    "getattr", "NewType", "namedtuple", "str", "int", "float", "bytes", "MappingProxyType",
}  # fmt: skip
_MUTABLE_CALLS = {"dict", "list", "set", "defaultdict", "OrderedDict", "deque", "bytearray"}


@dataclass(frozen=True)
class Found:
    module: str
    line: int
    what: str


def _callee(node: ast.Call) -> str:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _mutable_value(value: ast.expr | None) -> str:
    if isinstance(value, ast.Dict | ast.List | ast.Set | ast.DictComp | ast.ListComp | ast.SetComp):
        return type(value).__name__.lower()
    if isinstance(value, ast.Call):
        name = _callee(value)
        if name in _MUTABLE_CALLS:
            return f"{name}()"
        if name and name[0].isupper() and name not in _IMMUTABLE_CALLS:
            return f"an instance ({name}(...))"
    return ""


def _targets(node: ast.stmt) -> tuple[list[str], ast.expr | None]:
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)], node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id], node.value
    return [], None


def scan(path: Path, rel: str) -> list[Found]:
    """What `path` keeps at module level that can change (see the module docstring)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: list[Found] = []
    for node in tree.body:
        names, value = _targets(node)
        what = _mutable_value(value)
        out += [Found(rel, node.lineno, f"{n} = {what}") for n in names if what and n != "__all__"]
        if isinstance(node, ast.FunctionDef):
            for d in node.decorator_list:
                call = d.func if isinstance(d, ast.Call) else d
                name = call.attr if isinstance(call, ast.Attribute) else getattr(call, "id", "")
                if name in ("lru_cache", "cache"):
                    out.append(Found(rel, node.lineno, f"{node.name}: a module-level cache"))
    for sub in ast.walk(tree):
        if isinstance(sub, ast.Global):
            out.append(Found(rel, sub.lineno, f"global {', '.join(sub.names)}"))
    return out


def write_path_state(root: Path = REPO) -> list[Found]:
    found: list[Found] = []
    for pattern in WRITE_PATH:
        for path in sorted(root.glob(pattern)):
            found += scan(path, path.relative_to(root).as_posix())
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=REPO, help="the checkout to scan")
    args = ap.parse_args()
    found = write_path_state(args.root)
    for f in found:
        print(f"{f.module}:{f.line}  {f.what}")
    print(f"{len(found)} module-level mutable state in the write path of {args.root}")


if __name__ == "__main__":
    main()
