"""What the UI needs from the command line: passed in, never read from module globals."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from store import Store

__all__ = ["LOCAL", "TEAM", "AppContext"]

LOCAL = "local"  # bound to 127.0.0.1: people pick or create their annotator name
TEAM = "team"  # any other address: a password login against the annotators table


@dataclass
class AppContext:
    store: Store
    mode: str = LOCAL
    encoder_path: str | None = None

    @property
    def export_dir(self) -> Path:
        """Files the panels offer for download live beside the database."""
        folder = self.store.data_dir / "exports"
        folder.mkdir(parents=True, exist_ok=True)
        return folder
