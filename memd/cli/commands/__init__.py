"""The `memd` commands, by what a user would name: `memory`, `conversations`, `history`,
`transfer` (import, export, cloud sync) and `daemon` (serving, status, jobs, the service,
settings, the doctor). `memd.cli.parser` builds the command line and dispatches to them.

Each command parses its arguments, calls one client or library function, renders the result
(plain text, or `--json`), and turns memd errors into a message with a hint. What they share is
here: the settings a command runs with (`settings_for`), `call` (the daemon, else the index
directly) and `emit` (the answer as text or JSON).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from memd.core.errors import DaemonNotRunning, DaemonStarting

if TYPE_CHECKING:
    from memd.api.messages import Params, Signature
    from memd.core.settings import Settings

P = TypeVar("P", bound="Params")
R = TypeVar("R")


def settings_for(args: argparse.Namespace) -> Settings:
    """The settings this command runs with (`--config`, `--log-level`, the environment)."""
    from memd.core import settings

    overrides = {"log.level": args.log_level} if getattr(args, "log_level", None) else None
    return settings.load(Path(args.config) if args.config else None, overrides=overrides)


def emit(args: argparse.Namespace, data: Any, text: str | Callable[[], str]) -> None:
    """Print the answer: `data` as JSON with `--json`, else `text` (called only then)."""
    if getattr(args, "json", False):
        from memd.api.messages import to_builtins

        print(json.dumps(to_builtins(data), ensure_ascii=False, indent=2, default=str))
    else:
        print(text() if callable(text) else text)


def call(
    args: argparse.Namespace,
    sig: Signature[P, R],
    params: P,
    *,
    write: bool = False,
    progress: bool = False,
) -> R:
    """Ask the daemon; without one, answer from the index directly (and say so on stderr).

    A daemon still building its first index is waited for by writes, and read around by
    queries, like a missing one. With `progress`, long work shows a bar on a terminal.
    """
    from memd.cli.progress import daemon_progress, run_with_progress

    s = settings_for(args)
    show = progress and not args.json and sys.stderr.isatty()
    why = f"no daemon on {s.socket_path}"
    try:
        return run_with_progress(
            lambda: _ask_daemon(args, s, sig, params, write=write),
            daemon_progress(s.socket_path),
            enabled=show,
        )
    except DaemonStarting as exc:
        why = str(exc)
    except DaemonNotRunning:
        pass
    if not write:
        from memd.cli.offline import answer_offline

        result, note = answer_offline(s, sig, params)
        print(f"memd: {why}; answering from the index: {note}", file=sys.stderr)
        return result
    try:
        return _write_directly(args, s, sig, params, show=show)
    except DaemonStarting:
        # A daemon holds the memory but has not bound its socket yet: wait for it.
        return _wait_for_daemon(args, s, sig, params)


def _ask_daemon(
    args: argparse.Namespace, s: Any, sig: Signature[P, R], params: P, *, write: bool
) -> R:
    """The daemon's answer; a write waits (up to `--timeout`) for a daemon still starting."""
    import time

    from memd.api import client

    deadline = time.monotonic() + args.timeout
    told = False
    while True:
        try:
            return client.request(s.socket_path, sig, params, timeout=args.timeout)
        except DaemonStarting:
            if not write or time.monotonic() > deadline:
                raise
            if not told:
                print("memd: the daemon is starting; waiting for it", file=sys.stderr)
                told = True
            time.sleep(0.5)


def _wait_for_daemon(args: argparse.Namespace, s: Any, sig: Signature[P, R], params: P) -> R:
    """A write while a daemon holds the memory without answering yet: up to `--timeout` for
    its socket, then the daemon's answer (`DaemonStarting` when it never came)."""
    import time

    deadline = time.monotonic() + args.timeout
    print("memd: a daemon is starting; waiting for it", file=sys.stderr)
    while True:
        try:
            return _ask_daemon(args, s, sig, params, write=True)
        except DaemonStarting:
            raise
        except DaemonNotRunning:
            if time.monotonic() > deadline:
                raise DaemonStarting(
                    f"a daemon holds this memory but did not answer on {s.socket_path}"
                    f" within {args.timeout:g} s",
                    hint="check that it listens on this socket (MEMD_SOCKET, server.socket)",
                ) from None
            time.sleep(0.5)


def _write_directly(
    args: argparse.Namespace, s: Any, sig: Signature[P, R], params: P, *, show: bool
) -> R:
    """The change made here, while no daemon runs (`memd.app.writing_engine`: the memory page
    writes the same way)."""
    from memd.app import writing_engine
    from memd.cli.progress import run_with_progress

    with writing_engine(s) as engine:
        # Said once per command (`forget` asks twice: the candidates, then the removal).
        if not getattr(args, "told_writing_directly", False):
            print(f"memd: no daemon on {s.socket_path}; writing directly", file=sys.stderr)
            args.told_writing_directly = True
        recovered = engine.recovered
        if recovered is not None:
            print(f"memd: the index was damaged: moved aside to {recovered.moved_to};"
                  " rebuilding it from your files", file=sys.stderr)  # fmt: skip
        written: R = run_with_progress(
            lambda: engine.call(sig, params), engine.progress.snapshot, enabled=show
        )
        return written
