"""ProcessBench JSONL: a problem, a generated step-by-step solution and the expert label of its
earliest wrong step (0-based; -1 when every step is correct)."""

from __future__ import annotations

import re
from typing import Any

from importers.common import (
    LineError,
    RowContext,
    coerce_bool,
    coerce_id,
    coerce_int,
    coerce_steps,
    coerce_text,
    extra_fields,
    get_text,
    pick,
)
from importers.records import ItemRecord
from tasks import NO_ERROR

FORMAT = "processbench"
ID_FIELD = "id"
_KNOWN = frozenset(
    {"id", "generator", "problem", "question", "steps", "final_answer_correct", "label", "source"}
)
_SPLIT_ID = re.compile(r"([A-Za-z][\w.]*)-\d+")  # ProcessBench ids are "<split>-<n>", e.g. "gsm8k-0"


def parse_row(obj: dict[str, Any], ctx: RowContext) -> ItemRecord:
    external_id = coerce_id(obj.get("id"), "id")
    question_name, question_value = pick(obj, "problem", "question")
    steps = coerce_steps(obj.get("steps"), "steps")
    if "label" not in obj:
        raise LineError("label: missing")
    label = coerce_int(obj["label"], "label")
    if not NO_ERROR <= label < len(steps):
        raise LineError(
            f"label: {label} is outside -1..{len(steps) - 1} (0-based, -1 = no error; steps has {len(steps)} steps)"
        )
    final_correct = coerce_bool(obj.get("final_answer_correct"), "final_answer_correct")
    if label == NO_ERROR and final_correct is False:
        # ProcessBench discards such items after consensus; at import they are only flagged.
        ctx.warn("label: -1 (all steps correct) but final_answer_correct is false")
    source = get_text(obj, "source")
    if source is None and (match := _SPLIT_ID.fullmatch(external_id)):
        source = match.group(1)
    meta: dict[str, Any] = {}
    generator = get_text(obj, "generator")
    if generator is not None:
        meta["generator"] = generator
    extra = extra_fields(obj, _KNOWN)
    if extra:
        meta["extra"] = extra
    return ItemRecord(
        external_id=external_id,
        question=coerce_text(question_value, question_name, required=True) or "",
        steps={"solution": steps},
        earliest_error=label,
        final_answer_correct=final_correct,
        source=source,
        meta=meta,
    )
