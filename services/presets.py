"""Paper presets: the table a seed paper printed, computed from this app's own log.

ProcessBench's Table 2 from a dataset's settled items; PRMBench-V's and MPBench's agreement studies
from a drawn study (services.studies), MPBench's with its allocation per stratum (paradigm) and
each stratum's sampling fraction. Tables are qc.presets'; files are exports.presets'. They hold
everyone's labels, so adjudicators and admins get them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from exports import presets as preset_format
from qc import presets as tables
from qc.quality import long_labels, wide_by_field
from qc.sampling import study_pool
from services import step_match
from services.access import require_reviewer
from services.errors import InvalidInput, NotFound, ServiceError
from store import studies
from store.datasets import get_dataset
from store.items import step_counts
from store.state import states_frame

if TYPE_CHECKING:
    from store import Store
    from store.users import Annotator

__all__ = ["FORMATS", "PRESETS", "Preset", "build_preset", "write_preset"]

PRESETS = {
    "processbench_table2": "ProcessBench Table 2 (a dataset)",
    "prmbench_v_study": "PRMBench-V agreement study (a study)",
    "mpbench_study": "MPBench agreement study (a study)",
    "crystal_table_s1": "CRYSTAL Table S1 (a step-match dataset)",
}
FORMATS = tuple(preset_format.FORMATS)
# The validity judgement a study's raters give, per task: (field, the label meaning valid).
VALIDITY = {"step_review": ("modification", "reasonable")}


@dataclass(frozen=True)
class Preset:
    name: str
    title: str
    note: str
    table: pd.DataFrame
    scope: str  # the dataset or study it was computed from

    def text(self, fmt: str) -> str:
        return preset_format.preset_text(self.table, self.title, self.note, fmt)

    def display(self) -> pd.DataFrame:
        """The table as the paper prints it, as text: row names first, then one column per column."""
        headers = [" ".join(map(str, c)) if isinstance(c, tuple) else str(c) for c in self.table.columns]
        shown = pd.DataFrame({"": [str(r) for r in self.table.index]})
        for header, column in zip(headers, self.table.columns, strict=True):
            shown[header] = [preset_format.format_cell(str(r), v) for r, v in self.table[column].items()]
        return shown


def _table2(store: Store, dataset: str) -> Preset:
    found = get_dataset(store, dataset)
    if found is None:
        raise NotFound(f"There is no dataset named {dataset!r}.")
    if found.task != "earliest_error":
        raise InvalidInput(
            f"ProcessBench's Table 2 needs an earliest-error dataset; {found.name} is {found.task}."
        )
    states = states_frame(store, found.id).merge(step_counts(store, found.id), on="item_id", how="left")
    table = tables.processbench_table2(tables.table2_items(states.fillna({"n_steps": 0})))
    note = (
        "Columns split by the consensus label (error: a step, correct: -1); shares of the column's retained "
        "items; % Process errors of the subset's items with a correct final answer; 3/n = settled with "
        "exactly n annotators (docs/PROTOCOLS.md B3)."
    )
    return Preset("processbench_table2", f"ProcessBench Table 2: {found.name}", note, table, found.name)


def _study_ratings(store: Store, name: str) -> tuple[studies.Study, pd.DataFrame, str, pd.DataFrame]:
    study = studies.get_study(store, name)
    if study is None:
        raise NotFound(f"There is no study named {name!r}: pick one from the list.")
    if study.task not in VALIDITY:
        raise InvalidInput(
            f"{study.name} is a {study.task} study: the agreement-study presets read a validity judgement "
            f"({', '.join(VALIDITY)} studies)."
        )
    field, valid = VALIDITY[study.task]
    # the study's own labels (store.studies): never the gate's labels on the same items
    wide = wide_by_field(long_labels(studies.study_annotations(store, study), [field]), [field])
    if field not in wide:
        raise InvalidInput(f"{study.name} has no {field} labels yet: its raters have not started.")
    return study, wide[field], valid, studies.study_items(store, study.id)


def _prmbench_v(store: Store, name: str) -> Preset:
    study, wide, valid, _ = _study_ratings(store, name)
    note = (
        f"Validity = the modification judged {valid!r}; rater A and B = each item's first two ratings. The "
        "paper reports observed agreement only (kappa paradox, docs/PROTOCOLS.md A5); interval: Wilson 95%."
    )
    return Preset(
        "prmbench_v_study",
        f"PRMBench-V agreement study: {study.name}",
        note,
        tables.prmbench_v_study(wide, valid),
        study.name,
    )


def _mpbench(store: Store, name: str) -> Preset:
    study, wide, valid, items = _study_ratings(store, name)
    strata = items.set_index("item_id")["stratum"].fillna("(all)").astype(str)
    pool = None
    if study.stratify_by:
        candidates = studies.study_candidates(store, study.dataset_id)
        if study.kept_only:  # the pool it was drawn from: the items the gate kept
            candidates = study_pool(candidates)
        pool = candidates[study.stratify_by].fillna("(none)").astype(str).value_counts().to_dict()
    note = (
        f"Allocation per stratum ({study.stratify_by or 'no strata'}; MPBench: {tables.MPBENCH_PER_PARADIGM} per "
        f"paradigm); validity = the modification judged {valid!r}; headline = unanimous-valid rate with its "
        "Wilson 95% interval (docs/PROTOCOLS.md C1a); Fleiss' kappa is not in the paper."
    )
    table = tables.mpbench_study(wide, strata, valid, pool)
    return Preset("mpbench_study", f"MPBench agreement study: {study.name}", note, table, study.name)


def _table_s1(store: Store, user: Annotator, dataset: str) -> Preset:
    report = step_match.study_report(store, user, dataset)
    note = (
        f"{report.labelled} of {report.pairs} pairs with a human majority; the encoder's decision as stored "
        f"at sampling ({report.encoder}); kappa: Cohen's, human vs encoder (docs/PROTOCOLS.md E4)."
    )
    table = tables.crystal_table_s1(report.table)
    return Preset("crystal_table_s1", f"CRYSTAL Table S1: {report.dataset}", note, table, report.dataset)


def build_preset(
    store: Store, user: Annotator, preset: str, *, dataset: str | None = None, study: str | None = None
) -> Preset:
    """The preset's table (reviewers and admins): Table 2 from ``dataset``, a study's from ``study``."""
    require_reviewer(user)
    if preset not in PRESETS:
        raise InvalidInput(f"Unknown preset {preset!r}: choose one of {', '.join(PRESETS)}.")
    if preset in ("processbench_table2", "crystal_table_s1"):
        if not dataset:
            raise InvalidInput(f"Pick the dataset for the {PRESETS[preset]}.")
        return _table2(store, dataset) if preset == "processbench_table2" else _table_s1(store, user, dataset)
    if not study:
        raise InvalidInput(f"Pick the study for the {PRESETS[preset]}.")
    return _prmbench_v(store, study) if preset == "prmbench_v_study" else _mpbench(store, study)


def write_preset(preset: Preset, folder: Path, fmt: str) -> Path:
    """The preset as one file in ``folder`` (Markdown, CSV or LaTeX)."""
    if fmt not in preset_format.FORMATS:
        raise InvalidInput(f"Choose a format: {', '.join(FORMATS)}.")
    path = (
        folder
        / f"{preset.name}-{''.join(c if c.isalnum() else '-' for c in preset.scope)}{preset_format.FORMATS[fmt]}"
    )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(preset.text(fmt), encoding="utf-8")
    except OSError as exc:
        raise ServiceError(f"The preset file could not be written: {exc}.") from exc
    return path
