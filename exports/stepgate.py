"""stepgate's own format (`stepgate-jsonl`): the whole database, or one dataset, in one JSONL file.

Why a format of our own: the benchmark formats carry what their consumers read, not an item's
history. This one carries every item with all its versions (parent, reason, time), steps, fields,
images, gating state, agreement studies and, optionally, the annotation log and the studies' own
labels, so that `app.py import` brings it into a
new database with nothing lost (importers/stepgate.py reads it back). docs/EXPORTS.md
describes the lines.

The output is canonical: keys sorted, rows in a fixed order (datasets by name, items by dataset
and creation, versions by number, annotations by arrival), and nothing in it depends on the
database's own ids or on the time of the export, so export -> import -> export is byte-identical.
"""

from __future__ import annotations

import base64
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from exports.errors import ExportError
from importers.records import VERSION_LISTS, VERSION_VALUES

__all__ = ["FORMAT_VERSION", "IMAGE_MODES", "BundleExport", "write_stepgate"]

FORMAT_VERSION = 1
IMAGE_MODES = ("embedded", "paths")
_JSON_FIELDS = (*VERSION_LISTS, "meta")


@dataclass(frozen=True)
class BundleExport:
    """What services.exports hands this format: store.bundles.read_bundle's lists and the options."""

    bundle: dict[str, Any]
    images: str = "embedded"  # embedded (base64 in the file) | paths (files beside it, relative paths)
    with_log: bool = True
    filter: dict[str, Any] = field(default_factory=dict)
    stepgate_version: str = ""


def _line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True) + "\n"


def _parsed(value: Any, default: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else (default if value is None else value)


def _version(row: dict[str, Any]) -> dict[str, Any]:
    out = {key: row[key] for key in ("version", "parent_version", "reason", "created_at", *VERSION_VALUES)}
    for key in _JSON_FIELDS:
        out[key] = _parsed(row[key], {} if key == "meta" else [])
    out["steps"] = {role: list(texts) for role, texts in (row["steps"] or {}).items()}
    out["images"] = list(row["images"] or [])
    return out


def _gold(row: dict[str, Any] | None) -> dict[str, Any] | None:
    """An item's gold mark (exports say which items were gold; an import marks them again)."""
    if row is None:
        return None
    keys = ("version", "source", "marked_by", "marked_at", "labels_before")
    return {**{k: row[k] for k in keys}, "label": _parsed(row["label"], {})}


def _items(bundle: dict[str, Any]) -> Iterator[dict[str, Any]]:
    states = {(s["dataset"], s["external_id"]): s for s in bundle["states"]}
    gold = {(g["dataset"], g["external_id"]): g for g in bundle.get("gold", [])}
    current: dict[str, Any] | None = None
    for row in bundle["versions"]:
        key = (row["dataset"], row["external_id"])
        if current is None or (current["dataset"], current["external_id"]) != key:
            if current is not None:
                yield current
            state = states.get(key)
            current = {
                "kind": "item",
                "dataset": row["dataset"],
                "external_id": row["external_id"],
                "created_at": row["item_created_at"],
                "state": None
                if state is None
                else {
                    "target": state["target"],
                    "status": state["status"],
                    "decision": _parsed(state["decision"], None),
                    "settled_at": state["settled_at"],
                    "updated_at": state["updated_at"],
                },
                "versions": [],
            }
            if key in gold:
                current["gold"] = _gold(gold[key])
        current["versions"].append(_version(row))
    if current is not None:
        yield current


def _image_line(digest: str, info: dict[str, Any], mode: str, folder: Path, out: Path) -> dict[str, Any]:
    line = {"kind": "image", "sha256": digest, "mime": info["mime"], "width": info["width"]}
    line["height"] = info["height"]
    source = Path(info["file"]) if info.get("file") else None
    if source is None or not source.exists():
        raise ExportError(f"image {digest} is recorded but its file is missing from the store")
    if mode == "embedded":
        line["base64"] = base64.b64encode(source.read_bytes()).decode("ascii")
    else:
        folder.mkdir(exist_ok=True)
        shutil.copyfile(source, folder / source.name)
        line["path"] = f"{folder.name}/{source.name}"
    return line


def write_stepgate(data: BundleExport, path: Path) -> int:
    """Write the header, then images, datasets, items, annotators, annotations, studies and study
    labels; returns the items."""
    if data.images not in IMAGE_MODES:
        raise ExportError(f"images must be one of {', '.join(IMAGE_MODES)}, not {data.images!r}")
    bundle = data.bundle
    items = list(_items(bundle))
    # Image files go beside the export under the name the final file will have (path is the partial).
    final = path.with_name(path.name.removeprefix(".").removesuffix(".partial"))
    folder = final.with_name(final.stem + "-images")
    header = {
        "kind": "header",
        "stepgate_format": FORMAT_VERSION,
        "stepgate_version": data.stepgate_version,
        "images": data.images,
        "log": data.with_log,
        "filter": data.filter,
        "counts": {
            "datasets": len(bundle["datasets"]),
            "items": len(items),
            "versions": len(bundle["versions"]),
            "images": len(bundle["images"]),
            "annotators": len(bundle["annotators"]),
            "annotations": len(bundle["annotations"]),
            "gold": len(bundle.get("gold", [])),
            "studies": len(bundle.get("studies", [])),
            "study_labels": len(bundle.get("study_labels", [])),
        },
    }
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(_line(header))
        for digest in sorted(bundle["images"]):
            fh.write(_line(_image_line(digest, bundle["images"][digest], data.images, folder, final)))
        for d in bundle["datasets"]:
            fh.write(_line({"kind": "dataset", **d, "settings": _parsed(d["settings"], {})}))
        for item in items:
            fh.write(_line(item))
        for person in bundle["annotators"]:
            fh.write(_line({"kind": "annotator", **person}))
        for a in bundle["annotations"]:
            fh.write(_line({"kind": "annotation", **a, "payload": _parsed(a["payload"], {})}))
        for study in bundle.get("studies", []):
            fh.write(_line({"kind": "study", **study}))
        for label in bundle.get("study_labels", []):
            fh.write(_line({"kind": "study_label", **label, "payload": _parsed(label["payload"], {})}))
    return len(items)
