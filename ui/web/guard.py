"""The check every request meets before Gradio sees it (a plain ASGI middleware, streaming intact).

- Before login nothing but the login page answers: the page, /config, the API schema and the queue
  routes get a redirect (the page) or 401 (everything else).
- A request that changes state and comes from another origin (Origin/Referer) is refused: 403.
- Gradio's session_hash is bound to the login that first used it; another login gets 403. Every
  Gradio route that names a session, or an event of one, is checked (issue 32, hole 4): a
  `session_hash` in the query (queue/data, and any other GET) or in a JSON body (queue/join, run,
  call, cancel, component_server, stream), the hash in the path (heartbeat, media streams), the
  event id in the path (call/.../{event_id}, stream/{event_id}). A non-JSON body (a form can carry
  session_hash where we do not read it) is refused on every Gradio route but the upload.
- Deep links are off: Gradio's deep_link route copied any session's component values to a file that
  `/?deep_link=<id>` served to whoever asked (a token an admin had just created reached an
  annotator). The route answers 404 and the page's `deep_link` parameter is dropped.
- Each user gets their role's page (ui/web/pages.py): a request for another's is sent to their own.
- Request bodies are bounded: 413 over WebSettings.max_body_bytes (max_file_size for uploads).
- Uploads (and their progress) are for admins only (services.access.require_uploader): others get 403.
- A file named in an event's data must be one this login session uploaded, and never one under the
  database's folder (ui/web/uploads.py; issue 32, hole 6): 403 with the reason otherwise.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlencode, urlsplit

from services.access import require_uploader
from services.errors import NotAllowed
from services.records import Annotator
from ui.context import AppContext
from ui.web.pages import PAGES, page_for
from ui.web.sessions import COOKIE, Sessions
from ui.web.uploads import Uploads

__all__ = ["USER_KEY", "Guard"]

USER_KEY = "stepgate.user"  # where the guard leaves the session user in the ASGI scope
# The control route checks its own token (ui/web/control.py): the command line has no session.
PUBLIC = {("GET", "/login"), ("POST", "/login"), ("HEAD", "/login"), ("POST", "/stepgate/control")}
# The health check, the metrics and the script endpoints (ui/web/ops.py) check their own caller.
SCRIPT_ROUTES = {("GET", "/healthz"), ("HEAD", "/healthz"), ("GET", "/metrics"), ("POST", "/api/predictions")}
SCRIPT_ROUTES |= {("POST", "/api/items")}  # model-generated items with their pre-labels (issue 17)
API = "/gradio_api"
_LOGIN_BODY = 16 * 1024
_SAFE = {"GET", "HEAD", "OPTIONS"}

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict]]
Send = Callable[[dict], Awaitable[None]]


async def _reply(send: Send, status: int, body: dict | None, headers: list[tuple[bytes, bytes]] = ()) -> None:
    payload = json.dumps(body).encode() if body is not None else b""
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": head + list(headers)})
    await send({"type": "http.response.body", "body": payload})


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


def _cookie(headers: dict[str, str], name: str) -> str | None:
    for part in headers.get("cookie", "").split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


_UPLOADING = "stepgate.uploading"


def _login(scope: Scope) -> str:
    """This request's login session (a hash of its cookie): what an upload belongs to."""
    token = _cookie(_headers(scope), COOKIE) or ""
    return hashlib.sha256(token.encode()).hexdigest()


def _drop_deep_link(scope: Scope) -> None:
    """The page's query without Gradio's deep_link parameter (deep links are off), however encoded."""
    pairs = parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True)
    if any(key == "deep_link" for key, _ in pairs):
        kept = [(k, v) for k, v in pairs if k != "deep_link"]
        scope["query_string"] = urlencode(kept).encode("latin-1")


_PAGE_PATHS = {f"/{page}" for page in PAGES}


def _elsewhere(scope: Scope, user: Annotator) -> bytes | None:
    """Where to send a user who asked for another role's page (with the same query), else None."""
    if scope["method"] not in ("GET", "HEAD") or scope["path"] not in _PAGE_PATHS:
        return None
    own = f"/{page_for(user)}"
    if scope["path"] == own:
        return None
    query = scope.get("query_string", b"")
    return own.encode("latin-1") + (b"?" + query if query else b"")


def same_origin(headers: dict[str, str]) -> bool | None:
    """True/False when the request says where it comes from (Origin, else Referer); None when silent."""
    source = headers.get("origin") or headers.get("referer")
    if not source or source == "null":
        return None if not source else False
    # The Host header as the browser sent it (a proxy must pass it on: nginx `Host $http_host`).
    return urlsplit(source).netloc.lower() == headers.get("host", "").strip().lower()


class Guard:
    def __init__(self, app: Callable, ctx: AppContext, sessions: Sessions, blocks: Any) -> None:
        self.app = app
        self.ctx = ctx
        self.sessions = sessions
        self.blocks = blocks
        private = [ctx.store.data_dir, getattr(ctx.store.images, "folder", ctx.store.data_dir)]
        self.uploads = Uploads(private, keep_seconds=ctx.web.session_max_seconds)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method, path = scope["method"], scope["path"]
        headers = _headers(scope)
        if method not in _SAFE and same_origin(headers) is False:
            await _reply(send, 403, {"error": "This request came from another site; it was refused."})
            return
        if (method, path) in SCRIPT_ROUTES:  # they find their caller themselves: a session or an API token
            if method == "POST":
                receive = await self._bounded(scope, receive, send, self.ctx.web.max_file_size)
                if receive is None:
                    return
            await self.app(scope, receive, send)
            return
        if (method, path) in PUBLIC:
            if method == "POST":
                receive = await self._bounded(scope, receive, send, _LOGIN_BODY)
                if receive is None:
                    return
            await self.app(scope, receive, send)
            return
        user = self.sessions.user(_cookie(headers, COOKIE))
        if user is None:
            page = path == "/" or ("text/html" in headers.get("accept", "") and not path.startswith(API))
            if method in ("GET", "HEAD") and page:
                await _reply(send, 303, None, [(b"location", b"/login")])
            else:
                await _reply(send, 401, {"error": "Not logged in: log in at /login first."})
            return
        scope[USER_KEY] = user
        if path.startswith(API):
            receive = await self._gradio(scope, receive, send, user, method, path)
            if receive is None:
                return
            if scope.get(_UPLOADING):
                send = self._recording(send, scope[_UPLOADING])
        elif (elsewhere := _elsewhere(scope, user)) is not None:
            await _reply(send, 303, None, [(b"location", elsewhere)])
            return
        elif scope.get("query_string"):
            _drop_deep_link(scope)
        await self.app(scope, receive, send)

    async def _gradio(
        self, scope: Scope, receive: Receive, send: Send, user: Annotator, method: str, path: str
    ) -> Receive | None:
        """Checks on Gradio's own routes; returns the receive to go on with, None when answered."""
        route = path[len(API) :]
        if route.rstrip("/") == "/deep_link":
            await _reply(send, 404, {"error": "Deep links are off on this server."})
            return None
        if route.startswith("/upload"):  # the upload and its progress
            try:
                require_uploader(user)
            except NotAllowed as exc:
                await _reply(send, 403, {"error": str(exc)})
                return None
            if method != "POST":
                return receive
            scope[_UPLOADING] = _login(scope)
            return await self._bounded(scope, receive, send, self.ctx.web.max_file_size + 64 * 1024)
        hashes = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("session_hash", [])
        if method == "POST":
            if _headers(scope).get("content-type", "").split(";")[0].strip() not in ("", "application/json"):
                await _reply(send, 415, {"error": "Send JSON here (files go to the upload route)."})
                return None
            receive = await self._bounded(scope, receive, send, self.ctx.web.max_body_bytes)
            if receive is None:
                return None
            body = scope.get("stepgate.body", b"")
            try:
                parsed = json.loads(body) if body else None
            except ValueError:
                parsed = None
            if isinstance(parsed, dict) and isinstance(parsed.get("session_hash"), str):
                hashes.append(parsed["session_hash"])
            # Files an event names: this login's own uploads only, never the server's files (hole 6).
            refused = self.uploads.refusal(
                _login(scope), parsed.get("data") if isinstance(parsed, dict) else parsed
            )
            if refused:
                await _reply(send, 403, {"error": refused})
                return None
        if route.startswith("/heartbeat/"):
            hashes.append(route[len("/heartbeat/") :].strip("/"))
        elif route.startswith("/stream/"):
            parts = route.split("/")  # "", "stream", then {event_id}[/close] or {session_hash}/{run}/...
            event_session = self._event_session(parts[2]) if len(parts) <= 4 else parts[2]
            if event_session:  # an unknown event: Gradio answers 404
                hashes.append(event_session)
        elif route.startswith("/call/") and method != "POST":
            found = self._event_session(route.rstrip("/").rsplit("/", 1)[-1])
            if found:
                hashes.append(found)
        for session_hash in hashes:
            if not await self.sessions.owns(session_hash, user.name):
                await _reply(send, 403, {"error": "This Gradio session belongs to another login."})
                return None
        return receive

    def _recording(self, send: Send, login: str) -> Send:
        """Gradio's answer to an upload (the stored files' paths) remembered as this login's."""
        chunks: list[bytes] = []
        status = 0

        async def recorded(message: dict) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body" and status == 200:
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    try:
                        paths = json.loads(b"".join(chunks))
                    except ValueError:
                        paths = []
                    self.uploads.record(login, paths if isinstance(paths, list) else [])
            await send(message)

        return recorded

    def _event_session(self, event_id: str) -> str | None:
        queue = getattr(self.blocks, "_queue", None)
        if queue is None:
            return None
        event = queue.event_ids_to_events.get(event_id)
        if event is not None:
            return event.session_hash
        return next((s for s, ids in queue.pending_event_ids_session.items() if event_id in ids), None)

    async def _bounded(self, scope: Scope, receive: Receive, send: Send, limit: int) -> Receive | None:
        """Read the body (at most `limit` bytes) and hand back a receive that replays it; 413 past it."""
        declared = _headers(scope).get("content-length", "")
        too_big = {
            "error": f"The request is larger than this server accepts here ({limit:,} bytes); nothing was "
            "stored. Send less (the limit is the serve option --max-body-bytes, or --max-file-size "
            "for uploads)."
        }
        if declared.isdigit() and int(declared) > limit:
            await _reply(send, 413, too_big)
            return None
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await _reply(send, 413, too_big)
                return None
            chunks.append(chunk)
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        scope["stepgate.body"] = body
        sent = False

        async def replay() -> dict:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return replay
