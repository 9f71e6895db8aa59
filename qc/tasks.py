"""What a label of each task must hold; checked before anything is stored.

Pure: takes the task name, the submitted payload and the item, returns the cleaned payload or
raises PayloadError with a message that names the missing or wrong field.
"""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["REQUIRED_CHOICES", "PayloadError", "validate_payload"]


class PayloadError(ValueError):
    """A label that is incomplete or out of range, said so the annotator can fix it."""


class _Item(Protocol):
    steps: dict[str, list[str]]


# Step review: the three choices of the PRMBench-V tool (its Figure 13).
REQUIRED_CHOICES: dict[str, dict[str, tuple[str, ...]]] = {
    "step_review": {
        "original": ("correct", "incorrect"),
        "modification": ("reasonable", "unreasonable"),
        "difficulty": ("easy", "medium", "hard"),
    },
    "step_match": {"match": ("match", "no_match")},
}

_LABELS = {
    "original": "Original",
    "modification": "Modification",
    "difficulty": "Difficulty",
    "match": "Match",
}


def _solution_length(item: _Item) -> int:
    for role in ("solution", "modified", "candidate"):
        if item.steps.get(role):
            return len(item.steps[role])
    return 0


def validate_payload(task: str, payload: dict[str, Any], item: _Item) -> dict[str, Any]:
    if not isinstance(payload, dict):
        raise PayloadError("the label must be an object of fields")
    clean: dict[str, Any] = {}
    if task in REQUIRED_CHOICES:
        missing = []
        for field, allowed in REQUIRED_CHOICES[task].items():
            value = payload.get(field)
            if value in (None, ""):
                missing.append(_LABELS[field])
            elif value not in allowed:
                raise PayloadError(f"{_LABELS[field]}: {value!r} is not one of {', '.join(allowed)}")
            else:
                clean[field] = value
        if missing:
            raise PayloadError("please choose: " + ", ".join(missing))
    elif task == "earliest_error":
        value = payload.get("earliest_error")
        if value is None or value == "":
            raise PayloadError("please click the earliest wrong step, or choose 'all steps are correct'")
        try:
            label = int(value)
        except (TypeError, ValueError) as exc:
            raise PayloadError(f"earliest error: {value!r} is not a step number") from exc
        n = _solution_length(item)
        if not -1 <= label < n:
            raise PayloadError(
                f"earliest error: step {label + 1} does not exist (this solution has {n} steps)"
            )
        clean["earliest_error"] = label
    else:
        clean = dict(payload)
    note = payload.get("note")
    if note:
        clean["note"] = str(note)[:4000]
    return clean
