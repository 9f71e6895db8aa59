"""CRYSTAL-style records for the quality gate: an image, a question, its answer and the candidate
reasoning steps an annotator accepts or rejects; options and source when the benchmark has them."""

from __future__ import annotations

from typing import Any

from importers.common import (
    RowContext,
    coerce_id,
    coerce_options,
    coerce_steps,
    content_id,
    extra_fields,
    get_text,
    pick,
)
from importers.records import ItemRecord

FORMAT = "crystal"
ID_FIELD = "id"
STEP_FIELDS = ("candidate_steps", "steps", "reference_steps")
_ID_FIELDS = ("id", "idx", "question_id", "sample_id")
_KNOWN = frozenset({*STEP_FIELDS, *_ID_FIELDS, "question", "image", "images", "answer", "options", "source"})


def parse_row(obj: dict[str, Any], ctx: RowContext) -> ItemRecord:
    question = get_text(obj, "question", required=True) or ""
    steps_name, steps_value = pick(obj, *STEP_FIELDS)
    if steps_value is None:
        steps_name = "candidate_steps (or steps, reference_steps)"
    steps = coerce_steps(steps_value, steps_name)
    image_name, image_value = pick(obj, "image", "images")
    images = ctx.images(image_value, image_name)
    id_name, id_value = pick(obj, *_ID_FIELDS)
    # Without an id, one is derived from the content so that a re-import finds the same item.
    external_id = coerce_id(id_value, id_name) if id_value is not None else content_id(question, steps)
    meta: dict[str, Any] = {"steps_field": steps_name}
    extra = extra_fields(obj, _KNOWN)
    if extra:
        meta["extra"] = extra
    return ItemRecord(
        external_id=external_id,
        question=question,
        steps={"candidate": steps},
        reference_answer=get_text(obj, "answer", numbers_ok=True),
        options=coerce_options(obj.get("options"), "options"),
        source=get_text(obj, "source"),
        images=images,
        meta=meta,
    )
