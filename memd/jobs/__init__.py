"""Scheduled jobs: extraction, summaries, archival, sync. Each is one function plus pure planners."""
