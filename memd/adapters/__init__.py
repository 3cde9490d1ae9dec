"""Adapters: the edges of memd to outside services and offline fallbacks.

Each module translates a foreign API (the Anthropic SDK, Supabase, PostgreSQL) into
memd values and the memd error tree; `rules` is the offline stand-in for the LLM
extractor.
"""
