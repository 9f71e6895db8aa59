"""stepgate's store: DuckDB, and the only package that holds SQL."""

from store.db import Store, StoreClosedError, StoreError, StoreLockedError, StoreOpenError, Tx

__all__ = ["Store", "StoreClosedError", "StoreError", "StoreLockedError", "StoreOpenError", "Tx"]
