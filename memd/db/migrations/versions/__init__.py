"""The migrations, one module each, named as the function it defines (`m001_memory_index.py`
defines `m001_memory_index`). Never edit a released one: the schema changes by a new module
with the next number, listed at the end of `memd.db.migrations.MIGRATIONS`.
"""
