"""PURE helpers of the page: highlighting, times, safe return paths, and form → socket params."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from markupsafe import Markup, escape

from memd.api.messages import (
    UNSET,
    ChangeInfo,
    EditItemParams,
    ExtractionProgressResult,
    JobRun,
    JobStatus,
    MoveTo,
    RememberParams,
    UndoParams,
    UndoResult,
    UnsetType,
)
from memd.core.errors import InvalidParams
from memd.core.text import counted, terms
from memd.memory.parse import strip_meta_comments

OFF_MEANS = (
    "Off means: assistants get no memory from memd (context comes back empty), new"
    " conversation turns are not recorded, nothing is extracted or summarised, and remember and"
    " forget are refused. Your Markdown files stay as they are, hand edits are still indexed,"
    " and search still works. Turning it on again does not bring back what was said while it"
    " was off."
)
# `edit_item` params without an item: refused by a daemon that has the method (see the Edit view).
EDIT_PROBE = EditItemParams()
# Counts by which a job run says it wrote to the memory tree (extraction, archival).
WROTE_COUNTS = ("added", "merged", "superseded", "journal_days", "files", "items")
# Changes the page offers no undo for: undoing a baseline or a prune would remove or rewrite
# the whole tree (`memd undo` can still do it, for someone who means it).
NO_UNDO_CAUSES = frozenset({"baseline", "prune"})


def highlight(text: str, query: str) -> Markup:
    """`text` escaped, with every occurrence of the query's words wrapped in <mark>."""
    # One-letter Latin terms ("c" of "c++") would mark every word; CJK characters carry meaning.
    words = {w for w in terms(query, drop_stopwords=False) if len(w) > 1 or not w.isascii()}
    words |= {w for w in query.split() if len(w) > 1}
    if not words:
        return escape(text)
    pattern = re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)), re.I)
    out: list[str] = []
    pos = 0
    for m in pattern.finditer(text):
        out.append(str(escape(text[pos : m.start()])))
        out.append(f"<mark>{escape(m.group(0))}</mark>")
        pos = m.end()
    out.append(str(escape(text[pos:])))
    return Markup("".join(out))


def clean_snippet(snippet: str) -> str:
    """A search snippet without memd's metadata comments (what a person reads)."""
    return " ".join(strip_meta_comments(snippet).split())


def given(value: object) -> bool:
    """Jinja test: whether a typed answer has this field (it is not UNSET)."""
    return value is not UNSET


def num(n: Any) -> str:
    """A number as the CLI prints it (`200,000`); anything else as it is."""
    return f"{n:,}" if isinstance(n, int | float) and not isinstance(n, bool) else str(n)


def when(ts: Any) -> str:
    """Epoch seconds or an ISO-8601 time as local `YYYY-MM-DD HH:MM`; "never" for none."""
    if not ts:
        return "never"
    try:
        if isinstance(ts, str) and not ts.replace(".", "", 1).isdigit():
            moment = dt.datetime.fromisoformat(ts)
            moment = moment.astimezone() if moment.tzinfo else moment
        else:
            moment = dt.datetime.fromtimestamp(float(ts))
    except (TypeError, ValueError, OverflowError, OSError):
        return str(ts)
    return moment.strftime("%Y-%m-%d %H:%M")


def yaml_value(v: Any) -> str:
    """A front matter value as it was written (`true`, not Python's `True`)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list | tuple):
        return ", ".join(yaml_value(x) for x in v)
    return str(v)


def safe_back(path: str, default: str = "/memory") -> str:
    """A local path to go back to after a form (never another site, never a scheme)."""
    if not path.startswith("/") or path.startswith("//") or "\\" in path or "\n" in path:
        return default
    return path


def with_message(path: str, *, msg: str = "", err: str = "", anchor: str = "") -> str:
    """`path` (made safe) with a message for the next page, replacing any earlier one."""
    parts = urlsplit(safe_back(path))
    query = [
        (k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in ("msg", "err")
    ]
    query += [(k, v) for k, v in (("msg", msg), ("err", err)) if v]
    return urlunsplit(("", "", parts.path, urlencode(query), anchor or parts.fragment))


def error_text(exc: Exception) -> str:
    hint = getattr(exc, "hint", "")
    return f"{exc} ({hint})" if hint else str(exc)


def remember_params(form: Mapping[str, str]) -> RememberParams:
    """`remember` params from the page's form."""
    text = " ".join(form.get("text", "").split())
    if not text:
        raise InvalidParams("write what to remember first")
    scope = form.get("scope", "user") or "user"
    return RememberParams(
        text=text,
        scope=scope,  # type: ignore[arg-type]  # the daemon refuses another scope
        type=form.get("type", ""),
        project=form.get("project", "").strip() if scope == "project" else "",
        agent_id=form.get("agent_id", "").strip() if scope == "agent" else "",
    )


def edit_params(form: Mapping[str, str]) -> EditItemParams:
    """`edit_item` params from the edit form: only what the person changed.

    The form carries the values it showed (`orig_*`, and `expect` for the text), so a field left
    alone is not sent and cannot overwrite a change made meanwhile; `expect_text` lets the
    daemon refuse the edit when the item's line changed on disk since the page was loaded.
    """
    item_id = form.get("id", "").strip()
    if not item_id:
        raise InvalidParams("which item? (no id)")
    text = " ".join(form.get("text", "").split())
    if not text:
        raise InvalidParams("the text cannot be empty (use forget to remove an item)")
    pinned = form.get("pinned", "") == "on"
    move_path = form.get("move_path", "").strip()
    params = EditItemParams(
        id=item_id,
        expect_text=form.get("expect", ""),
        text=text if text != " ".join(form.get("expect", "").split()) else UNSET,
        importance=_importance(form),
        pinned=pinned if pinned != (form.get("orig_pinned", "") == "on") else UNSET,
        expires=_expires(form),
        move_to=MoveTo(path=move_path, section=form.get("move_section", "").strip() or "Notes")
        if move_path and move_path != form.get("orig_path", "").strip()
        else UNSET,
    )
    if all(v is UNSET for v in (params.text, params.importance, params.pinned, params.expires,
                                 params.move_to)):  # fmt: skip
        raise InvalidParams("nothing changed")
    return params


def _importance(form: Mapping[str, str]) -> int | UnsetType:
    imp = form.get("importance", "").strip()
    if imp == form.get("orig_importance", "").strip() or not imp:
        return UNSET
    if not imp.isdigit() or not 1 <= int(imp) <= 10:
        raise InvalidParams("importance is a whole number from 1 to 10")
    return int(imp)


def _expires(form: Mapping[str, str]) -> str | UnsetType:
    expires = form.get("expires", "").strip()
    if expires == form.get("orig_expires", "").strip():
        return UNSET
    if expires:
        try:
            dt.date.fromisoformat(expires)
        except ValueError:
            raise InvalidParams("expiry is a date like 2027-01-31") from None
    return expires


def undoable_run(run: JobRun) -> str:
    """The id that undoes all a job run wrote (the `run` of its counts), or "" when the run
    has none or wrote nothing to the memory tree."""
    rid = run.counts.get("run")
    wrote = any(
        isinstance(n, int) and not isinstance(n, bool) and n > 0
        for n in (run.counts.get(k) for k in WROTE_COUNTS)
    )
    return str(rid) if rid and wrote else ""


def names_item(change: ChangeInfo, item_id: str) -> bool:
    """Whether a change's detail names the item (`id=<item>`: remember, forget, edit)."""
    return bool(item_id) and re.search(rf"\bid={re.escape(item_id)}\b", change.detail) is not None


@dataclass(frozen=True, slots=True)
class DiffLine:
    kind: str  # "file" (headers), "hunk" (@@), "add", "del", "ctx", "note" (\ No newline …)
    text: str


def diff_lines(diff: str) -> list[DiffLine]:
    """A unified diff as lines the page can colour."""
    out: list[DiffLine] = []
    in_hunk = False
    for line in diff.rstrip("\n").split("\n") if diff else []:
        if line.startswith("diff --git "):
            in_hunk = False  # the next file's headers
        if line.startswith("@@"):
            in_hunk, kind = True, "hunk"
        elif not in_hunk:
            kind = "file"
        else:
            kind = {"+": "add", "-": "del", "\\": "note"}.get(line[:1], "ctx")
        out.append(DiffLine(kind, line))
    return out


def undo_message(result: UndoResult) -> str:
    """What an `undo` did, in a sentence."""
    what = ", ".join(f"{c.id} ({c.summary})" for c in result.changes)
    written = result.written
    files = f": rewrote {', '.join(written)}" if written else ": no file needed a change"
    notes = "".join(f" Note: {w}" for w in result.warnings)
    return f"Undid {what}{files}.{notes}"


def undo_params(form: Mapping[str, str]) -> UndoParams:
    """`undo` params from an undo button: one change, or every change of a job run."""
    change = form.get("change", "").strip()
    run = form.get("run", "").strip()
    if bool(change) == bool(run):
        raise InvalidParams("undo what? (give one change or one run)")
    return UndoParams(change=change, run=run)


def extraction_note(
    progress: ExtractionProgressResult | None,
    job: JobStatus | None,
    *,
    taken: int,
    enabled: bool,
) -> str:
    """What extraction did for one session and when it reads the rest, in a sentence or two.

    `progress` is `extraction_progress`'s answer (None from a daemon without it), `job` the
    `extract` job's part of `status`, `taken` how many items came from the session.
    """
    last = ""
    if job and job.last_finished:
        last = f" (last run {when(job.last_finished)}: {job.last_outcome or 'unknown'})"
    if progress is None:
        said = f"Extraction took {counted(taken, 'item')} from it{last}."
        return said + " This daemon does not say how far extraction read it."
    turns, read = progress.turns, progress.read
    if turns and read >= turns:
        took = f"took the {counted(taken, 'item')} below" if taken else "found nothing to remember"
        return f"Extraction read all {counted(turns, 'turn')} of this session and {took}{last}."
    waiting = f"{turns - read:,} of {counted(turns, 'turn')} not read by extraction yet"
    if not enabled:
        return f"{waiting}: memory is off, so nothing is extracted until it is turned on."
    if job and job.running:
        return f"{waiting}: extraction is running now."
    if job and job.next_run:
        every = f" (every {int(job.interval_s) // 60} min)" if job.interval_s else ""
        return (f"{waiting}: the next run is at {when(job.next_run)}{every}; `memd extract"
                " --now` runs it at once.")  # fmt: skip
    return f"{waiting}: no daemon is running to schedule extraction (`memd serve`)."
