"""Ingest: turn changed files and log records into store writes."""
