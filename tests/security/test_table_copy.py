"""No table of the app hands its cells to a spreadsheet as they are (issue 32).

Gradio's Dataframe shows a copy button by default; it put the cells on the clipboard unchanged, and an
annotator's note "=HYPERLINK(...)" pasted into a spreadsheet ran as a formula. Every table of every
panel is a ui.kit.Table, which offers fullscreen only; the CSV files stay the way out (exports.cells).
"""

from __future__ import annotations

from pathlib import Path

import gradio as gr

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


def test_a_table_asked_for_a_copy_button_still_offers_fullscreen_only() -> None:
    with gr.Blocks():
        table = Table(buttons=["fullscreen", "copy"], elem_id="asked", max_height=99)
    config = table.get_config()
    assert config["buttons"] == ["fullscreen"]
    assert (config["elem_id"], config["max_height"]) == ("asked", 99)  # its other props as given
