"""PURE: reverse one change of a file on top of the file's current content.

History stores files redacted (`memd.core.redact`), the disk holds the real text. To undo a
change we take its own hunks (`after` → `before`, both redacted) and apply them to the current
text with a three-way rule: each hunk's lines must still be in the current file unchanged
(compared in redacted form), and lines the change did not touch are copied from the current
file as they are now, secrets included. A hunk whose lines were edited since, or that would
replace a line whose real text history does not have (a secret the change did not write, a
`<private>` span), is a conflict: the undo is refused, naming the lines.

Restored lines may carry `[REDACTED:kind:hash]` placeholders. When the same secret is still in
the file the placeholder is put back to the real value; otherwise the placeholder is written
and the caller is warned — never over a real secret still in the file.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass, field

from memd.core.redact import find_secrets, redact

_PLACEHOLDER = re.compile(r"\[REDACTED:[a-z0-9-]+:[0-9a-f]{8}\]")


@dataclass(frozen=True, slots=True)
class Reverted:
    """The reversed text, or the conflicts that stop it."""

    text: str
    conflicts: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass(slots=True)
class _Segment:
    """Lines a1:a2 of the real text that read as lines r1:r2 once redacted."""

    a1: int
    a2: int
    r1: int
    r2: int
    exact: bool


@dataclass(slots=True)
class _Edit:
    r1: int
    r2: int
    lines: list[str] = field(default_factory=list)


def placeholder_map(text: str) -> dict[str, str]:
    """The real secret behind each placeholder `redact(text)` writes.

    The placeholder form is `redact`'s documented one: `[REDACTED:<kind>:<sha256-8>]` with the
    hash of the secret itself.
    """
    found: dict[str, str] = {}
    for kind, start, end in find_secrets(text):
        secret = text[start:end]
        digest = hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        found[f"[REDACTED:{kind}:{digest}]"] = secret
    return found


def _segments(real: list[str], red: list[str]) -> list[_Segment]:
    if real == red:
        return [_Segment(i, i + 1, i, i + 1, True) for i in range(len(real))]
    segs: list[_Segment] = []
    sm = difflib.SequenceMatcher(None, real, red, autojunk=False)
    for tag, a1, a2, r1, r2 in sm.get_opcodes():
        if tag == "equal":
            segs += [_Segment(a1 + k, a1 + k + 1, r1 + k, r1 + k + 1, True) for k in range(a2 - a1)]
        elif segs and not segs[-1].exact:
            segs[-1].a2, segs[-1].r2 = a2, r2
        else:
            segs.append(_Segment(a1, a2, r1, r2, False))
    # A segment with no redacted line (a whole `<private>` block) cannot be placed on its own:
    # it joins its neighbour so it moves, stays or conflicts with it.
    merged: list[_Segment] = []
    for s in segs:
        if merged and (s.r1 == s.r2 or merged[-1].r1 == merged[-1].r2):
            m = merged[-1]
            m.a2, m.r2, m.exact = s.a2, s.r2, False
        else:
            merged.append(s)
    return merged


def _line_range(a1: int, a2: int) -> str:
    return f"line {a1 + 1}" if a2 - a1 <= 1 else f"lines {a1 + 1}–{a2}"


def revert_text(after: str, before: str, current: str, *, label: str = "the file") -> Reverted:
    """Apply the reverse of the change `before` → `after` to `current`.

    `after` and `before` are the redacted texts history holds; `current` is the real file.
    """
    aft = after.splitlines(keepends=True)
    bef = before.splitlines(keepends=True)
    cur = current.splitlines(keepends=True)
    red = redact(current).splitlines(keepends=True)
    segs = _segments(cur, red)
    seg_of = [0] * len(red)
    for n, s in enumerate(segs):
        for r in range(s.r1, s.r2):
            seg_of[r] = n
    o2r: dict[int, int] = {}
    for blk in difflib.SequenceMatcher(None, aft, red, autojunk=False).get_matching_blocks():
        for k in range(blk.size):
            o2r[blk.a + k] = blk.b + k

    def real_range(r1: int, r2: int) -> str:
        if r1 >= r2:
            at = segs[seg_of[r1]].a1 if r1 < len(red) else len(cur)
            return f"line {at + 1}" if at < len(cur) else "the end"
        return _line_range(segs[seg_of[r1]].a1, segs[seg_of[r2 - 1]].a2)

    conflicts: list[str] = []
    edits: list[_Edit] = []
    if cur and not red and aft != bef:
        return Reverted("", (f"{label}: its whole text is hidden from history (<private>)",))
    for tag, o1, o2, b1, b2 in difflib.SequenceMatcher(
        None, aft, bef, autojunk=False
    ).get_opcodes():
        if tag == "equal":
            continue
        if o1 < o2:
            rs = [o2r.get(o) for o in range(o1, o2)]
            first = rs[0]
            if first is None or any(r != first + k for k, r in enumerate(rs)):
                near = next((r for r in rs if r is not None), None)
                where = real_range(near, near + 1) if near is not None else _line_range(o1, o2)
                conflicts.append(
                    f"{label}: {where} ({_line_range(o1, o2)} after the change) were edited since"
                )
                continue
            r1, r2 = first, first + (o2 - o1)
        else:
            anchor = _anchor(o1, aft, red, o2r)
            if anchor is None:
                conflicts.append(
                    f"{label}: the text around {_line_range(o1, o1 + 1)} after the change"
                    " was edited since"
                )
                continue
            r1 = r2 = anchor
        problem = _touches_hidden(segs, seg_of, cur, r1, r2, len(red), replacing=b1 < b2)
        if problem:
            conflicts.append(f"{label}: {real_range(r1, r2)} {problem}")
            continue
        edits.append(_Edit(r1, r2, bef[b1:b2]))
    if conflicts:
        return Reverted("", tuple(conflicts))
    return _build(cur, segs, seg_of, len(red), edits, placeholder_map(current), label)


def _anchor(o: int, aft: list[str], red: list[str], o2r: dict[int, int]) -> int | None:
    """Where in red an insertion before aft[o] goes, when both neighbours are still in place."""
    if not aft:
        return 0 if not red else None
    if o == 0:
        return 0 if o2r.get(0) == 0 else None
    if o == len(aft):
        return len(red) if o2r.get(o - 1) == len(red) - 1 else None
    prev, nxt = o2r.get(o - 1), o2r.get(o)
    if prev is None or nxt != prev + 1:
        return None
    return nxt


def _touches_hidden(
    segs: list[_Segment],
    seg_of: list[int],
    cur: list[str],
    r1: int,
    r2: int,
    n_red: int,
    *,
    replacing: bool,
) -> str:
    """Why an edit of redacted lines r1:r2 cannot be mapped onto the real text ('' if it can)."""
    if r1 == r2:
        if 0 < r1 < n_red and seg_of[r1 - 1] == seg_of[r1] and not segs[seg_of[r1]].exact:
            return "sit inside a block history keeps only redacted; edit it by hand"
        return ""
    first, last = segs[seg_of[r1]], segs[seg_of[r2 - 1]]
    if first.r1 < r1 or last.r2 > r2:
        return "are part of a block history keeps only redacted (a secret or a <private> span)"
    if replacing:
        for n in range(seg_of[r1], seg_of[r2 - 1] + 1):
            s = segs[n]
            if not s.exact and any("<private" in line.lower() for line in cur[s.a1 : s.a2]):
                return "hold a <private> span history never saw; edit them by hand"
    return ""


def _build(
    cur: list[str],
    segs: list[_Segment],
    seg_of: list[int],
    n_red: int,
    edits: list[_Edit],
    secrets: dict[str, str],
    label: str,
) -> Reverted:
    out: list[str] = []
    warnings: list[str] = []
    conflicts: list[str] = []
    r = 0
    # Lines of the real text before the first redacted line (only when red is empty).
    emitted_seg = -1

    def copy(r_from: int, r_to: int) -> None:
        nonlocal emitted_seg
        for rr in range(r_from, r_to):
            n = seg_of[rr]
            if n != emitted_seg:
                s = segs[n]
                out.extend(cur[s.a1 : s.a2])
                emitted_seg = n

    for e in sorted(edits, key=lambda e: (e.r1, e.r2)):
        copy(r, e.r1)
        replaced_secrets: set[str] = set()
        if e.r1 < e.r2:
            for n in range(seg_of[e.r1], seg_of[e.r2 - 1] + 1):
                s = segs[n]
                if not s.exact:
                    replaced_secrets |= {
                        v for v in secrets.values() if any(v in ln for ln in cur[s.a1 : s.a2])
                    }
            emitted_seg = seg_of[e.r2 - 1]
        for line in e.lines:
            restored, missing = _unredact(line, secrets)
            if missing:
                if replaced_secrets:
                    conflicts.append(
                        f"{label}: restoring line {len(out) + 1} would put a redaction"
                        " placeholder where a secret is now; edit it by hand"
                    )
                else:
                    warnings.append(
                        f"{label}: line {len(out) + 1} held a secret history keeps only"
                        " redacted; it is restored as the placeholder"
                    )
            out.append(restored)
        r = e.r2
    copy(r, n_red)
    if n_red == 0 and not edits:
        out.extend(cur)
    if conflicts:
        return Reverted("", tuple(conflicts))
    return Reverted("".join(out), (), tuple(warnings))


def _unredact(line: str, secrets: dict[str, str]) -> tuple[str, bool]:
    """`line` with known placeholders replaced by their secrets; True when one stays unknown."""
    if "[REDACTED:" not in line:
        return line, False
    missing = False

    def sub(m: re.Match[str]) -> str:
        nonlocal missing
        real = secrets.get(m.group(0))
        if real is None:
            missing = True
            return m.group(0)
        return real

    return _PLACEHOLDER.sub(sub, line), missing
