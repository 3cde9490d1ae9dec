"""One concept per module: no module of the package grows past what a reader takes in at once.

A module over the limit holds more than one concept; split it along the seam it already has
(docs/architecture.md says where each part lives) rather than raise the limit.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "memd"
MAX_LINES = 600
# The composition root only wires features together: it stays small.
COMPOSITION = "app.py"
MAX_COMPOSITION_LINES = 250


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_is_over_the_limit() -> None:
    sizes = {str(p.relative_to(PACKAGE)): _lines(p) for p in sorted(PACKAGE.rglob("*.py"))}
    assert len(sizes) > 100  # the walk found the package
    over = {rel: n for rel, n in sizes.items() if n > MAX_LINES}
    assert over == {}, f"modules over {MAX_LINES} lines: {over}"


def test_the_composition_root_stays_small() -> None:
    n = _lines(PACKAGE / COMPOSITION)
    assert n <= MAX_COMPOSITION_LINES, f"{COMPOSITION} has {n} lines"
