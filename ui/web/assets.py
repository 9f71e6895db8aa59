"""Gradio's own front-end files, compressed once per server instead of once per page.

Gradio streams its bundled JavaScript and CSS from disk and Brotli-compresses them on every request:
about 0.4 s of the server's CPU for each browser that opens the app for the first time, the morning
every annotator signs in. Those files are the installed Gradio's and never change while the server
runs, so each reply (per path and per compression) is kept as it was sent the first time.

Only Gradio's bundle routes are kept; a dataset's images, a user's downloads and every page or API
reply go through untouched.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["BUNDLE_PREFIXES", "CachedBundle"]

BUNDLE_PREFIXES = ("/assets/", "/static/", "/svelte/")  # gradio/routes.py: the installed front end
MOST_BYTES = 64 * 1024 * 1024  # Gradio's whole bundle is ~21 MB uncompressed


def _encoding(headers: Headers) -> str:
    """The compression Gradio's middleware picks for these headers (gradio/brotli_middleware.py)."""
    accepted = headers.get("accept-encoding", "")
    return "br" if "br" in accepted else "gzip" if "gzip" in accepted else ""


class CachedBundle:
    """ASGI middleware: a bundle file's first complete 200 reply, replayed for the same path and
    compression; conditional and range requests pass through."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.kept: dict[tuple[str, str], tuple[Message, bytes]] = {}
        self.kept_bytes = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or scope["method"] != "GET" or not path.startswith(BUNDLE_PREFIXES):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if "range" in headers or "if-none-match" in headers or "if-modified-since" in headers:
            await self.app(scope, receive, send)
            return
        key = (path, _encoding(headers))
        if key in self.kept:
            start, body = self.kept[key]
            await send(start)
            await send({"type": "http.response.body", "body": body})
            return
        start: Message = {}
        chunks: list[bytes] = []

        async def keep(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
            elif message["type"] == "http.response.body" and start.get("status") == 200:
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    self._keep(key, start, b"".join(chunks))
            await send(message)

        await self.app(scope, receive, keep)

    def _keep(self, key: tuple[str, str], start: Message, body: bytes) -> None:
        if self.kept_bytes + len(body) > MOST_BYTES:
            return
        headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        self.kept[key] = ({**start, "headers": headers}, body)
        self.kept_bytes += len(body)
