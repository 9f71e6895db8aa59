"""The login page and the password check: throttled, off the event loop, the same work for any name.

The page is plain HTML with no dataset text and no assets, so nothing else has to answer before
login. The check (ui.auth.check_login: scrypt) runs in a small thread pool of its own at the lowest
CPU priority, so a burst of logins queues there and yields the processor to annotators' requests
instead of stalling them.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial

from services.errors import ServiceError
from ui.auth import check_login
from ui.context import AppContext
from ui.web.throttle import LoginThrottle

__all__ = ["LoginOutcome", "Logins", "login_page"]

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>stepgate: log in</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{{font-family:system-ui,sans-serif;background:#f6f7f9;display:flex;justify-content:center;padding-top:12vh}}
form{{background:#fff;padding:2em;border-radius:8px;box-shadow:0 1px 4px #0002;width:22em}}
label{{display:block;margin-top:1em;font-size:.9em}} input{{width:100%;padding:.5em;box-sizing:border-box}}
button{{margin-top:1.5em;width:100%;padding:.6em;background:#4f46e5;color:#fff;border:0;border-radius:4px}}
.error{{color:#b91c1c;margin-top:1em}} .note{{color:#555;font-size:.9em}}
</style></head><body>
<form method="post" action="login" id="login-form">
<h2>stepgate</h2><p class="note">{message}</p>
<label for="username">username</label><input id="username" name="username" autocomplete="username" required>
<label for="password">password</label>
<input id="password" name="password" type="password" autocomplete="current-password">
<button type="submit">Login</button>
<p class="error" id="login-error" role="alert">{error}</p>
</form></body></html>
"""


def login_page(message: str, error: str = "") -> str:
    return _PAGE.format(message=html.escape(message), error=html.escape(error))


class LoginOutcome:
    OK = "ok"
    WRONG = "wrong"
    THROTTLED = "throttled"


class Logins:
    def __init__(self, ctx: AppContext) -> None:
        web = ctx.web
        self._ctx = ctx
        self.throttle = LoginThrottle(
            ctx.store, web.login_failures_per_name, web.login_failures_per_address, web.login_window_seconds
        )
        self._hashing = ThreadPoolExecutor(
            max_workers=max(1, web.login_hash_workers),
            thread_name_prefix="stepgate-login",
            initializer=_lowest_priority,
        )

    async def attempt(self, name: str, password: str, address: str) -> tuple[str, str]:
        """(outcome, message for the page)."""
        name = (name or "").strip()
        # The count is in the database (shared by replicas): a write, off the event loop. The same
        # rows are written for any name, known or not, so the timing tells nothing either.
        wait, attempt = await asyncio.to_thread(self.throttle.admit, name, address)
        if attempt is None:
            minutes = max(1, round(wait / 60))
            return LoginOutcome.THROTTLED, (
                "Too many failed logins for this name or from this address: "
                f"try again in about {minutes} minute(s), or ask an admin to reset the password."
            )
        loop = asyncio.get_running_loop()
        try:
            ok = await loop.run_in_executor(self._hashing, partial(check_login, self._ctx, name, password))
            refused = "" if ok else "Wrong name or password."
        except ServiceError as exc:  # a new local name with a password that breaks the rule
            refused = str(exc)
        if refused:  # the attempt stays counted against the name, and now against the address
            await asyncio.to_thread(self.throttle.failed, address, attempt)
            return LoginOutcome.WRONG, refused
        await asyncio.to_thread(self.throttle.succeeded, name, attempt)
        return LoginOutcome.OK, ""


def _lowest_priority() -> None:
    """A login worker runs at nice 19: on a busy machine the kernel serves annotators first.

    Linux applies setpriority to one thread when given its id; elsewhere the worker keeps the
    process's priority.
    """
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
