"""Routes for operators and scripts: /healthz, /metrics, and the script endpoints that take API tokens.

- GET /healthz: 200 {"status": "ok"} when the store answers a trivial query, 503 otherwise. No login
  (a load balancer has none); it says nothing about items, labels or users.
- GET /metrics: Prometheus' text format, for an admin: an admin's session, or an admin's API token
  (`Authorization: Bearer sgt_...`, what Prometheus' `authorization` setting sends). The series are
  totals by route, event, status, task and job status, never per item or per annotator; still, they
  are an operator's view, so an annotator gets 403.
- POST /api/predictions?model=M&dataset=D: a model's predictions file as the body (JSONL or a JSON
  list), the same service and checks as `python app.py predictions import`.
- POST /api/items?dataset=D&format=F: model-generated items with their pre-labels (the papers' model
  output that people then verify: PRMBench-V's inserted error steps, type and reason; CRYSTAL's
  candidate steps; a generator's chains), the same service and checks as `python app.py import`:
  an admin's, all lines or nothing; images as base64 (no path on the server is read).

The caller is found here as ui/auth.py finds a session user: the session cookie, else a bearer token
(services.tokens); the services then apply the same role checks (services.access) to either. A wrong
or revoked token gets 401 with a message, and nothing is stored.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import fastapi
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.core import Metric

from services import data, ops, scores, tokens
from services.errors import NotAllowed, NotFound, ServiceError
from services.records import Annotator, StoreUnavailableError
from ui.context import AppContext
from ui.web.observe import CALLER_KEY, Observer, counter, gauge
from ui.web.sessions import COOKIE, Sessions

__all__ = ["HEALTH", "ITEMS", "METRICS", "PREDICTIONS", "add_ops_routes", "caller"]

HEALTH, METRICS, PREDICTIONS, ITEMS = "/healthz", "/metrics", "/api/predictions", "/api/items"
_NO_STORE = {"Cache-Control": "no-store"}


def _status(exc: ServiceError) -> int:
    if isinstance(exc, tokens.TokenRefused):
        return 401
    if isinstance(exc, NotAllowed):
        return 403
    return 404 if isinstance(exc, NotFound) else 400


def _refusal(exc: ServiceError) -> JSONResponse:
    headers = {
        **_NO_STORE,
        **({"WWW-Authenticate": "Bearer"} if isinstance(exc, tokens.TokenRefused) else {}),
    }
    return JSONResponse({"error": str(exc)}, status_code=_status(exc), headers=headers)


def caller(ctx: AppContext, sessions: Sessions, request: fastapi.Request) -> Annotator:
    """The session user, else the API token's owner; raises services.tokens.TokenRefused."""
    user = sessions.user(request.cookies.get(COOKIE))
    if user is None:
        user = tokens.user_for_token(ctx.store, request.headers.get("authorization"))
    request.scope[CALLER_KEY] = user  # for the request's log line: its id only
    return user


def add_ops_routes(app: fastapi.FastAPI, ctx: AppContext, sessions: Sessions, observer: Observer) -> None:
    started = time.time()

    @app.api_route(HEALTH, methods=["GET", "HEAD"])
    def healthz() -> JSONResponse:
        ok = ops.health_check(ctx.store)
        body: dict[str, Any] = {
            "status": "ok" if ok else "unavailable",
            "store": "ok" if ok else "not answering",
            "uptime_seconds": int(time.time() - started),
        }
        return JSONResponse(body, status_code=200 if ok else 503, headers=_NO_STORE)

    @app.get(METRICS)
    def metrics(request: fastapi.Request) -> Response:
        try:
            user = caller(ctx, sessions, request)
            counts = ops.store_counts(ctx.store, user)
        except ServiceError as exc:
            return _refusal(exc)
        except StoreUnavailableError:
            return JSONResponse(
                {"error": "The database does not answer."}, status_code=503, headers=_NO_STORE
            )
        text = generate_latest(observer.registry) + generate_latest(_StoreSeries(counts, sessions.active()))
        return Response(text, media_type=CONTENT_TYPE_LATEST, headers=_NO_STORE)

    async def uploaded(request: fastapi.Request) -> tuple[Annotator, bytes] | JSONResponse:
        """A script upload's caller and body, or the refusal to send (401: no usable token)."""
        try:
            user = caller(ctx, sessions, request)
        except ServiceError as exc:
            return _refusal(exc)
        return user, await request.body()

    @app.post(PREDICTIONS)
    async def predictions(request: fastapi.Request, model: str = "", dataset: str = "") -> Any:
        found = await uploaded(request)
        return (
            found
            if isinstance(found, JSONResponse)
            else await _import_predictions(ctx, *found, model, dataset)
        )

    @app.post(ITEMS)
    async def items(request: fastapi.Request, dataset: str = "", format: str = "") -> Any:
        found = await uploaded(request)
        return found if isinstance(found, JSONResponse) else await _import_items(ctx, *found, dataset, format)


async def _import_predictions(ctx: AppContext, user: Annotator, body: bytes, model: str, dataset: str) -> Any:
    import anyio

    def run() -> scores.PredictionsImported:
        with tempfile.TemporaryDirectory(prefix="stepgate-predictions-") as folder:
            path = Path(folder) / "predictions.jsonl"
            path.write_bytes(body)
            return scores.import_predictions(
                ctx.store, user, path, model=model, dataset=dataset, shown_name="the request body"
            )

    try:
        done = await anyio.to_thread.run_sync(run)
    except ServiceError as exc:
        return _refusal(exc)
    return JSONResponse(
        {
            "model": done.model,
            "dataset": done.dataset,
            "items": done.items,
            "replaced": done.replaced,
            "message": done.summary(),
        },
        headers=_NO_STORE,
    )


_SUFFIX = {"csv": ".csv", "parquet": ".parquet"}


async def _import_items(ctx: AppContext, user: Annotator, body: bytes, dataset: str, fmt: str) -> Any:
    """A file of model-generated items, imported whole or not at all (services.data.import_file)."""
    import anyio

    if not dataset.strip():
        return JSONResponse(
            {"error": "Name the dataset: POST /api/items?dataset=NAME (&format=FORMAT); nothing was stored."},
            status_code=400,
            headers=_NO_STORE,
        )

    def run() -> Any:
        with tempfile.TemporaryDirectory(prefix="stepgate-items-") as folder:
            path = Path(folder) / f"request-body{_SUFFIX.get(fmt, '.jsonl')}"  # named so in a problem line
            path.write_bytes(body)
            return data.import_file(
                ctx.store,
                user,
                path,
                format=fmt or None,
                dataset=dataset.strip(),
                shown_name="the request body",
            )

    try:
        done = await anyio.to_thread.run_sync(run)
    except ServiceError as exc:
        return _refusal(exc)
    except StoreUnavailableError as exc:  # the database or the image storage refused: nothing was stored
        return JSONResponse({"error": f"{exc}; nothing was stored."}, status_code=503, headers=_NO_STORE)
    return JSONResponse(
        {
            "dataset": done.dataset,
            "task": done.task,
            "added": done.added,
            "new_versions": done.new_versions,
            "unchanged": done.unchanged,
            "message": done.summary(),
        },
        headers=_NO_STORE,
    )


class _StoreSeries:
    """What is read at each scrape rather than counted: the store's totals and the open sessions."""

    def __init__(self, counts: ops.StoreCounts, active_sessions: int) -> None:
        self.counts, self.active_sessions = counts, active_sessions

    def collect(self) -> Iterable[Metric]:
        yield gauge("stepgate_active_sessions", "Open login sessions in this process", self.active_sessions)
        yield gauge(
            "stepgate_jobs",
            "Jobs in the queue by status (the whole database)",
            self.counts.jobs_by_status,
            "status",
        )
        yield counter(
            "stepgate_labels_submitted",
            "Labels in the append-only log by task (the whole database: the same on every replica)",
            self.counts.labels_by_task,
            "task",
        )
