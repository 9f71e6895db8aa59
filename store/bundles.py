"""Whole databases (or one dataset) read out and written back: what stepgate's own format carries.

Why a path beside `store.bulk.write_records`: an import of a source file makes version 1 of each item and starts
its gating afresh; a bundle carries items that already have a history (every version with its
parent, reason and time), a gating state and an annotation log, and must come back exactly so.
Rows are named by what survives a move (dataset name, external id, version number, annotator
name), never by this database's ids.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pandas as pd

from importers.records import ItemRecord
from importers.stepgate import BundleItem, BundleVersion, ParsedBundle
from store.datasets import get_dataset
from store.errors import StoreRequestError
from store.images import image_path
from store.inserts import insert_columns, new_ids
from store.items import VERSION_COLUMNS
from store.staging import content_hash
from store.study_bundles import read_studies, study_annotators, study_people, write_studies
from store.versions import write_versions

if TYPE_CHECKING:
    from store.db import Store, Tx

__all__ = [
    "BundleConflict",
    "BundleItem",
    "BundleVersion",
    "ParsedBundle",
    "database_counts",
    "read_bundle",
    "write_bundle",
]

# A version's own fields: every column of item_versions but its ids, lineage and hash (items.py's list).
_VERSION_FIELDS = tuple(
    c for c in VERSION_COLUMNS if c not in ("id", "item_id", "version", "parent_id", "reason", "content_hash")
)


class BundleConflict(StoreRequestError):
    """The bundle cannot go into this database as it is (a dataset of that name exists already)."""


def _iso(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def read_bundle(
    db: Store | Tx, dataset_id: int | None = None, *, with_log: bool = True, item_ids: list[int] | None = None
) -> dict[str, Any]:
    """Everything about the chosen datasets as plain lists of dicts, in a canonical order.

    Keys: datasets, versions (one per item version, with steps and image hashes), states, images
    (hash -> mime, size, file path), annotators and annotations (empty without the log), gold (the
    items marked gold: label, source, who, when, the labels on the item before the marking).
    Order: datasets by name; items by dataset name then id (the order they were created in);
    versions by number; annotations by id (arrival order). With `item_ids`, the versions, states and
    log of those items only (the datasets and annotators stay whole: the caller keeps what it needs).
    """
    where = "WHERE d.id = ?" if dataset_id is not None else ""
    params: list[Any] = [dataset_id] if dataset_id is not None else []
    # The same condition on items for the queries that read items (aliased i).
    item_where, item_params = where, list(params)
    if item_ids is not None:
        item_where = (where + " AND " if where else "WHERE ") + "i.id IN (SELECT unnest(CAST(? AS BIGINT[])))"
        item_params.append([int(i) for i in item_ids])
    datasets = db.records(
        f"SELECT d.name, d.task, d.source_format, d.settings, d.created_at FROM datasets d {where} ORDER BY d.name",
        params,
    )
    cols = ", ".join(f"v.{c}" for c in _VERSION_FIELDS)
    versions = db.records(
        "WITH s AS (SELECT version_id, role, array_agg(text ORDER BY position) AS texts FROM steps "
        "GROUP BY version_id, role), "
        f"sj AS (SELECT version_id, {db.engine.map_agg('role', 'texts', 'role')} AS steps "
        "FROM s GROUP BY version_id), "
        "im AS (SELECT version_id, array_agg(image_hash ORDER BY position) AS images FROM version_images "
        "GROUP BY version_id) "
        "SELECT d.name AS dataset, i.external_id, i.id AS item_id, i.created_at AS item_created_at, "
        "v.version, p.version AS parent_version, v.reason, v.created_at, "
        f"{cols}, sj.steps, im.images FROM items i JOIN datasets d ON d.id = i.dataset_id "
        "JOIN item_versions v ON v.item_id = i.id LEFT JOIN item_versions p ON p.id = v.parent_id "
        "LEFT JOIN sj ON sj.version_id = v.id LEFT JOIN im ON im.version_id = v.id "
        f"{item_where} ORDER BY d.name, i.id, v.version",
        item_params,
    )
    states = db.records(
        "SELECT d.name AS dataset, i.external_id, s.target, s.status, s.decision, s.settled_at, s.updated_at "
        "FROM item_state s JOIN items i ON i.id = s.item_id JOIN datasets d ON d.id = i.dataset_id "
        f"{item_where} ORDER BY d.name, i.id",
        item_params,
    )
    hashes = sorted({h for v in versions for h in (v["images"] or [])})
    images: dict[str, dict[str, Any]] = {}
    for digest in hashes:
        row = db.fetchone("SELECT mime, width, height FROM images WHERE hash = ?", [digest])
        if row is not None:
            images[digest] = {
                "mime": row[0],
                "width": row[1],
                "height": row[2],
                "file": image_path(db, digest),
            }
    annotations: list[dict[str, Any]] = []
    annotators: list[dict[str, Any]] = []
    if with_log:
        annotations = db.records(
            "SELECT d.name AS dataset, i.external_id, v.version, u.name AS annotator, a.request_id, a.task, "
            "a.payload, a.seconds_spent, a.created_at FROM annotations a JOIN items i ON i.id = a.item_id "
            "JOIN item_versions v ON v.id = a.version_id JOIN datasets d ON d.id = a.dataset_id "
            f"JOIN annotators u ON u.id = a.annotator_id {item_where} ORDER BY a.id",
            item_params,
        )
        annotators = db.records(
            "SELECT u.name, u.role, u.removed_at IS NOT NULL AS removed FROM annotators u "
            "WHERE u.id IN (SELECT a.annotator_id FROM annotations a JOIN datasets d ON d.id = a.dataset_id "
            f"{where}) OR u.id IN (SELECT g.marked_by FROM gold g JOIN datasets d ON d.id = g.dataset_id "
            f"{where}) ORDER BY u.name",
            params + params,
        )
    # Gold marks, named portably: the gold version by number, and where answers start by how many
    # labels on the item came before the marking (ids differ in the database the bundle goes to).
    gold = db.records(
        "SELECT d.name AS dataset, i.external_id, v.version, g.label, g.source, u.name AS marked_by, "
        "g.marked_at, (SELECT count(*) FROM annotations a WHERE a.item_id = g.item_id "
        "AND a.id <= g.after_annotation) AS labels_before FROM gold g JOIN items i ON i.id = g.item_id "
        "JOIN datasets d ON d.id = i.dataset_id JOIN item_versions v ON v.id = g.version_id "
        f"LEFT JOIN annotators u ON u.id = g.marked_by {item_where} ORDER BY d.name, i.id",
        item_params,
    )
    for group in (datasets, versions, states, annotations, annotators, gold):
        for entry in group:
            for key, value in entry.items():
                entry[key] = _iso(value)
    # Agreement studies (store.study_bundles): whole studies, their labels with the log, and
    # annotator lines for the people they name that the log did not.
    studies, study_labels = read_studies(db, dataset_id, with_log=with_log, item_ids=item_ids)
    named = {p["name"] for p in annotators}
    extra = study_annotators(db, study_people(studies, study_labels) - named)
    if extra:
        annotators = sorted(annotators + extra, key=lambda p: p["name"])
    return {
        "datasets": datasets,
        "versions": versions,
        "states": states,
        "images": images,
        "annotators": annotators,
        "annotations": annotations,
        "gold": gold,
        "studies": studies,
        "study_labels": study_labels,
    }


@dataclass
class BundleSummary:
    datasets: list[str] = field(default_factory=list)
    items: int = 0
    versions: int = 0
    annotations: int = 0
    gold: int = 0
    studies: int = 0
    study_labels: int = 0


def write_bundle(tx: Tx, bundle: ParsedBundle, rename: str | None = None) -> BundleSummary:
    """Write a bundle into this database; a dataset that exists here already is refused, not merged."""
    names = {d["name"]: d["name"] for d in bundle.datasets}
    if rename is not None:
        if len(names) != 1:
            raise BundleConflict(f"--dataset renames one dataset; this file holds {len(names)}")
        names = {next(iter(names)): rename}
    dataset_ids: dict[str, int] = {}
    for d in bundle.datasets:
        name = names[d["name"]]
        if get_dataset(tx, name) is not None:
            raise BundleConflict(
                f"dataset {name!r} already exists in this database; import the file into a database "
                "without it, or under another name (--dataset)"
            )
        tx.execute(
            "INSERT INTO datasets (name, task, source_format, settings, created_at) "
            "VALUES (?, ?, ?, ?, coalesce(CAST(? AS TIMESTAMP), current_timestamp))",
            [
                name,
                d["task"],
                d.get("source_format"),
                json.dumps(d.get("settings") or {}),
                d.get("created_at"),
            ],
        )
        tx.forget_after_commit()
        dataset_ids[d["name"]] = int(tx.scalar("SELECT id FROM datasets WHERE name = ?", [name]))
    summary = BundleSummary(datasets=list(names.values()))
    for item in bundle.items:
        if item.dataset not in dataset_ids:
            raise BundleConflict(f"item {item.external_id!r} names dataset {item.dataset!r}, not in the file")
    item_ids = new_ids(tx, "item_ids", len(bundle.items))
    insert_columns(
        tx,
        "items",
        {
            "id": item_ids,
            "dataset_id": [dataset_ids[i.dataset] for i in bundle.items],
            "external_id": [i.external_id for i in bundle.items],
        },
        {},
    )
    pending: list[tuple[ItemRecord, int, int, int | None, str, str]] = []
    keys: list[tuple[str, str, int]] = []
    parents: list[int | None] = []
    stamps: list[str | None] = []
    for iid, item in zip(item_ids, bundle.items, strict=True):
        for v in sorted(item.versions, key=lambda v: v.version):
            pending.append((v.record, iid, v.version, None, v.reason, content_hash(v.record)))
            keys.append((item.dataset, item.external_id, v.version))
            parents.append(v.parent_version)
            stamps.append(v.created_at)
    vids = write_versions(tx, pending)
    version_ids = {key: (p[1], vid) for key, p, vid in zip(keys, pending, vids, strict=True)}
    lineage = pd.DataFrame(
        {
            "id": vids,
            "parent_id": [
                version_ids[(k[0], k[1], p)][1] if p is not None and (k[0], k[1], p) in version_ids else None
                for k, p in zip(keys, parents, strict=True)
            ],
            "created_at": pd.to_datetime(pd.Series(stamps, dtype="object")),
        }
    )
    newest: dict[int, tuple[int, int]] = {}
    for key, (iid, vid) in version_ids.items():
        if iid not in newest or key[2] > newest[iid][0]:
            newest[iid] = (key[2], vid)
    heads = pd.DataFrame(
        {
            "item_id": list(newest),
            "version_id": [v for _, v in newest.values()],
        }
    )
    items_meta = pd.DataFrame(
        {
            "item_id": item_ids,
            "dataset_id": [dataset_ids[i.dataset] for i in bundle.items],
            "created_at": pd.to_datetime(pd.Series([i.created_at for i in bundle.items], dtype="object")),
            "target": [int((i.state or {}).get("target") or 0) for i in bundle.items],
            "status": [(i.state or {}).get("status") or "open" for i in bundle.items],
            "decision": [_decision(i.state) for i in bundle.items],
            "settled_at": pd.array([(i.state or {}).get("settled_at") for i in bundle.items], dtype="Int32"),
            "updated_at": pd.to_datetime(
                pd.Series([(i.state or {}).get("updated_at") for i in bundle.items], dtype="object")
            ),
        }
    )
    _with_frames(
        tx,
        {"_lineage": lineage, "_heads": heads, "_bitems": items_meta},
        [
            "UPDATE item_versions SET parent_id = l.parent_id, "
            "created_at = coalesce(l.created_at, item_versions.created_at) FROM _lineage l "
            "WHERE item_versions.id = l.id",
            "UPDATE items SET current_version_id = h.version_id FROM _heads h WHERE items.id = h.item_id",
            "UPDATE items SET created_at = coalesce(b.created_at, items.created_at) FROM _bitems b "
            "WHERE items.id = b.item_id",
            "INSERT INTO item_state (item_id, dataset_id, target, status, decision, settled_at, updated_at) "
            "SELECT item_id, dataset_id, target, status, decision, settled_at, "
            "coalesce(updated_at, current_timestamp) FROM _bitems",
        ],
    )
    summary.versions = len(vids)
    summary.items = len(item_ids)
    summary.annotations = _write_log(tx, bundle, dataset_ids, version_ids)
    summary.gold = _write_gold(tx, bundle, dataset_ids, version_ids)
    summary.studies, summary.study_labels = write_studies(
        tx, bundle.studies, bundle.study_labels, dataset_ids, version_ids
    )
    for dataset_id in dataset_ids.values():
        tx.changed(dataset_id)
    return summary


def _write_log(
    tx: Tx,
    bundle: ParsedBundle,
    dataset_ids: dict[str, int],
    version_ids: dict[tuple[str, str, int], tuple[int, int]],
) -> int:
    """Annotators by name (an existing one is the same person; a new one comes without a password)."""
    people: dict[str, int] = {}
    for person in bundle.annotators:
        found = tx.scalar("SELECT id FROM annotators WHERE name = ?", [person["name"]])
        if found is None:
            tx.execute(
                "INSERT INTO annotators (name, role, removed_at) "
                "VALUES (?, ?, CASE WHEN ? THEN current_timestamp END)",
                [person["name"], person.get("role") or "annotator", bool(person.get("removed"))],
            )
            found = tx.scalar("SELECT id FROM annotators WHERE name = ?", [person["name"]])
        people[person["name"]] = int(found)
    rows: dict[str, list[Any]] = {
        c: []
        for c in ("request_id", "annotator_id", "item_id", "version_id", "dataset_id", "task", "payload")
    }
    spent, stamps = [], []
    for a in bundle.annotations:
        key = (a["dataset"], a["external_id"], int(a["version"]))
        if key not in version_ids:
            raise BundleConflict(f"an annotation names item {key[1]!r} version {key[2]}, not in the file")
        if a["annotator"] not in people:
            raise BundleConflict(f"an annotation names annotator {a['annotator']!r}, not in the file")
        iid, vid = version_ids[key]
        for name, value in (
            ("request_id", a["request_id"]),
            ("annotator_id", people[a["annotator"]]),
            ("item_id", iid),
            ("version_id", vid),
            ("dataset_id", dataset_ids[a["dataset"]]),
            ("task", a["task"]),
            ("payload", json.dumps(a["payload"], sort_keys=True)),
        ):
            rows[name].append(value)
        spent.append(a.get("seconds_spent"))
        stamps.append(a["created_at"])
    if stamps:
        frame = pd.DataFrame({"id": new_ids(tx, "annotation_ids", len(stamps)), **rows})
        frame["seconds_spent"] = pd.array(spent, dtype="Float64")
        frame["created_at"] = pd.to_datetime(pd.Series(stamps, dtype="object"))
        _refuse_known_requests(tx, frame)
        _with_frames(
            tx,
            {"_blog": frame},
            [
                "INSERT INTO annotations (id, request_id, annotator_id, item_id, version_id, dataset_id, task, "
                "payload, seconds_spent, created_at) SELECT id, request_id, annotator_id, "
                "item_id, version_id, dataset_id, task, payload, seconds_spent, created_at FROM _blog"
            ],
        )
    return len(stamps)


def _refuse_known_requests(tx: Tx, frame: pd.DataFrame) -> None:
    """A label's request id names it once: a log that repeats ids of this database's own labels was
    exported from it, and importing it again would count those labels twice."""
    with tx.reading_frame("_blog_ids", frame[["request_id"]]) as reader:
        known, example = reader.fetchone(
            "SELECT count(*), min(b.request_id) FROM _blog_ids b JOIN annotations a ON a.request_id = b.request_id"
        ) or (0, None)
    if known:
        raise BundleConflict(
            f"{known} label(s) of the file's annotation log are in this database already (request id "
            f"{example!r}): the file was exported from it. Import it into another database, or export "
            "it again without the log to copy the items only"
        )


def _write_gold(
    tx: Tx,
    bundle: ParsedBundle,
    dataset_ids: dict[str, int],
    version_ids: dict[tuple[str, str, int], tuple[int, int]],
) -> int:
    """The items' gold marks; labels after the first ``labels_before`` on an item are answers again."""
    marked = 0
    for item in bundle.items:
        if not item.gold:
            continue
        g = item.gold
        key = (item.dataset, item.external_id, int(g["version"]))
        if key not in version_ids:
            raise BundleConflict(f"item {item.external_id!r}'s gold names version {key[2]}, not in the file")
        iid, vid = version_ids[key]
        before = int(g.get("labels_before") or 0)
        after = 0
        if before > 0:
            ids = tx.fetchall("SELECT id FROM annotations WHERE item_id = ? ORDER BY id", [iid])
            after = int(ids[min(before, len(ids)) - 1][0]) if ids else 0
        who = tx.scalar("SELECT id FROM annotators WHERE name = ?", [g.get("marked_by")])
        tx.execute(
            "INSERT INTO gold (item_id, dataset_id, version_id, label, source, marked_by, marked_at, "
            "after_annotation) VALUES (?, ?, ?, ?, ?, ?, CAST(? AS TIMESTAMP), ?)",
            [
                iid,
                dataset_ids[item.dataset],
                vid,
                json.dumps(g["label"], sort_keys=True),
                g["source"],
                who,
                g["marked_at"],
                after,
            ],
        )
        marked += 1
    return marked


def _decision(state: dict[str, Any] | None) -> str | None:
    decision = (state or {}).get("decision")
    return json.dumps(decision) if decision is not None else None


def _with_frames(tx: Tx, frames: dict[str, pd.DataFrame], statements: list[str]) -> None:
    for name, frame in frames.items():
        tx.register(name, frame)
    try:
        for sql in statements:
            tx.execute(sql)
    finally:
        for name in frames:
            tx.unregister(name)


def database_counts(db: Store | Tx, dataset_id: int | None = None) -> dict[str, Any]:
    """What a database (or one dataset) holds, for an export's manifest: counts and states."""
    where = "WHERE dataset_id = ?" if dataset_id is not None else ""
    params = [dataset_id] if dataset_id is not None else []
    items = int(db.scalar(f"SELECT count(*) FROM items {where}", params))
    versions = int(
        db.scalar(
            f"SELECT count(*) FROM item_versions WHERE item_id IN (SELECT id FROM items {where})", params
        )
    )
    annotations = int(db.scalar(f"SELECT count(*) FROM annotations {where}", params))
    states = dict(
        db.fetchall(f"SELECT status, count(*) FROM item_state {where} GROUP BY status ORDER BY 1", params)
    )
    return {
        "datasets": int(
            db.scalar("SELECT count(*) FROM datasets" + (" WHERE id = ?" if params else ""), params)
        ),
        "items": items,
        "versions": versions,
        "annotations": annotations,
        "states": {str(k): int(v) for k, v in states.items()},
        "schema_version": int(db.scalar("SELECT coalesce(max(version), 0) FROM schema_migrations")),
    }
