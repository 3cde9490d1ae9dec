"""Sources: read conversation logs and memory files; never touch the database."""
