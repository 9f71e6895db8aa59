"""The store's records the UI passes around (types only), so that the UI imports services alone."""

from __future__ import annotations

from store import Store, StoreUnavailableError
from store.datasets import Dataset
from store.users import ROLES, Annotator

__all__ = ["ROLES", "Annotator", "Dataset", "Store", "StoreUnavailableError"]
