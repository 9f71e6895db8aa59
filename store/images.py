"""Images named by the SHA-256 of their bytes, in the store's image storage (store/objects.py: the
folder `<data-dir>/images`, or S3-compatible object storage by setting).

Why files and not blobs: the same figure is shared by many items and versions (content hashing
stores it once), Gradio serves files directly from an allowed folder without copying them through
Python on every view, and the DuckDB file stays small enough to back up and scan quickly.
The `images` table records each file's hash, type and size so the two can be checked together.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from importers.images import image_hash
from importers.records import ImageData

if TYPE_CHECKING:
    from store.db import Store, Tx
    from store.objects import ImageStore

__all__ = ["image_files", "image_hash", "image_path", "save_image"]

_EXT = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
    "image/bmp": ".bmp",
}


def _key(digest: str, mime: str) -> str:
    return f"{digest[:2]}/{digest}{_EXT.get(mime, '.img')}"


def save_image(tx: Tx, image: ImageData) -> str:
    """Store the bytes (once: a put by hash is idempotent) and record them; returns the hash.

    Object storage uploads while the transaction goes on (an import's images in parallel), and the
    commit waits for every upload: when the storage refuses one (store.objects.ImageStorageError)
    the transaction rolls back and no row names an image that is not there."""
    digest = image_hash(image.data)
    pending = tx.store.images.put_soon(_key(digest, image.mime), image.data, image.mime)
    if pending is not None:
        tx.before_commit(pending)
    tx.execute(
        "INSERT INTO images (hash, mime, width, height, size_bytes) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (hash) DO NOTHING",
        [digest, image.mime, image.width, image.height, len(image.data)],
    )
    return digest


class _Fetched(Mapping[str, str]):
    """Hash -> local file, each fetched from object storage when first asked for (an export reads the
    images of the items it writes, not the whole bucket)."""

    def __init__(self, images: ImageStore, keys: dict[str, str]) -> None:
        self._images, self._keys = images, keys

    def __getitem__(self, digest: str) -> str:
        return str(self._images.local_file(self._keys[digest]))

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


def image_files(db: Store | Tx) -> Mapping[str, str]:
    """Every stored image's local file by its hash, in one query (for reads of many items at once)."""
    rows = db.fetchall("SELECT hash, mime FROM images")
    images = db.store.images
    if images.lazy():
        return _Fetched(images, {digest: _key(digest, mime) for digest, mime in rows})
    return {digest: str(images.local_file(_key(digest, mime))) for digest, mime in rows}


def image_path(db: Store | Tx, digest: str) -> Path | None:
    """The image's local file (fetched from object storage the first time on this machine)."""
    row = db.fetchone("SELECT mime FROM images WHERE hash = ?", [digest])
    if row is None:
        return None
    return db.store.images.local_file(_key(digest, row[0]))
