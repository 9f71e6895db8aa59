"""Storing a job's result: the item's new version and the job marked done, in one transaction.

Every job kind (regenerate, perturb) stores what it made through write_result, and only while the
job is still its worker's and the item still at the version the job was made for: a restart in the
middle loses the attempt, never a result, and never stores one twice.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PIL import Image

from importers.records import ImageData, ItemRecord
from services.clock import now_utc
from store import items, versions
from store import jobs as queue
from store.db import Store, Tx
from store.items import ItemView
from store.jobs import Job

__all__ = ["copy_record", "write_result"]


def _images(paths: list[str]) -> list[ImageData]:
    found = []
    for path in paths:
        data = Path(path).read_bytes()
        with Image.open(io.BytesIO(data)) as image:
            mime = Image.MIME.get(image.format or "", "image/png")
            found.append(
                ImageData(data, origin=Path(path).name, mime=mime, width=image.width, height=image.height)
            )
    return found


def copy_record(item: ItemView, **changes: Any) -> ItemRecord:
    """The item's version as a record to store again, with some fields changed (steps, images, meta)."""
    fields: dict[str, Any] = {
        "external_id": item.external_id,
        "question": item.question,
        "steps": {role: list(texts) for role, texts in item.steps.items()},
        "reference_answer": item.reference_answer,
        "reference_solution": item.reference_solution,
        "error_steps": list(item.error_steps),
        "modified_steps": list(item.modified_steps),
        "earliest_error": item.earliest_error,
        "error_type": item.error_type,
        "rationale": item.rationale,
        "source": item.source,
        "final_answer_correct": item.final_answer_correct,
        "options": list(item.options),
        "meta": dict(item.meta),
    }
    if "images" not in changes:
        fields["images"] = _images(item.image_paths)
    fields.update(changes)
    return ItemRecord(**fields)


def write_result(
    store: Store,
    job: Job,
    worker: str,
    record: ItemRecord | None,
    reason: str,
    then: Callable[[Tx, int], None] | None = None,
) -> int | None:
    """Store a job's new version and mark the job done, in one transaction, only while the job is this
    worker's and the item still at the version the job was made for. ``then(tx, version_id)`` runs in
    the same transaction (e.g. holding the new version back for the judge)."""
    now = now_utc()
    with store.writing() as tx:
        if not queue.holds(tx, job.id, worker):
            return None
        current = items.current_version_id(tx, job.item_id)
        if current != job.version_id:
            queue.finish(
                tx,
                job.id,
                now,
                None,
                f"the item changed meanwhile (now version id {current}); nothing stored",
            )
            return None
        vid = None
        if record is not None:
            vid = versions.add_version(tx, job.item_id, record, reason)
            if then is not None:
                then(tx, vid)
        queue.finish(tx, job.id, now, vid)
        return vid
