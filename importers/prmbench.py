"""PRMBench / PRMBench-V JSONL: an original solution, an LLM-modified one with inserted errors,
and the 1-based numbers of the modified and erroneous steps.

`idx` is not unique in PRMBench: every error type reuses the idx of the question it modified,
so an item is "{idx}:{classification}" (PRMBench's own evaluation keys on the same pair).
"""

from __future__ import annotations

from typing import Any

from importers.common import (
    LineError,
    RowContext,
    coerce_id,
    coerce_int_list,
    coerce_steps,
    extra_fields,
    get_text,
    is_missing,
    pick,
)
from importers.records import ItemRecord
from tasks import NO_ERROR

FORMAT = "prmbench"
ID_FIELD = "idx"
_KNOWN = frozenset(
    {
        "idx",
        "id",
        "classification",
        "question",
        "original_question",
        "modified_question",
        "original_process",
        "modified_process",
        "modified_steps",
        "error_steps",
        "reason",
        "ground_truth",
        "original_response",
        "image",
        "images",
        "source",
    }
)


def parse_row(obj: dict[str, Any], ctx: RowContext) -> ItemRecord:
    id_name, idx_value = pick(obj, "idx", "id")
    idx = coerce_id(idx_value, id_name)
    classification = get_text(obj, "classification")
    original = coerce_steps(obj.get("original_process"), "original_process")
    modified = coerce_steps(obj.get("modified_process"), "modified_process")
    if "error_steps" not in obj:
        raise LineError("error_steps: missing")
    error_numbers = coerce_int_list(obj["error_steps"], "error_steps")
    modified_numbers = coerce_int_list(obj.get("modified_steps"), "modified_steps")
    error_steps = _positions(error_numbers, "error_steps", len(modified), ctx)
    if error_numbers and not error_steps:
        raise LineError(
            f"error_steps: no step of {error_numbers} lies within 1..{len(modified)} "
            f"(1-based, modified_process has {len(modified)} steps)"
        )
    modified_steps = _positions(modified_numbers, "modified_steps", len(modified), ctx)

    meta: dict[str, Any] = {"idx": idx, "questions": _questions(obj)}
    if obj.get("original_response"):
        meta["original_response"] = get_text(obj, "original_response")
    dropped = {
        name: [n for n in numbers if n > len(modified)]
        for name, numbers in (("error_steps", error_numbers), ("modified_steps", modified_numbers))
    }
    if any(dropped.values()):
        meta["dropped_step_numbers"] = {k: v for k, v in dropped.items() if v}  # 1-based, as in the file
    extra = extra_fields(obj, _KNOWN)
    if extra:
        meta["extra"] = extra
    image_name, image_value = pick(obj, "images", "image")
    return ItemRecord(
        external_id=f"{idx}:{classification}" if classification else idx,
        question=_question(obj),
        steps={"original": original, "modified": modified},
        reference_answer=get_text(obj, "ground_truth", numbers_ok=True),
        error_steps=error_steps,
        modified_steps=modified_steps,
        earliest_error=min(error_steps) if error_steps else NO_ERROR,
        error_type=classification,
        rationale=get_text(obj, "reason"),
        source=get_text(obj, "source"),
        images=ctx.images(image_value, image_name),
        meta=meta,
    )


def _positions(numbers: list[int], name: str, n_steps: int, ctx: RowContext) -> list[int]:
    """1-based step numbers to sorted 0-based positions.

    A number past the last step is dropped with a warning rather than failing the item: the
    published PRMBench subset has such numbers on 27 of its 394 items, and PRMBench's evaluation
    ignores them the same way. Zero or a negative number means the file is not 1-based: refused.
    """
    kept, past_end = set(), []
    for number in numbers:
        if number < 1:
            raise LineError(
                f"{name}: step {number} is outside 1..{n_steps} "
                f"(1-based, modified_process has {n_steps} steps)"
            )
        if number > n_steps:
            past_end.append(number)
        else:
            kept.add(number - 1)
    if past_end:
        which = (
            f"step {past_end[0]} is" if len(past_end) == 1 else f"steps {', '.join(map(str, past_end))} are"
        )
        ctx.warn(
            f"{name}: {which} outside 1..{n_steps} (1-based, modified_process has {n_steps} steps); "
            "dropped, the item was kept"
        )
    return sorted(kept)


def _question(obj: dict[str, Any]) -> str:
    """The question the modified steps answer.

    When the question itself was modified (e.g. missing_condition), that is modified_question;
    otherwise `question` is the better copy (it keeps MATH's LaTeX escapes such as "$\\$1.24$").
    """
    original = get_text(obj, "original_question")
    modified = get_text(obj, "modified_question")
    if modified is not None and original is not None and modified.strip() != original.strip():
        return modified
    name, value = pick(obj, "question", "modified_question", "original_question")
    if is_missing(value):
        raise LineError("question: missing (also no modified_question or original_question)")
    return get_text(obj, name, required=True) or ""


def _questions(obj: dict[str, Any]) -> dict[str, str]:
    """Every question variant the file gave, for the reviewer and for exporting back."""
    out = {}
    for name in ("question", "original_question", "modified_question"):
        text = get_text(obj, name)
        if text is not None:
            out[name] = text
    return out
