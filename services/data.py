"""Data management: imports and dataset settings, for the Data panel and the command line.

Who may do it is checked here for an explicit actor (services.access: an admin from the UI, or
OPERATOR at the command line). Store errors become ServiceErrors whose message names the file, line
or setting at fault; a dataset setting's refusal by its type (services.errors.from_store).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from importers import FORMATS, ImportFormatError
from importers.records import ImportProblem
from services import imports
from services.access import Action, Actor, require
from services.errors import InvalidInput, NotFound, from_store
from services.imports import ImportOutcome, ImportRejected
from store import datasets
from store.assignments import progress
from store.datasets import Dataset, DatasetError
from store.db import Store
from tasks import QUALITY_GATE

__all__ = [
    "FORMATS",
    "DatasetRow",
    "ImportOutcome",
    "ImportRefused",
    "dataset",
    "dataset_rows",
    "import_file",
    "update_settings",
]


class ImportRefused(InvalidInput):
    """A file with bad lines, refused whole: every bad line with its number and reason; nothing stored."""

    def __init__(self, message: str, problems: list[ImportProblem], good: int) -> None:
        super().__init__(message)
        self.problems, self.good = problems, good


@dataclass(frozen=True)
class DatasetRow:
    dataset: Dataset
    counts: dict[str, int]  # total, settled, discarded


def import_file(
    store: Store,
    user: Actor,
    path: str | Path,
    *,
    format: str | None = None,
    dataset: str | None = None,
    task: str | None = None,
    mapping: dict[str, str] | None = None,
    skip_bad: bool = False,
    report_path: str | Path | None = None,
    progress: Callable[[int], None] | None = None,
    shown_name: str | None = None,
) -> ImportOutcome:
    """All good lines or nothing, unless skip_bad: then the good lines and a report of the rest.

    ``shown_name``: how the user knows the file (an upload is read from a temporary path).
    """
    require(user, Action.ADMINISTER)
    path = Path(path)
    try:
        outcome = imports.import_file(
            store,
            path,
            format=format,
            dataset=dataset,
            task=task,
            mapping=mapping,
            skip_bad=skip_bad,
            report_path=report_path,
            progress=progress,
        )
    except ImportRejected as exc:
        message = str(exc).replace(str(path), shown_name) if shown_name else str(exc)
        raise ImportRefused(message, exc.problems, exc.good) from exc
    except (ImportFormatError, DatasetError, ValueError) as exc:
        message = str(exc).replace(str(path), shown_name) if shown_name else str(exc)
        raise InvalidInput(message) from exc
    _judge_first(store, outcome)
    return outcome


def _judge_first(store: Store, outcome: ImportOutcome) -> None:
    """CRYSTAL's loop 1 for generated items: with a judge model configured, new gate items go to it
    before they reach people (it regenerates up to its attempts, then lets them through flagged)."""
    from services import regeneration
    from services.access import OPERATOR
    from services.generator_settings import generator_config

    if outcome.task != QUALITY_GATE or not (outcome.added or outcome.new_versions):
        return
    if generator_config(store).judge_backend == "none":
        return
    found = datasets.get_dataset(store, outcome.dataset)
    sent = regeneration.judge_pending(store, found, OPERATOR) if found is not None else 0
    if sent:
        outcome.notes.append(
            f"{sent} item(s) go to the judge model first (loop 1); people see each once it passes "
            "or runs out of attempts (python app.py jobs list)"
        )


def dataset_rows(store: Store, user: Actor) -> list[DatasetRow]:
    require(user, Action.ADMINISTER)
    return [DatasetRow(d, progress(store, d.id)) for d in datasets.list_datasets(store)]


def dataset(store: Store, user: Actor, name: str) -> Dataset:
    require(user, Action.ADMINISTER)
    found = datasets.get_dataset(store, name) if name else None
    if found is None:
        raise NotFound(f"no dataset named {name!r}")
    return found


def update_settings(store: Store, user: Actor, name: str, changes: dict[str, Any]) -> Dataset:
    """Change quorum, escalation, lease and label-limit settings; open items take them at once."""
    require(user, Action.ADMINISTER)
    try:
        return datasets.update_settings(store, name, changes)
    except DatasetError as exc:
        raise from_store(exc) from exc
