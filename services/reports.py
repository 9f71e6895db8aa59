"""Reports: the QC dashboard's figures computed from the store, for a dataset or a study.

Reads the frames from the store, hands them to qc.dashboard, and returns a Report: the computed
tables and the text the panel shows. exports.report formats the same report as files. Only
adjudicators and admins see reports: they hold every annotator's labels.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from exports import ExportError
from exports import report as report_format
from qc.dashboard import DashboardReport, build_dashboard
from qc.quality import OUTLIER_RULES
from services import gold
from services import studies as study_service
from services.access import require_reviewer
from services.errors import NotFound, ServiceError
from store import jobs_read, studies
from store.annotations import annotations_frame
from store.datasets import Dataset, get_dataset, list_datasets
from store.db import on_all_cores
from store.items import step_counts
from store.state import states_frame

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from store import Store
    from store.users import Annotator

__all__ = [
    "OUTLIER_RULES",
    "Report",
    "ReportFigures",
    "ReportFiles",
    "build_dataset_report",
    "build_study_report",
    "dataset_names",
    "dataset_report",
    "figures",
    "study_report",
    "write_files",
]

ReportFiles = report_format.ReportFiles


@dataclass(frozen=True)
class Report:
    """One report: the computed tables and the text cells the dashboard shows."""

    tables: DashboardReport
    agreement: pd.DataFrame  # the agreement table as text, lead figure first (exports.report)
    warning: str  # the kappa-paradox warning in plain words, "" when no field is skewed
    table2: pd.DataFrame  # ProcessBench's Table 2 as printed; empty for other tasks
    progress: dict[str, Any] | None = None  # a study's row of list_studies; None for a dataset


@dataclass(frozen=True)
class ReportFigures:
    by_error_type: Figure
    heatmap: Figure
    time_per_item: Figure


def _report(tables: DashboardReport, progress: dict[str, Any] | None = None) -> Report:
    return Report(
        tables=tables,
        agreement=report_format.agreement_display(tables),
        warning=report_format.paradox_warning(tables),
        table2=report_format.table2_display(tables.table2),
        progress=progress,
    )


def _with_steps(store: Store, states: pd.DataFrame, dataset: Dataset) -> pd.DataFrame:
    """Item states with their solution's step count (ProcessBench's Table 2 counts steps)."""
    counts = step_counts(store, dataset.id)
    return states.merge(counts, on="item_id", how="left").fillna({"n_steps": 0})


def _with_lengths(store: Store, log: pd.DataFrame, dataset: Dataset) -> pd.DataFrame:
    """The log with each item's length in steps, so "too fast" can weigh an item nobody else timed."""
    role = "modified" if dataset.task == "step_review" else "solution"
    counts = step_counts(store, dataset.id, role=role)
    return log.merge(counts, on="item_id", how="left")


def _dataset(store: Store, name: str) -> Dataset:
    found = get_dataset(store, name)
    if found is None:
        raise NotFound(f"There is no dataset named {name!r}: pick one from the list.")
    return found


def dataset_names(store: Store) -> list[str]:
    """The datasets a reviewer's picker offers, oldest first: an archived one is out of everyone's work
    (the Data panel lists it; a report on it is still made by name)."""
    return [d.name for d in list_datasets(store, archived=False)]


@on_all_cores
def build_dataset_report(
    store: Store, dataset_name: str, *, n_boot: int = 1000, seed: int = 0
) -> DashboardReport:
    """The dashboard for one dataset: every label on current versions, every item's state.

    No role check: for the command line and services.exports; the panels call dataset_report.
    """
    dataset = _dataset(store, dataset_name)
    quorums = {d.name: int(d.setting("quorum")) for d in list_datasets(store)}
    return build_dashboard(
        _with_lengths(
            store, gold.for_agreement(store, dataset, annotations_frame(store, dataset.id)), dataset
        ),
        _with_steps(store, states_frame(store, dataset.id), dataset),
        states_frame(store),
        jobs_read.gating_counts(store, dataset.id),
        dataset=dataset.name,
        task=dataset.task,
        n_boot=n_boot,
        seed=seed,
        quorum=int(dataset.setting("quorum")),
        max_annotators=int(dataset.setting("max_annotators")),
        quorums=quorums,
    )


@on_all_cores
def build_study_report(
    store: Store, study_name: str, *, n_boot: int = 1000, seed: int = 0
) -> tuple[DashboardReport, dict[str, Any]]:
    """A study's tables (agreement over its items only) and its progress row from list_studies."""
    study = studies.get_study(store, study_name)
    if study is None:
        raise NotFound(f"There is no study named {study_name!r}: pick one from the list.")
    dataset = _dataset(store, study.dataset)
    states = _with_steps(store, studies.study_states(store, study), dataset)
    log = studies.study_annotations(store, study)
    if not study.own_labels:  # drawn before studies had labels of their own: the log's, without gold answers
        log = gold.for_agreement(store, dataset, log)
    tables = build_dashboard(
        log,
        states,
        states,
        {},
        dataset=dataset.name,
        task=dataset.task,
        scope=f"study {study.name}",
        n_boot=n_boot,
        seed=seed,
        quorum=int(dataset.setting("quorum")),
        max_annotators=int(dataset.setting("max_annotators")),
    )
    listed = studies.list_studies(store, study.dataset_id)
    progress = listed[listed["study"] == study.name].iloc[0].to_dict()
    progress["note"] = study_service.status(store, study).note  # per batch, and the stop reason
    tables.notes.append(f"Study {study.name}: {progress['note']}")  # printed in the report's files too
    return tables, progress


def dataset_report(
    store: Store, user: Annotator, dataset_name: str, *, n_boot: int = 1000, seed: int = 0
) -> Report:
    """Adjudicators and admins: the dataset's report."""
    require_reviewer(user)
    return _report(build_dataset_report(store, dataset_name, n_boot=n_boot, seed=seed))


def study_report(
    store: Store, user: Annotator, study_name: str, *, n_boot: int = 1000, seed: int = 0
) -> Report:
    """Adjudicators and admins: a study's report, with its progress."""
    require_reviewer(user)
    tables, progress = build_study_report(store, study_name, n_boot=n_boot, seed=seed)
    return _report(tables, progress)


def write_files(report: Report, folder: Path) -> report_format.ReportFiles:
    """The report as Markdown, CSV and JSON files in ``folder``."""
    try:
        return report_format.write_report(report.tables, folder)
    except ExportError as exc:
        raise ServiceError(f"The report files could not be written: {exc}.") from exc


def figures(report: Report) -> ReportFigures:
    """The dashboard's plots of the report (matplotlib loads here, not for the command line)."""
    from qc import plots

    tables = report.tables
    return ReportFigures(
        by_error_type=plots.agreement_by_error_type_figure(tables.by_error_type),
        heatmap=plots.annotator_heatmap_figure(tables.pairwise, tables.shared),
        time_per_item=plots.time_per_item_figure(tables.item_seconds),
    )
