"""stepgate's own format back in: the file exports/stepgate.py writes (`stepgate-jsonl`).

Why all or nothing, unlike the source formats: a bundle's lines refer to each other (annotations
to item versions, versions to images and parents), so a skipped line would silently break what
refers to it. Any bad line refuses the file, naming the line. Images are verified as on every
import (base64, or paths inside the file's folder) and must match the hash they are named by.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from importers.common import ImportFormatError
from importers.images import MAX_IMAGE_BYTES, MAX_IMAGE_PIXELS, ImageError, image_hash, load_image
from importers.records import GOLD_SOURCES, ImageData, ItemRecord

__all__ = ["FORMAT", "HEADER_KEY", "BundleItem", "BundleVersion", "ParsedBundle", "parse_bundle"]

FORMAT = "stepgate"
HEADER_KEY = "stepgate_format"
SUPPORTED = (1,)


@dataclass
class BundleVersion:
    record: ItemRecord
    version: int
    parent_version: int | None
    reason: str
    created_at: str | None


@dataclass
class BundleItem:
    dataset: str
    external_id: str
    created_at: str | None
    versions: list[BundleVersion]
    state: dict[str, Any] | None
    gold: dict[str, Any] | None = None  # the gold mark (label, source, version, marked_by, ...)


@dataclass
class ParsedBundle:
    """What parse_bundle read from a file, ready for store.bundles.write_bundle."""

    datasets: list[dict[str, Any]] = field(default_factory=list)
    items: list[BundleItem] = field(default_factory=list)
    annotators: list[dict[str, Any]] = field(default_factory=list)
    annotations: list[dict[str, Any]] = field(default_factory=list)
    studies: list[dict[str, Any]] = field(default_factory=list)  # each with its file line under "_line"
    study_labels: list[dict[str, Any]] = field(default_factory=list)  # the same


def parse_bundle(path: Path) -> ParsedBundle:
    name = path.name
    bundle = ParsedBundle()
    images: dict[str, ImageData] = {}
    with path.open("r", encoding="utf-8") as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
                if not isinstance(obj, dict):
                    raise ValueError("not a JSON object")
                _read_line(obj, number, bundle, images, path.parent)
            except ImportFormatError:
                raise
            except (ValueError, KeyError, TypeError, ImageError) as exc:
                what = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
                raise ImportFormatError(name, f"line {number}: {what}; nothing was imported") from None
    if not bundle.datasets:
        raise ImportFormatError(name, "holds no dataset line: not a stepgate export")
    return bundle


def _read_line(
    obj: dict[str, Any], number: int, bundle: ParsedBundle, images: dict[str, ImageData], folder: Path
) -> None:
    kind = obj.get("kind")
    if number == 1 or kind == "header":
        if kind != "header" or obj.get(HEADER_KEY) not in SUPPORTED:
            raise ValueError(f"the first line must be a stepgate header of format {SUPPORTED}")
        return
    if kind == "image":
        ref = obj["base64"] if "base64" in obj else obj["path"]
        image = load_image(ref, folder, max_pixels=MAX_IMAGE_PIXELS, max_bytes=MAX_IMAGE_BYTES)
        if image_hash(image.data) != obj["sha256"]:
            raise ValueError(f"image {obj['sha256']}: its bytes do not match its sha256")
        images[obj["sha256"]] = image
    elif kind == "dataset":
        bundle.datasets.append(obj)
    elif kind == "item":
        bundle.items.append(
            BundleItem(
                dataset=str(obj["dataset"]),
                external_id=str(obj["external_id"]),
                created_at=obj.get("created_at"),
                versions=[_version(obj["external_id"], v, images) for v in obj["versions"]],
                state=obj.get("state"),
                gold=_gold(obj),
            )
        )
        if not obj["versions"]:
            raise ValueError(f"item {obj['external_id']!r} has no version")
    elif kind == "annotator":
        bundle.annotators.append(obj)
    elif kind == "annotation":
        bundle.annotations.append(obj)
    elif kind == "study":
        bundle.studies.append({**_study(obj), "_line": number})
    elif kind == "study_label":
        bundle.study_labels.append({**_study_label(obj), "_line": number})
    else:
        raise ValueError(f"unknown line kind {kind!r}")


def _study(obj: dict[str, Any]) -> dict[str, Any]:
    """A study line, checked for shape (what it names is resolved when it is written)."""
    name = obj["name"]
    if not isinstance(name, str) or not name.strip() or len(name) > 100:
        raise ValueError("a study needs a name of 1-100 characters")
    if not isinstance(obj["dataset"], str) or not isinstance(obj["raters"], int) or obj["raters"] < 1:
        raise ValueError(f"study {name!r}: needs a dataset name and a number of raters per item")
    items, assignments = obj["items"], obj.get("assignments") or []
    if (
        not isinstance(items, list)
        or not items
        or not all(isinstance(i, dict) and "external_id" in i for i in items)
    ):
        raise ValueError(f"study {name!r}: items must be a non-empty list of {{external_id, stratum, batch}}")
    if not isinstance(assignments, list) or not all(
        isinstance(a, dict) and {"external_id", "rater", "batch", "assigned_at"} <= set(a)
        for a in assignments
    ):
        raise ValueError(
            f"study {name!r}: assignments must be {{external_id, rater, batch, assigned_at}} each"
        )
    rule = obj.get("rule")
    if rule is not None and not (isinstance(rule, dict) and {"field", "target", "batch", "cap"} <= set(rule)):
        raise ValueError(f"study {name!r}: its rule needs field, target, batch and cap")
    if not isinstance(obj.get("rater_names") or [], list):
        raise ValueError(f"study {name!r}: rater_names must be a list of annotator names")
    return {k: v for k, v in obj.items() if k != "kind"}


def _study_label(obj: dict[str, Any]) -> dict[str, Any]:
    """A study label line, checked for shape."""
    for key in ("study", "dataset", "external_id", "annotator", "request_id", "created_at"):
        if not isinstance(obj[key], str) or not obj[key]:
            raise ValueError(f"a study label needs {key} (a text)")
    if not isinstance(obj["payload"], dict) or not isinstance(obj["version"], int):
        raise ValueError("a study label needs a payload (a JSON object) and a version number")
    return {k: v for k, v in obj.items() if k != "kind"}


def _gold(item: dict[str, Any]) -> dict[str, Any] | None:
    """An item line's gold mark, checked (label an object, a known source, a version of the item)."""
    gold = item.get("gold")
    if gold is None:
        return None
    versions = {int(v["version"]) for v in item["versions"]}
    if not isinstance(gold, dict) or not isinstance(gold.get("label"), dict) or not gold["label"]:
        raise ValueError(f"item {item['external_id']!r}: its gold needs a label (a JSON object)")
    if gold.get("source") not in GOLD_SOURCES:
        raise ValueError(
            f"item {item['external_id']!r}: gold source must be one of {', '.join(GOLD_SOURCES)}"
        )
    if int(gold.get("version", 0)) not in versions or not gold.get("marked_at"):
        raise ValueError(f"item {item['external_id']!r}: its gold names no version of the item or no time")
    return dict(gold)


def _version(external_id: str, v: dict[str, Any], images: dict[str, ImageData]) -> BundleVersion:
    missing = [h for h in v.get("images", []) if h not in images]
    if missing:
        raise ValueError(
            f"item {external_id!r} version {v['version']} names image {missing[0]}, not in the file"
        )
    record = ItemRecord(
        external_id=str(external_id),
        question=str(v["question"]),
        steps={str(role): [str(t) for t in texts] for role, texts in (v.get("steps") or {}).items()},
        reference_answer=v.get("reference_answer"),
        reference_solution=v.get("reference_solution"),
        error_steps=[int(i) for i in v.get("error_steps", [])],
        modified_steps=[int(i) for i in v.get("modified_steps", [])],
        earliest_error=v.get("earliest_error"),
        error_type=v.get("error_type"),
        rationale=v.get("rationale"),
        source=v.get("source"),
        final_answer_correct=v.get("final_answer_correct"),
        options=list(v.get("options", [])),
        images=[images[h] for h in v.get("images", [])],
        meta=dict(v.get("meta") or {}),
    )
    return BundleVersion(
        record=record,
        version=int(v["version"]),
        parent_version=None if v.get("parent_version") is None else int(v["parent_version"]),
        reason=str(v["reason"]),
        created_at=v.get("created_at"),
    )
