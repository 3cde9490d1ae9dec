"""Claude Code transcripts for tests: sessions and sub-agent runs, in the recorded record shape."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any


def iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def claude_record(session: str, uuid: str, role: str, text: str, ts: float, **extra: Any) -> str:
    message: dict[str, Any] = {"role": role, "content": text}
    if role == "assistant":
        message = {"id": f"msg_{uuid}", "type": "message", "role": "assistant",
                   "content": [{"type": "text", "text": text}]}  # fmt: skip
    record = {"parentUuid": None, "isSidechain": False, "userType": "external",
              "cwd": "/home/user/shop", "sessionId": session, "type": role, "message": message,
              "uuid": uuid, "timestamp": iso(ts), **extra}  # fmt: skip
    return json.dumps(record)


def transcript(path: Path, session: str, said: list[str], end: float, **extra: Any) -> None:
    """A transcript of user and assistant turns in turn, 20 s apart, the last at `end`."""
    lines = []
    for i, text in enumerate(said):
        role = "user" if i % 2 == 0 else "assistant"
        uid = f"{path.stem}-{i}"
        lines.append(
            claude_record(session, uid, role, text, end - 20 * (len(said) - 1 - i), **extra)
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def subagent(
    folder: Path, session: str, run: str, kind: str | None, turns: int, end: float
) -> None:
    said = [f"step {i} of the search" for i in range(turns)]
    transcript(folder / f"agent-{run}.jsonl", session, said, end, isSidechain=True, agentId=run)
    if kind is not None:
        meta = {"agentType": kind, "description": f"{kind} run"}
        (folder / f"agent-{run}.meta.json").write_text(json.dumps(meta))
