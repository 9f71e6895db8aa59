"""Items and their versions as the panels and the exports read them (store.versions writes them).

An item's versions are rows of item_versions; items.current_version_id points at the newest one.
Reads for one item (get_item, cached by version), for many (prefetch), and the export frames
(items_frame, items_frames, items_json_frames) that read a whole dataset a frame at a time.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
import pandas as pd

from importers.records import VERSION_LISTS, VERSION_VALUES
from store.cache import MISS
from store.images import image_files, image_path

if TYPE_CHECKING:
    from store.db import Store, Tx
    from store.engines import Engine

__all__ = [
    "VERSION_COLUMNS",
    "ItemView",
    "ItemsJson",
    "current_version_id",
    "existing_versions",
    "get_item",
    "item_ids",
    "items_frame",
    "items_frames",
    "items_json_frames",
    "position",
    "prefetch",
    "step_counts",
    "version_rows",
]

# item_versions' columns, in the order reads select them and writes fill them.
VERSION_COLUMNS = [
    "id",
    "item_id",
    "version",
    "parent_id",
    "reason",
    "content_hash",
    *VERSION_VALUES,
    *VERSION_LISTS,
    "meta",
]


@dataclass(frozen=True)
class ItemView:
    """An item's current version as the panels show it."""

    item_id: int
    dataset_id: int
    external_id: str
    version_id: int
    version: int
    question: str
    steps: dict[str, list[str]]
    reference_answer: str | None
    reference_solution: str | None
    error_type: str | None
    rationale: str | None
    source: str | None
    final_answer_correct: bool | None
    earliest_error: int | None
    error_steps: list[int]
    modified_steps: list[int]
    options: list[str]
    meta: dict[str, Any]
    image_paths: list[str]


def existing_versions(tx: Tx, dataset_id: int) -> dict[str, tuple[int, int, int, str]]:
    """external id -> (item id, current version id, version, content hash) for a dataset's items."""
    return {
        row[0]: (row[1], row[2], row[3], row[4])
        for row in tx.fetchall(
            "SELECT i.external_id, i.id, v.id, v.version, v.content_hash FROM items i "
            "JOIN item_versions v ON v.id = i.current_version_id WHERE i.dataset_id = ?",
            [dataset_id],
        )
    }


def item_ids(db: Store | Tx, dataset_id: int) -> list[int]:
    return [r[0] for r in db.fetchall("SELECT id FROM items WHERE dataset_id = ? ORDER BY id", [dataset_id])]


def _store(db: Store | Tx) -> Store:
    return db.store


def current_version_id(db: Store | Tx, item_id: int) -> int | None:
    key = ("current", item_id)
    found = db.cache.get(key)
    if found is MISS:
        found = db.scalar("SELECT current_version_id FROM items WHERE id = ?", [item_id])
        if found is None:
            return None
        db.cache.put(key, found)
    return int(found)


def position(db: Store | Tx, dataset_id: int, item_id: int) -> int:
    """The 1-based place of an item in its dataset (by id), from a cached sorted array."""
    key = ("order", dataset_id)
    order = db.cache.get(key)
    if order is MISS:
        # as a NumPy column: a list of a million row tuples first peaked at ~100 MB more
        column = db.columns("SELECT id FROM items WHERE dataset_id = ? ORDER BY id", [dataset_id])["id"]
        order = np.ascontiguousarray(column, dtype=np.int64)
        db.cache.put(key, order)
    return int(np.searchsorted(order, item_id, side="right"))


def prefetch(db: Store | Tx, item_ids: Sequence[int]) -> None:
    """Load the current versions of many items into the version cache in three queries."""
    store = _store(db)
    wanted = [i for i in item_ids if store.versions.get(store.cache.get(("current", i))) is None]
    if not wanted:
        return
    # the ids as one array parameter, not a registered frame: the annotator's path loads no pandas
    wanted_ids = "(SELECT unnest(CAST(? AS BIGINT[])) AS item_id) w JOIN items i ON i.id = w.item_id"
    cols = ", ".join(f"v.{c}" for c in VERSION_COLUMNS)
    rows = store.fetchall(
        f"SELECT i.dataset_id, i.external_id, {cols} FROM {wanted_ids} "
        "JOIN item_versions v ON v.id = i.current_version_id",
        [wanted],
    )
    steps = store.fetchall(
        f"SELECT s.version_id, s.role, s.text FROM {wanted_ids} "
        "JOIN steps s ON s.version_id = i.current_version_id ORDER BY s.version_id, s.role, s.position",
        [wanted],
    )
    images = store.fetchall(
        f"SELECT vi.version_id, vi.image_hash FROM {wanted_ids} "
        "JOIN version_images vi ON vi.version_id = i.current_version_id ORDER BY vi.version_id, vi.position",
        [wanted],
    )
    by_version: dict[int, dict[str, list[str]]] = {}
    for vid, role, text in steps:
        by_version.setdefault(vid, {}).setdefault(role, []).append(text)
    pictures: dict[int, list[str]] = {}
    for vid, digest in images:
        path = image_path(db, digest)
        if path is not None:
            pictures.setdefault(vid, []).append(str(path))
    for row in rows:
        rec = dict(zip(["dataset_id", "external_id", *VERSION_COLUMNS], row, strict=True))
        store.versions.put(rec["id"], _view(rec, by_version.get(rec["id"], {}), pictures.get(rec["id"], [])))
        store.cache.put(("current", rec["item_id"]), rec["id"])


def get_item(db: Store | Tx, item_id: int, version_id: int | None = None) -> ItemView | None:
    """The current version of an item (or a given version), with its steps and image files."""
    version_id = version_id or current_version_id(db, item_id)
    if version_id is None:
        return None
    store = db.store
    cached = store.versions.get(version_id)  # type: ignore[union-attr]
    if cached is not None and cached.item_id == item_id:
        return cached
    view = _load_version(db, item_id, version_id)
    if view is not None:
        store.versions.put(version_id, view)  # type: ignore[union-attr]
    return view


def _load_version(db: Store | Tx, item_id: int, version_id: int) -> ItemView | None:
    cols = ", ".join(f"v.{c}" for c in VERSION_COLUMNS)
    row = db.fetchone(
        f"SELECT i.dataset_id, i.external_id, {cols} FROM items i JOIN item_versions v ON v.item_id = i.id "
        "WHERE v.id = ? AND v.item_id = ?",
        [version_id, item_id],
    )
    if row is None:
        return None
    rec = dict(zip(["dataset_id", "external_id", *VERSION_COLUMNS], row, strict=True))
    steps: dict[str, list[str]] = {}
    for role, text in db.fetchall(
        "SELECT role, text FROM steps WHERE version_id = ? ORDER BY role, position", [rec["id"]]
    ):
        steps.setdefault(role, []).append(text)
    paths = []
    for (digest,) in db.fetchall(
        "SELECT image_hash FROM version_images WHERE version_id = ? ORDER BY position", [rec["id"]]
    ):
        path = image_path(db, digest)
        if path is not None:
            paths.append(str(path))
    return _view(rec, steps, paths)


def _view(rec: dict[str, Any], steps: dict[str, list[str]], paths: list[str]) -> ItemView:
    return ItemView(
        item_id=rec["item_id"],
        dataset_id=rec["dataset_id"],
        external_id=rec["external_id"],
        version_id=rec["id"],
        version=rec["version"],
        question=rec["question"],
        steps=steps,
        reference_answer=rec["reference_answer"],
        reference_solution=rec["reference_solution"],
        error_type=rec["error_type"],
        rationale=rec["rationale"],
        source=rec["source"],
        final_answer_correct=rec["final_answer_correct"],
        earliest_error=rec["earliest_error"],
        error_steps=json.loads(rec["error_steps"]),
        modified_steps=json.loads(rec["modified_steps"]),
        options=json.loads(rec["options"]),
        meta=json.loads(rec["meta"]),
        image_paths=paths,
    )


def items_frame(
    db: Store | Tx, dataset_id: int | None = None, item_ids: Sequence[int] | None = None
) -> pd.DataFrame:
    """Every item's current version with its step lists and gating state, one row per item (for exports).

    Also its image files (`image_files`: paths in the store, in order) and `labels`: each annotator's
    latest label on the current version (annotator, payload, seconds_spent, created_at), by arrival.
    With `item_ids`, those items only (an export of a Browse filter reads no more than it writes).
    """
    sql, params = _items_query(db.engine, dataset_id, item_ids)
    frame = db.df(sql, params)
    return _with_files_and_labels(frame, _image_files(db, frame))


def items_frames(
    db: Store | Tx, dataset_id: int | None = None, *, rows: int = 50_000
) -> Iterator[pd.DataFrame]:
    """items_frame a frame of about ``rows`` items at a time, in item order, for a whole export.

    The rows are fetched from DuckDB as the caller writes them out, so a million items never sit
    in memory as Python objects at once. Between two frames the caller must not use this thread's
    cursor (the result is read from it): nothing here queries while the frames are read.
    """
    files = _image_files(db, None)
    spans = _spans(db, dataset_id, rows)
    if spans is None:
        sql, params = _items_query(db.engine, dataset_id, None)
        for frame in db.df_chunks(sql, params, rows):
            yield _with_files_and_labels(frame, files)
        return
    # One query per span of ``rows`` items in id order: each sorts and aggregates only its own items'
    # steps (found by version id range: steps are stored in version order, so DuckDB skips the rest),
    # where one query over the whole database sorted a million rows of step lists at once.
    for span in spans:
        sql, params = _items_query(db.engine, dataset_id, None, span)
        frame = db.df(sql, params)
        if not frame.empty:
            yield _with_files_and_labels(frame, files)


@dataclass(frozen=True)
class ItemsJson:
    """Items (items_frame's rows, in item order) for a JSON-lines export, their plain columns already
    JSON as orjson writes it (compact UTF-8): ``objects``, each named group of columns as one object
    per item; ``steps``, {role: [text, ...]} ({} for none). ``meta`` is the stored text, ``labels``
    as items_frame reads them. No images."""

    item_ids: list[int]
    objects: dict[str, list[bytes]]
    meta: list[str]
    steps: list[bytes]
    labels: list[list[dict[str, Any]]]


def items_json_frames(
    db: Store | Tx,
    dataset_id: int | None = None,
    item_ids: Sequence[int] | None = None,
    *,
    objects: Mapping[str, Sequence[str]],
    rows: int = 50_000,
) -> Iterator[ItemsJson]:
    """items_frames for a JSON-lines export, the ``objects`` (name -> items_frame column names) and
    the steps written as JSON by the database where its JSON is orjson's (DuckDB): a million items'
    texts never become Python strings, lists and dicts. Elsewhere (PostgreSQL) orjson writes them
    here from items_frames, the same bytes. With ``item_ids``, those items (one query)."""
    engine = db.engine
    written = {
        name: engine.json_object({c: _ITEM_COLUMNS[c] for c in columns}) for name, columns in objects.items()
    }
    steps = engine.json_lists_agg("role", "position", "text")
    select = {name: sql for name, sql in written.items() if sql is not None}
    if steps is None or len(select) < len(written):
        frames = (
            items_frames(db, dataset_id, rows=rows)
            if item_ids is None
            else [items_frame(db, dataset_id, item_ids)]
        )
        yield from (_json_in_python(frame, objects) for frame in frames if not frame.empty)
        return
    select |= {
        "meta": _ITEM_COLUMNS["meta"],
        "steps": _ITEM_COLUMNS["steps"],
        "labels": _ITEM_COLUMNS["labels"],
    }
    spans: list[tuple[int, int, int, int]] | list[None] = (
        _spans(db, dataset_id, rows) if item_ids is None else None
    ) or [None]
    for span in spans:  # as items_frames: one query per span of ``rows`` items
        sql, params = _items_query(engine, dataset_id, item_ids, span, select, steps)
        got = db.columns(sql, params)
        if len(got["item_id"]):
            yield ItemsJson(
                item_ids=got["item_id"].tolist(),
                objects={name: _orjson_spelling(got[name].tolist()) for name in objects},
                meta=got["meta"].tolist(),
                steps=[text or b"{}" for text in _orjson_spelling(got["steps"].tolist())],
                labels=_read_labels(got["labels"].tolist()),
            )


def _orjson_spelling(texts: list[Any]) -> list[Any]:
    """The database's JSON texts as orjson writes them: DuckDB writes \\u000B..\\u001F with upper-case
    hex (orjson lower-case); a text with a \\u00 escape is read and written again by orjson (rare:
    control characters, or a backslash before u00 in the text). None stays None."""
    return [
        orjson.dumps(orjson.loads(text)) if text is not None and b"\\u00" in text else text for text in texts
    ]


# How the exports' orjson writes a value: numpy scalars as numbers, keys that are not text as text.
_ORJSON = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS


def _json_in_python(frame: pd.DataFrame, objects: Mapping[str, Sequence[str]]) -> ItemsJson:
    """An items_frame frame as items_json_frames hands it, written by orjson (what the DuckDB path's
    to_json writes, byte for byte): a missing value is null, a step list a JSON list."""
    values = {name: _plain_values(frame[name]) for columns in objects.values() for name in columns}
    return ItemsJson(
        item_ids=frame["item_id"].tolist(),
        objects={
            name: [
                orjson.dumps(dict(zip(columns, row, strict=True)), default=str, option=_ORJSON)
                for row in zip(*(values[c] for c in columns), strict=True)
            ]
            for name, columns in objects.items()
        },
        meta=frame["meta"].tolist(),
        steps=[
            orjson.dumps(
                {k: v.tolist() if isinstance(v, np.ndarray) else list(v) for k, v in (steps or {}).items()},
                default=str,
                option=_ORJSON,
            )
            for steps in frame["steps"].tolist()
        ],
        labels=frame["labels"].tolist(),
    )


def _plain_values(column: pd.Series) -> list[Any]:
    """A column as Python values; a missing one (NaN, pd.NA) is None."""
    values = column.tolist()
    if isinstance(column.dtype, pd.api.extensions.ExtensionDtype):
        return [None if v is pd.NA or (isinstance(v, float) and v != v) else v for v in values]
    return values


def _spans(db: Store | Tx, dataset_id: int | None, rows: int) -> list[tuple[int, int, int, int]] | None:
    """(first item id, last item id, lowest and highest current version id) of each ``rows`` items
    in id order; None when they fit in one frame (one query is then as good)."""
    where, params = ("WHERE dataset_id = ?", [dataset_id]) if dataset_id is not None else ("", [])
    count = int(db.scalar(f"SELECT count(*) FROM items {where}", params) or 0)
    if count <= rows:
        return None
    bounds = db.fetchall(
        "SELECT min(id), max(id), min(current_version_id), max(current_version_id) FROM "
        f"(SELECT id, current_version_id, floor((row_number() OVER (ORDER BY id) - 1) / ?) AS k FROM items {where}) t "
        "GROUP BY k ORDER BY k",
        [rows, *params],
    )
    return [(int(a), int(b), int(c), int(d)) for a, b, c, d in bounds]


# items_frame's columns: name -> SQL over i (items), d (datasets), v (its current version), st (state).
_ITEM_COLUMNS = {
    "dataset": "d.name",
    "task": "d.task",
    "external_id": "i.external_id",
    "version": "v.version",
    "version_reason": "v.reason",
    **{name: f"v.{name}" for name in VERSION_COLUMNS[6:]},  # question .. meta
    "steps": "sj.steps",
    "images": "im.images",
    "labels": "lab.labels",
    **{name: f"st.{name}" for name in ("status", "decision", "target", "settled_at")},
}


def _items_query(
    engine: Engine,
    dataset_id: int | None,
    item_ids: Sequence[int] | None,
    span: tuple[int, int, int, int] | None = None,
    select: dict[str, str] | None = None,
    steps: str | None = None,
) -> tuple[str, list[Any]]:
    """items_frame's query; ``select``: other columns than _ITEM_COLUMNS (name -> SQL), no images;
    ``steps``: an aggregate over a version's steps for sj.steps (else a map of role -> texts)."""
    conditions: list[str] = []
    params: list[Any] = []
    versions, version_params = "", []  # the versions' rows read: all, or those of a span's items
    labelled, label_params = "", []  # the annotations read: all, or those of a span's items
    if span is not None:
        conditions.append("i.id BETWEEN ? AND ?")
        params += [span[0], span[1]]
        versions, version_params = "WHERE version_id BETWEEN ? AND ? ", [span[2], span[3]]
        labelled, label_params = "WHERE item_id BETWEEN ? AND ? ", [span[0], span[1]]
    if dataset_id is not None:
        conditions.append("i.dataset_id = ?")
        params.append(dataset_id)
    if item_ids is not None:
        conditions.append("i.id IN (SELECT unnest(CAST(? AS BIGINT[])))")
        params.append([int(i) for i in item_ids])
    where = ("WHERE " + " AND ".join(conditions)) if conditions else ""
    labels = engine.records_agg(
        {
            "annotator": "u.name",
            "payload": "a.payload",
            "seconds_spent": "a.seconds_spent",
            "created_at": "a.created_at",
        },
        "a.id",
    )
    images = select is None
    columns = ", ".join(f"{expr} AS {name}" for name, expr in (select or _ITEM_COLUMNS).items())
    return (
        (
            f"WITH sj AS (SELECT version_id, {steps} AS steps FROM steps {versions}GROUP BY version_id), "
            if steps is not None
            else "WITH s AS (SELECT version_id, role, array_agg(text ORDER BY position) AS texts FROM steps "
            f"{versions}GROUP BY version_id, role), "
            f"sj AS (SELECT version_id, {engine.map_agg('role', 'texts', 'role')} AS steps FROM s "
            "GROUP BY version_id), "
        )
        + (
            "im AS (SELECT version_id, array_agg(image_hash ORDER BY position) AS images FROM version_images "
            f"{versions}GROUP BY version_id), "
            if images
            else ""
        )
        + f"latest AS (SELECT max(id) AS id FROM annotations {labelled}GROUP BY item_id, version_id, annotator_id), "
        f"lab AS (SELECT a.item_id, a.version_id, {labels} AS labels "
        "FROM annotations a JOIN latest USING (id) JOIN annotators u ON u.id = a.annotator_id "
        "GROUP BY a.item_id, a.version_id) "
        f"SELECT i.id AS item_id, {columns} "
        "FROM items i JOIN datasets d ON d.id = i.dataset_id JOIN item_versions v ON v.id = i.current_version_id "
        "LEFT JOIN sj ON sj.version_id = v.id "
        + ("LEFT JOIN im ON im.version_id = v.id " if images else "")
        + "LEFT JOIN lab ON lab.version_id = v.id LEFT JOIN item_state st ON st.item_id = i.id "
        f"{where} ORDER BY i.id",
        [*version_params, *(version_params if images else []), *label_params, *params],
    )


def _image_files(db: Store | Tx, frame: pd.DataFrame | None) -> Mapping[str, str | None]:
    """Image hash -> its file in the store, for the images of ``frame`` (None: every image)."""
    if frame is None:
        return image_files(db)  # object storage: each fetched when a frame first asks for it
    files: dict[str, str | None] = {}
    for hashes in frame["images"].tolist():
        for digest in hashes if isinstance(hashes, list | np.ndarray) else []:
            if digest not in files:
                found = image_path(db, digest)
                files[digest] = str(found) if found is not None else None
    return files


def _with_files_and_labels(frame: pd.DataFrame, files: Mapping[str, str | None]) -> pd.DataFrame:
    """Image hashes become `image_files`, labels get their payloads read; no query (see items_frames)."""
    # DuckDB hands a missing list to pandas as NA: an item with no images or no labels has [].
    # One pass over plain lists per column (a Series walked cell by cell costs several times more).
    images = [list(h) if isinstance(h, list | np.ndarray) else [] for h in frame["images"].tolist()]
    frame["image_files"] = [[files[h] for h in hashes if files.get(h)] if hashes else [] for hashes in images]
    frame["labels"] = _read_labels(frame["labels"].tolist())
    return frame.drop(columns=["images"])


def _read_labels(values: list[Any]) -> list[list[dict[str, Any]]]:
    """Each item's labels with their payloads read; a missing list (no labels) is []."""
    return [
        [
            {
                **entry,
                "payload": json.loads(entry["payload"]),
                "created_at": str(entry["created_at"]),
                # PostgreSQL's JSON writes the DOUBLE 5.0 as 5: a float, as DuckDB hands it
                "seconds_spent": None if entry["seconds_spent"] is None else float(entry["seconds_spent"]),
            }
            for entry in labels
        ]
        if isinstance(labels, list | np.ndarray)
        else []
        for labels in values
    ]


def step_counts(db: Store | Tx, dataset_id: int | None = None, role: str = "solution") -> pd.DataFrame:
    """Steps of one role on each item's current version (``item_id, n_steps``; 0 where it has none)."""
    where = "WHERE i.dataset_id = ?" if dataset_id is not None else ""
    return db.df(
        "SELECT i.id AS item_id, count(st.position) AS n_steps FROM items i "
        "LEFT JOIN steps st ON st.version_id = i.current_version_id AND st.role = ? "
        f"{where} GROUP BY i.id ORDER BY i.id",
        [role, dataset_id] if dataset_id is not None else [role],
    )


def version_rows(db: Store | Tx, item_id: int) -> list[tuple[int, int, int | None, str]]:
    """An item's versions, oldest first: (version id, version number, parent version id, reason)."""
    return [
        (int(r[0]), int(r[1]), None if r[2] is None else int(r[2]), str(r[3]))
        for r in db.fetchall(
            "SELECT id, version, parent_id, reason FROM item_versions WHERE item_id = ? ORDER BY version",
            [item_id],
        )
    ]
