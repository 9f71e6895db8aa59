"""The annotation-platform export of PRMBench's QwQ solutions (prmbench_qwq_annotated_solutions.jsonl):
a `custom` object with the question, reference steps and the model's steps, and one human verdict
in `evaluation.conversation_evaluation` as the strings "true"/"false"."""

from __future__ import annotations

from typing import Any

from importers.common import (
    LineError,
    RowContext,
    coerce_bool,
    coerce_id,
    coerce_steps,
    coerce_text,
    json_type,
    pick,
)
from importers.records import ItemRecord

FORMAT = "qwq"
ID_FIELD = "data_id"
_RECORD_IDS = ("questionnaire_id", "result_id", "conversation_id", "status")
_CONVERSATION_PREFIX = {"question": "###Question:", "ground_truth": "###Ground Truth:"}


def parse_row(obj: dict[str, Any], ctx: RowContext) -> ItemRecord:
    external_id = coerce_id(obj.get("data_id"), "data_id")
    custom = _object(obj, "custom", required=True)
    solution = coerce_steps(custom.get("modified_process"), "custom.modified_process")
    reference = coerce_steps(custom.get("original_process"), "custom.original_process", allow_empty=True)
    question = _from_custom_or_conversation(
        obj, custom, "question", ("question", "modified_question", "original_question")
    )
    if question is None:
        raise LineError("custom.question: missing (and no '###Question:' message in conversation)")
    answer = _from_custom_or_conversation(obj, custom, "ground_truth", ("ground_truth",))

    evaluation = _object(obj, "evaluation")
    verdicts = _object(evaluation, "conversation_evaluation", prefix="evaluation.")
    correct = coerce_bool(verdicts.get("correct"), "evaluation.conversation_evaluation.correct")
    same = coerce_bool(verdicts.get("same"), "evaluation.conversation_evaluation.same")
    questionnaire = _object(evaluation, "questionnaire_evaluation", prefix="evaluation.")
    invalid = coerce_bool(
        questionnaire.get("is_invalid_questionnaire"),
        "evaluation.questionnaire_evaluation.is_invalid_questionnaire",
    )
    if invalid:
        ctx.warn(
            "evaluation.questionnaire_evaluation.is_invalid_questionnaire: the annotator marked this item invalid"
        )

    meta: dict[str, Any] = {
        "verdicts": dict(verdicts),  # raw, as exported ("true"/"false")
        "solution_same_as_reference": same,
        "is_invalid_questionnaire": invalid,
        "idx": coerce_text(custom.get("idx"), "custom.idx", numbers_ok=True),
        **{key: obj.get(key) for key in _RECORD_IDS if obj.get(key) is not None},
    }
    if custom.get("original_response"):
        meta["original_response"] = coerce_text(custom["original_response"], "custom.original_response")
    return ItemRecord(
        external_id=external_id,
        question=question,
        steps={"solution": solution, "reference": reference},
        reference_answer=answer,
        reference_solution="\n\n".join(reference) or None,
        error_type=coerce_text(custom.get("classification"), "custom.classification"),
        final_answer_correct=correct,
        meta=meta,
    )


def _object(obj: dict[str, Any], name: str, *, required: bool = False, prefix: str = "") -> dict[str, Any]:
    value = obj.get(name)
    if value is None:
        if required:
            raise LineError(f"{prefix}{name}: missing")
        return {}
    if not isinstance(value, dict):
        raise LineError(f"{prefix}{name}: expected an object, got {json_type(value)}")
    return value


def _from_custom_or_conversation(
    obj: dict[str, Any], custom: dict[str, Any], what: str, names: tuple[str, ...]
) -> str | None:
    """From `custom`, else from the conversation message that shows it (e.g. "###Question:\\n\\n...")."""
    name, value = pick(custom, *names)
    if value is not None:
        return coerce_text(value, f"custom.{name}", numbers_ok=True)
    conversation = obj.get("conversation")
    if not isinstance(conversation, list):
        return None
    prefix = _CONVERSATION_PREFIX[what]
    for message in conversation:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str) and content.startswith(prefix):
            return content[len(prefix) :].strip() or None
    return None
