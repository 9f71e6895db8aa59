"""Failed logins counted per name and per client address over a sliding window, in the database.

Every replica over one PostgreSQL database counts the same rows (services/sessions.py), so guesses
spread over several replicas are counted together. An attempt is counted as a failure before its
password is checked and taken back when it was right: attempts at one name sent at once cannot all
pass the count. Against an address only failed attempts count, so many people behind one address may
log in together.
"""

from __future__ import annotations

import time

from services import sessions as rows
from services.records import Store

__all__ = ["LoginThrottle"]


class LoginThrottle:
    def __init__(self, store: Store, per_name: int, per_address: int, window_seconds: int) -> None:
        self._store = store
        self._per_name, self._per_address = per_name, per_address
        self._window = window_seconds

    def admit(self, name: str, address: str) -> tuple[float, int | None]:
        """(seconds until this name and address may try again, 0 when they may now; the attempt's id,
        counted as a failure until succeeded())."""
        return rows.admit_login(
            self._store, name.lower(), address, time.time(), self._window, self._per_name, self._per_address
        )

    def failed(self, address: str, attempt: int) -> None:
        rows.login_failed(self._store, address, attempt, time.time())

    def succeeded(self, name: str, attempt: int) -> None:
        rows.login_succeeded(self._store, name.lower(), attempt)
