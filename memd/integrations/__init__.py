"""Adapters that connect assistants to memd: the MCP stdio server, Claude Code hooks and settings.

Nothing is imported here on purpose: `memd hook …` must start fast and must not pay for the
`mcp` package, which only `memd.integrations.mcp_server` imports.
"""
