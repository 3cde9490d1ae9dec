"""The `memd` command line: a thin shell over the library and the socket client."""

from memd.cli.commands import main

__all__ = ["main"]
