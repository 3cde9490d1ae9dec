"""Markdown memory files: parsing (pure), the tree layout and templates, and item edits."""
