"""Agreement studies in stepgate's own format: read out with a bundle, written back with it.

Why: a study keeps labels of its own (study_labels) and raters chosen per item, so moving a
database without them would silently lose every study and what its raters acknowledged. As in
store.bundles, rows are named by what survives a move (study, dataset and annotator names, external
ids, version numbers), never by this database's ids. The SQL is plain standard SQL.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

from store.errors import StoreRequestError

if TYPE_CHECKING:
    from store.db import Store, Tx

__all__ = ["StudyBundleConflict", "read_studies", "study_people", "write_studies"]

_RULE_KEYS = ("field", "target", "batch", "cap", "confidence", "adjust", "stopped_by", "stopped_at")


class StudyBundleConflict(StoreRequestError):
    """A study or study label line of the bundle cannot go into this database (said with its line)."""


def _iso(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def read_studies(
    db: Store | Tx, dataset_id: int | None = None, *, with_log: bool = True, item_ids: list[int] | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The studies of the chosen datasets (by name) and their labels (in arrival order; none without
    the log). With ``item_ids``, only the studies whose items are all among them."""
    where = " WHERE st.dataset_id = ?" if dataset_id is not None else ""
    params: list[Any] = [dataset_id] if dataset_id is not None else []
    rows = db.fetchall(
        "SELECT st.id, st.name, d.name, st.raters, st.stratify_by, st.seed, coalesce(st.kept_only, false), "
        "coalesce(st.own_labels, false), u.name, st.created_at FROM studies st "
        "JOIN datasets d ON d.id = st.dataset_id LEFT JOIN annotators u ON u.id = st.created_by"
        f"{where} ORDER BY st.name",
        params,
    )
    keep = set(int(i) for i in item_ids) if item_ids is not None else None
    studies: list[dict[str, Any]] = []
    chosen: dict[int, str] = {}
    for sid, name, dataset, raters, stratify_by, seed, kept_only, own_labels, created_by, created_at in rows:
        items = db.fetchall(
            "SELECT i.id, i.external_id, si.stratum, coalesce(si.batch, 1) FROM study_items si "
            "JOIN items i ON i.id = si.item_id WHERE si.study_id = ? ORDER BY coalesce(si.batch, 1), i.id",
            [sid],
        )
        if keep is not None and not {int(r[0]) for r in items} <= keep:
            continue  # a study travels whole or not at all
        rule = db.fetchone(
            "SELECT field, target, batch, cap, confidence, adjust, stopped_by, stopped_at FROM study_rules "
            "WHERE study_id = ?",
            [sid],
        )
        raters_named = db.fetchall(
            "SELECT u.name FROM study_raters r JOIN annotators u ON u.id = r.annotator_id "
            "WHERE r.study_id = ? ORDER BY u.name",
            [sid],
        )
        assigned = db.fetchall(
            "SELECT i.external_id, u.name, a.batch, a.assigned_at FROM study_assignments a "
            "JOIN items i ON i.id = a.item_id JOIN annotators u ON u.id = a.annotator_id "
            "WHERE a.study_id = ? ORDER BY a.batch, i.id, u.name",
            [sid],
        )
        chosen[int(sid)] = name
        studies.append(
            {
                "name": name,
                "dataset": dataset,
                "raters": int(raters),
                "stratify_by": stratify_by,
                "seed": int(seed),
                "kept_only": bool(kept_only),
                "own_labels": bool(own_labels),
                "created_by": created_by,
                "created_at": _iso(created_at),
                "rule": None if rule is None else {k: _iso(v) for k, v in zip(_RULE_KEYS, rule, strict=True)},
                "rater_names": [str(r[0]) for r in raters_named],
                "items": [{"external_id": r[1], "stratum": r[2], "batch": int(r[3])} for r in items],
                "assignments": [
                    {"external_id": r[0], "rater": r[1], "batch": int(r[2]), "assigned_at": _iso(r[3])}
                    for r in assigned
                ],
            }
        )
    labels: list[dict[str, Any]] = []
    if with_log and chosen:
        for row in db.fetchall(
            "SELECT l.study_id, d.name, i.external_id, v.version, u.name, l.request_id, l.payload, "
            "l.seconds_spent, l.created_at FROM study_labels l JOIN studies st ON st.id = l.study_id "
            "JOIN datasets d ON d.id = st.dataset_id JOIN items i ON i.id = l.item_id "
            "JOIN item_versions v ON v.id = l.version_id JOIN annotators u ON u.id = l.annotator_id"
            f"{where} ORDER BY l.id",
            params,
        ):
            if int(row[0]) not in chosen:
                continue
            labels.append(
                {
                    "study": chosen[int(row[0])],
                    "dataset": row[1],
                    "external_id": row[2],
                    "version": int(row[3]),
                    "annotator": row[4],
                    "request_id": row[5],
                    "payload": json.loads(row[6]) if isinstance(row[6], str) else row[6],
                    "seconds_spent": row[7],
                    "created_at": _iso(row[8]),
                }
            )
    return studies, labels


def study_people(studies: list[dict[str, Any]], labels: list[dict[str, Any]]) -> set[str]:
    """Every annotator a study line or study label line names (the file needs an annotator line each)."""
    names: set[str] = set()
    for s in studies:
        names.update(s["rater_names"])
        names.update(a["rater"] for a in s["assignments"])
        if s.get("created_by"):
            names.add(s["created_by"])
    names.update(label["annotator"] for label in labels)
    return names


def study_annotators(db: Store | Tx, names: set[str]) -> list[dict[str, Any]]:
    """Annotator lines (name, role, removed) for these names, by name."""
    out = []
    for name in sorted(names):
        row = db.fetchone("SELECT name, role, removed_at IS NOT NULL FROM annotators WHERE name = ?", [name])
        if row is not None:
            out.append({"name": row[0], "role": row[1], "removed": bool(row[2])})
    return out


def _person(tx: Tx, name: Any, line: int, what: str) -> int:
    found = tx.scalar("SELECT id FROM annotators WHERE name = ?", [name])
    if found is None:
        raise StudyBundleConflict(f"line {line}: {what} names annotator {name!r}, not in the file")
    return int(found)


def write_studies(
    tx: Tx,
    studies: list[dict[str, Any]],
    labels: list[dict[str, Any]],
    dataset_ids: dict[str, int],
    version_ids: dict[tuple[str, str, int], tuple[int, int]],
) -> tuple[int, int]:
    """Write the bundle's studies (each dict has its file line under ``_line``) and study labels, after
    its items and annotators; a study name taken here already, or a name, item or version the file does
    not hold, refuses the bundle naming the line. Returns (studies, study labels) written."""
    item_ids = {(k[0], k[1]): v[0] for k, v in version_ids.items()}
    study_ids: dict[str, tuple[int, str]] = {}
    members: dict[str, set[str]] = {}  # study -> its items' external ids
    for s in studies:
        line, name, dataset = s["_line"], s["name"], s["dataset"]
        if dataset not in dataset_ids:
            raise StudyBundleConflict(
                f"line {line}: study {name!r} names dataset {dataset!r}, not in the file"
            )
        if name in study_ids or tx.scalar("SELECT count(*) FROM studies WHERE name = ?", [name]):
            raise StudyBundleConflict(
                f"line {line}: a study named {name!r} already exists in this database; import the file "
                "into a database without it"
            )

        def item(external_id: Any, line: int = line, name: str = name, dataset: str = dataset) -> int:
            found = item_ids.get((dataset, str(external_id)))
            if found is None:
                raise StudyBundleConflict(
                    f"line {line}: study {name!r} names item {external_id!r} of {dataset!r}, not in the file"
                )
            return found

        creator = _person(tx, s["created_by"], line, f"study {name!r}") if s.get("created_by") else None
        tx.execute(
            "INSERT INTO studies (dataset_id, name, raters, stratify_by, seed, created_by, created_at, "
            "kept_only, own_labels) VALUES (?, ?, ?, ?, ?, ?, coalesce(CAST(? AS TIMESTAMP), current_timestamp), "
            "?, ?)",
            [
                dataset_ids[dataset],
                name,
                int(s["raters"]),
                s.get("stratify_by"),
                int(s.get("seed") or 0),
                creator,
                s.get("created_at"),
                bool(s.get("kept_only")),
                bool(s.get("own_labels")),
            ],
        )
        sid = int(tx.scalar("SELECT id FROM studies WHERE name = ?", [name]))
        study_ids[name] = (sid, dataset)
        tx.executemany(
            "INSERT INTO study_raters (study_id, annotator_id) VALUES (?, ?)",
            [(sid, _person(tx, r, line, f"study {name!r}")) for r in sorted(set(s.get("rater_names") or []))],
        )
        tx.executemany(
            "INSERT INTO study_items (study_id, item_id, stratum, batch) VALUES (?, ?, ?, ?)",
            [(sid, item(i["external_id"]), i.get("stratum"), int(i.get("batch") or 1)) for i in s["items"]],
        )
        drawn = {str(i["external_id"]) for i in s["items"]}
        members[name] = drawn
        rows = []
        for a in s.get("assignments") or []:
            if str(a["external_id"]) not in drawn:
                raise StudyBundleConflict(
                    f"line {line}: study {name!r} assigns item {a['external_id']!r}, not one of its items"
                )
            rows.append(
                (
                    sid,
                    item(a["external_id"]),
                    _person(tx, a["rater"], line, f"study {name!r}"),
                    int(a["batch"]),
                    a["assigned_at"],
                )
            )
        tx.executemany(
            "INSERT INTO study_assignments (study_id, item_id, annotator_id, batch, assigned_at) "
            "VALUES (?, ?, ?, ?, CAST(? AS TIMESTAMP))",
            rows,
        )
        rule = s.get("rule")
        if rule:
            tx.execute(
                "INSERT INTO study_rules (study_id, field, target, batch, cap, confidence, adjust, stopped_by, "
                "stopped_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, CAST(? AS TIMESTAMP))",
                [sid, *(rule.get(k) for k in _RULE_KEYS)],
            )
    for label in labels:
        line, study = label["_line"], label["study"]
        if study not in study_ids:
            raise StudyBundleConflict(f"line {line}: a study label names study {study!r}, not in the file")
        sid, dataset = study_ids[study]
        key = (dataset, str(label["external_id"]), int(label["version"]))
        if label.get("dataset") != dataset or key not in version_ids:
            raise StudyBundleConflict(
                f"line {line}: a study label names item {key[1]!r} version {key[2]} of "
                f"{label.get('dataset')!r}, not in study {study!r}'s dataset in the file"
            )
        if key[1] not in members[study]:
            raise StudyBundleConflict(
                f"line {line}: a study label names item {key[1]!r}, not in study {study!r}"
            )
        request_id = str(label["request_id"])
        if tx.scalar("SELECT count(*) FROM study_labels WHERE request_id = ?", [request_id]) or tx.scalar(
            "SELECT count(*) FROM annotations WHERE request_id = ?", [request_id]
        ):
            raise StudyBundleConflict(f"line {line}: request id {request_id!r} is already in this database")
        iid, vid = version_ids[key]
        tx.execute(
            "INSERT INTO study_labels (request_id, study_id, item_id, version_id, annotator_id, payload, "
            "seconds_spent, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, CAST(? AS TIMESTAMP))",
            [
                request_id,
                sid,
                iid,
                vid,
                _person(tx, label["annotator"], line, "a study label"),
                json.dumps(label["payload"], sort_keys=True),
                label.get("seconds_spent"),
                label["created_at"],
            ],
        )
    return len(studies), len(labels)
