"""ConfProBench's perturbation loop (docs/PROTOCOLS.md D2-D4): variants made, checked, re-applied until valid.

A check dataset holds one item per unit: a step (synonym, syntactic) or a problem's images. Version 1
is the original; the perturb job adds the variant as the next version, recording its type, operation or
transformation, parameters, seed, candidate index, candidates and attempt (the checker's verdicts and
name are their label on that version; its parent is the version before). A failed check queues the
same perturbation of the same unit again; past the dataset's max_attempts (0: no cap, the paper's) the
item is "failed" with its history, which admins see; past warn_after_attempts they are warned.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from importers.records import ImageData, ItemRecord
from qc.generators import (
    TRANSFORMATIONS,
    Perturbed,
    TextVariant,
    choose_variant,
    draw_operation,
    draw_transformations,
    pick_candidate,
)
from services.access import Action, Actor, require
from services.annotate import dataset_for
from services.clock import now_utc
from services.dataset_settings import settings_of
from services.errors import InvalidInput, NotFound
from services.generation import GenerationError, GeneratorConfig, Request, backend_for, png_bytes
from services.generator_settings import loop_settings
from services.job_results import copy_record, write_result
from store import annotations as annotation_log
from store import bulk, datasets, items, state, users
from store import jobs as queue
from store.datasets import Dataset
from store.db import Store, Tx
from store.items import ItemView
from store.jobs import Job
from tasks import PERTURBATION_CHECK, Decision
from tasks.perturbation_check import PERTURBATION_TYPES, perturbation_of

__all__ = [
    "CreatedCheck",
    "Variant",
    "create_check_dataset",
    "history",
    "on_failed_check",
    "run_job",
    "warnings",
]

# Text perturbations need the text generator (images are made here): their jobs are a kind of their own,
# so that without a generator they wait, spending no attempt, as regenerations do (services.jobs).
TEXT_JOB = "perturb_text"
WAITING = "waiting"  # an item whose variant is being made: not offered to checkers


@dataclass(frozen=True)
class CreatedCheck:
    dataset: str
    units: int
    jobs: int


def _seed(settings: dict[str, Any], item_id: int, attempt: int) -> int:
    """A seed per unit and attempt, from the dataset's seed: a re-apply draws afresh, reproducibly."""
    return int(settings.get("seed", 0)) * 1_000_003 + item_id * 1009 + attempt


def create_check_dataset(
    store: Store,
    user: Actor,
    source: str,
    name: str,
    kind: str,
    role: str | None = None,
    limit: int | None = None,
) -> CreatedCheck:
    """A perturbation-check dataset from a source dataset: one unit per step of ``role`` (text types)
    or per item with images (image type), each queued for its first variant."""
    require(user, Action.ADMINISTER)
    if kind not in PERTURBATION_TYPES:
        raise InvalidInput(f"perturbation type {kind!r}: choose one of {', '.join(PERTURBATION_TYPES)}")
    src = dataset_for(store, source)
    if datasets.get_dataset(store, name) is not None:
        raise InvalidInput(f"a dataset named {name!r} exists already: choose another name")
    records: list[ItemRecord] = []
    for item_id in items.item_ids(store, src.id):
        item = items.get_item(store, item_id)
        if item is None:
            continue
        base = {"type": kind, "source_dataset": src.name, "source_item": item.external_id, "attempt": 0}
        if kind == "image":
            if item.image_paths:
                unit = {**base, "images": len(item.image_paths)}
                records.append(
                    copy_record(
                        item, external_id=f"{item.external_id}:image", steps={}, meta={"perturbation": unit}
                    )
                )
        else:
            texts = item.steps.get(role or "") or next(
                (item.steps[r] for r in ("candidate", "original", "solution") if item.steps.get(r)), []
            )
            for k, text in enumerate(texts):
                records.append(
                    ItemRecord(
                        external_id=f"{item.external_id}:step{k + 1}",
                        question=item.question,
                        steps={"original": [text]},
                        source=item.source,
                        meta={"perturbation": {**base, "step": k + 1}},
                    )
                )
        if limit is not None and len(records) >= limit:
            records = records[:limit]
            break
    if not records:
        what = "items with images" if kind == "image" else f"steps{f' of role {role!r}' if role else ''}"
        raise InvalidInput(f"{src.name} has no {what} to perturb")
    now = now_utc()
    with store.writing() as tx:
        summary = bulk.write_records(tx, name, PERTURBATION_CHECK, records, source_format="perturbation")
        made = datasets.get_dataset(tx, name)
        assert made is not None
        for item_id in summary.item_ids:
            _queue(tx, made, item_id, 1, now)
    return CreatedCheck(name, len(summary.item_ids), len(summary.item_ids))


def _queue(tx: Tx, dataset: Dataset, item_id: int, attempt: int, now: datetime) -> Job:
    """Hold the item back from checkers and queue its next variant."""
    st = state.get_item_state(tx, item_id)
    target = st.target if st else datasets.initial_target(dataset)
    state.set_item_state(tx, item_id, target=target, status=WAITING, decision=None, settled_at=None, now=now)
    # No scheduler reload here: on a failed check the submit closes the item in the pool after commit
    # (a reload first would carry the checker's lease over to the next variant).
    version = items.current_version_id(tx, item_id)
    assert version is not None
    shown = items.get_item(tx, item_id, version)
    unit = perturbation_of(shown) if shown is not None else {}
    text = unit.get("type") != "image" and not _remaining(unit, settings_of(dataset))
    return queue.enqueue(
        tx,
        kind=TEXT_JOB if text else "perturb",  # a text variant needs the generator: it waits for one
        item_id=item_id,
        version_id=version,
        reason="first variant" if attempt == 1 else "the check failed: re-apply the same perturbation",
        payload={"attempt": attempt, "seed": _seed(settings_of(dataset), item_id, attempt)},
        now=now,
        max_attempts=loop_settings(tx)["job_max_attempts"],
        loop="perturbation",
    )


def on_failed_check(
    tx: Tx, dataset: Dataset, item: ItemView, result: Decision, labels: list[dict[str, Any]], now: datetime
) -> None:
    """The perturbation check's after_decision hook (services/hooks.py): a failed variant is made again
    (D4), or past the dataset's cap the item is marked failed with its history."""
    if result.status != "rejected":
        return
    attempt = int(perturbation_of(item).get("attempt") or 0)
    cap = int(settings_of(dataset).get("max_attempts") or 0)
    if cap and attempt >= cap:
        state.set_item_state(
            tx,
            item.item_id,
            target=result.target,
            status="failed",
            decision={
                **(result.decision or {}),
                "reason": f"unperturbable: {attempt} variants failed the check (cap {cap}); left out of CRS",
            },
            settled_at=result.settled_at,
            now=now,
        )
        return
    _queue(tx, dataset, item.item_id, attempt + 1, now)


def _remaining(unit: dict[str, Any], settings: dict[str, Any]) -> list[int]:
    """The candidates already made and not drawn yet, when a failed text variant is re-applied from them
    (D4's other reading, reapply=remaining): drawing one needs no generator."""
    earlier = unit if settings["reapply"] == "remaining" else {}
    drawn = list(earlier.get("drawn") or [])
    return [k for k, c in enumerate(earlier.get("candidates") or []) if c and k not in drawn]


def _ranges(settings: dict[str, Any]) -> dict[str, float]:
    return {
        "scale_low": float(settings["scale_low"]),
        "scale_high": float(settings["scale_high"]),
        "rotate_max": float(settings["rotate_max"]),
        "rotate_min": min(5.0, float(settings["rotate_max"])),
        "noise_low": float(settings["noise_low"]),
        "noise_high": float(settings["noise_high"]),
    }


def run_job(store: Store, job: Job, worker: str, config: GeneratorConfig) -> None:
    """Make the unit's next variant and store it as the item's next version (back in the check)."""
    item = items.get_item(store, job.item_id, job.version_id)
    if item is None:
        raise GenerationError(f"item {job.item_id} version {job.version_id} no longer exists")
    dataset = datasets.get_dataset(store, item.dataset_id)
    if dataset is None:
        raise GenerationError(f"item {job.item_id} belongs to no dataset")
    settings = settings_of(dataset)
    unit = perturbation_of(item)
    kind, attempt, seed = unit.get("type"), int(job.payload["attempt"]), int(job.payload["seed"])
    record = {
        "type": kind,
        "source_dataset": unit.get("source_dataset"),
        "source_item": unit.get("source_item"),
        "step": unit.get("step"),
        "attempt": attempt,
        "seed": seed,
        "parent_version_id": item.version_id,
        "job": job.id,
    }
    if kind == "image":
        originals = item.image_paths[: int(unit.get("images") or len(item.image_paths))]
        if settings["image_draw"] == "per_image":
            ops = [draw_operation(seed + k) for k in range(len(originals))]
        else:
            ops = [draw_operation(seed)] * len(originals)
        perturbed: list[Perturbed] = backend_for("image", config).generate(
            Request("image", {}, seed, tuple(originals), {"operations": ops, "ranges": _ranges(settings)})
        )
        record.update(
            operation=ops[0] if len(set(ops)) == 1 else ", ".join(ops),
            operations=ops,
            parameters=[p.parameters for p in perturbed],
            images=len(originals),
            backend="image",
        )
        variants = [_png(p) for p in perturbed]
        new = copy_record(item, meta={"perturbation": record})
        new.images = [*new.images[: len(originals)], *variants]
    elif kind in ("synonym", "syntactic"):
        original = item.steps["original"][0]
        n = int(settings["candidates"])
        assigned = draw_transformations(n, seed) if kind == "syntactic" else []
        fields = {
            "step": original,
            "candidates": n,
            "assigned": "\n".join(f"{k}. {TRANSFORMATIONS[t]}" for k, t in enumerate(assigned, 1)),
        }
        earlier = unit if settings["reapply"] == "remaining" else {}
        drawn = list(earlier.get("drawn") or [])
        left = _remaining(unit, settings)
        if left:  # D4's other reading: another of the candidates already made, no new generation
            index = left[pick_candidate(len(left), seed)]
            assigned = list(earlier.get("assigned") or [])
            variant = TextVariant(
                earlier["candidates"][index],
                list(earlier["candidates"]),
                index,
                assigned[index] if kind == "syntactic" and assigned else None,
                assigned,
            )
            backend_name, n = "remaining candidate", len(variant.candidates)
        else:
            backend = backend_for(kind, config)
            answer = backend.generate(Request(kind, fields, seed, (), {"transformations": assigned}))
            variant = choose_variant(kind, answer, original, seed, assigned)
            backend_name, drawn = backend.name, []
        assigned = variant.transformations
        record.update(
            transformation=variant.transformation,
            transformation_label=TRANSFORMATIONS.get(variant.transformation or ""),
            candidate_index=variant.candidate_index,
            candidates=variant.candidates,
            assigned=assigned,
            parameters={"candidates": n, "model": config.model if backend_name == "http" else None},
            backend=backend_name,
            drawn=[*drawn, variant.candidate_index],
        )
        new = copy_record(
            item,
            steps={"original": [original], "perturbed": [variant.text]},
            meta={"perturbation": record},
            images=[],
        )
    else:
        raise GenerationError(f"item {item.external_id} has no perturbation type")
    write_result(store, job, worker, new, "perturbed" if attempt == 1 else "regenerated")


def _png(perturbed: Perturbed) -> ImageData:
    image = perturbed.image
    return ImageData(
        png_bytes(image),
        origin=f"{perturbed.operation}:{perturbed.seed}",
        mime="image/png",
        width=image.width,
        height=image.height,
    )


@dataclass(frozen=True)
class Variant:
    """One variant of a unit as admins see it: what made it and how it was checked."""

    version: int
    version_id: int
    parent_version_id: int | None
    reason: str
    record: dict[str, Any]
    checks: list[dict[str, Any]]  # each checker's verdicts: {"reviewer", "verdict", "checks", "at"}


def history(store: Store, user: Actor, item_id: int) -> list[Variant]:
    """Every version of a check item, oldest first, with its checkers' verdicts (admins only: the
    verdicts are others' labels)."""
    require(user, Action.ADMINISTER)
    item = items.get_item(store, item_id)
    if item is None:
        raise NotFound(f"there is no item {item_id}")
    found = []
    for vid, version, parent, reason in items.version_rows(store, item_id):
        view = items.get_item(store, item_id, vid)
        checks = []
        for row in annotation_log.item_annotations(store, item_id, vid):
            who = users.get_user_by_id(store, row.annotator_id)
            checks.append(
                {
                    "reviewer": who.name if who else f"#{row.annotator_id}",
                    "verdict": row.payload.get("verdict"),
                    "checks": row.payload.get("checks"),
                    "at": str(row.created_at),
                }
            )
        found.append(Variant(version, vid, parent, reason, perturbation_of(view) if view else {}, checks))
    return found


def warnings(store: Store, user: Actor, dataset_name: str) -> list[str]:
    """Admins' warnings: units past warn_after_attempts variants, and units marked failed."""
    require(user, Action.ADMINISTER)
    dataset = dataset_for(store, dataset_name, PERTURBATION_CHECK)
    settings = settings_of(dataset)
    warn = int(settings["warn_after_attempts"])
    out = []
    for item_id in items.item_ids(store, dataset.id):
        item = items.get_item(store, item_id)
        st = state.get_item_state(store, item_id)
        if item is None or st is None:
            continue
        attempt = int(perturbation_of(item).get("attempt") or 0)
        if st.status == "failed":
            out.append(f"{item.external_id}: failed — {(st.decision or {}).get('reason', '')}")
        elif attempt >= warn:
            out.append(
                f"{item.external_id}: {attempt} variants so far (warning after {warn}); now {st.status}"
            )
    return out
