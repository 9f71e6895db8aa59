"""A read-only table that shows rows without pandas: `Table` is `gr.Dataframe` for stepgate's panels.

Gradio's Dataframe imports pandas for every value it shows, the empty one each panel starts with
included, so building the app alone would load pandas and pyarrow (69 MB resident, see
ui/web/deferred.py). Its headers wrap between words only (ui/css/base.css). `Table` shows nothing, or rows given as ``{"headers": [...], "data": [[...]]}``,
itself; a pandas frame still goes through Gradio's own code (and loads pandas: it is in use then).
"""

from __future__ import annotations

from typing import Any

import gradio as gr
from gradio import component_meta
from gradio.components.dataframe import DataframeData

__all__ = ["Table", "table_rows"]

# Gradio writes a type stub (.pyi) beside the module of every component class it sees defined, for
# custom-component packages; in a source tree that is a stray, stale file. Not for this one class.
_write_stub = component_meta.create_or_modify_pyi
component_meta.create_or_modify_pyi = lambda *_: None


class Table(gr.Dataframe):
    """Gradio's Dataframe without its copy button: the button put the cells on the clipboard as they
    are, and a cell of dataset or annotator text starting with "=" ran as a formula once pasted into a
    spreadsheet (issue 32). Shown cells keep their exact text (a step "- 3 + 4" must read as written,
    so exports.cells' quote is no option on screen); a table's rows go to a spreadsheet through an
    export, whose CSV cells exports.cells makes inert. Whatever buttons are asked for, fullscreen only."""

    is_template = True  # the browser draws it as Gradio's Dataframe

    def get_config(self, cls: Any = None) -> dict[str, Any]:
        # Not an __init__ of our own: Gradio reads a component's props from its __init__'s signature.
        config: dict[str, Any] = super().get_config(cls) if cls is not None else super().get_config()
        config["buttons"] = ["fullscreen"]
        return config

    def postprocess(self, value: Any) -> DataframeData:
        if value is None:
            return DataframeData(headers=list(self.headers or []), data=[], metadata=None)
        if isinstance(value, dict) and isinstance(value.get("data", []), list):
            headers = list(value.get("headers") or self.headers or [])
            data = [list(row) for row in value.get("data", [])]
            if data:  # as Gradio's Dataframe: headers cut or numbered to the rows' width
                width = len(data[0])
                headers = headers[:width] + [str(i) for i in range(len(headers) + 1, width + 1)]
            return DataframeData(headers=headers, data=data, metadata=value.get("metadata"))
        return super().postprocess(value)


component_meta.create_or_modify_pyi = _write_stub


def table_rows(headers: list[str], data: list[list[Any]] | list[tuple[Any, ...]]) -> dict[str, Any]:
    """A table's value as plain rows: shown without pandas."""
    return {"headers": list(headers), "data": [list(r) for r in data]}
