"""Exports: read what a format needs from the store and hand it to the format in exports/.

The command line (`app.py export`) and the panels' export buttons call `export`. Who may export
what is the caller's check today (admins in Data; annotators only their own log rows).
"""

from __future__ import annotations

import importlib.metadata
import json
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from exports import EXPORT_FORMATS, FORMATS, ExportError, write_whole
from exports.gated import ITEM_OBJECTS
from exports.stepgate import IMAGE_MODES, BundleExport
from services.errors import InvalidInput, NotAllowed, NotFound, ServiceError
from services.reports import build_dataset_report
from store.annotations import annotations_frame
from store.bulk import no_cyclic_gc
from store.bundles import database_counts, read_bundle
from store.datasets import get_dataset, list_datasets
from store.gold import gold_answer_ids, gold_ids, gold_items
from store.items import items_frame, items_json_frames
from store.study_bundles import study_people
from tasks import spec_for, task_of_format

if TYPE_CHECKING:
    from store import Store

__all__ = [
    "EXPORT_FORMATS",
    "IMAGE_MODES",
    "ItemSelection",
    "Progress",
    "Written",
    "export",
    "formats_for_task",
    "manifest_path",
    "stepgate_version",
    "suffix_of",
]

Progress = Callable[[float, str], None]  # (fraction done, what is happening), e.g. a gr.Progress


@dataclass(frozen=True)
class ItemSelection:
    """Some items only (a Browse filter's matches): their ids, and the filter as the manifest names it."""

    item_ids: list[int]
    description: dict[str, Any] = field(default_factory=dict)


def suffix_of(fmt: str) -> str:
    """The file ending a format writes (jsonl, csv, parquet, md, json)."""
    if fmt not in FORMATS:
        raise InvalidInput(f"unknown export format {fmt!r}: choose one of {', '.join(EXPORT_FORMATS)}")
    return FORMATS[fmt].suffix


@dataclass(frozen=True)
class Written:
    path: Path
    rows: int
    manifest: Path | None = None
    # Datasets of another task that a benchmark format over "all datasets" did not write.
    left_out: tuple[str, ...] = ()


def formats_for_task(task: str) -> tuple[str, ...]:
    """The formats that fit a dataset of this task: its benchmark formats and those that fit every task."""
    return tuple(f for f in EXPORT_FORMATS if task_of_format(f) in (None, task))


def _refuse_other_task(fmt: str, dataset: str, task: str, wanted: str) -> InvalidInput:
    return InvalidInput(
        f"{fmt} writes {spec_for(wanted).title} items, and the dataset {dataset!r} holds "
        f"{spec_for(task).title} items: formats that fit it are {', '.join(formats_for_task(task))}"
    )


def stepgate_version() -> str:
    """The installed version, or pyproject's when run from a checkout."""
    try:
        return importlib.metadata.version("stepgate")
    except importlib.metadata.PackageNotFoundError:
        pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
        if pyproject.exists():
            project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
            return str(project.get("version", "unknown"))
        return "unknown"


def manifest_path(out: Path) -> Path:
    """Where an export's manifest goes: beside it, `<file>.manifest.json`."""
    return out.with_name(out.name + ".manifest.json")


def _data(
    store: Store,
    reads: str,
    dataset_id: int | None,
    dataset: str | None,
    annotator: str | None,
    images: str = "embedded",
    with_log: bool = True,
    item_ids: list[int] | None = None,
    stream: bool = False,
) -> Any:
    if reads == "log":
        # The log is append-only: the export carries every row, not only the current versions.
        frame = annotations_frame(store, dataset_id, current_versions_only=False, rulings=True)
        if annotator is not None:  # an annotator's own rows: nothing may tell which items were gold
            return frame[frame["annotator"] == annotator].reset_index(drop=True)
        return frame.assign(gold_answer=frame["annotation_id"].isin(gold_answer_ids(store, dataset_id)))
    if reads == "items":
        gold = _gold_items(store, dataset_id)
        if stream:  # read while written: a million items never held at once, their texts as JSON
            frames = items_json_frames(store, dataset_id, item_ids, objects=ITEM_OBJECTS)
            return ((frame, [i in gold for i in frame.item_ids]) for frame in frames)
        items = items_frame(store, dataset_id, item_ids)
        return items.assign(gold=items["item_id"].isin(gold))
    if reads == "bundle":
        return BundleExport(
            bundle=read_bundle(store, dataset_id, with_log=with_log, item_ids=item_ids),
            images=images,
            with_log=with_log,
            filter={"dataset": dataset} if dataset is not None else {},
            stepgate_version=stepgate_version(),
        )
    if dataset is None:
        raise InvalidInput("a report covers one dataset: choose the dataset to report on")
    return build_dataset_report(store, dataset)


def _only(data: Any, reads: str, ids: set[int]) -> Any:
    """What a format reads, cut to the selected items (the report is refused before this)."""
    if reads in ("log", "items"):
        return data[data["item_id"].isin(ids)].reset_index(drop=True)
    bundle = dict(data.bundle)
    versions = [v for v in bundle["versions"] if v["item_id"] in ids]
    keys = {(v["dataset"], v["external_id"]) for v in versions}
    used = {h for v in versions for h in (v["images"] or [])}
    annotations = [a for a in bundle["annotations"] if (a["dataset"], a["external_id"]) in keys]
    gold = [g for g in bundle.get("gold", []) if (g["dataset"], g["external_id"]) in keys]
    names = {a["annotator"] for a in annotations} | {g["marked_by"] for g in gold if data.with_log}
    # Studies: read_bundle kept those whole in the filter; keep them and the people they name.
    names |= study_people(bundle.get("studies", []), bundle.get("study_labels", []))
    bundle.update(
        gold=gold,
        versions=versions,
        states=[s for s in bundle["states"] if (s["dataset"], s["external_id"]) in keys],
        images={h: m for h, m in bundle["images"].items() if h in used},
        annotations=annotations,
        annotators=[p for p in bundle["annotators"] if p["name"] in names],
    )
    return BundleExport(
        bundle, data.images, data.with_log, {**data.filter, "items": len(keys)}, data.stepgate_version
    )


def _gold_items(store: Store, dataset_id: int | None) -> set[int]:
    ids = [dataset_id] if dataset_id is not None else [d.id for d in list_datasets(store)]
    return {i for d in ids for i in gold_ids(store, d)}


def _gold_refs(store: Store, dataset_id: int | None) -> list[str]:
    ids = [dataset_id] if dataset_id is not None else [d.id for d in list_datasets(store)]
    return [g.external_id for d in ids for g in gold_items(store, d)]


def export(
    store: Store,
    fmt: str,
    out: Path,
    *,
    dataset: str | None = None,
    annotator: str | None = None,
    images: str = "embedded",
    with_log: bool = True,
    manifest: bool = True,
    items: ItemSelection | None = None,
    progress: Progress | None = None,
) -> Written:
    """Write one export; the file appears whole or not at all, with a manifest beside it.

    The manifest (`<file>.manifest.json`) names the format, the filter, the rows written and the
    database state it came from (counts, time, stepgate version): what the file is, read apart from
    it, since benchmark formats have no room for a header. `images` and `with_log` apply to
    stepgate-jsonl (images embedded as base64 or copied beside the file; the annotation log or not).

    With `annotator`, only the annotation log can be written, holding that annotator's rows only:
    what an annotator may download on a blind task. With `items`, only those items (and their log
    rows, versions and images); the manifest names the selection. `progress` hears how far it got.
    Raises a ServiceError saying what to fix.
    """
    step = progress or (lambda _done, _what: None)
    if fmt not in FORMATS:
        raise InvalidInput(f"unknown export format {fmt!r}: choose one of {', '.join(EXPORT_FORMATS)}")
    spec = FORMATS[fmt]
    if annotator is not None and spec.reads != "log":
        raise NotAllowed(
            f"{fmt} holds every annotator's decisions: only log formats can be limited to one annotator"
        )
    dataset_id = None
    wanted = task_of_format(fmt)  # a benchmark format writes the items of one task only
    left_out: tuple[str, ...] = ()
    if dataset is not None:
        found = get_dataset(store, dataset)
        if found is None:
            raise NotFound(f"no dataset named {dataset!r}")
        if wanted is not None and found.task != wanted:
            raise _refuse_other_task(fmt, dataset, found.task, wanted)
        dataset_id = found.id
    elif wanted is not None:
        every = list_datasets(store)
        if not any(d.task == wanted for d in every):
            raise InvalidInput(f"{fmt} writes {spec_for(wanted).title} items, and there is no such dataset")
        left_out = tuple(d.name for d in every if d.task != wanted)
    out = Path(out)
    if not out.parent.exists():
        raise InvalidInput(f"the folder {out.parent} does not exist")
    if images not in IMAGE_MODES:
        raise InvalidInput(f"images must be one of {', '.join(IMAGE_MODES)}")
    if items is not None and spec.reads == "report":
        raise InvalidInput(
            f"{fmt} reports on a whole dataset: export it from the Data panel, not for a filter"
        )
    with no_cyclic_gc(), store.all_cores():  # millions of rows as Python objects: see store.bulk
        step(0.05, f"reading {spec.reads} from the database")
        ids = items.item_ids if items is not None else None
        data = _data(store, spec.reads, dataset_id, dataset, annotator, images, with_log, ids, spec.streams)
        if items is not None:
            step(0.45, f"keeping the {len(items.item_ids)} item(s) of the filter")
            if not spec.streams:  # a stream reads the selected items only
                data = _only(data, spec.reads, set(items.item_ids))
        if wanted is not None:  # a selection or "all datasets": the format's own task only
            fits = data["task"] == wanted
            if items is not None and not fits.all():
                others = sorted(set(data.loc[~fits, "dataset"]))
                left_out = tuple(sorted(set(left_out) | set(others)))
            data = data[fits].reset_index(drop=True)
        step(0.6, f"writing {out.name}")
        try:
            rows = write_whole(fmt, data, out)
        except ExportError as exc:
            raise ServiceError(str(exc)) from exc
        del data
    if not manifest:
        return Written(out, rows, left_out=left_out)
    filters = {"dataset": dataset, "annotator": annotator}
    state = {
        "format": fmt,
        "file": out.name,
        "rows": rows,
        "filter": {
            **{k: v for k, v in filters.items() if v is not None},
            **(
                {"items": items.description, "items_matched": len(items.item_ids)}
                if items is not None
                else {}
            ),
        },
        "options": {"images": images, "log": with_log} if spec.reads == "bundle" else {},
        "database": database_counts(store, dataset_id),
        "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "stepgate_version": stepgate_version(),
    }
    if wanted is not None and left_out:
        state["left_out"] = {"datasets": list(left_out), "why": f"not {spec_for(wanted).title} datasets"}
    if annotator is None:  # which items were gold (their labels calibrate annotators, store/gold.py)
        state["gold_items"] = sorted(_gold_refs(store, dataset_id))
    side = manifest_path(out)
    side.write_text(json.dumps(state, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
    step(1.0, f"wrote {rows} row(s)")
    return Written(out, rows, side, left_out)
