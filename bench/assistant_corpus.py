"""The same generated conversations written as Cline and Roo Code task folders, Continue session
files and Aider chat histories, with what those assistants add around what was said: API
request records with an environment block, reasoning, tool calls and command output, attached
files, SEARCH/REPLACE edits, status lines. Used by `bench.assistant_ingest`."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

Conversation = tuple[str, list[tuple[str, str, float]]]

_ENV = (
    "<environment_details>\n# VSCode Visible Files\nsrc/app.py\n\n# Current Time\n1/6/2026\n\n"
    "# Current Working Directory (/home/user/bench) Files\n" + "\n".join(f"src/m{i}.py" for i in range(60))
    + "\n</environment_details>"
)  # fmt: skip
_OUTPUT = "\n".join(f"tests/test_{i}.py::test_case PASSED" for i in range(40))
_FILE = "\n".join(f"def f{i}(x):\n    return x + {i}" for i in range(40))


def write_cline(convs: list[Conversation], folder: Path, *, roo: bool = False) -> int:
    """One task folder per conversation; `roo` adds Roo Code's `history_item.json`."""
    for sid, turns in convs:
        records: list[dict[str, Any]] = []
        for i, (role, text, ts) in enumerate(turns):
            ms = int(ts * 1000)
            if role == "user":
                kind = "text" if i == 0 else "user_feedback"
                records.append(
                    {"ts": ms, "type": "say", "say": kind, "text": text, "images": [], "files": []}
                )
                request = {
                    "request": f"<task>\n{text}\n</task>\n\n{_ENV}",
                    "tokensIn": 900,
                    "tokensOut": 50,
                }
                records.append(
                    {
                        "ts": ms + 1,
                        "type": "say",
                        "say": "api_req_started",
                        "text": json.dumps(request),
                    }
                )
                continue
            records.append(
                {
                    "ts": ms,
                    "type": "say",
                    "say": "reasoning",
                    "text": "Let me look.",
                    "partial": False,
                }
            )
            if i % 6 == 1:
                tool = {
                    "tool": "readFile",
                    "path": "src/app.py",
                    "content": "/home/user/bench/src/app.py",
                }
                records.append(
                    {"ts": ms + 1, "type": "say", "say": "tool", "text": json.dumps(tool)}
                )
                records.append(
                    {"ts": ms + 2, "type": "say", "say": "command_output", "text": _OUTPUT}
                )
            kind = "completion_result" if i == len(turns) - 1 else "text"
            records.append(
                {"ts": ms + 3, "type": "say", "say": kind, "text": text, "partial": False}
            )
        task = folder / sid
        task.mkdir(parents=True, exist_ok=True)
        (task / "ui_messages.json").write_text(json.dumps(records), encoding="utf-8")
        if roo:
            item = {"id": sid, "number": 1, "ts": int(turns[-1][2] * 1000), "task": turns[0][1],
                    "tokensIn": 1, "tokensOut": 1, "totalCost": 0, "workspace": "/home/user/bench"}  # fmt: skip
            (task / "history_item.json").write_text(json.dumps(item), encoding="utf-8")
    return sum(len(t) for _, t in convs)


def write_continue(convs: list[Conversation], folder: Path) -> int:
    """One session file per conversation and the `sessions.json` index."""
    folder.mkdir(parents=True, exist_ok=True)
    index = []
    for sid, turns in convs:
        history: list[dict[str, Any]] = []
        for i, (role, text, _ts) in enumerate(turns):
            item: dict[str, Any] = {
                "message": {"role": role, "content": text, "id": f"{sid}-{i}"},
                "contextItems": [],
            }
            if role == "user" and i % 4 == 0:
                item["contextItems"] = [{"name": "app.py", "description": "src/app.py", "content": _FILE,
                                         "id": {"providerTitle": "file", "itemId": str(i)}}]  # fmt: skip
            if role == "assistant":
                item["reasoning"] = {
                    "active": False,
                    "text": "Let me look.",
                    "startAt": int(_ts * 1000),
                }
                if i % 6 == 1:
                    history.append({"message": {"role": "tool", "content": _OUTPUT, "toolCallId": f"c{i}"},
                                    "contextItems": []})  # fmt: skip
            history.append(item)
        doc = {"sessionId": sid, "title": turns[0][1][:40], "workspaceDirectory": "file:///home/user/bench",
               "history": history, "mode": "agent"}  # fmt: skip
        (folder / f"{sid}.json").write_text(json.dumps(doc), encoding="utf-8")
        index.append({"sessionId": sid, "title": doc["title"], "dateCreated": str(int(turns[0][2] * 1000)),
                      "workspaceDirectory": doc["workspaceDirectory"]})  # fmt: skip
    (folder / "sessions.json").write_text(json.dumps(index), encoding="utf-8")
    return sum(len(t) for _, t in convs)


def write_aider(convs: list[Conversation], folder: Path, *, runs_per_project: int = 40) -> int:
    """Aider histories: `runs_per_project` runs (sessions) per project folder's Markdown file."""
    for p in range(0, len(convs), runs_per_project):
        project = folder / f"project-{p // runs_per_project:03d}"
        project.mkdir(parents=True, exist_ok=True)
        out: list[str] = []
        for _sid, turns in convs[p : p + runs_per_project]:
            started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(turns[0][2]))
            out += [
                f"\n# aider chat started at {started}\n",
                "> Aider v0.86.1  ",
                "> Main model: sonnet  ",
                "",
            ]
            for i, (role, text, _ts) in enumerate(turns):
                if role == "user":
                    out += [f"#### {text}  ", ""]
                    continue
                out += ["<think>Let me look.</think>", text, ""]
                if i % 6 == 1:
                    out += [
                        "src/app.py",
                        "```python",
                        "<<<<<<< SEARCH",
                        _FILE,
                        "=======",
                        _FILE,
                        ">>>>>>> REPLACE",
                        "```",
                        "",
                    ]
                out += ["> Tokens: 3.2k sent, 222 received.  ", ""]
        (project / ".aider.chat.history.md").write_text("\n".join(out), encoding="utf-8")
    return sum(len(t) for _, t in convs)
