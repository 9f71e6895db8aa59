"""stepgate's store: DuckDB, and the only package that holds SQL."""

from store.db import Store, Tx
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
]
