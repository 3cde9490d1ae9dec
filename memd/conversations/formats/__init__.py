"""Conversation log formats normalised into `memd.core.models.Turn`. Pure: bytes in, values out.

Formats (see docs/ecosystem-notes.md §1), one module each:

- `claude_code`: Claude Code session transcripts, one JSON record per line
  (`parse_claude_code_line`).
- `jsonl`: generic JSONL, one message per line, and, told apart by the line's shape, `openai`:
  OpenAI `{"messages": [...]}` JSONL, one conversation per line (`parse_jsonl_line`).
- `chatgpt`: the ChatGPT data export `conversations.json` (`parse_chatgpt_export`).
- whole documents rewritten or appended to in place, parsed from the file's bytes into a
  `document.ParsedDocument` (turns and the problems met): `cline` (Cline and Roo Code task
  folders, `parse_cline_task`), `continue_dev` (Continue sessions, `parse_continue_session`)
  and `aider` (Aider's Markdown chat history, `parse_aider_history`).

`fields` holds what they share: a line's JSON object, times and typed fields. Callers use the
names below, not the modules.

Every turn id is derived from the log itself, never from the time of reading, so
re-reading a file yields the same ids and the store can upsert without duplicates.
"""

from __future__ import annotations

from memd.conversations.formats.chatgpt import ChatGPTImport, parse_chatgpt_export
from memd.conversations.formats.claude_code import (
    CLAUDE_CODE_AGENT,
    Record,
    SessionTitle,
    SubagentTurn,
    parse_claude_code_line,
)
from memd.conversations.formats.jsonl import parse_jsonl_line

__all__ = [
    "CLAUDE_CODE_AGENT",
    "ChatGPTImport",
    "Record",
    "SessionTitle",
    "SubagentTurn",
    "parse_chatgpt_export",
    "parse_claude_code_line",
    "parse_jsonl_line",
]
