"""Cline and Roo Code tasks: the `ui_messages.json` of a task folder (`parse_cline_task`).

Both extensions keep each task in `<globalStorage>/tasks/<task id>/`. `ui_messages.json` is the
chat as the panel shows it, one JSON array rewritten whole after every change: records
`{ts, type: "say"|"ask", say|ask, text, partial?, images?, ...}` with `ts` in epoch
milliseconds, unique within the task and kept when a streamed record is completed. It holds
what was said without the wrappers the API history adds (`<task>`, `<feedback>`,
`<environment_details>`, tool results), so it is the file read:

- said by the user: the first record (the task, `say: "text"`, or `"task"` in forks) and every
  `say: "user_feedback"`;
- said by the assistant: `say: "text"` after the first, `say: "completion_result"`,
  `ask: "followup"` (`{"question": ...}` JSON, or plain text in older versions) and
  `ask: "plan_mode_respond"` / `"act_mode_respond"` (`{"response": ...}`);
- never said: `partial: true` records (a message still streaming), reasoning, tool and command
  records and their output, API request records, checkpoints, errors, `subtask_result` (a
  sub-task's answer relayed to its parent) and every other kind.

The task's folder (its project) is read from the first API request record's environment block
(`# Current Working Directory (<path>) Files`, Roo: `Current Workspace Directory`) or from Roo
Code's `history_item.json` beside the file (`workspace`), which also says when a task is a
sub-task (`parentTaskId`): its first record is then the parent agent's instructions, and its
assistant records the sub-agent's work, neither of them said to the user.
"""

from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass
from typing import Any

from memd.conversations.formats.contract import Facts, FileContext
from memd.conversations.formats.document import JsonLoad, ParsedDocument, load_json
from memd.conversations.formats.fields import epoch_or_none, json_type
from memd.core.models import Turn

CLINE_SOURCE = "cline"
ROO_SOURCE = "roo-code"

_ASSISTANT_SAYS = frozenset({"text", "completion_result"})
_ASSISTANT_ASKS = {"followup": "question", "plan_mode_respond": "response", "act_mode_respond": "response"}  # fmt: skip
_FIRST_SAYS = frozenset({"text", "task"})
# The kinds Cline and Roo Code write that are not said (tools, commands, requests, reasoning,
# checkpoints, relays...), from their `ClineSay`/`ClineAsk` types. A kind in neither list (a
# newer version's) is skipped too, and named once in the document's problems.
_UNSAID_SAYS = frozenset(
    "task error error_retry api_req_started api_req_finished api_req_retried "
    "api_req_retry_delayed api_req_rate_limited api_req_deleted deleted_api_reqs reasoning "
    "user_feedback_diff command command_output tool shell_integration_warning "
    "shell_integration_warning_with_suggestion browser_action_launch browser_action "
    "browser_action_result browser_session_status mcp_server_request_started "
    "mcp_server_response mcp_notification use_mcp_server diff_error clineignore_error "
    "rooignore_error command_permission_denied checkpoint_created checkpoint_saved "
    "load_mcp_documentation generate_explanation info task_progress hook_status "
    "hook_output_stream subagent subagent_usage use_subagents subtask_result image "
    "condense_context condense_context_error sliding_window_truncation codebase_search_result "
    "user_edit_todos too_many_tools_warning conditional_rules_applied new_task".split()
)
_UNSAID_ASKS = frozenset(
    "command command_output completion_result tool api_req_failed resume_task "
    "resume_completed_task mistake_limit_reached auto_approval_max_req_reached "
    "browser_action_launch use_mcp_server new_task condense summarize_task report_bug "
    "use_subagents".split()
)
_CWD = re.compile(r"# Current (?:Working|Workspace) Directory \(([^)\n]+)\)")


@dataclass(frozen=True, slots=True)
class _Task:
    task_id: str
    source: str
    path: str
    project: str
    subtask: bool
    title: str


def parse_cline_task(
    data: bytes, *, path: str, task_id: str, source: str = CLINE_SOURCE, meta: bytes | None = None
) -> ParsedDocument:
    """The turns of one task's `ui_messages.json` (`data`).

    `task_id` is the task folder's name (the session id); `source` is `"cline"` or
    `"roo-code"`; `meta` is the task's history entry when there is one (Roo Code's
    `history_item.json`, or the task's item of Cline's `state/taskHistory.json`,
    `task_history_item`). Turn ids are the
    records' `ts` (a second record with the same `ts` gets `<ts>.2`), so a rewritten file yields
    the same ids. A file cut short yields the turns of its complete records and a problem.
    """
    loaded = load_json(data)
    problems: list[tuple[int, str]] = [loaded.problem] if loaded.problem else []
    records, complete = loaded.value, loaded.problem is None
    if records is None:
        return ParsedDocument([], problems, complete)
    if not isinstance(records, list):
        problems.append((0, f"expected a JSON array of messages, got {json_type(records)}"))
        return ParsedDocument([], problems)
    info = _task_info(records, meta, problems, task_id=task_id, source=source, path=path)
    return ParsedDocument(_turns(records, info, problems), problems, complete)


def _task_info(
    records: list[Any], meta: bytes | None, problems: list[tuple[int, str]], **names: str
) -> _Task:
    item: dict[str, Any] = {}
    if meta is not None:
        loaded: JsonLoad = load_json(meta)
        if isinstance(loaded.value, dict):
            item = loaded.value
        else:
            problems.append((0, "history_item.json beside it is not a JSON object: ignored"))
    # Roo Code's `workspace`; Cline's task history has `cwdOnTaskInitialization`.
    workspace = item.get("workspace") or item.get("cwdOnTaskInitialization")
    project = workspace if isinstance(workspace, str) and workspace else _cwd(records)
    title = item.get("title")
    return _Task(
        project=project,
        subtask=isinstance(item.get("parentTaskId"), str) and bool(item.get("parentTaskId")),
        title=title if isinstance(title, str) else "",
        **names,
    )


def _cwd(records: list[Any]) -> str:
    """The task's folder, from the environment block of its first API request record."""
    for record in records[:50]:
        if isinstance(record, dict) and record.get("say") == "api_req_started":
            text = record.get("text")
            if isinstance(text, str) and (found := _CWD.search(text)):
                return found.group(1).replace("\\\\", "\\")
    return ""


def _turns(records: list[Any], task: _Task, problems: list[tuple[int, str]]) -> list[Turn]:
    turns: list[Turn] = []
    seen: dict[int, int] = {}
    skipped: dict[str, list[int]] = {}
    first = True
    for index, record in enumerate(records):
        if not isinstance(record, dict) or record.get("type") not in ("ask", "say"):
            skipped.setdefault("not an ask/say record", []).append(index)
            continue
        if record.get("partial") is True:
            continue  # still streaming: its final copy replaces it under the same ts
        role, was_first, first = _role(record, first), first, False
        if role is None and not _known(record):
            kind = f"{record['type']}:{record.get(record['type'])}"
            skipped.setdefault(f"of a kind memd does not know ({kind[:60]})", []).append(index)
        if role is None or (task.subtask and (was_first or role == "assistant")):
            continue
        text = _text(record)
        ms = record.get("ts")
        ts = epoch_or_none(ms)
        if not text:
            continue
        if ts is None or not isinstance(ms, int | float):
            skipped.setdefault("no usable ts", []).append(index)
            continue
        turns.append(_turn(task, role, text, ts, _turn_id(int(ms), seen), index, turns))
    for why, where in skipped.items():
        shown = ", ".join(str(i) for i in where[:5]) + (" …" if len(where) > 5 else "")
        problems.append((0, f"{len(where)} message(s) skipped, {why}: index {shown}"))
    return turns


def _role(record: dict[str, Any], first: bool) -> str | None:
    if record["type"] == "say":
        say = record.get("say")
        if first and say in _FIRST_SAYS:
            return "user"
        if say == "user_feedback":
            return "user"
        return "assistant" if say in _ASSISTANT_SAYS else None
    return "assistant" if record.get("ask") in _ASSISTANT_ASKS else None


def _known(record: dict[str, Any]) -> bool:
    if record["type"] == "say":
        return record.get("say") in _UNSAID_SAYS or record.get("say") in _ASSISTANT_SAYS
    return record.get("ask") in _UNSAID_ASKS or record.get("ask") in _ASSISTANT_ASKS


def _text(record: dict[str, Any]) -> str:
    text = record.get("text")
    if not isinstance(text, str):
        return ""
    key = _ASSISTANT_ASKS.get(record.get("ask", ""))
    if key is not None and text.lstrip().startswith("{"):
        try:
            payload = json.loads(text)
        except (ValueError, RecursionError):
            return text.strip()
        value = payload.get(key) if isinstance(payload, dict) else None
        return value.strip() if isinstance(value, str) else ""
    return text.strip()


def _turn_id(ms: int, seen: dict[int, int]) -> str:
    seen[ms] = seen.get(ms, 0) + 1
    return str(ms) if seen[ms] == 1 else f"{ms}.{seen[ms]}"


def _turn(
    task: _Task, role: str, text: str, ts: float, turn_id: str, index: int, before: list[Turn]
) -> Turn:
    return Turn(
        source=task.source,
        session_id=task.task_id,
        turn_id=turn_id,
        role=role,
        text=text,
        ts=ts,
        source_path=task.path,
        agent_id=task.source,
        project=task.project,
        session_title=task.title,
        parent_id=before[-1].turn_id if before else "",
        line=index + 1,
    )


def task_history_item(index: bytes, task_id: str) -> bytes | None:
    """The entry of task `task_id` in Cline's `state/taskHistory.json` (`index`), as JSON bytes
    for `parse_cline_task`'s `meta`; None when it is not there or the file cannot be read."""
    items = load_json(index).value
    if not isinstance(items, list):
        return None
    for item in items:
        if isinstance(item, dict) and item.get("id") == task_id:
            return json.dumps(item).encode()
    return None


def parse_document(data: bytes, ctx: FileContext) -> ParsedDocument:
    """The reader's entry: a task's `ui_messages.json` with the history entry `describe` found."""
    meta = ctx.facts.extra.get("meta")
    return parse_cline_task(
        data,
        path=ctx.path,
        task_id=ctx.facts.session_id or os.path.basename(os.path.dirname(ctx.path)),
        source=ctx.source,
        meta=meta.encode() if meta else None,
    )


def describe(path: str) -> Facts:
    """The task (its folder's name) and its history entry: Roo Code's `history_item.json` beside
    the file, else the task's item of Cline's `state/taskHistory.json`."""
    folder = os.path.dirname(path)
    task_id = os.path.basename(folder)
    meta = _small(os.path.join(folder, "history_item.json"))
    if meta is None:
        index = os.path.join(os.path.dirname(os.path.dirname(folder)), "state", "taskHistory.json")
        meta = _history_entries(index).get(task_id)
    return Facts(session_id=task_id, extra={"meta": meta} if meta else {})


def _small(path: str, limit: int = 1 << 20) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read(limit).decode("utf-8", errors="replace")
    except OSError:
        return None


def _history_entries(path: str) -> dict[str, str]:
    """Each task's entry of a `taskHistory.json` (as JSON text), read once per version of it."""
    try:
        st = os.stat(path)
    except OSError:
        return {}
    return _entries_of(path, st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=8)
def _entries_of(path: str, mtime_ns: int, size: int) -> dict[str, str]:
    del mtime_ns, size  # the cache key: a new version of the file is read again
    try:
        with open(path, "rb") as f:
            items = load_json(f.read(64 << 20)).value
    except OSError:
        return {}
    if not isinstance(items, list):
        return {}
    return {
        i["id"]: json.dumps(i)
        for i in items
        if isinstance(i, dict) and isinstance(i.get("id"), str)
    }
