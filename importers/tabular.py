"""Plain JSONL / CSV / Parquet with a column mapping {stepgate field: source column}.

Values are read in stepgate's own conventions: step positions 0-based, earliest_error -1 for
"no error". A mapped column that is not in the file fails the whole file, naming the columns
that are there, since every row would fail the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from importers.common import (
    ImportFormatError,
    LineError,
    RowContext,
    RowParser,
    check_step_index,
    coerce_bool,
    coerce_id,
    coerce_int,
    coerce_int_list,
    coerce_options,
    coerce_steps,
    coerce_text,
    content_id,
    is_missing,
)
from importers.records import ItemRecord

TEXT_FIELDS = ("question", "reference_answer", "reference_solution", "error_type", "rationale", "source")
OTHER_FIELDS = (
    "external_id",
    "steps",
    "error_steps",
    "modified_steps",
    "earliest_error",
    "final_answer_correct",
    "options",
    "image",
    "images",
)
PREFIXED = ("steps.", "meta.")  # "steps.<role>" for several step lists, "meta.<key>" to keep a column
_STEP_ROLE_FOR_CHECKS = ("modified", "solution", "candidate")


def check_mapping(file: str, mapping: dict[str, str] | None, columns: Iterable[str]) -> dict[str, str]:
    """Refuse a mapping that cannot work, naming what is wrong and the columns present."""
    present = list(columns)
    shown = ", ".join(present) if present else "(none)"
    if not mapping:
        raise ImportFormatError(
            file,
            f"plain tables need a column mapping such as {{'question': ..., 'steps': ...}}; columns present: {shown}",
        )
    known = (*TEXT_FIELDS, *OTHER_FIELDS)
    for target, column in mapping.items():
        if target not in known and not target.startswith(PREFIXED):
            raise ImportFormatError(
                file,
                f"mapping names an unknown field {target!r}; fields: {', '.join(known)}, steps.<role>, meta.<key>",
            )
        if not isinstance(column, str) or not column:
            raise ImportFormatError(file, f"mapping for {target!r} must be a column name, got {column!r}")
    if "question" not in mapping:
        raise ImportFormatError(file, f"the mapping must name the question column; columns present: {shown}")
    if not any(t == "steps" or t.startswith("steps.") for t in mapping):
        raise ImportFormatError(file, f"the mapping must name a steps column; columns present: {shown}")
    missing = [(t, c) for t, c in mapping.items() if c not in present and c.split(".")[0] not in present]
    if missing:
        what = "; ".join(f"column {c!r} (for {t})" for t, c in missing)
        raise ImportFormatError(file, f"mapped {what} not in the file; columns present: {shown}")
    return dict(mapping)


def make_row_parser(mapping: dict[str, str]) -> RowParser:
    """A row parser for this mapping (the mapping was checked by check_mapping)."""

    def label(target: str) -> str:
        column = mapping[target]
        return column if column == target else f"{column} ({target})"

    def get(row: dict[str, Any], target: str) -> Any:
        return _lookup(row, mapping[target]) if target in mapping else None

    def parse_row(row: dict[str, Any], ctx: RowContext) -> ItemRecord:
        steps: dict[str, list[str]] = {}
        for target in mapping:
            if target == "steps" or target.startswith("steps."):
                role = "solution" if target == "steps" else target.removeprefix("steps.")
                steps[role] = coerce_steps(get(row, target), label(target), text_ok=True)
        checked_role = next((r for r in _STEP_ROLE_FOR_CHECKS if r in steps), next(iter(steps)))
        checked = steps[checked_role]
        question = coerce_text(get(row, "question"), label("question"), required=True) or ""
        texts: dict[str, Any] = {
            t: coerce_text(get(row, t), label(t), numbers_ok=True) for t in TEXT_FIELDS[1:] if t in mapping
        }

        positions: dict[str, list[int]] = {}
        for target in ("error_steps", "modified_steps"):
            if target in mapping:
                positions[target] = sorted(set(coerce_int_list(get(row, target), label(target))))
                for index in positions[target]:
                    if not 0 <= index < len(checked):
                        raise LineError(
                            f"{label(target)}: step {index} is outside 0..{len(checked) - 1} "
                            f"(0-based, {checked_role} has {len(checked)} steps)"
                        )
        earliest = None
        if "earliest_error" in mapping and not is_missing(get(row, "earliest_error")):
            earliest = coerce_int(get(row, "earliest_error"), label("earliest_error"))
            check_step_index(earliest, label("earliest_error"), checked, checked_role)

        if "external_id" in mapping:
            external_id = coerce_id(get(row, "external_id"), label("external_id"))
        else:
            external_id = content_id(question, steps)
        image_target = "images" if "images" in mapping else "image"
        meta = {t.removeprefix("meta."): get(row, t) for t in mapping if t.startswith("meta.")}
        return ItemRecord(
            external_id=external_id,
            question=question,
            steps=steps,
            error_steps=positions.get("error_steps", []),
            modified_steps=positions.get("modified_steps", []),
            earliest_error=earliest,
            final_answer_correct=coerce_bool(get(row, "final_answer_correct"), label("final_answer_correct"))
            if "final_answer_correct" in mapping
            else None,
            options=coerce_options(get(row, "options"), label("options")) if "options" in mapping else [],
            images=ctx.images(get(row, image_target), label(image_target)) if image_target in mapping else [],
            meta=meta,
            **texts,
        )

    return parse_row


def _lookup(row: dict[str, Any], column: str) -> Any:
    """A column, or a dotted path into nested JSON objects ("custom.question")."""
    if column in row:
        return row[column]
    value: Any = row
    for part in column.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def id_label(mapping: dict[str, str]) -> str:
    return mapping.get("external_id", "content of question and steps")
