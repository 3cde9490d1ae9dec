"""memd: a local memory daemon for AI assistants."""

__version__ = "0.1.0"
