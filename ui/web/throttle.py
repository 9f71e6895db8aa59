"""Failed logins counted per name and per client address over a sliding window."""

from __future__ import annotations

import threading
import time
from collections import defaultdict, deque

__all__ = ["LoginThrottle"]


class LoginThrottle:
    def __init__(self, per_name: int, per_address: int, window_seconds: int) -> None:
        self._limits = {"name": per_name, "address": per_address}
        self._window = window_seconds
        self._failures: dict[tuple[str, str], deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def _recent(self, key: tuple[str, str], now: float) -> deque[float]:
        times = self._failures[key]
        while times and times[0] <= now - self._window:
            times.popleft()
        return times

    def blocked_for(self, name: str, address: str) -> float:
        """Seconds until this name and address may try again; 0 when they may now."""
        now = time.time()
        wait = 0.0
        with self._lock:
            for kind, value in (("name", name.lower()), ("address", address)):
                times = self._recent((kind, value), now)
                if len(times) >= self._limits[kind]:
                    wait = max(wait, times[0] + self._window - now)
        return wait

    def failed(self, name: str, address: str) -> None:
        now = time.time()
        with self._lock:
            for key in (("name", name.lower()), ("address", address)):
                self._recent(key, now).append(now)

    def succeeded(self, name: str) -> None:
        with self._lock:
            self._failures.pop(("name", name.lower()), None)
