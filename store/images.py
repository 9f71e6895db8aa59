"""Images as files under the store's data folder, named by the SHA-256 of their bytes.

Why files and not blobs: the same figure is shared by many items and versions (content hashing
stores it once), Gradio serves files directly from an allowed folder without copying them through
Python on every view, and the DuckDB file stays small enough to back up and scan quickly.
The `images` table records each file's hash, type and size so the two can be checked together.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from store.records import ImageData

if TYPE_CHECKING:
    from store.db import Store, Tx

__all__ = ["image_files", "image_hash", "image_path", "save_image"]

_EXT = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
    "image/bmp": ".bmp",
}


def image_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_for(data_dir: Path, digest: str, mime: str) -> Path:
    return data_dir / "images" / digest[:2] / f"{digest}{_EXT.get(mime, '.img')}"


def save_image(tx: Tx, image: ImageData) -> str:
    """Write the file (atomically, once) and record it; returns its hash."""
    digest = image_hash(image.data)
    target = _file_for(tx.store.data_dir, digest, image.mime)
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(target.suffix + f".{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            fh.write(image.data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    tx.execute(
        "INSERT INTO images (hash, mime, width, height, size_bytes) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (hash) DO NOTHING",
        [digest, image.mime, image.width, image.height, len(image.data)],
    )
    return digest


def image_files(db: Store | Tx) -> dict[str, Path]:
    """Every stored image's file by its hash, in one query (for reads of many items at once)."""
    rows = db.fetchall("SELECT hash, mime FROM images")
    return {digest: _file_for(db.store.data_dir, digest, mime) for digest, mime in rows}


def image_path(db: Store | Tx, digest: str) -> Path | None:
    row = db.fetchone("SELECT mime FROM images WHERE hash = ?", [digest])
    if row is None:
        return None
    store = db.store
    return _file_for(store.data_dir, digest, row[0])
