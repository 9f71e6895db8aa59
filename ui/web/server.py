"""Our FastAPI app with Gradio mounted inside: login, logout, downloads, the guard; run by uvicorn."""

from __future__ import annotations

import asyncio
import gc
import time
import warnings
from collections.abc import Callable
from contextlib import suppress
from functools import partial
from typing import Any

import fastapi
import gradio as gr
import uvicorn
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse

from services import users as user_service
from services.access import may_fetch_file
from ui.context import AppContext
from ui.kit.downloads import ROUTE, find_download
from ui.web.assets import CachedBundle, mended_chunks
from ui.web.control import add_control_route
from ui.web.guard import USER_KEY, Guard, same_origin
from ui.web.login import LoginOutcome, Logins, login_page
from ui.web.observe import Observe, Observer
from ui.web.one_app import serve_with
from ui.web.ops import HEALTH, METRICS, PREDICTIONS, add_ops_routes
from ui.web.pages import declare_role_pages, fill_role_pages, page_for
from ui.web.sessions import COOKIE, Sessions
from ui.web.stopping import EndStreams, StopAfterEvents, Streams

__all__ = ["build_server", "serve"]

_NO_STORE = {"Cache-Control": "no-store"}


def _client(request: fastapi.Request) -> str:
    return request.client.host if request.client else "unknown"


def build_server(
    ctx: AppContext, blocks: gr.Blocks, message: str, streams: Streams | None = None, **gradio_kwargs: Any
) -> fastapi.FastAPI:
    """The ASGI app: our routes first, Gradio mounted at "/", the guard in front of both. `streams`: the
    pages' streams, which the server's stop ends (serve() hands the same to its server)."""
    sessions = Sessions(ctx)
    logins = Logins(ctx)
    app = fastapi.FastAPI(docs_url=None, redoc_url=None, openapi_url=None)

    @app.get("/login")
    def show_login() -> HTMLResponse:
        return HTMLResponse(login_page(message), headers=_NO_STORE)

    @app.post("/login")
    async def do_login(request: fastapi.Request) -> Any:
        form = await request.form()
        name, password = str(form.get("username") or ""), str(form.get("password") or "")
        outcome, text = await logins.attempt(name, password, _client(request))
        if outcome != LoginOutcome.OK:
            status = 429 if outcome == LoginOutcome.THROTTLED else 401
            return HTMLResponse(login_page(message, text), status_code=status, headers=_NO_STORE)
        # a fresh token at each login (no fixation); the sessions are rows of the database
        await asyncio.to_thread(sessions.close, request.cookies.get(COOKIE))
        token = await asyncio.to_thread(sessions.open, name.strip())
        user = await asyncio.to_thread(sessions.user, token)
        response = RedirectResponse(
            f"/{page_for(user) if user else ''}", status_code=303
        )  # their role's page
        response.set_cookie(
            COOKIE,
            token,
            max_age=ctx.web.session_max_seconds,
            httponly=True,
            samesite="lax",
            secure=ctx.web.secure_cookies,
            path="/",
        )
        return response

    @app.get("/logout")
    def logout_needs_post() -> JSONResponse:
        return JSONResponse(
            {"error": "Log out with the page's 'log out' button (a POST from this site)."}, status_code=405
        )

    @app.post("/logout")
    def do_logout(request: fastapi.Request) -> Any:
        if same_origin({k.lower(): v for k, v in request.headers.items()}) is not True:
            return JSONResponse({"error": "Log out from the app's own page."}, status_code=403)
        name = sessions.close(request.cookies.get(COOKIE))
        if name:
            for hook in ctx.logout_hooks:
                hook(name)
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE, path="/")
        return response

    @app.get(ROUTE + "/{token}")
    def download(token: str, request: fastapi.Request) -> Any:
        user = request.scope.get(USER_KEY)
        found = find_download(ctx, token)
        if user is None or found is None or not may_fetch_file(user, found[2]):
            # The same answer for an unknown, expired and someone else's link.
            return JSONResponse(
                {"error": "No such download (links expire)."}, status_code=404, headers=_NO_STORE
            )
        path, filename, _ = found
        return FileResponse(
            path,
            filename=filename,
            content_disposition_type="attachment",
            headers=_NO_STORE,
            media_type="application/octet-stream",
        )

    if ctx.control_token and ctx.run_command is not None:
        add_control_route(app, ctx.control_token, ctx.run_command)
    observer = Observer(
        exact_routes=[route.path for route in app.routes if isinstance(getattr(route, "path", None), str)],
        prefixes=[ROUTE],
        find_user=partial(user_service.find, ctx.store),
    )
    add_ops_routes(app, ctx, sessions, observer)
    observer.exact |= {HEALTH, METRICS, PREDICTIONS}

    def auth_dependency(request: fastapi.Request) -> str | None:
        user = request.scope.get(USER_KEY) or sessions.user(request.cookies.get(COOKIE))
        return user.name if user is not None else None

    declare_role_pages(blocks)
    with warnings.catch_warnings():  # Gradio says SSR is off for a multi-page app: it is off anyway
        warnings.filterwarnings("ignore", message="SSR mode is not supported with multi-page apps")
        app = gr.mount_gradio_app(
            app,
            blocks,
            path="/",
            auth_dependency=auth_dependency,
            auth_message=message,
            footer_links=[],
            run_history=False,
            max_file_size=ctx.web.max_file_size,
            ssr_mode=False,
            **gradio_kwargs,
        )
    serve_with(blocks, app)
    fill_role_pages(blocks)
    streams = streams if streams is not None else Streams()
    app.add_middleware(EndStreams, streams=streams)
    # inside the guard: it decides who reaches the bundle, as before
    app.add_middleware(CachedBundle, mended=mended_chunks())
    app.add_middleware(Guard, ctx=ctx, sessions=sessions, blocks=blocks)
    app.add_middleware(Observe, observer=observer)  # outermost: the guard's refusals are counted too
    observer.instrument(blocks)
    blocks.process_api = streams.event(blocks.process_api)
    return app


def serve(
    ctx: AppContext,
    blocks: gr.Blocks,
    host: str,
    port: int,
    message: str,
    proxy_ips: str | None = None,
    **gradio_kwargs: Any,
) -> None:
    """Serve until stopped (Ctrl-C, SIGTERM)."""
    streams = Streams()
    app = build_server(ctx, blocks, message, streams, **gradio_kwargs)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        proxy_headers=proxy_ips is not None,
        forwarded_allow_ips=proxy_ips or "",
        timeout_graceful_shutdown=5,
        # Longer than a load balancer's idle timeout (60 s for nginx and the cloud ones): a connection
        # the server closes just as the balancer or a script reuses it is a failed request (uvicorn's
        # default 5 s matched an annotator's pace exactly, and the benchmark saw resets).
        timeout_keep_alive=75,
    )
    FrozenSurvivors().start()
    StopAfterEvents(config, streams).run()


THAW_SECONDS = 600.0  # how often a full collection looks at the frozen objects again


class FrozenSurvivors:
    """Keep full garbage collections short: they stop every request while they run.

    What is built at start (Gradio, the panels, pandas) and what survives a full collection (above
    all Gradio's per-session copy of every component's config, ~4,000 objects per browser tab or API
    client) lives long; left in the collector, each full collection walks all of it again: 0.25-1.5 s
    with 100 annotators on the shared development machine (bench/human_pace.py), every few seconds.
    Frozen, those objects are still freed when their last reference goes, but a reference cycle
    among them (a closed session's components refer to each other) would never be. So every
    ``thaw_seconds`` the frozen objects go back to the collector for one full collection, which
    frees such cycles, and what survives it is frozen again: one long pause in ten minutes instead
    of one every few seconds, and no memory kept for ever.
    """

    def __init__(
        self, thaw_seconds: float = THAW_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.thaw_seconds, self.clock = thaw_seconds, clock
        self.frozen_at = clock()

    def start(self) -> None:
        gc.freeze()
        self.frozen_at = self.clock()
        gc.callbacks.append(self)

    def stop(self) -> None:
        with suppress(ValueError):
            gc.callbacks.remove(self)
        gc.unfreeze()

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase != "stop" or info["generation"] != 2:
            return
        if self.clock() - self.frozen_at >= self.thaw_seconds:
            gc.unfreeze()  # the next full collection walks everything once and frees closed cycles
            self.frozen_at = float("inf")  # frozen again after that collection
        else:
            if self.frozen_at == float("inf"):
                self.frozen_at = self.clock()
            gc.freeze()
