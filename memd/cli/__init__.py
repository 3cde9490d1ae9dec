"""The `memd` command line: a thin shell over the library and the socket client."""

from memd.cli.parser import main

__all__ = ["main"]
