"""The one error tree of memd. Adapters translate foreign exceptions into these.

MemdError
├── ConfigError            bad settings file, unknown/ill-typed key, bad env override
├── PathError              socket path too long, folder not usable
├── StoreError             SQLite problems (missing FTS5, corrupt index, schema too new)
├── SourceError            a memory file or log that cannot be read or parsed
│   ├── ParseError         one malformed record/line; carries file and line number
│   │   └── UnknownRecord  a record of a type memd does not know yet (a newer app): skipped
│   └── EditConflict       a file or item changed since it was read; nothing was written
├── ProtocolError          malformed JSON-RPC request (codes: memd.api.protocol.ERRORS)
│   ├── ParseRequestError
│   ├── MethodNotFound
│   ├── InvalidParams
│   └── RequestTooLarge
├── PermissionDenied       a socket peer running as another user
├── ServerBusy             the daemon serves as many connections as it may
├── DiskFull               no space left to write (the daemon may run read-only)
├── DaemonError
│   ├── DaemonNotRunning   no daemon answers on the socket
│   │   └── DaemonStarting the daemon answers `status` only, until its first index is done
│   ├── DaemonStopping     the daemon is stopping: long work ends at its next checkpoint
│   └── DaemonAlreadyRunning
├── MemoryDisabled         the global switch is off
├── NotFound               no such memory/session/item
├── LLMError               extraction backend failures
│   ├── LLMBadAnswer       the model answered, unusably (not the JSON asked for, refused)
│   ├── LLMRetryable       429/529/5xx/connection: try again on a later run
│   │   └── LLMDeferred    the backend says wait (a usage limit until its reset)
│   └── LLMConfigError     400/401/403, not logged in: stop, tell the user
├── SyncError              cloud backend failures
│   ├── SyncRetryable      network errors, 5xx
│   └── SyncPermanent      bad credentials, schema missing, row rejected
├── HistoryError           the history of the memory tree cannot be read or written
│   └── UndoConflict       a change cannot be undone without touching later edits
└── ServiceError           installing/uninstalling the user service
"""

from __future__ import annotations


class MemdError(Exception):
    """Base class of every error memd raises on purpose."""

    hint: str = ""

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        if hint:
            self.hint = hint


class ConfigError(MemdError):
    """A settings file or environment override is invalid."""


class PathError(MemdError):
    """A path memd needs cannot be used."""


class StoreError(MemdError):
    """The SQLite index cannot be opened or used."""


class SourceError(MemdError):
    """A source file cannot be read or parsed."""


class ParseError(SourceError):
    """One record in a source is malformed (`field`: the field at fault, when one is)."""

    def __init__(self, message: str, *, path: str = "", line: int = 0, field: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.field = field


class UnknownRecord(ParseError):
    """A record of a type the format's reader does not know (written by a newer version of the
    app): skipped and reported once per file and type, so a change of format is seen."""


class EditConflict(SourceError):
    """A memory file or item changed since it was read (by memd or the caller); nothing was
    written, and reading it again is the way on."""


class ProtocolError(MemdError):
    """A socket request is not valid JSON-RPC 2.0."""


class ParseRequestError(ProtocolError):
    """The request bytes are not JSON."""


class MethodNotFound(ProtocolError):
    """The requested method does not exist."""


class InvalidParams(ProtocolError):
    """The method's params are missing or of the wrong type."""


class RequestTooLarge(ProtocolError):
    """A request line is over the size limit."""


class PermissionDenied(MemdError):
    """The peer of a socket connection is not allowed to use this daemon."""


class DiskFull(MemdError):
    """There is no space left on the disk to write (memory files or the index)."""


class ServerBusy(MemdError):
    """The daemon refused a connection: it serves as many as it is allowed to."""


class DaemonError(MemdError):
    """Problems talking to or starting the daemon."""


class DaemonNotRunning(DaemonError):
    """No daemon answers on the socket."""


class DaemonStarting(DaemonNotRunning):
    """The daemon is still starting (its first index): only `status` is answered yet.

    A kind of `DaemonNotRunning`: a client that reads the index directly without a daemon can
    do the same meanwhile; one that writes must wait for the daemon instead.
    """


class DaemonStopping(DaemonError):
    """The daemon is stopping: long work (the first index, a rebuild, an import) ends at its
    next progress report, keeping what it finished."""


class DaemonAlreadyRunning(DaemonError):
    """Another daemon already serves this MEMD_HOME."""


class MemoryDisabled(MemdError):
    """The global memory switch is off."""


class NotFound(MemdError):
    """The requested item does not exist."""


class LLMError(MemdError):
    """The extraction backend failed."""


class LLMBadAnswer(LLMError):
    """The model answered, and the request was billed, but the answer is unusable (refused,
    empty, malformed or cut off). Carries the tokens, so budgets count what was spent."""

    def __init__(
        self,
        message: str,
        *,
        hint: str = "",
        input_tokens: int = 0,
        output_tokens: int = 0,
        requests: int = 1,
    ) -> None:
        super().__init__(message, hint=hint)
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.requests = requests


class LLMRetryable(LLMError):
    """A transient LLM failure (rate limit, overload, 5xx, network): retry on a later run."""


class LLMDeferred(LLMRetryable):
    """The backend asks to wait longer than a retry: a subscription's usage limit until it
    resets. The job waits (deferred) instead of counting a failure."""


class LLMConfigError(LLMError):
    """A configuration problem (bad key, bad request): stop and report, do not retry."""


class SyncError(MemdError):
    """A cloud sync backend failed."""


class SyncRetryable(SyncError):
    """A transient sync failure: back off and retry."""


class SyncPermanent(SyncError):
    """A permanent sync failure: park the operation with the error."""


class HistoryError(MemdError):
    """The history repository of the memory tree cannot be read or written."""


class UndoConflict(HistoryError):
    """Undoing a change would overwrite later edits; carries one message per conflicting file."""

    def __init__(self, message: str, *, hint: str = "", conflicts: tuple[str, ...] = ()) -> None:
        super().__init__(message, hint=hint)
        self.conflicts = conflicts


class ServiceError(MemdError):
    """Installing or controlling the user service failed."""
