"""No table of the app hands its cells to a spreadsheet as they are (issue 32).

Gradio's Dataframe shows a copy button by default; it put the cells on the clipboard unchanged, and an
annotator's note "=HYPERLINK(...)" pasted into a spreadsheet ran as a formula. Every table of every
panel is a ui.kit.Table, which offers fullscreen only; the CSV files stay the way out (exports.cells).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from store import Store
from ui.app import build_app
from ui.context import AppContext
from ui.kit.table import Table


def test_no_table_of_the_app_offers_a_copy_button(tmp_path: Path) -> None:
    with Store(tmp_path / "tables.duckdb") as store:
        config = build_app(AppContext(store=store)).get_config_file()
    tables = [c for c in config["components"] if c.get("type") == "dataframe"]
    assert len(tables) >= 15  # every panel's tables, the admin's included
    offering = [
        c["props"].get("elem_id") or c["id"] for c in tables if c["props"].get("buttons") != ["fullscreen"]
    ]
    assert offering == []


def test_a_table_refuses_a_copy_button() -> None:
    with pytest.raises(ValueError, match="no copy button"):
        Table(buttons=["fullscreen", "copy"])
