"""What an annotator may see of an item while it is blind for them: one view per task (issue 32).

Every reply an annotator gets of an item (a panel's page through the kit, the HTTP API's next_item and
skip_item) is built from `AnnotatorView.seen`, so a panel cannot hand on what the view leaves out:

- of the item: the version they hold or labelled (never a later one: another annotator's accepted
  edit or a regeneration makes that, and its existence tells how the item was decided), with its
  content fields and only the `meta` keys the task shows;
- of their work: where it stands for them ("new", "resumed", "done"), their own label on that
  version, and their own progress (the dataset's size and how many they labelled);
- never: the item's state or decision, settled or discarded counts, how many annotators it needs,
  whether it is gold, another annotator's label, a lineage past the shown version, an attempt count.

Reviewers (adjudicators, admins) are not blind: `seen(..., reviewer=True)` changes nothing.
Pure: works on any dataclass with the fields below (services' WorkItem and its ItemView).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ANNOTATOR_PROGRESS", "ANNOTATOR_STATES", "AnnotatorView"]

ANNOTATOR_STATES = ("new", "resumed", "done")  # where an item stands for them, from their own work only
ANNOTATOR_PROGRESS = ("total", "mine")  # settled and discarded move with the others' labels


@dataclass(frozen=True)
class AnnotatorView:
    """The task's annotator view: which `meta` keys of an item version its panel shows, and which keys
    are cut from inside those entries (a perturbation's attempt count)."""

    meta_keys: tuple[str, ...] = ()
    inner_cut: tuple[str, ...] = ()

    def progress(self, counts: Mapping[str, int] | None) -> dict[str, int] | None:
        """Their own progress: the dataset's size and their own count, nothing that others' labels move."""
        if counts is None:
            return None
        return {key: int(counts[key]) for key in ANNOTATOR_PROGRESS if key in counts}

    def item(self, item: Any) -> Any:
        """The item version as shown: its meta cut to the task's keys."""
        meta = getattr(item, "meta", None) or {}
        kept = {key: self._cut(meta[key]) for key in self.meta_keys if key in meta}
        return dataclasses.replace(item, meta=kept) if kept != meta else item

    def _cut(self, entry: Any) -> Any:
        if not isinstance(entry, Mapping) or not self.inner_cut:
            return entry
        return {key: value for key, value in entry.items() if key not in self.inner_cut}

    def seen(self, work: Any, *, reviewer: bool = False) -> Any:
        """The work item as an annotator may receive it (None stays None); ValueError for a state that
        is not their own (a state named after the item's decision would tell it)."""
        if work is None or reviewer:
            return work
        if work.state not in ANNOTATOR_STATES:
            raise ValueError(f"an annotator's item is new, resumed or done, not {work.state!r}")
        return dataclasses.replace(
            work, item=self.item(work.item), progress=self.progress(work.progress) or {}
        )

    def reply(self, work: Any) -> dict[str, Any]:
        """The HTTP API's answer for an item (next_item, skip_item): built from `seen` only."""
        if work is None:
            return {"item_id": None, "message": "nothing left to label in this dataset"}
        item = work.item
        return {
            "item_id": item.item_id,
            "version_id": item.version_id,
            "external_id": item.external_id,
            "position": work.position,
            "state": work.state,
            "question": item.question,
            "steps": item.steps,
            "my_label": work.my_label,
            "progress": work.progress,
        }
