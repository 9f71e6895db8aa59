"""A plain-HTTP client for stepgate's API: what a script, a load test or the benchmark uses.

Plain `requests` on a keep-alive session, because gradio_client adds ~140 ms of its own per call.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import requests

__all__ = ["ApiError", "StepgateClient"]


class ApiError(RuntimeError):
    """The app answered with an error (its message is the user-facing one)."""


class StepgateClient:
    def __init__(self, url: str, name: str, password: str, *, timeout: float = 30) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.http = requests.Session()
        # A session hash, as the browser sends: without it Gradio rebuilds the whole session state
        # (a config for every component of every panel) on each call.
        self.session_hash = uuid.uuid4().hex
        reply = self.http.post(
            f"{self.url}/login", data={"username": name, "password": password}, timeout=timeout
        )
        if reply.status_code != 200:
            raise ApiError(f"login of {name!r} failed: HTTP {reply.status_code} {reply.text[:200]}")

    def run(self, endpoint: str, *args: Any) -> Any:
        """An unqueued endpoint (the API's annotation calls): one POST, one answer."""
        reply = self.http.post(
            f"{self.url}/gradio_api/run/{endpoint}",
            json={"data": list(args), "session_hash": self.session_hash},
            timeout=self.timeout,
        )
        body = reply.json() if reply.headers.get("content-type", "").startswith("application/json") else {}
        if reply.status_code != 200 or "error" in body:
            raise ApiError(str(body.get("error") or f"HTTP {reply.status_code}: {reply.text[:200]}"))
        return body["data"][0]

    def call(self, endpoint: str, *args: Any) -> Any:
        """A queued endpoint: POST the call, then read its event stream until it completes."""
        reply = self.http.post(
            f"{self.url}/gradio_api/call/{endpoint}",
            json={"data": list(args), "session_hash": self.session_hash},
            timeout=self.timeout,
        )
        if reply.status_code != 200:
            raise ApiError(f"HTTP {reply.status_code}: {reply.text[:200]}")
        event_id = reply.json()["event_id"]
        stream = self.http.get(
            f"{self.url}/gradio_api/call/{endpoint}/{event_id}", stream=True, timeout=self.timeout
        )
        event = None
        for line in stream.iter_lines(decode_unicode=True):
            if line.startswith("event:"):
                event = line.split(":", 1)[1].strip()
            elif line.startswith("data:") and event in ("complete", "error"):
                data = json.loads(line.split(":", 1)[1])
                if event == "error":
                    raise ApiError(str(data))
                return data[0]
        raise ApiError("the event stream ended without a result")

    def close(self) -> None:
        self.http.close()
