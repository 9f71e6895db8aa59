"""The annotation-panel kit: what the five annotation panels share, written once.

Opening on the tab or a dataset change (never claiming a second item), previous, next, skip, jump,
save and what follows it, the drafts kept per user on the server, the progress line, the status
line, and the item on screen as a typed `Current`. A panel gives the kit its task, its words and
how it renders an item (`render`); it keeps its layout and how it reads a label from its controls.
Every reply goes through `show`, which hands `render` the item as the task's annotator view
(tasks.view) lets an annotator see it, and `render` shows the annotator their own work only.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import gradio as gr

from services import annotate, drafts, statistics
from services.annotate import Receipt, WorkItem
from services.errors import ServiceError
from services.records import Annotator, Dataset
from tasks import spec_for
from ui.auth import require_user
from ui.context import AppContext
from ui.kit.messages import refusal, said
from ui.kit.progress import background
from ui.render import escape_text

__all__ = ["AnnotationKit", "Current", "Refused", "Render", "progress_line", "quick_events"]

_CORE = ("dataset", "item_id", "version_id", "state", "request_id", "opened_at", "external_id", "position")


@dataclass(frozen=True)
class Current:
    """The item on screen, as the page keeps it between events (gr.State holds `state()`): ids, when it
    was opened, the request id its save will carry, and the panel's own extras (e.g. this annotator's
    saved label). Never anything of another annotator's."""

    dataset: str | None = None
    item_id: int | None = None
    version_id: int | None = None
    state: str | None = None  # "new" | "resumed" | "done" (labelled before) | "saved" (in this page)
    request_id: str | None = None
    opened_at: float | None = None
    external_id: str | None = None
    position: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, value: Any) -> Current:
        """The page's state back (a dict, or nothing yet)."""
        if isinstance(value, Current):
            return value
        if not isinstance(value, dict):
            return cls()
        core = {k: value.get(k) for k in _CORE}
        return cls(**core, extra={k: v for k, v in value.items() if k not in _CORE})

    @classmethod
    def opened(cls, dataset: Dataset, work: WorkItem, *, named: bool = True, **extra: Any) -> Current:
        """An item just shown: a fresh request id, opened now. `named`: keep its id and number too."""
        return cls(
            dataset=dataset.name,
            item_id=work.item.item_id,
            version_id=work.item.version_id,
            state=work.state,
            request_id=uuid.uuid4().hex,
            opened_at=time.time(),
            external_id=work.item.external_id if named else None,
            position=work.position if named else None,
            extra=extra,
        )

    @classmethod
    def none_in(cls, dataset: Dataset) -> dict[str, Any]:
        """The state of a page that shows no item (nothing left) but keeps its dataset."""
        return cls(dataset=dataset.name).state_dict()

    def state_dict(self) -> dict[str, Any]:
        """What gr.State keeps: the dataset and item always, the other ids when set, then the extras."""
        kept = {k: getattr(self, k) for k in _CORE}
        out = {k: v for k, v in kept.items() if v is not None or k in ("dataset", "item_id")}
        return {**out, **self.extra}

    def get(self, key: str, default: Any = None) -> Any:
        return self.extra.get(key, default)

    @property
    def has_item(self) -> bool:
        return self.item_id is not None

    @property
    def fresh(self) -> bool:
        """Shown as not labelled yet by this annotator (a save is their first label on it)."""
        return self.state in ("new", "resumed")

    @property
    def draft_key(self) -> str:
        return f"{self.dataset}|{self.item_id}|{self.version_id}"

    def seconds_open(self) -> float:
        """How long the item has been open in this page: the time spent a label reports (never negative)."""
        return round(max(0.0, time.time() - float(self.opened_at or time.time())), 1)

    def saved(self, **extra: Any) -> Current:
        """The same item after a save in this page: a new request id for a correction, opened now."""
        return replace(
            self,
            state="saved",
            request_id=uuid.uuid4().hex,
            opened_at=time.time(),
            extra={**self.extra, **extra},
        )


class Refused(Exception):
    """A request the page refuses (nothing stored): the message says why and what to do."""

    def __init__(self, message: str, warn: bool = True) -> None:
        super().__init__(message)
        self.warn = warn


def quick_events() -> dict[str, Any]:
    """How a panel wires its quick events (opening, moving, saving, choices): private, off Gradio's
    queue, and no Gradio progress anywhere; the page's own busy mark (ui/js/busy.js) shows one that is
    slow to answer.

    Off the queue: a queued event pays two more status round trips. No progress: Gradio's page keeps a
    loading status for every component any event showed progress on, and at the start and end of every
    event it applies all of them again, each a search of the component tree and a copy of the
    component's props (bench/browser.py: even on the status line alone, a third of a save's time in the
    browser)."""
    return {"api_visibility": "private", "queue": False, **background()}


# render(ctx, user, dataset, shown, message, counts): every output an item fills, by name; shown is None
# when nothing is left, and counts are then the user's progress (annotate.progress).
Render = Callable[
    [AppContext, Annotator, Dataset, WorkItem | None, str, dict[str, int] | None], dict[str, Any]
]


def progress_line(
    counts: Mapping[str, int], noun: str = "items", bar: str = "", verb: str = "labelled"
) -> str:
    """The user's own count; settled and discarded only for roles that see labels (they move with others'
    labels, so an annotator on a blind task never sees them). With `bar`, a progress bar of that class."""
    total, mine = counts.get("total", 0), counts.get("mine", 0)
    if "settled" not in counts:
        line, value = f"You {verb} **{mine}** of {total} {noun}", mine
    else:
        value = counts["settled"]
        line = f"You labelled **{mine}** · settled **{value}** / {total} · discarded {counts.get('discarded', 0)}"
    if not bar:
        return line + ("." if "settled" not in counts else "")
    return f'{line}\n\n<progress class="{bar}" value="{value}" max="{max(total, 1)}"></progress>'


@dataclass(frozen=True)
class AnnotationKit:
    """One annotation panel's shared behaviour. `render` shows an item (or none); the words name its
    items ("item", "variant", "pair") so every message reads as the panel's own."""

    task: str
    no_dataset: str  # what a user reads when the panel has no dataset to open
    render: Render
    noun: str = "item"
    remembers: bool = False  # the dataset last chosen is kept for each annotator (a reload opens it)
    save_moves_by_history: bool = True  # after a save: the next of the annotator's own labels, or new work
    jump_hint: str = "type an item id or a number from 1 to the dataset size, then Go"
    next_key: str | None = "n"  # the key that moves on, named where a skip is refused
    picker: Callable[..., Any] = gr.Dropdown  # the dataset picker's update (gr.update keeps its props)

    # --- what every handler needs ---------------------------------------------------------------

    def user(self, ctx: AppContext, request: gr.Request | None) -> Annotator:
        return require_user(ctx, request)

    def dataset(self, ctx: AppContext, name: str | None) -> Dataset:
        if not name:
            raise ServiceError(self.no_dataset)
        return annotate.dataset_for(ctx.store, name, self.task)

    def where(self, ctx: AppContext, state: Any) -> tuple[Current, Dataset]:
        """The item on screen and its dataset; ServiceError when no dataset is open."""
        current = Current.of(state)
        return current, self.dataset(ctx, current.dataset)

    @staticmethod
    def status(message: str, warn: bool = False) -> dict[str, Any]:
        """Leave the item as it is and say why on the status line (a warning also as a toast)."""
        return {"status": refusal(message) if warn else said(message)}

    def show(
        self, ctx: AppContext, user: Annotator, dataset: Dataset, shown: WorkItem | None, message: str = ""
    ) -> dict[str, Any]:
        """The item reached (or the page that says nothing is left, with the user's progress), as the
        task's annotator view lets an annotator see it (tasks.view): the one way a panel gets an item."""
        view, reviewer = spec_for(self.task).annotator_view, user.can_see_labels
        shown = view.seen(shown, reviewer=reviewer)
        counts = None if shown else annotate.progress(ctx.store, user, dataset)
        return self.render(ctx, user, dataset, shown, message, counts if reviewer else view.progress(counts))

    # --- drafts: unsaved choices, per user and panel, on the server ------------------------------

    def draft(self, ctx: AppContext, user: Annotator, current: Current) -> Any:
        return drafts.get(ctx.store, user, self.task, current.draft_key)

    def keep_draft(self, ctx: AppContext, user: Annotator, current: Current, value: Any) -> None:
        """This item's unsaved choices (None forgets them), kept for this user only; not written back
        once the item's opening has ended (`end_draft`)."""
        drafts.put(ctx.store, user, self.task, current.draft_key, value, opening=current.request_id)

    def end_draft(self, ctx: AppContext, user: Annotator, current: Current) -> None:
        """Left without saving (a skip): the draft goes, and a choice of this opening still on its way
        to the server does not bring it back."""
        drafts.end(ctx.store, user, self.task, current.draft_key, current.request_id or "")

    def clear_draft(self, ctx: AppContext, user: Annotator, current: Current) -> None:
        drafts.clear(ctx.store, user, self.task, current.draft_key)

    def late(self, ctx: AppContext, user: Annotator, current: Current) -> bool:
        """No item, or a click that reached the server after its item was saved: nothing to keep."""
        return not current.has_item or annotate.saved_attempt(ctx.store, user, current.request_id or "")

    def remembered(self, ctx: AppContext, user: Annotator) -> str | None:
        found = drafts.get(ctx.store, user, self.task, "dataset") if self.remembers else None
        return found if isinstance(found, str) else None

    def remember(self, ctx: AppContext, user: Annotator, name: str | None) -> None:
        if self.remembers and name in statistics.dataset_names(ctx.store, self.task):
            drafts.put(ctx.store, user, self.task, "dataset", name)

    # --- opening ----------------------------------------------------------------------------------

    def open(self, ctx: AppContext, user: Annotator, name: str | None) -> dict[str, Any]:
        """The dataset's next item for this user (the one they hold first)."""
        try:
            dataset = self.dataset(ctx, name)
            shown = annotate.next_item(ctx.store, user, dataset)
        except ServiceError as exc:
            return self.status(str(exc), warn=bool(name))
        message = "" if shown else said(annotate.why_nothing_left(ctx.store, user, dataset))
        return self.show(ctx, user, dataset, shown, message)

    def on_tab(
        self, ctx: AppContext, user: Annotator, name: str | None, state: Any, extra: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The tab opened: the dataset picker (and `extra`), and the next item unless one is shown, so
        coming back to the tab changes nothing and never claims a second item."""
        current = Current.of(state)
        names = statistics.dataset_names(ctx.store, self.task)
        shown = current.dataset if current.has_item else None
        wanted = [n for n in (shown, self.remembered(ctx, user), name) if n in names]
        name = wanted[0] if wanted else (names[0] if names else None)
        out = {"dataset": self.picker(choices=names, value=name), **extra}
        if current.has_item and current.dataset == name:
            return out
        return {**out, **self.open(ctx, user, name)}

    def on_dataset(self, ctx: AppContext, user: Annotator, name: str | None, state: Any) -> dict[str, Any]:
        """A dataset picked: its next item, remembered for this user; the one already shown stays as it is
        (nothing changes: {} keeps every output, ui.kit.outputs)."""
        self.remember(ctx, user, name)
        current = Current.of(state)
        if current.has_item and current.dataset == name:
            return {}
        return self.open(ctx, user, name)

    # --- moving -----------------------------------------------------------------------------------

    def move(
        self, ctx: AppContext, user: Annotator, current: Current, dataset: Dataset, how: str, ref: Any = ""
    ) -> WorkItem | None:
        """previous | next | skip | jump, with the refusals every panel gives (Refused)."""
        store, noun = ctx.store, self.noun
        if how == "previous":
            shown = annotate.previous_item(store, user, dataset, current.item_id)
            if shown is None:
                raise Refused(f"There is no earlier {noun} of yours in this dataset.", warn=False)
            return shown
        if how == "next":
            if not current.has_item:
                return annotate.next_item(store, user, dataset)
            shown = annotate.next_in_history(store, user, dataset, current.item_id)
            if shown is not None and (shown.item.item_id, shown.item.version_id) == (
                current.item_id,
                current.version_id,
            ):
                raise Refused(f"This is your current {noun}: save it, or skip it (x) to get another.", False)
            return shown
        if how == "skip":
            if not current.has_item:
                raise Refused(f"There is no {noun} to skip.")
            if not current.fresh:
                raise Refused(
                    f"You labelled this {noun} already, so there is nothing to skip: n moves on.", False
                )
            return annotate.skip_item(store, user, dataset, current.item_id)
        if isinstance(ref, float) and ref.is_integer():  # an index slider's value
            ref = int(ref)
        ref = str(ref if ref is not None else "").strip()
        if not ref:
            raise ServiceError(self.jump_hint)
        return annotate.jump_to(store, user, dataset, ref)

    def step(
        self, ctx: AppContext, request: gr.Request | None, state: Any, how: str, ref: Any = ""
    ) -> dict[str, Any]:
        """A handler for previous, next, skip or jump: the item reached, or why not on the status line."""
        user = self.user(ctx, request)
        try:
            current, dataset = self.where(ctx, state)
            shown = self.move(ctx, user, current, dataset, how, ref)
        except Refused as refused:
            return self.status(str(refused), refused.warn)
        except ServiceError as exc:
            return self.status(f"Cannot open {self.noun}: {exc}" if how == "jump" else str(exc), warn=True)
        message = {
            "skip": f"Skipped: the {self.noun} went back to the pool.",
            "jump": f"Jumped to index {shown.position}." if shown else "",
        }.get(how, "")
        out = self.show(ctx, user, dataset, shown, said(message) if message else "")
        return {**out, "jump": ""} if how == "jump" else out

    # --- the handlers a panel binds as they are ------------------------------------------------------

    def on_dataset_change(
        self, ctx: AppContext, dataset: str | None, current: Any, request: gr.Request
    ) -> dict[str, Any]:
        """Another dataset picked: its next item for this user (the one already shown stays as it is)."""
        return self.on_dataset(ctx, self.user(ctx, request), dataset, current)

    def on_previous(self, ctx: AppContext, current: Any, request: gr.Request) -> dict[str, Any]:
        """Back through the user's own labels, newest first."""
        return self.step(ctx, request, current, "previous")

    def on_next(self, ctx: AppContext, current: Any, request: gr.Request) -> dict[str, Any]:
        """Forward through the user's own labels, then on to the item they hold or new work."""
        return self.step(ctx, request, current, "next")

    def on_skip(self, ctx: AppContext, current: Any, request: gr.Request) -> dict[str, Any]:
        """The item back to the pool for others; it comes back to this user after the rest."""
        return self.step(ctx, request, current, "skip")

    def on_jump(self, ctx: AppContext, ref: Any, current: Any, request: gr.Request) -> dict[str, Any]:
        """An item by its id or its number in the dataset (a box and Go, or an index slider)."""
        return self.step(ctx, request, current, "jump", ref)

    # --- saving -----------------------------------------------------------------------------------

    def submit(
        self, ctx: AppContext, user: Annotator, current: Current, payload: dict[str, Any], first: bool = True
    ) -> Receipt:
        """Store the label of the item on screen (a retry with its request id is stored once)."""
        receipt = annotate.submit(
            ctx.store,
            annotator=user,
            item_id=current.item_id,
            version_id=current.version_id,
            payload=payload,
            request_id=current.request_id,
            seconds_spent=current.seconds_open(),
            first_label=first and current.fresh,
            draft=(self.task, current.draft_key),
        )
        return receipt

    def following(
        self,
        ctx: AppContext,
        user: Annotator,
        current: Current,
        dataset: Dataset,
        receipt: Receipt | None = None,
    ) -> WorkItem | None:
        """The item after a save: the next of the user's own labels (then new work), or new work.

        `receipt`: the save's. A first label just stored (the item shown as not labelled yet, and not
        a retry) makes its item the newest of the user's history, so new work follows it: the history
        is not read (two of a save's statements)."""
        newest = receipt is not None and not receipt.duplicate and current.fresh
        if self.save_moves_by_history and current.item_id is not None and not newest:
            return annotate.next_in_history(ctx.store, user, dataset, current.item_id)
        return annotate.next_item(ctx.store, user, dataset)

    def saved_line(self, receipt: Receipt, what: str, following: WorkItem | None) -> str:
        """'✓ Saved: <what>. Next item: <id>.' (the status line after a save says nothing of the item's state)."""
        word = "Already saved" if receipt.duplicate else "Saved"
        after = (
            f"{self.noun} {escape_text(following.item.external_id)}"
            if following
            else "nothing left for you here"
        )
        return f"✓ {word}: {what}. Next {self.noun}: {after}."
