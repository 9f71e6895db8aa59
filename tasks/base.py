"""What every task spec provides, and the pieces several specs share.

A task spec is pure: it names the task's labels, checks a submitted label, decides an item from its
labels, says what is blind and until when, and gives the task's defaults and export formats. It
imports nothing of stepgate's, so store, qc, exports and services may all read it.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from tasks.view import AnnotatorView

__all__ = [
    "ANNOTATOR_DEFAULTS",
    "MAX_ANNOTATORS",
    "NO_ERROR",
    "QUORUM",
    "Choice",
    "Decision",
    "Item",
    "LabelLimits",
    "NumberSetting",
    "PayloadError",
    "TaskSpec",
    "Vote",
    "check_note",
    "check_seconds",
    "check_size",
    "choices_spec",
    "choose",
    "decision_words",
    "majority_vote",
    "solution_length",
]

NO_ERROR = -1  # ProcessBench's label for "all steps are correct"
# How many annotators an item gets, by default, in every task: the one home of these numbers.
# ProcessBench: 3 agreeing labels, one more annotator at a time up to 5 (an escalating task's rule);
# a task that does not escalate gives each item annotators_per_item.
QUORUM = 3
MAX_ANNOTATORS = 5
ANNOTATOR_DEFAULTS = {"annotators_per_item": 1, "quorum": QUORUM, "max_annotators": MAX_ANNOTATORS}


class PayloadError(ValueError):
    """A label that is incomplete, out of range or too large, said so the annotator can fix it."""


class Item(Protocol):
    """What a spec reads of an item: its step lists and whether its final answer is right."""

    @property
    def steps(self) -> dict[str, list[str]]: ...

    @property
    def final_answer_correct(self) -> bool | None: ...


@dataclass(frozen=True)
class Choice:
    """One closed question of a label: its title in messages and the values it accepts."""

    title: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class LabelLimits:
    """How large a label may be; dataset settings of the same names override these."""

    max_payload_bytes: int = 64_000
    max_note_chars: int = 4_000
    max_seconds_spent: float = 86_400.0


@dataclass(frozen=True)
class NumberSetting:
    """A task's own numeric dataset setting: its default (the paper's) and the range it accepts.

    ``whole``: only whole numbers. ``high`` None: no upper bound. ``why`` is shown to admins.
    """

    default: float
    low: float
    high: float | None = None
    whole: bool = True
    why: str = ""

    def check(self, key: str, value: Any) -> float | int:
        """The value as stored, from a number or its text; ValueError saying what is accepted."""
        number: Any = value
        if isinstance(value, str):
            try:
                number = float(value.strip())
            except ValueError:
                number = None
        if isinstance(number, bool) or not isinstance(number, int | float) or not math.isfinite(number):
            raise ValueError(f"setting {key!r} must be {self.accepts()}, not {value!r}")
        if self.whole and number != int(number):
            raise ValueError(f"setting {key!r} must be {self.accepts()}, not {value!r}")
        if number < self.low or (self.high is not None and number > self.high):
            raise ValueError(f"setting {key!r} must be {self.accepts()}, not {value!r}")
        return int(number) if self.whole else float(number)

    def accepts(self) -> str:
        kind = "a whole number" if self.whole else "a number"
        if self.high is None:
            return f"{kind} of at least {self.low:g}"
        return f"{kind} from {self.low:g} to {self.high:g}"


@dataclass(frozen=True)
class Decision:
    """An item's state after its labels: how many annotators it needs now and whether it is settled."""

    target: int
    status: str  # open | consensus | complete | discarded | rejected | disputed | accepted
    decision: dict[str, Any] | None
    settled_at: int | None  # labels it took to settle (3 -> "3/3"), None while open


@dataclass(frozen=True)
class TaskSpec:
    """One task: the single place its vocabulary, validation, rule and defaults live.

    ``blind_until``: "settled" means an annotator never sees another's label (nor anything that
    depends on it) while the item is open for them; reviewers (adjudicators, admins) always may.
    """

    name: str
    title: str
    choices: Mapping[str, Choice]
    defaults: Mapping[str, int]
    export_formats: tuple[str, ...]
    validate_label: Any  # Callable[[Mapping[str, Any], Item], dict[str, Any]]
    decide_item: Any  # Callable[[list[dict], int, Mapping[str, int], Item], Decision]
    blind_until: Literal["settled"] = "settled"
    limits: LabelLimits = field(default_factory=LabelLimits)
    escalates: bool = False  # the target grows with disagreement (ProcessBench), not fixed per item
    # What a label must satisfy given the dataset's settings: Callable[[dict, Mapping], None] or None.
    check_settings: Any = None
    # The task's own dataset settings with a closed set of text values, the first the default.
    options: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # The task's own dataset settings that hold a list of short texts (empty by default).
    list_settings: tuple[str, ...] = ()
    # The task's own numeric dataset settings, each with the paper's default and its range.
    numbers: Mapping[str, NumberSetting] = field(default_factory=dict)
    # A rejected item goes back to generation (CRYSTAL's loop 2, ConfProBench's re-apply) and returns
    # as a new version of itself (services.regeneration).
    regenerate_on_reject: bool = False
    # An accepted label's edited steps become the item's next version (the quality gate's inline edits).
    versions_from_edits: bool = False
    # What an annotator may see of an item while it is blind for them (tasks.view); every annotator
    # reply of an item is built from it (ui.kit.annotation, ui.api).
    annotator_view: AnnotatorView = field(default_factory=AnnotatorView)

    def validate(
        self,
        payload: Any,
        item: Item,
        limits: LabelLimits | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The cleaned label, or PayloadError naming the field; checks size before anything else."""
        limits = limits or self.limits
        check_size(payload, limits)
        clean: dict[str, Any] = self.validate_label(payload, item)
        if self.check_settings is not None:
            self.check_settings(clean, settings or {})
        note = check_note(payload.get("note"), limits)
        if note:
            clean["note"] = note
        return clean

    def decide(
        self, labels: list[dict[str, Any]], target: int, settings: Mapping[str, Any], item: Item
    ) -> Decision:
        """The item's state after these labels (latest per annotator, arrival order)."""
        decision: Decision = self.decide_item(labels, target, settings, item)
        return decision

    def initial_target(self, settings: Mapping[str, Any]) -> int:
        """How many annotators a fresh item needs before anything is known about it."""
        key = "quorum" if self.escalates else "annotators_per_item"
        return int(settings.get(key, self.defaults[key]))


def check_size(payload: Any, limits: LabelLimits) -> None:
    if not isinstance(payload, dict):
        raise PayloadError("the label must be an object of fields")
    try:
        size = len(json.dumps(payload, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise PayloadError(f"the label holds something that is not plain JSON ({exc})") from exc
    if size > limits.max_payload_bytes:
        raise PayloadError(
            f"the label is {size:,} bytes; at most {limits.max_payload_bytes:,} are accepted. Nothing was saved."
        )


def check_note(note: Any, limits: LabelLimits) -> str | None:
    if note is None or note == "":
        return None
    if not isinstance(note, str):
        raise PayloadError("note: must be text")
    if len(note) > limits.max_note_chars:
        raise PayloadError(
            f"note: {len(note):,} characters; at most {limits.max_note_chars:,} are kept. Shorten it and save again."
        )
    return note


def check_seconds(seconds: Any, limits: LabelLimits) -> float | None:
    """Time spent on an item as the client measured it: a finite number within the limit, or None."""
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise PayloadError(f"seconds_spent: {seconds!r} is not a number")
    value = float(seconds)
    if not math.isfinite(value) or not 0 <= value <= limits.max_seconds_spent:
        raise PayloadError(f"seconds_spent: {seconds!r} is outside 0 to {limits.max_seconds_spent:g} seconds")
    return value


def choose(payload: Mapping[str, Any], choices: Mapping[str, Choice]) -> dict[str, str]:
    """Every closed question answered with one of its values, or PayloadError naming what is missing."""
    clean: dict[str, str] = {}
    missing = []
    for key, choice in choices.items():
        value = payload.get(key)
        if value is None or value == "":
            missing.append(choice.title)
        elif value not in choice.values:
            raise PayloadError(f"{choice.title}: {value!r} is not one of {', '.join(choice.values)}")
        else:
            clean[key] = value
    if missing:
        raise PayloadError("please choose: " + ", ".join(missing))
    return clean


def solution_length(item: Item, roles: Sequence[str] = ("solution", "modified", "candidate")) -> int:
    for role in roles:
        if item.steps.get(role):
            return len(item.steps[role])
    return 0


@dataclass(frozen=True)
class Vote:
    """Majority vote outcome; "tie" goes to adjudication."""

    label: Any
    status: Literal["majority", "tie", "empty"]
    counts: dict[Any, int]  # label -> votes, most votes first, then first arrival


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or str(value) == "<NA>"


def majority_vote(labels: Iterable[Any], min_votes: int = 1) -> Vote:
    """Plurality label when it is unique and has at least ``min_votes`` votes.

    Missing labels (None, NaN) are ignored. No labels -> "empty"; a shared top count, or a top
    label with fewer than ``min_votes`` votes -> "tie" (not decidable without adjudication).
    """
    counts = Counter(label for label in labels if not _missing(label))
    ordered = dict(counts.most_common())
    if not ordered:
        return Vote(None, "empty", {})
    top = list(ordered.values())
    if (len(top) > 1 and top[0] == top[1]) or top[0] < min_votes:
        return Vote(None, "tie", ordered)
    return Vote(next(iter(ordered)), "majority", ordered)


def choices_spec(
    name: str, title: str, choices: Mapping[str, Choice], export_formats: tuple[str, ...] = ()
) -> TaskSpec:
    """A task whose label is a set of closed questions and whose item is complete once it has its
    annotators (no consensus rule of its own): the step-match study, the perturbation check."""

    def validate(payload: Mapping[str, Any], item: Item) -> dict[str, Any]:
        return dict(choose(payload, choices))

    def decide(
        labels: list[dict[str, Any]], target: int, settings: Mapping[str, Any], item: Item
    ) -> Decision:
        if len(labels) < target:
            return Decision(target, "open", None, None)
        return Decision(target, "complete", {"labels": len(labels)}, len(labels))

    return TaskSpec(
        name=name,
        title=title,
        choices=choices,
        defaults=dict(ANNOTATOR_DEFAULTS),
        export_formats=export_formats,
        validate_label=validate,
        decide_item=decide,
    )


def _listed(values: Any) -> str:
    items = [str(v) for v in values] if isinstance(values, list | tuple) else [str(values)]
    return ", ".join(items[:-1]) + (" and " if len(items) > 1 else "") + items[-1] if items else "nothing"


def decision_words(decision: Mapping[str, Any] | str | None) -> str:
    """An item's decision in words for reviewers (Browse), not as the stored dict: 'accepted by 2
    annotators (dual), with an edit of the steps (5 steps)'. Keys no task writes are said as 'key: value'."""
    if isinstance(decision, str):
        text = decision
        try:
            decision = json.loads(text)
        except ValueError:
            return text
    if not isinstance(decision, Mapping) or not decision:
        return ""
    said: list[str] = []
    verdict, labels = decision.get("verdict"), decision.get("labels")
    by = f" by {labels} annotator{'s' if labels != 1 else ''}" if isinstance(labels, int) else ""
    if verdict:
        said.append(f"{verdict}ed{by}")
    elif "keep" in decision:
        said.append(("kept" if decision["keep"] else "not kept") + by)
    elif "label" in decision:
        label = decision["label"]
        found = (
            "no agreed label"
            if label is None
            else "all steps correct"
            if int(label) == NO_ERROR
            else f"earliest error at step {int(label) + 1}"
        )
        said.append(f"{found}, from {labels} labels" if isinstance(labels, int) else found)
    elif isinstance(labels, int):
        said.append(f"{labels} label{'s' if labels != 1 else ''}")
    if decision.get("dual"):
        said.append("dual-annotated")
    if decision.get("adjudicated"):
        said.append("ruled by an adjudicator")
    if decision.get("differ"):
        said.append(f"the annotators differ on {_listed(decision['differ'])}")
    if decision.get("failed"):
        said.append(f"failed: {_listed(decision['failed'])}")
    if decision.get("reasons"):
        said.append(f"reasons: {_listed(decision['reasons'])}")
    if decision.get("edited_steps"):
        said.append(f"with an edit of the steps ({len(decision['edited_steps'])} steps)")
    if decision.get("difficulty"):
        said.append(f"difficulty {decision['difficulty']}")
    if decision.get("flag"):
        said.append(str(decision["flag"]))
    known = {"verdict", "labels", "keep", "label", "dual", "adjudicated", "differ", "failed", "reasons"}
    known |= {"edited_steps", "difficulty", "flag"}
    said += [
        f"{key}: {value}" for key, value in decision.items() if key not in known and value not in (None, "")
    ]
    return "; ".join(said)
