"""What must never happen to the label log, counted: the load tests and the benchmark read these after
(and during) a run, on DuckDB and on PostgreSQL alike.

- an item labelled by more annotators than its target, or handed out (labels plus others' live leases)
  past it;
- an annotator's label on an item stored twice;
- a request id's label missing or stored under another id (read back with `labels_by_request`).

Rulings (an adjudicator's decision on a disputed item) are not labels and are left out.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from store.annotations import RULING

if TYPE_CHECKING:
    from store.db import Store, Tx

__all__ = [
    "held_past_target",
    "labelled_past_target",
    "labels_by_request",
    "labels_per_item",
    "repeated_labels",
]

_CURRENT = "JOIN items i ON i.id = a.item_id AND a.version_id = i.current_version_id"


def labels_per_item(db: Store | Tx) -> dict[int, int]:
    """Distinct annotators who labelled each item's current version."""
    rows = db.fetchall(
        f"SELECT a.item_id, count(DISTINCT a.annotator_id) FROM annotations a {_CURRENT} "
        "WHERE a.task <> ? GROUP BY a.item_id",
        [RULING],
    )
    return {int(item): int(n) for item, n in rows}


def labelled_past_target(db: Store | Tx) -> int:
    """Items whose current version has more distinct labelling annotators than the item's target."""
    return int(
        db.scalar(
            "SELECT count(*) FROM (SELECT a.item_id, count(DISTINCT a.annotator_id) AS n "
            f"FROM annotations a {_CURRENT} WHERE a.task <> ? GROUP BY a.item_id) AS labelled "
            "JOIN item_state s ON s.item_id = labelled.item_id WHERE labelled.n > s.target",
            [RULING],
        )
    )


def held_past_target(db: Store | Tx, now: datetime) -> int:
    """Open items on which labellers and live lease holders (the `assignments` rows replicas share)
    together outnumber the target: one statement, so one consistent snapshot of the database. A study
    rater's lease takes no place of the gate's (store/leases.py) and is left out."""
    return int(
        db.scalar(
            "SELECT count(*) FROM (SELECT holder.item_id, count(DISTINCT holder.annotator_id) AS n FROM ("
            f" SELECT a.item_id, a.annotator_id FROM annotations a {_CURRENT} WHERE a.task <> ?"
            " UNION SELECT l.item_id, l.annotator_id FROM assignments l"
            " WHERE l.status = 'leased' AND l.expires_at > ? AND NOT EXISTS (SELECT 1 FROM study_assignments sa"
            "  WHERE sa.item_id = l.item_id AND sa.annotator_id = l.annotator_id)"
            ") AS holder GROUP BY holder.item_id) AS held "
            "JOIN item_state s ON s.item_id = held.item_id WHERE s.status = 'open' AND held.n > s.target",
            [RULING, now],
        )
    )


def repeated_labels(db: Store | Tx) -> int:
    """(item, annotator) pairs with more than one label in the log."""
    return int(
        db.scalar(
            "SELECT count(*) FROM (SELECT item_id, annotator_id FROM annotations WHERE task <> ? "
            "GROUP BY item_id, annotator_id HAVING count(*) > 1) AS repeated",
            [RULING],
        )
    )


def labels_by_request(db: Store | Tx) -> dict[str, int]:
    """Every label's annotation id by the client's request id."""
    return {
        str(r): int(i)
        for r, i in db.fetchall("SELECT request_id, id FROM annotations WHERE task <> ?", [RULING])
    }
