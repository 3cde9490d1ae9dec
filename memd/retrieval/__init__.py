"""Retrieval: search and token-budgeted context assembly (reads only)."""
