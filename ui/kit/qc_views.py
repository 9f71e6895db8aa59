"""What the QC dashboard and its sections (agreement studies) show alike: the agreement table as
escaped HTML, the report's download links, and the read-only tables' look."""

from __future__ import annotations

import html
import secrets
import shutil
from typing import Any

import pandas as pd

from services import reports
from services.records import Annotator
from ui.context import AppContext
from ui.kit.downloads import download_link_html, offer_download, private_dir
from ui.kit.table import Table

__all__ = ["agreement_view", "offer_report", "qc_frame"]


def _figure_cell(text: str, lead: bool) -> str:
    """'0.933 [0.833, 1.000]' as the value over its interval; the lead figure in bold."""
    value, _, interval = str(text).partition(" [")
    ci = f'<span class="qc-ci">[{html.escape(interval)}</span>' if interval else ""
    return f'<td class="qc-num{" qc-lead" if lead else ""}">{html.escape(value)}{ci}</td>'


def _agreement_html(display: pd.DataFrame, paradox: list[str]) -> str:
    """The agreement table, every cell escaped: field and level, items, lead, then each coefficient."""
    if display.empty:
        return '<p class="qc-note">No field has two labels on the same item yet.</p>'
    skip = {"Field", "Level", "Items", "Annotators", "Lead coefficient"}
    figures = [c for c in display.columns if c not in skip and not c.startswith("Lead value")]
    head = "".join(f"<th>{html.escape(c)}</th>" for c in ["Field", "Items", "Annotators", "Lead", *figures])
    rows = []
    for row in display.to_dict("records"):
        mark = (
            ' <span class="qc-flag" title="kappa misleads here">⚠</span>' if row["Field"] in paradox else ""
        )
        cells = [
            f'<td><b>{html.escape(str(row["Field"]))}</b>{mark}<span class="qc-ci">'
            f"{html.escape(str(row['Level']))}</span></td>",
            f'<td class="qc-num">{row["Items"]}</td>',
            f'<td class="qc-num">{row["Annotators"]}</td>',
            f"<td>{html.escape(str(row['Lead coefficient']))}</td>",
        ]
        cells += [
            _figure_cell(row[c], c == row["Lead coefficient"]) if row[c] else "<td></td>" for c in figures
        ]
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return f'<table class="qc-agreement"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def agreement_view(report: reports.Report) -> str:
    return _agreement_html(report.agreement, report.tables.paradox_fields)


def offer_report(ctx: AppContext, user: Annotator, report: reports.Report) -> tuple[str, ...]:
    """The report as three links for this reviewer only (ui.kit.downloads), never in a served folder."""
    folder = private_dir(ctx) / secrets.token_hex(16)
    try:
        files = reports.write_files(report, folder)
        return tuple(
            download_link_html(offer_download(ctx, user, path, path.name))
            for path in (files.markdown, files.csv, files.json)
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def qc_frame(elem_id: str, **kwargs: Any) -> Table:
    return Table(interactive=False, wrap=True, elem_id=elem_id, elem_classes=["qc-table"], **kwargs)
