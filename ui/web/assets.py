"""Gradio's own front-end files, compressed once per server instead of once per page.

Gradio streams its bundled JavaScript and CSS from disk and Brotli-compresses them on every request:
about 0.4 s of the server's CPU for each browser that opens the app for the first time, the morning
every annotator signs in. Those files are the installed Gradio's and never change while the server
runs, so each reply (per path and per compression) is kept as it was sent the first time.

Only Gradio's bundle routes are kept; a dataset's images, a user's downloads and every page or API
reply go through untouched.

One file is served mended (`mended_chunks`): Gradio's status tracker, whose elapsed-time loop outlived
the loading screen and redrew every frame for as long as a page stayed open.
"""

from __future__ import annotations

import gzip
import logging
import re
from functools import cache
from importlib.resources import files
from pathlib import Path

import brotli
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["BUNDLE_PREFIXES", "CachedBundle", "mend_status_tracker", "mended_chunks"]

_log = logging.getLogger(__name__)

BUNDLE_PREFIXES = ("/assets/", "/static/", "/svelte/")  # gradio/routes.py: the installed front end
MOST_BYTES = 64 * 1024 * 1024  # Gradio's whole bundle is ~21 MB uncompressed
GRADIO_ASSETS = Path(str(files("gradio") / "templates" / "frontend" / "assets"))  # served at /assets/

# The status tracker's timer: `function ze(){me(()=>{F(Pe,(performance.now()-w(de))/1e3),W&&ze()})}`
# (names differ from build to build): it asks for the next frame while `W` (an event is pending) holds.
_TIMER_LOOP = re.compile(
    r"function (?P<loop>[\w$]+)\(\)\{[\w$]+\(\(\)=>\{[\w$]+\([\w$]+,\(performance\.now\(\)-[\w$]+\([\w$]+\)\)/1e3\),"
    r"(?P<pending>[\w$]+)&&(?P=loop)\(\)\}\)\}"
)
# The tracker's own element (Svelte's bind:this), the one its autoscroll effect reads.
_TRACKER_ELEMENT = re.compile(
    r"\{(?P<element>[\w$]+)&&[\w$]+\(\)&&\([\w$]+\.status===`pending`\|\|[\w$]+\.status===`complete`\)"
    r"&&[\w$]+\((?P=element),[\w$]+\.autoscroll\)\}"
)


def mend_status_tracker(source: str) -> str | None:
    """Gradio's status tracker counts a pending event's seconds in a requestAnimationFrame loop that
    stops only when the event ends. The loading screen's tracker is removed while its status is still
    pending, so its loop ran at 60 frames a second for as long as the page stayed open (~9% of a core in
    Chromium, for an annotator's whole day). Mended: the loop also stops once the tracker's element is
    gone (Svelte sets it to null; detached counts too). None: not this chunk, or a Gradio whose code
    differs (the file is then served as Gradio ships it)."""
    loops = list(_TIMER_LOOP.finditer(source))
    elements = {found["element"] for found in _TRACKER_ELEMENT.finditer(source)}
    if len(loops) != 1 or len(elements) != 1:
        return None
    [found], [element] = loops, elements
    loop, pending = found["loop"], found["pending"]
    alive = f"{element}!==null&&(!{element}||{element}.isConnected)"
    mended = found[0].replace(f"{pending}&&{loop}()}})}}", f"{pending}&&{alive}&&{loop}()}})}}")
    return source[: found.start()] + mended + source[found.end() :]


@cache
def mended_chunks(folder: Path = GRADIO_ASSETS) -> dict[str, bytes]:
    """The bundle files served mended, by path: the status tracker's chunk (`mend_status_tracker`)."""
    mended: dict[str, bytes] = {}
    for chunk in sorted(folder.glob("statustracker-*.js")):
        text = mend_status_tracker(chunk.read_text(encoding="utf-8"))
        if text is not None:
            mended[f"/assets/{chunk.name}"] = text.encode("utf-8")
    if not mended:
        _log.warning(
            "Gradio's status tracker in %s was not mended (its code changed): an open page may redraw "
            "every frame while idle (ui/web/assets.py mend_status_tracker)",
            folder,
        )
    return mended


def _encoding(headers: Headers) -> str:
    """The compression Gradio's middleware picks for these headers (gradio/brotli_middleware.py)."""
    accepted = headers.get("accept-encoding", "")
    return "br" if "br" in accepted else "gzip" if "gzip" in accepted else ""


class CachedBundle:
    """ASGI middleware: a bundle file's first complete 200 reply, replayed for the same path and
    compression; conditional and range requests pass through. `mended` (path -> body) is answered here,
    whole, to every request: a browser never keeps Gradio's own copy of a mended file."""

    def __init__(self, app: ASGIApp, mended: dict[str, bytes] | None = None) -> None:
        self.app = app
        self.kept: dict[tuple[str, str], tuple[Message, bytes]] = {}
        self.kept_bytes = 0
        for path, body in (mended or {}).items():
            for encoding in ("br", "gzip", ""):
                self._keep((path, encoding), *_encoded(body, encoding))
        self.mended = frozenset(mended or ())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or scope["method"] != "GET" or not path.startswith(BUNDLE_PREFIXES):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        conditional = "range" in headers or "if-none-match" in headers or "if-modified-since" in headers
        if conditional and path not in self.mended:
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


def _encoded(body: bytes, encoding: str) -> tuple[Message, bytes]:
    """A JavaScript file's reply as Gradio's route and its Brotli middleware send it, without validators."""
    headers = [(b"content-type", b"text/javascript; charset=utf-8")]
    if encoding:
        body = brotli.compress(body, quality=4) if encoding == "br" else gzip.compress(body)
        headers += [(b"content-encoding", encoding.encode()), (b"vary", b"Accept-Encoding")]
    return {"type": "http.response.start", "status": 200, "headers": headers}, body
