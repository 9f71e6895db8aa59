"""ui.kit.table: the panels' read-only table shows plain rows as Gradio's Dataframe shows them."""

from __future__ import annotations

import gradio as gr
import pandas as pd

from bench.server import ROOT
from ui.kit.table import Table, table_rows


def test_plain_rows_show_as_gradios_own_dataframe_shows_the_same_frame() -> None:
    with gr.Blocks():
        ours, gradios = Table(headers=["a", "b"]), gr.Dataframe(headers=["a", "b"])
    rows = [["x", 1], ["<b>y</b>", 2.5]]
    shown = ours.postprocess(table_rows(["a", "b"], rows))
    assert shown.model_dump() == gradios.postprocess(pd.DataFrame(rows, columns=["a", "b"])).model_dump()
    assert ours.postprocess(None).model_dump() == gradios.postprocess(None).model_dump()
    assert ours.postprocess(pd.DataFrame(rows, columns=["a", "b"])).data == rows  # frames still work


def test_headers_follow_the_rows_width_and_the_browser_draws_a_dataframe() -> None:
    with gr.Blocks():
        table = Table(headers=["a", "b", "c"])
    assert table.postprocess({"headers": ["a", "b", "c"], "data": [[1, 2]]}).headers == ["a", "b"]
    assert table.postprocess({"headers": ["a"], "data": [[1, 2, 3]]}).headers == ["a", "2", "3"]
    assert table.get_block_name() == "dataframe"


def test_defining_the_table_writes_no_type_stub_into_the_source_tree() -> None:
    assert not (ROOT / "ui" / "kit" / "table.pyi").exists()
