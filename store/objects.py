"""Where image bytes live: a folder (the default) or S3-compatible object storage, behind one interface.

Images are named by the SHA-256 of their bytes (store/images.py), so a put is idempotent and an
object never changes: replicas may share them without coordination. The panels and exports read
*local files* (Gradio serves a file from its allowed folder to a logged-in user, the exports copy
files), so the object-storage backend keeps a read-through copy in the same served folder the
folder backend uses: `<data-dir>/images/<ab>/<sha256>.<ext>`. The first view of an image on a
replica fetches it once; nothing else changes above the store.

Object storage is chosen by a setting (`--image-store s3://BUCKET/PREFIX` or STEPGATE_IMAGES); the
endpoint and credentials come from the standard AWS variables (AWS_ENDPOINT_URL for MinIO or GCS's
interoperability endpoint, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_PROFILE, AWS_REGION), as
every S3 tool reads them. boto3 is an optional dependency (`pip install 'stepgate[s3]'`).
"""

from __future__ import annotations

import hashlib
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from store.errors import StoreOpenError

__all__ = ["FolderImages", "ImageStorageError", "ImageStore", "S3Images", "image_store"]

UPLOADS = 16  # parallel requests of one import's images (botocore's pool holds 10 connections by default)


class ImageStorageError(StoreOpenError):
    """The image storage cannot be used (missing bucket, refused credentials, unreachable endpoint,
    a full disk); the message says which and where. Raised inside a write, it rolls it back whole."""


def _write_atomically(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, target)


class ImageStore(ABC):
    """Image bytes by key (`ab/<sha256>.<ext>`): put once, get, ask whether present, and a local file
    the app may serve. `location` says where, for messages."""

    location: str
    folder: Path  # the served folder (Gradio's allowed path): the images, or their local copies

    @abstractmethod
    def put(self, key: str, data: bytes, mime: str) -> None:
        """Store the bytes under key unless already there (same key, same bytes: idempotent)."""

    @abstractmethod
    def get(self, key: str) -> bytes:
        """The bytes under key; ImageStorageError when they are missing or cannot be read."""

    @abstractmethod
    def exists(self, key: str) -> bool:
        """Whether key is stored."""

    @abstractmethod
    def local_file(self, key: str) -> Path:
        """A file on this machine with key's bytes, inside `folder` (fetched first where needed)."""

    def lazy(self) -> bool:
        """Whether local_file costs more than a path (a fetch): then callers ask for it late."""
        return False

    def put_soon(self, key: str, data: bytes, mime: str) -> Callable[[], object] | None:
        """Start a put; returns what waits for it (and raises its error), or None once done. Here: at once."""
        self.put(key, data, mime)
        return None

    def close(self) -> None:  # noqa: B027 - most storages hold nothing to let go of
        """Let go of what the storage holds (connections, threads)."""


class FolderImages(ImageStore):
    """A folder on this machine, or one every replica mounts (NFS, a shared volume)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.location = f"the folder {folder}"

    def put(self, key: str, data: bytes, mime: str) -> None:
        target = self.folder / key
        if target.exists():
            return
        try:
            _write_atomically(target, data)
        except OSError as exc:
            raise ImageStorageError(f"cannot write image {key} into {self.location}: {exc.strerror}") from exc

    def get(self, key: str) -> bytes:
        try:
            return (self.folder / key).read_bytes()
        except OSError as exc:
            raise ImageStorageError(f"cannot read image {key} from {self.location}: {exc.strerror}") from exc

    def exists(self, key: str) -> bool:
        return (self.folder / key).exists()

    def local_file(self, key: str) -> Path:
        return self.folder / key


class S3Images(ImageStore):
    """An S3-compatible bucket (AWS S3, MinIO, GCS's interoperability endpoint) under a prefix, with a
    read-through copy of what this replica has shown in `folder`."""

    def __init__(self, url: str, folder: Path, client: Any = None) -> None:
        parts = urlsplit(url)
        if parts.scheme != "s3" or not parts.netloc:
            raise ImageStorageError(
                f"the image storage {url!r} is not an s3://BUCKET/PREFIX address (or leave it unset for "
                "the image folder)"
            )
        self.url, self.bucket, self.prefix = url, parts.netloc, parts.path.strip("/")
        self.folder = folder
        self._client = client if client is not None else _client()
        endpoint = getattr(getattr(self._client, "meta", None), "endpoint_url", None) or "AWS S3"
        self.location = f"{url} at {endpoint}"
        self._present: set[str] = set()  # keys seen stored: a re-import puts nothing twice
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def _key(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix else key

    def check(self) -> None:
        """Reach the bucket once when the store opens: a wrong setting is said at start, not mid-import.

        A GET of a key that is not there answers with a code (a HEAD has no body): NoSuchKey, or
        AccessDenied where the policy grants objects but not listing (fine: the puts will tell)."""
        probe = self._key(".stepgate-check")
        try:
            self._call("reach", "", lambda: self._client.get_object(Bucket=self.bucket, Key=probe))
        except ImageStorageError as exc:
            if _code(exc.__cause__) not in ("NoSuchKey", "AccessDenied"):
                raise

    def put(self, key: str, data: bytes, mime: str) -> None:
        if key in self._present:
            return
        if not self.exists(key):
            self._call(
                "store",
                key,
                lambda: self._client.put_object(
                    Bucket=self.bucket, Key=self._key(key), Body=data, ContentType=mime
                ),
            )
        with self._lock:
            self._present.add(key)
        cached = self.folder / key
        if not cached.exists():  # the importing replica has the bytes already: no fetch on first view
            self._cache(cached, key, data)

    def put_soon(self, key: str, data: bytes, mime: str) -> Callable[[], object] | None:
        """Upload on a small pool (an import's images go up in parallel); the caller waits before commit."""
        if key in self._present:
            return None
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=UPLOADS, thread_name_prefix="stepgate-s3")
            pool = self._pool
        return pool.submit(self.put, key, data, mime).result

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def get(self, key: str) -> bytes:
        reply = self._call(
            "read", key, lambda: self._client.get_object(Bucket=self.bucket, Key=self._key(key))
        )
        return bytes(reply["Body"].read())

    def exists(self, key: str) -> bool:
        try:
            self._call(
                "look up", key, lambda: self._client.head_object(Bucket=self.bucket, Key=self._key(key))
            )
        except ImageStorageError as exc:
            # 403 on a HEAD: no right to list, so a missing key looks forbidden; the put settles it.
            if _code(exc.__cause__) in ("404", "NoSuchKey", "NotFound", "403"):
                return False
            raise
        return True

    def local_file(self, key: str) -> Path:
        cached = self.folder / key
        if not cached.exists():
            data = self.get(key)
            # The name is the content's hash: bytes that do not match it are never shown as that image.
            if hashlib.sha256(data).hexdigest() != Path(key).name.split(".")[0]:
                raise ImageStorageError(
                    f"image {key} in {self.location} does not match its SHA-256 (it was changed in the "
                    "bucket); put the original back"
                )
            self._cache(cached, key, data)
        return cached

    def lazy(self) -> bool:
        return True

    def _cache(self, cached: Path, key: str, data: bytes) -> None:
        try:
            _write_atomically(cached, data)
        except OSError as exc:
            raise ImageStorageError(
                f"cannot keep a copy of image {key} in {self.folder}: {exc.strerror}"
            ) from exc

    def _call(self, doing: str, key: str, call: Any) -> Any:
        """Run one request; a failure becomes an ImageStorageError that says what and where."""
        from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

        what = f"image {key} in {self.location}" if key else self.location
        try:
            return call()
        except NoCredentialsError as exc:
            raise ImageStorageError(
                f"cannot {doing} {what}: no credentials found; set AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)"
            ) from exc
        except ClientError as exc:
            code = _code(exc)
            if code in ("NoSuchBucket",) or (code in ("404", "NotFound") and not key):
                raise ImageStorageError(
                    f"cannot {doing} {what}: the bucket {self.bucket!r} does not exist there; create it or "
                    "point --image-store (STEPGATE_IMAGES) at one that does"
                ) from exc
            if code in ("NoSuchKey",) or (code in ("404", "NotFound") and doing == "read"):
                raise ImageStorageError(f"cannot {doing} {what}: it is not in the bucket") from exc
            if code in (
                "InvalidAccessKeyId",
                "SignatureDoesNotMatch",
                "InvalidClientTokenId",
                "403",
                "AccessDenied",
            ):
                raise ImageStorageError(
                    f"cannot {doing} {what}: the credentials were refused ({code}); check "
                    "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY and the bucket's permissions"
                ) from exc
            raise ImageStorageError(f"cannot {doing} {what}: {code}: {exc}") from exc
        except BotoCoreError as exc:
            raise ImageStorageError(f"cannot {doing} {what}: {exc}") from exc


def _code(exc: Any) -> str:
    """A botocore ClientError's code ("NoSuchBucket", "403", ...); "" for anything else."""
    response = getattr(exc, "response", None)
    return str(response.get("Error", {}).get("Code", "")) if isinstance(response, dict) else ""


def _client() -> Any:
    try:
        import boto3
        from botocore.config import Config
    except ImportError as exc:
        raise ImageStorageError(
            "images in object storage need boto3: pip install 'stepgate[s3]' (or boto3)"
        ) from exc
    # Checksums only where the API requires them: MinIO and GCS's interoperability endpoint refuse the
    # newer default headers. AWS_ENDPOINT_URL and the credentials are read by boto3 itself.
    config = Config(
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
        retries={"max_attempts": 3, "mode": "standard"},
        max_pool_connections=UPLOADS,
        connect_timeout=5,
        read_timeout=30,
    )
    return boto3.session.Session().client("s3", config=config)


def image_store(setting: str | None, data_dir: Path) -> ImageStore:
    """The image storage a setting names: None or empty = the folder `<data_dir>/images`; s3://... =
    that bucket and prefix, with local copies in the same folder. Reaches the bucket once."""
    folder = data_dir / "images"
    if not setting:
        return FolderImages(folder)
    if setting.startswith("s3://"):
        images = S3Images(setting, folder)
        images.check()
        return images
    raise ImageStorageError(
        f"the image storage {setting!r} is not understood: give s3://BUCKET/PREFIX, or nothing for the "
        f"folder {folder}"
    )
