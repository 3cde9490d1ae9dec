"""The walk of a call through memd's modules: how many rooms it passes, stays in and returns to.

A "walk" follows one call on its thread with `sys.setprofile`: each time control enters a
function of a memd module (a call) or comes back into one (a return to the caller's frame), the
module it is in is noted. Consecutive notes in the same module are one **stay**; the distinct
modules are the **rooms**; **returns** are stays in a room already visited (stays - rooms). A
corridor that reads top to bottom has few returns: each module is entered, does its part and
is left.

Walks measured, on a real memory tree and store (an in-process engine, as the CLI's fallback
builds it, without a daemon):

- `write`: the file write of a remember, from the item edit to its return (before the door:
  `memory.edit.add_item(path, ...)`; with it: `MemoryFiles.edit(path, add_item(...), op)`);
- `remember`: `MemoryOps.remember` whole (the write, the index, the history's record);
- `hand edit`: what the daemon does when the watcher reports a file a person saved
  (`MemoryFeature.on_paths`: the write guard's check, the history's note, the index).

The same script measures another checkout (`--baseline`: it runs itself with that tree's memd;
it imports only memd's public entry points and picks the write step of either version).

    python -m bench.walks                              # this checkout's walks, printed
    python -m bench.walks --baseline /path/to/checkout  # and another's: updates the block
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

BLOCK = "write-path"
REPO = Path(__file__).resolve().parent.parent


@dataclass
class Walk:
    name: str
    modules: list[str]  # the module of each stay, in order

    @property
    def stays(self) -> int:
        return len(self.modules)

    @property
    def rooms(self) -> int:
        return len(set(self.modules))

    @property
    def returns(self) -> int:
        return self.stays - self.rooms


def _module(frame: FrameType | None) -> str:
    name = frame.f_globals.get("__name__", "") if frame is not None else ""
    return name if isinstance(name, str) and name.startswith("memd.") else ""


def walk(name: str, fn: Callable[[], Any]) -> Walk:
    """Run `fn` once with the profiler on and return the modules it stayed in."""
    seen: list[str] = []

    def note(module: str) -> None:
        if module and (not seen or seen[-1] != module):
            seen.append(module)

    def profile(frame: FrameType, event: str, _arg: object) -> None:
        if event == "call":
            note(_module(frame))
        elif event == "return":
            note(_module(frame.f_back))

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    while seen and seen[-1] == "":
        seen.pop()
    return Walk(name, seen)


def measure() -> list[Walk]:
    from memd.app import Engine
    from memd.core.settings import load
    from memd.db import Store
    from memd.memory.tree import create_tree

    home = Path(tempfile.mkdtemp(prefix="memd-walk-"))
    settings = load(env={"MEMD_HOME": str(home)})
    create_tree(settings.memory_dir)
    store = Store.open(settings.db_path)
    try:
        engine = Engine(settings, store)
        engine.indexer.reconcile()
        notes = settings.memory_dir / "_core" / "notes.md"
        notes.write_text("# Notes\n\n## Notes\n\n- a line written by hand\n")
        engine.indexer.index_paths([str(notes)])
        engine.ops.remember("warm up the code paths")  # imports and first-use costs
        time.sleep(0.3)  # the file is no longer "just changed by someone else"
        step = _write_step(engine, notes)
        done = step()
        walks = [
            done if isinstance(done, Walk) else walk("write (the item edit of a remember)", step)
        ]
        time.sleep(0.3)
        walks.append(walk("remember (ops.remember whole)",
                          lambda: engine.ops.remember("the deploy window is Thursday")))  # fmt: skip
        notes.write_text(notes.read_text() + "- another line by hand\n")
        time.sleep(0.3)
        walks.append(walk("hand edit (the watcher's report)",
                          lambda: engine.memory.on_paths([str(notes)])))  # fmt: skip
        if engine.history is not None:
            engine.history.close()
        return walks
    finally:
        store.close()


def _write_step(engine: Any, notes: Path) -> Callable[[], Any]:
    meta = {"id": "m_0000walk", "imp": "7", "src": "manual", "at": "2026-01-01"}
    files = getattr(engine.memory, "files", None)
    if files is None:  # before the door: the item edit wrote the file itself
        from memd.memory import edit

        old: Any = edit.add_item  # that version's: (path, section, text, meta, ..., inside)
        roots = engine.ops.roots()  # as remember passes them
        return lambda: old(notes, "Notes", "the walk's item", meta, title="Notes", inside=roots)
    from memd.history import Cause
    from memd.memory.edit import add_item as edit_of

    # The operation is opened (and recorded) outside the walk, as no scope was before the door.
    def step() -> Any:
        return files.edit(notes, edit_of(notes, "Notes", "the walk's item", meta), op)

    with files.operation(Cause.REMEMBER) as op:
        w = walk("write (the item edit of a remember)", step)
    return lambda: w


def _child_walks(tree: Path) -> list[Walk]:
    """The walks of another checkout: this script run with that tree's memd."""
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--json"],
        cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, capture_output=True, text=True,
        timeout=600, check=True,
    ).stdout  # fmt: skip
    return [Walk(w["name"], w["modules"]) for w in json.loads(out.splitlines()[-1])]


def _state(tree: Path) -> int:
    sys.path.insert(0, str(REPO))
    from bench.mutable_state import write_path_state

    return len(write_path_state(tree))


def render(before: list[Walk], after: list[Walk], baseline: Path, rev: str) -> str:
    sys.path.insert(0, str(REPO))
    from bench.report import machine_line, table

    rows = [
        [a.name, *(f"{b.stays} / {b.rooms} / {b.returns}" for b in [b]),
         f"{a.stays} / {a.rooms} / {a.returns}"]
        for b, a in zip(before, after, strict=True)
    ]  # fmt: skip
    rows.append(
        ["module-level mutable state in the write path (`bench/mutable_state.py`)",
         str(_state(baseline)), str(_state(REPO))]
    )  # fmt: skip
    return (
        "### The write path: walks and module-level state (`bench/walks.py`)\n\n"
        "A walk follows one call on its thread (`sys.setprofile`) and notes the memd module "
        "control is in at each call and each return; consecutive notes in one module are one "
        "stay, the distinct modules are the rooms, returns = stays - rooms (every time control "
        "comes back to a module it already was in, a leaf helper's caller included). "
        f"Before: the tree at `{baseline}` ({rev}); after: this checkout. The modules of each "
        "stay, in order, are printed by the script.\n\n"
        + table(
            ["walk", "before: stays / rooms / returns", "after: stays / rooms / returns"], rows
        )  # fmt: skip
        + "\n\n"
        + machine_line()
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", type=Path, help="another checkout to walk too (before)")
    ap.add_argument("--json", action="store_true", help="print this tree's walks as JSON only")
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "benchmarks.md")
    ap.add_argument("--no-write", action="store_true", help="print only, do not touch --out")
    args = ap.parse_args()
    walks = measure()
    if args.json:
        print(json.dumps([{"name": w.name, "modules": w.modules} for w in walks]))
        return
    base = args.baseline.resolve() if args.baseline else None
    before = _child_walks(base) if base else []
    for label, ws in [(str(base), before), ("this checkout", walks)]:
        for w in ws:
            print(f"{label}: {w.name}: {w.stays} stays, {w.rooms} rooms, {w.returns} returns")
            print("    " + " → ".join(m.removeprefix("memd.") for m in w.modules))
    if base is None:
        return
    rev = subprocess.run(
        ["git", "-C", str(base), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    body = render(before, walks, base, rev or "not a git checkout")
    print("\n" + body)
    if not args.no_write:
        from bench.report import write_block

        write_block(args.out, BLOCK, body)


if __name__ == "__main__":
    main()
