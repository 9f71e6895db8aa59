"""Requests and events counted, timed and logged: the Prometheus metrics and the structured log lines.

An ASGI middleware in front of everything (the guard's refusals included) records each HTTP request
by route template, method and status; a wrapper around Gradio's `Blocks.process_api` records each
panel or API event by its function name and outcome. Labels are route templates and event names,
both bounded sets: no item id, no annotator, no label value ever becomes a metric label or a log
field. Each app has its own registry (no module globals), read by ui/web/ops.py's /metrics.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from services import logs
from services.records import Annotator
from ui.web.guard import USER_KEY

__all__ = ["CALLER_KEY", "Observe", "Observer"]

CALLER_KEY = "stepgate.caller"  # the user a route found itself (ui/web/ops.py: a session or a token)

# Seconds: a label cycle's calls sit between 5 and 50 ms; the queue's streams and exports run long.
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
# Gradio's own routes under /gradio_api; anything else there counts as "{other}".
_GRADIO = {
    "queue",
    "info",
    "upload",
    "upload_progress",
    "heartbeat",
    "file",
    "cancel",
    "config",
    "startup-events",
}

Scope = dict[str, Any]
Send = Callable[[dict], Awaitable[None]]


class Observer:
    """The app's metrics registry and the names it knows, so that route labels stay a bounded set."""

    def __init__(
        self,
        exact_routes: Iterable[str] = (),
        prefixes: Iterable[str] = (),
        find_user: Callable[[str], Annotator | None] | None = None,
    ) -> None:
        self.find_user = find_user
        self.registry = CollectorRegistry(auto_describe=False)
        self.exact = set(exact_routes)
        self.prefixes = tuple(prefixes)  # routes with one variable tail: "/stepgate/download" + "/{token}"
        self.api_names: set[str] = set()
        self.requests = Counter(
            "stepgate_http_requests",
            "HTTP requests by route template, method and status",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self.request_seconds = Histogram(
            "stepgate_http_request_duration_seconds",
            "HTTP request duration by route template (a stream: its whole life)",
            ["route"],
            buckets=BUCKETS,
            registry=self.registry,
        )
        self.event_seconds = Histogram(
            "stepgate_event_duration_seconds",
            "Panel and API events (Gradio functions) by name and outcome: ok or error",
            ["event", "outcome"],
            buckets=BUCKETS,
            registry=self.registry,
        )

    def route(self, path: str) -> str:
        """The route template of a path: a bounded set of names whatever clients send."""
        if path in self.exact:
            return path
        for prefix in self.prefixes:
            if path.startswith(prefix + "/"):
                return prefix + "/{token}"
        if path.startswith("/gradio_api/"):
            parts = path.split("/")
            head = parts[2].split("=", 1)[0]
            if head in ("run", "call") and len(parts) > 3:
                name = parts[3] if parts[3] in self.api_names else "{other}"
                return f"/gradio_api/{head}/{name}"
            if head in _GRADIO:
                tail = (
                    parts[3] if head == "queue" and len(parts) > 3 and parts[3] in ("join", "data") else None
                )
                return f"/gradio_api/{head}/{tail}" if tail else f"/gradio_api/{head}"
            return "/gradio_api/{other}"
        for static in ("/assets/", "/static/", "/svelte/", "/custom_component/"):
            if path.startswith(static):
                return static + "*"
        if path in ("/", "/config", "/theme.css", "/favicon.ico", "/manifest.json"):
            return path
        return "{other}"

    def instrument(self, blocks: Any) -> None:
        """Time every Gradio event (queued or not) by wrapping the one method all of them go through."""
        self.api_names = {fn.api_name for fn in blocks.fns.values() if isinstance(fn.api_name, str)}
        original = blocks.process_api
        seconds = self.event_seconds

        async def process_api(block_fn: Any, *args: Any, **kwargs: Any) -> Any:
            fn = blocks.fns.get(block_fn) if isinstance(block_fn, int) else block_fn
            name = (
                (getattr(fn, "api_name", None) or getattr(fn, "name", None) or "unknown") if fn else "unknown"
            )
            request = kwargs.get("request")
            user = getattr(request, "username", None)
            started = time.perf_counter()
            error = None
            try:
                return await original(block_fn, *args, **kwargs)
            except BaseException as exc:
                error = type(exc).__name__
                raise
            finally:
                elapsed = time.perf_counter() - started
                seconds.labels(name, "error" if error else "ok").observe(elapsed)
                logs.emit(
                    "event",
                    event=name,
                    user=self._user_id(user),
                    outcome="error" if error else "ok",
                    error=error,
                    duration_ms=round(elapsed * 1000, 1),
                )

        blocks.process_api = process_api

    def _user_id(self, name: str | None) -> int | None:
        """Log lines carry the user's numeric id, not their name (the lookup is the store's cache)."""
        if not name or self.find_user is None:
            return None
        user = self.find_user(name)
        return user.id if user is not None else None


class Observe:
    """ASGI middleware: count, time and log every HTTP request (streams intact)."""

    def __init__(self, app: Callable, observer: Observer) -> None:
        self.app = app
        self.observer = observer

    async def __call__(self, scope: Scope, receive: Callable, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def recording_send(message: dict) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, recording_send)
        finally:
            elapsed = time.perf_counter() - started
            route = self.observer.route(scope["path"])
            method = scope["method"]
            self.observer.requests.labels(route, method, str(status)).inc()
            self.observer.request_seconds.labels(route).observe(elapsed)
            user: Annotator | None = scope.get(USER_KEY) or scope.get(CALLER_KEY)
            logs.emit(
                "http",
                method=method,
                route=route,
                status=status,
                user=user.id if user is not None else None,
                outcome="ok" if status < 400 else ("refused" if status < 500 else "error"),
                duration_ms=round(elapsed * 1000, 1),
            )


def gauge(name: str, text: str, values: dict[str, int] | int, label: str | None = None) -> GaugeMetricFamily:
    if label is None:
        return GaugeMetricFamily(name, text, value=float(values))  # type: ignore[arg-type]
    family = GaugeMetricFamily(name, text, labels=[label])
    for key, value in sorted(dict(values).items()):  # type: ignore[call-overload]
        family.add_metric([key], float(value))
    return family


def counter(name: str, text: str, values: dict[str, int], label: str) -> CounterMetricFamily:
    family = CounterMetricFamily(name, text, labels=[label])
    for key, value in sorted(values.items()):
        family.add_metric([key], float(value))
    return family
