"""What the UI needs from the command line: passed in, never read from module globals."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from services.encoder import Encoder
from services.records import Store

__all__ = ["LOCAL", "TEAM", "AppContext", "WebSettings"]

LOCAL = "local"  # bound to 127.0.0.1: people pick or create their annotator name
TEAM = "team"  # any other address: a password login against the annotators table


@dataclass(frozen=True)
class WebSettings:
    """The HTTP layer's limits (ui/web): sessions, login throttling, request sizes, download links.

    The defaults are what a team would accept; `app.py serve` has an option for each.
    """

    session_idle_seconds: int = 8 * 3600  # a session unused this long ends
    session_max_seconds: int = 7 * 86400  # and every session ends this long after its login
    login_window_seconds: int = 15 * 60  # failed logins are counted over this window
    login_failures_per_name: int = 5
    login_failures_per_address: int = 20
    login_hash_workers: int = 1  # password hashes at once, off the event loop
    max_body_bytes: int = 1_000_000  # an event call's request body
    max_file_size: int = 200 * 1024 * 1024  # an upload (admins' imports only)
    download_seconds: int = 15 * 60  # how long a download link works
    secure_cookies: bool = False  # the session cookie only over HTTPS (behind a TLS proxy)


@dataclass
class AppContext:
    store: Store
    mode: str = LOCAL
    web: WebSettings = field(default_factory=WebSettings)
    # Called with the user's name when they log out (e.g. to clear what is kept for them).
    logout_hooks: list[Callable[[str], None]] = field(default_factory=list)
    # The download links handed out (ui.kit.downloads.DownloadRegistry), made on first use.
    downloads: Any = None
    # The command line beside the app (ui/web/control.py): its token and what runs a command's argv.
    control_token: str | None = None
    run_command: Callable[[list[str]], tuple[int, str, str]] | None = None
    # The step-matching encoder (app.py serve --encoder FOLDER); nothing loads until its first use.
    encoder: Encoder = field(default_factory=Encoder)
