"""Read and verify the images a data file refers to, refusing anything unsafe with a reason.

A data file is untrusted input (it may come through the web UI), so an image reference may only
reach files inside the data file's folder, must decode as a real image of a format browsers
show, and must stay under size and pixel limits before Pillow allocates anything for it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import re
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from PIL import Image

from importers.records import ImageData

MAX_IMAGE_PIXELS = 50_000_000  # 50 megapixels: well above any benchmark figure, far below a bomb
MAX_IMAGE_BYTES = 20 * 1024 * 1024

# Only formats a browser can show; this also keeps Pillow away from plugins such as EPS,
# which would hand the file to Ghostscript.
ALLOWED_FORMATS = ("PNG", "JPEG", "GIF", "WEBP", "BMP")

_BASE64_TEXT = re.compile(r"[A-Za-z0-9+/=_\-\s]+")
_IMAGE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"RIFF", b"BM")


def image_hash(data: bytes) -> str:
    """What names an image everywhere (its file, its row, a bundle's reference): the SHA-256 of its bytes."""
    return hashlib.sha256(data).hexdigest()


class ImageError(ValueError):
    """An image reference that was refused; the message says why."""


def load_image(
    ref: Any,
    base_dir: Path,
    *,
    max_pixels: int = MAX_IMAGE_PIXELS,
    max_bytes: int = MAX_IMAGE_BYTES,
) -> ImageData:
    """Read one image reference: a relative path, a file:// URL, base64 text or a data: URL.

    Also accepts the {"bytes": ..., "path": ...} structs that Hugging Face exports write.
    Raises ImageError with a reason for anything refused.
    """
    if isinstance(ref, dict):
        if ref.get("bytes"):
            raw = ref["bytes"]
            data = raw if isinstance(raw, bytes) else _decode_base64(str(raw), max_bytes)
            return verify_image(data, "bytes", max_pixels=max_pixels, max_bytes=max_bytes)
        if ref.get("path"):
            ref = ref["path"]
        else:
            raise ImageError("an image object needs 'bytes' or 'path'")
    if isinstance(ref, bytes):
        return verify_image(ref, "bytes", max_pixels=max_pixels, max_bytes=max_bytes)
    if not isinstance(ref, str):
        raise ImageError(f"expected a path, URL or base64 text, got {type(ref).__name__}")
    text = ref.strip()
    if not text:
        raise ImageError("is empty")
    if text[:5].lower() == "data:":
        header, sep, payload = text.partition(",")
        if not sep or ";base64" not in header.lower():
            raise ImageError("a data: URL must be base64-encoded (data:image/png;base64,...)")
        data = _decode_base64(payload, max_bytes)
        return verify_image(data, "base64", max_pixels=max_pixels, max_bytes=max_bytes)
    scheme = urlparse(text).scheme.lower() if "://" in text else ""
    if scheme == "file":
        path = _file_url_path(text)
    elif scheme:
        raise ImageError(f"{scheme}:// URLs are not fetched; give a file path or base64 instead")
    else:
        decoded = _maybe_base64(text, max_bytes)
        if decoded is not None:
            return verify_image(decoded, "base64", max_pixels=max_pixels, max_bytes=max_bytes)
        path = text
    data = _read_inside(path, ref, base_dir, max_bytes)
    return verify_image(data, ref, max_pixels=max_pixels, max_bytes=max_bytes)


def verify_image(
    data: bytes, origin: str, *, max_pixels: int = MAX_IMAGE_PIXELS, max_bytes: int = MAX_IMAGE_BYTES
) -> ImageData:
    """Check that bytes are a complete image within the limits; Pillow's own bomb check is an error too."""
    if len(data) > max_bytes:
        raise ImageError(
            f"{_short(origin)} is {len(data) / 2**20:.1f} MB, over the {max_bytes / 2**20:.0f} MB limit"
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=ALLOWED_FORMATS) as im:
                fmt, (width, height) = im.format, im.size
                # Checked from the header, before any pixel is decoded.
                if width * height > max_pixels:
                    raise ImageError(
                        f"{_short(origin)} is {width}x{height} pixels, over the limit of "
                        f"{max_pixels:,} pixels (a possible decompression bomb)"
                    )
                im.verify()
            with Image.open(io.BytesIO(data), formats=ALLOWED_FORMATS) as im:
                im.load()
    except ImageError:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise ImageError(f"{_short(origin)} was refused as a decompression bomb ({exc})") from None
    except Image.UnidentifiedImageError:
        allowed = ", ".join(ALLOWED_FORMATS)
        raise ImageError(f"{_short(origin)} is not an image of a supported format ({allowed})") from None
    except Exception as exc:  # Pillow raises many types for truncated or corrupt data
        raise ImageError(
            f"{_short(origin)} is a corrupt or truncated image ({type(exc).__name__}: {exc})"
        ) from None
    return ImageData(
        data=data, origin=origin, mime=Image.MIME.get(fmt or "", "image/png"), width=width, height=height
    )


def _read_inside(path: str, ref: str, base_dir: Path, max_bytes: int) -> bytes:
    """Read a file only if it resolves (symlinks followed) to somewhere inside base_dir."""
    if "\x00" in path:
        raise ImageError("path contains a NUL character")
    root = base_dir.resolve()
    try:
        target = (root / path).resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop
        raise ImageError(f"{_short(ref)} cannot be resolved ({exc})") from None
    if not target.is_relative_to(root):
        raise ImageError(f"{_short(ref)} points outside the data file's folder; refused")
    if not target.exists():
        raise ImageError(f"{_short(ref)} not found (looked in {root})")
    if not target.is_file():
        raise ImageError(f"{_short(ref)} is not a regular file")
    size = target.stat().st_size
    if size > max_bytes:
        raise ImageError(f"{_short(ref)} is {size / 2**20:.1f} MB, over the {max_bytes / 2**20:.0f} MB limit")
    try:
        return target.read_bytes()
    except OSError as exc:
        raise ImageError(f"{_short(ref)} cannot be read ({exc.strerror or exc})") from None


def _file_url_path(url: str) -> str:
    parsed = urlparse(url)
    if parsed.netloc not in ("", "localhost"):
        raise ImageError(f"file URL names another host ({parsed.netloc}); only local files are read")
    return unquote(parsed.path)


def _maybe_base64(text: str, max_bytes: int) -> bytes | None:
    """Bare base64 is told from a path by decoding to a known image signature."""
    if len(text) < 24 or not _BASE64_TEXT.fullmatch(text):
        return None
    try:
        head = base64.b64decode(_pad(re.sub(r"\s+", "", text[:64])), altchars=_altchars(text))
    except (binascii.Error, ValueError):
        return None
    if not head.startswith(_IMAGE_MAGIC):
        return None
    return _decode_base64(text, max_bytes)


def _decode_base64(payload: str, max_bytes: int) -> bytes:
    compact = re.sub(r"\s+", "", payload)
    if len(compact) * 3 // 4 > max_bytes:
        raise ImageError(f"base64 image is over the {max_bytes / 2**20:.0f} MB limit")
    try:
        return base64.b64decode(_pad(compact), altchars=_altchars(compact), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ImageError(f"base64 image data is not valid base64 ({exc})") from None


def _altchars(text: str) -> bytes | None:
    return b"-_" if ("-" in text or "_" in text) else None


def _pad(text: str) -> str:
    return text + "=" * (-len(text) % 4)


def _short(origin: str) -> str:
    return repr(origin if len(origin) <= 80 else origin[:77] + "...")
