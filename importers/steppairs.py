"""Step pairs for the step-match study: a predicted step and a reference step, labelled
match / no-match by annotators who must not see the encoder's similarity (kept in meta only)."""

from __future__ import annotations

from typing import Any

from importers.common import (
    LineError,
    RowContext,
    coerce_float,
    coerce_id,
    coerce_text,
    extra_fields,
    get_text,
    pick,
)
from importers.records import ItemRecord

FORMAT = "steppairs"
ID_FIELD = "id"
_KNOWN = frozenset({"id", "pair_id", "predicted", "reference", "similarity", "item", "question", "source"})


def parse_row(obj: dict[str, Any], ctx: RowContext) -> ItemRecord:
    id_name, id_value = pick(obj, "id", "pair_id")
    external_id = coerce_id(id_value, id_name)
    predicted = get_text(obj, "predicted", required=True) or ""
    reference = get_text(obj, "reference", required=True) or ""
    similarity = coerce_float(obj.get("similarity"), "similarity")
    if similarity is not None and not -1.0 <= similarity <= 1.0:
        raise LineError(f"similarity: {similarity} is outside -1..1 (a cosine similarity)")
    item_name, item_value = pick(obj, "question", "item")
    meta: dict[str, Any] = {}
    if similarity is not None:
        meta["similarity"] = similarity  # the encoder's score: hidden from annotators (blind study)
    if obj.get("item") is not None:
        meta["item"] = obj["item"]
    extra = extra_fields(obj, _KNOWN)
    if extra:
        meta["extra"] = extra
    return ItemRecord(
        external_id=external_id,
        question=coerce_text(item_value, item_name, numbers_ok=True) or "",
        steps={"predicted": [predicted], "reference": [reference]},
        source=get_text(obj, "source"),
        meta=meta,
    )
