"""stepgate's store: DuckDB, and the only package that holds SQL."""

from store.db import Store, Tx, on_all_cores
from store.errors import (
    StoreClosedError,
    StoreError,
    StoreLockedError,
    StoreOpenError,
    StoreRequestError,
    StoreUnavailableError,
)

__all__ = [
    "Store",
    "StoreClosedError",
    "StoreError",
    "StoreLockedError",
    "StoreOpenError",
    "StoreRequestError",
    "StoreUnavailableError",
    "Tx",
    "on_all_cores",
]
