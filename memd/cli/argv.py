"""The command line around argparse: options given before the command, typos, and the names a
user typed.

- `memd --config X status` is `memd status --config X`: the options every command takes
  (`GLOBAL_OPTIONS`) may come before the command and are moved after it (`hoist_globals`).
- A mistyped command or flag gets a "did you mean" and the usage of the command it was meant
  for, not the list of every command (`unknown_command`, `unknown_flag`).
- An error about a socket param names the flag the user typed (`--budget`, not
  `budget_tokens`): `flag_names`.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Sequence

# Options every command takes, with whether each takes a value.
GLOBAL_OPTIONS = {"--config": True, "--json": False, "--timeout": True, "--log-level": True}


class UsageError(Exception):
    """A command line that cannot run: the message, and the usage to print with it."""

    def __init__(self, message: str, usage: str = "", prog: str = "memd") -> None:
        super().__init__(message)
        self.usage = usage
        self.prog = prog


def hoist_globals(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """(the global options given before the command, the rest of `argv`).

    Stops at the first word that is not a global option (the command, `--help`,
    `--version`); an option that needs a value and has none is a `UsageError`.
    """
    given: list[str] = []
    i = 0
    while i < len(argv):
        name, eq, _ = argv[i].partition("=")
        takes = GLOBAL_OPTIONS.get(name)
        if takes is None:
            break
        if takes and not eq:
            if i + 1 >= len(argv):
                raise UsageError(f"{name} needs a value")
            given += argv[i : i + 2]
            i += 2
        else:
            given.append(argv[i])
            i += 1
    return given, list(argv[i:])


def command_parsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Each command's own parser, by name."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def unknown_command(word: str, commands: Sequence[str]) -> UsageError:
    """`memd serch`: the nearest command, or where the list is."""
    import difflib

    close = difflib.get_close_matches(word, commands, n=1, cutoff=0.6)
    hint = f"; did you mean `memd {close[0]}`?" if close else ""
    return UsageError(f"unknown command {word!r}{hint} (`memd --help` lists the commands)")


def unknown_flag(parser: argparse.ArgumentParser, extras: Sequence[str]) -> UsageError:
    """Arguments `parser` did not take: the first mistyped flag with the nearest one, else
    the first word too many; with the command's usage."""
    import difflib

    usage = parser.format_usage()
    flags = [f for f in extras if f.startswith("-") and f != "-"]
    if not flags:
        return UsageError(f"unexpected argument {extras[0]!r}", usage, parser.prog)
    typed = flags[0].partition("=")[0]
    known = [o for a in parser._actions for o in a.option_strings if o.startswith("--")]
    close = difflib.get_close_matches(typed, known, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]}?" if close else ""
    return UsageError(f"unknown option {typed}{hint}", usage, parser.prog)


_PARAM = re.compile(r"\bparams? '(\w+)'")


def flag_names(message: str, parser: argparse.ArgumentParser | None) -> str:
    """`message` with each `param 'name'` of the socket replaced by the flag (or argument)
    of `parser` that fills it, when there is one."""
    if parser is None:
        return message
    by_dest = {a.dest: a for a in parser._actions if a.dest != argparse.SUPPRESS}

    def name(m: re.Match[str]) -> str:
        action = by_dest.get(m.group(1))
        if action is None:
            return m.group(0)
        if action.option_strings:
            return max(action.option_strings, key=len)
        return str(action.metavar or action.dest).upper()

    return _PARAM.sub(name, message)


def bounded(lo: int, hi: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number from `lo` (to `hi`), with the range in its error."""

    def parse(raw: str) -> int:
        try:
            n = int(raw)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{raw!r} is not a whole number") from None
        if n < lo or (hi is not None and n > hi):
            span = f"from {lo} to {hi:,}" if hi is not None else f"{lo} or more"
            raise argparse.ArgumentTypeError(f"must be {span}, not {n}")
        return n

    return parse
