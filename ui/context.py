"""What the UI needs from the command line: passed in, never read from module globals."""

from __future__ import annotations

import secrets
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
    def browser_secret(self) -> str:
        """The key that signs drafts kept in the browser (gr.BrowserState): stored beside the database,
        so a draft survives a server restart (Gradio would otherwise make a new key at each launch)."""
        path = self.store.data_dir / "browser-state.key"
        if not path.exists():
            path.write_text(secrets.token_hex(32))
            path.chmod(0o600)
        return path.read_text().strip()

    @property
    def export_dir(self) -> Path:
        """Files the panels offer for download live beside the database."""
        folder = self.store.data_dir / "exports"
        folder.mkdir(parents=True, exist_ok=True)
        return folder
