"""The attacker's tools: the real app in team mode on 127.0.0.1, logins and raw Gradio calls.

Everything goes over HTTP with plain `requests`, as a hostile script would.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import requests

from bench.server import Server, start_server
from store import Store, users

PASSWORD = "secret-password-1"
PEOPLE = {"lead": "admin", "judge": "adjudicator", "ann": "annotator", "bob": "annotator", "cat": "annotator"}


def make_team(db: Path) -> None:
    with Store(db) as store:
        for name, role in PEOPLE.items():
            users.add_user(store, name, role, f"{name}-{PASSWORD}")


@contextmanager
def team_server(db: Path, *options: str, demo: bool = False) -> Iterator[Server]:
    if not db.exists():
        make_team(db)
    server = start_server(db, "--team", *([] if demo else ["--no-demo"]), *options)
    try:
        yield server
    finally:
        server.stop()


def login(url: str, name: str, password: str | None = None) -> requests.Session:
    """A logged-in session (the login form's POST); fails the test when the login is refused."""
    http = requests.Session()
    reply = http.post(
        f"{url}/login", data={"username": name, "password": password or f"{name}-{PASSWORD}"}, timeout=60
    )
    assert reply.status_code == 200 and "stepgate-session" in http.cookies, reply.text[:300]
    return http


def config(http: requests.Session, url: str) -> dict:
    reply = http.get(f"{url}/config", timeout=30)
    assert reply.status_code == 200, reply.text[:200]
    return reply.json()


def event_of(conf: dict, elem_id: str, trigger: str = "click") -> tuple[int, list[int]]:
    """(fn_index, input component ids) of the event the component `elem_id` triggers."""
    ids = {c["id"] for c in conf["components"] if c.get("props", {}).get("elem_id") == elem_id}
    for dep in conf["dependencies"]:
        if any(t[0] in ids and t[1] == trigger for t in dep.get("targets", [])):
            return dep["id"], dep.get("inputs", [])
    raise AssertionError(f"no {trigger} event on #{elem_id}")


def call_event(
    http: requests.Session,
    url: str,
    fn_index: int,
    data: list,
    session_hash: str | None = None,
    event_data: dict | None = None,
) -> tuple[int, str]:
    """Join the queue as the browser does and read the whole answer: (HTTP status of the join, text).
    `event_data`: what a select event carries (the row clicked)."""
    session_hash = session_hash or uuid.uuid4().hex
    body = {"data": data, "fn_index": fn_index, "session_hash": session_hash, "event_data": event_data}
    joined = http.post(f"{url}/gradio_api/queue/join", json=body, timeout=30)
    if joined.status_code != 200:
        return joined.status_code, joined.text
    stream = http.get(
        f"{url}/gradio_api/queue/data", params={"session_hash": session_hash}, stream=True, timeout=60
    )
    seen = []
    for line in stream.iter_lines(decode_unicode=True):
        if line.startswith("data:"):
            seen.append(line)
            if json.loads(line[5:]).get("msg") in ("process_completed", "close_stream"):
                break
    stream.close()
    return 200, "\n".join(seen)


def run_api(http: requests.Session, url: str, name: str, *args: object, session_hash: str | None = None):
    return http.post(
        f"{url}/gradio_api/run/{name}",
        json={"data": list(args), "session_hash": session_hash or uuid.uuid4().hex},
        timeout=60,
    )


def open_page(http: requests.Session, url: str, conf: dict) -> str:
    """Run the page's load events as the browser does; returns the session hash they filled."""
    session_hash = uuid.uuid4().hex
    values = {c["id"]: c.get("props", {}).get("value") for c in conf["components"]}
    for dep in conf["dependencies"]:
        if any(t[1] == "load" for t in dep.get("targets", [])) and dep.get("backend_fn", True):
            call_event(http, url, dep["id"], [values.get(i) for i in dep.get("inputs", [])], session_hash)
    return session_hash


_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?([+-]\d{2}:?\d{2}|Z)?")


def outputs(text: str) -> list:
    """The output values of an event's answer (what call_event read), times written as <time>: what two
    worlds' replies are compared on (the stream's event ids and durations left out)."""
    found = []
    for line in text.splitlines():
        message = json.loads(line[5:])
        if message.get("msg") == "process_completed":
            found.append(message.get("success"))
            found.append((message.get("output") or {}).get("data"))
    return json.loads(_STAMP.sub("<time>", json.dumps(found, sort_keys=True)))
