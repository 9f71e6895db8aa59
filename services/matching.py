"""Step matching with the real encoder: embeddings through the store's cache, then qc.matching.

Every result carries the encoder's name and its note (whether it is CRYSTAL's encoder), so figures
from different encoders are never compared by accident.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from services.encoder import Encoder
from store import embeddings
from store.db import Store

__all__ = ["embed", "similarity"]


def embed(store: Store, encoder: Encoder, texts: Sequence[str]) -> np.ndarray:
    """Unit vectors for the texts; only those the store has not seen for this encoder are encoded."""
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    hashes = [embeddings.text_hash(t) for t in texts]
    key = encoder.cache_key
    known = embeddings.cached_embeddings(store, key, hashes)
    todo = sorted({h: t for h, t in zip(hashes, texts, strict=True) if h not in known}.items())
    if todo:
        fresh = encoder.encode([t for _, t in todo])
        new = {h: fresh[i] for i, (h, _) in enumerate(todo)}
        embeddings.put_embeddings(store, key, new)
        known.update(new)
    return np.stack([known[h] for h in hashes]).astype(np.float32)


def similarity(
    store: Store, encoder: Encoder, predicted: Sequence[str], reference: Sequence[str]
) -> np.ndarray:
    """Cosine similarities, rows predicted steps, columns reference steps (Eq. 2)."""
    if not predicted or not reference:
        return np.zeros((len(predicted), len(reference)))
    vectors = embed(store, encoder, [*predicted, *reference])
    return np.asarray(vectors[: len(predicted)] @ vectors[len(predicted) :].T, dtype=np.float64)
