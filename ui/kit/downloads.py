"""The one file-delivery policy: a file a user asked for goes to that user (and admins) only.

offer_download() moves the file into a folder Gradio never serves (`<db>.files/private/`) and
hands back a link with an unguessable token bound to the user, valid for a limited time
(WebSettings.download_seconds). The route in ui/web/server.py serves it through the session check.
Tokens live in memory: one process owns the database, and a link outliving a restart is not needed.
"""

from __future__ import annotations

import html
import secrets
import shutil
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from services.records import Annotator
    from ui.context import AppContext

__all__ = [
    "ROUTE",
    "Download",
    "DownloadRegistry",
    "download_link_html",
    "export_folder",
    "find_download",
    "offer_download",
    "offer_export",
    "private_dir",
]

ROUTE = "/stepgate/download"


@dataclass(frozen=True)
class Download:
    url: str
    filename: str
    expires_at: float  # Unix time


@dataclass(frozen=True)
class _Entry:
    path: Path
    filename: str
    owner: str
    expires_at: float


class DownloadRegistry:
    """Token -> file, owner and expiry; expired entries are dropped (and their files deleted)."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()

    def add(self, entry: _Entry) -> str:
        token = secrets.token_urlsafe(32)
        with self._lock:
            self._prune(time.time())
            self._entries[token] = entry
        return token

    def get(self, token: str) -> _Entry | None:
        with self._lock:
            self._prune(time.time())
            return self._entries.get(token)

    def _prune(self, now: float) -> None:
        for token, entry in [(t, e) for t, e in self._entries.items() if e.expires_at <= now]:
            del self._entries[token]
            shutil.rmtree(entry.path.parent, ignore_errors=True)


def _registry(ctx: AppContext) -> DownloadRegistry:
    if ctx.downloads is None:
        ctx.downloads = DownloadRegistry()
    return ctx.downloads


def private_dir(ctx: AppContext) -> Path:
    """Beside the database, never in Gradio's allowed_paths."""
    folder = ctx.store.data_dir / "private"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def offer_download(ctx: AppContext, user: Annotator, path: Path, filename: str) -> Download:
    """Move `path` out of reach and return a link that only `user` (or an admin) can follow."""
    safe = Path(filename).name or "download"
    folder = private_dir(ctx) / secrets.token_hex(16)
    folder.mkdir()
    target = folder / safe
    shutil.move(str(path), target)
    expires_at = time.time() + ctx.web.download_seconds
    token = _registry(ctx).add(_Entry(target, safe, user.name, expires_at))
    return Download(url=f"{ROUTE}/{token}", filename=safe, expires_at=expires_at)


def find_download(ctx: AppContext, token: str) -> tuple[Path, str, str] | None:
    """(path, filename, owner) of a live token whose file still exists; None otherwise."""
    entry = _registry(ctx).get(token)
    if entry is None or not entry.path.is_file():
        return None
    return entry.path, entry.filename, entry.owner


def download_link_html(download: Download) -> str:
    """An escaped link for a gr.HTML, saying until when it works."""
    until = datetime.fromtimestamp(download.expires_at, UTC).strftime("%H:%M UTC")
    name = html.escape(download.filename)
    return (
        f'<a class="stepgate-download" href="{html.escape(download.url)}" download="{name}">'
        f"Download {name}</a> <span class='stepgate-download-note'>(link works until {until}, "
        "for you only)</span>"
    )


def export_folder(ctx: AppContext) -> Path:
    """A fresh private folder for one export to be written in (removed by offer_export)."""
    folder = private_dir(ctx) / secrets.token_hex(16)
    folder.mkdir()
    return folder


def offer_export(ctx: AppContext, user: Annotator, path: Path, manifest: Path | None) -> str:
    """Links to a written export and its manifest for `user` only; the folder it was written in goes
    (with the image files a stepgate export may have put beside it)."""
    links = download_link_html(offer_download(ctx, user, path, path.name))
    if manifest is not None:  # what the file holds: filter, counts, time, version
        links += " " + download_link_html(offer_download(ctx, user, manifest, manifest.name))
    shutil.rmtree(path.parent, ignore_errors=True)
    return links
