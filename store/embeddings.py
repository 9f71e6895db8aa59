"""Sentence embeddings cached by (text hash, encoder name), so a text is encoded once per encoder."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from store.db import Store

__all__ = ["cached_embeddings", "count_embeddings", "put_embeddings", "text_hash"]


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cached_embeddings(db: Store, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
    """The vectors this encoder has stored for these hashes (missing ones are simply absent)."""
    if not hashes:
        return {}
    wanted = pd.DataFrame({"h": sorted(set(hashes))})
    with db.reading_frame("wanted_hashes", wanted) as reader:
        rows = reader.fetchall(
            "SELECT e.text_hash, e.vector FROM embeddings e JOIN wanted_hashes w ON e.text_hash = w.h "
            "WHERE e.model = ?",
            [model],
        )
    return {h: np.frombuffer(bytes(v), dtype=np.float32) for h, v in rows}


def put_embeddings(db: Store, model: str, vectors: dict[str, np.ndarray]) -> None:
    """Store vectors by hash; a hash stored already (by a concurrent run) is kept as it is."""
    if not vectors:
        return
    frame = pd.DataFrame(
        {
            "h": list(vectors),
            "dim": [int(v.size) for v in vectors.values()],
            "v": [np.asarray(v, dtype=np.float32).tobytes() for v in vectors.values()],
        }
    )
    with db.writing() as tx:
        tx.register("new_embeddings", frame)
        try:
            tx.execute(
                "INSERT INTO embeddings (text_hash, model, dim, vector) "
                "SELECT h, ?, dim, CAST(v AS BLOB) FROM new_embeddings ON CONFLICT DO NOTHING",
                [model],
            )
        finally:
            tx.unregister("new_embeddings")


def count_embeddings(db: Store, model: str | None = None) -> int:
    if model is None:
        return int(db.scalar("SELECT count(*) FROM embeddings") or 0)
    return int(db.scalar("SELECT count(*) FROM embeddings WHERE model = ?", [model]) or 0)
