"""The command line beside the running app: a local route that runs `python app.py VERB ...` inside it.

One process owns a DuckDB file, so while the app serves, `import`, `users`, `datasets` and `export`
cannot open the database themselves. The app writes a control file beside the database (its address
and a random token, readable by the file's owner only); a command that finds the database locked
posts its arguments there, and the app runs them on its own store and answers with what they
printed. Only requests from this machine that carry the token are served.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import fastapi
from fastapi.responses import JSONResponse

__all__ = [
    "ROUTE",
    "ControlError",
    "add_control_route",
    "remove_control_file",
    "send_command",
    "write_control_file",
]

ROUTE = "/stepgate/control"
_LOOPBACK = {"127.0.0.1", "::1", "localhost"}


class ControlError(RuntimeError):
    """The running app could not be reached or refused the command."""


def control_path(db: Path) -> Path:
    """Beside the database, in its files folder (as Store names it)."""
    return db.with_name(db.name + ".files") / "control.json"


def write_control_file(db: Path, port: int, token: str) -> Path:
    path = control_path(db)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump({"url": f"http://127.0.0.1:{port}", "token": token, "pid": os.getpid()}, out)
    return path


def remove_control_file(db: Path) -> None:
    path = control_path(db)
    try:
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError):
        pass


def new_token() -> str:
    return secrets.token_urlsafe(32)


def add_control_route(
    app: fastapi.FastAPI, token: str, run: Callable[[list[str]], tuple[int, str, str]]
) -> None:
    @app.post(ROUTE)
    async def control(request: fastapi.Request) -> Any:
        given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        client = request.client.host if request.client else ""
        if client not in _LOOPBACK or not hmac.compare_digest(given.encode(), token.encode()):
            return JSONResponse({"error": "not allowed"}, status_code=403)
        try:
            argv = (await request.json())["argv"]
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": 'send {"argv": [...]}'}, status_code=400)
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
            return JSONResponse({"error": "argv must be a list of strings"}, status_code=400)
        code, out, err = await anyio.to_thread.run_sync(run, argv)
        return JSONResponse({"code": code, "stdout": out, "stderr": err})


def send_command(db: Path, argv: list[str], timeout: float = 3600) -> tuple[int, str, str]:
    """Run a command in the app that serves `db`: (exit code, stdout, stderr)."""
    path = control_path(db)
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
        url, token = str(found["url"]), str(found["token"])
    except (OSError, ValueError, KeyError) as exc:
        raise ControlError(f"no running stepgate app answers for {db} ({path} is missing)") from exc
    request = urllib.request.Request(
        url + ROUTE,
        data=json.dumps({"argv": argv}).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            body = json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        raise ControlError(f"the app that holds {db} refused the command: HTTP {exc.code}") from exc
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise ControlError(f"the app that holds {db} did not answer at {url}: {exc}") from exc
    return int(body["code"]), str(body["stdout"]), str(body["stderr"])
