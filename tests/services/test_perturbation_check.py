"""ConfProBench's perturbation check: variants made, checked on the type's checklist, re-applied after a
failed check (same type, same unit), each variant recorded; the cap a team may set; admins' warnings."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from PIL import Image

from services import annotate, generator_settings, jobs, perturbation
from services.access import OPERATOR
from services.errors import InvalidInput, NotAllowed, ServiceError
from services.leasing import leases_of
from store import Store, datasets, items, state, users
from store import jobs as queue
from tasks import spec_for
from tasks.base import PayloadError
from tasks.perturbation_check import CHECKLISTS
from tests.services.test_regeneration import _status

pytestmark = pytest.mark.engines  # tests on the store fixture run on DuckDB and PostgreSQL

ROOT = Path(__file__).resolve().parents[2]
FAKE = [sys.executable, str(ROOT / "tests" / "fake_generator.py")]


def _check(store: Store, name: str, dataset: str, kind: str, passes: bool) -> items.ItemView:
    user = users.get_user(store, name) or users.add_user(store, name, "annotator")
    shown = annotate.next_item(store, user, annotate.dataset_for(store, dataset))
    assert shown is not None
    checks = dict.fromkeys(CHECKLISTS[kind], True)
    if not passes:
        checks[next(iter(checks))] = False
    annotate.submit(
        store,
        annotator=user,
        item_id=shown.item.item_id,
        version_id=shown.item.version_id,
        payload={"checks": checks},
        request_id=uuid.uuid4().hex,
    )
    return shown.item


def test_a_failed_image_check_comes_back_with_a_new_variant_of_the_same_image(demo_store: Store) -> None:
    made = perturbation.create_check_dataset(
        demo_store, OPERATOR, "mathvista-quality-gate", "img-check", "image", limit=3
    )
    assert made.units == 3
    ds = annotate.dataset_for(demo_store, "img-check")
    first_id = items.item_ids(demo_store, ds.id)[0]
    assert _status(demo_store, first_id) == "waiting"  # no checker sees it before its variant exists
    assert jobs.run_pending(demo_store).done == 3

    shown = _check(demo_store, "cleo", "img-check", "image", passes=False)
    record = shown.meta["perturbation"]
    assert (
        record["type"] == "image"
        and record["attempt"] == 1
        and record["operation"]
        in (
            "scale",
            "rotate",
            "noise",
            "invert",
        )
    )
    assert len(shown.image_paths) == 2 and record["parameters"] and "seed" in record
    with Image.open(shown.image_paths[0]) as original, Image.open(shown.image_paths[1]) as variant:
        assert original.tobytes() != variant.convert(original.mode).tobytes() or original.size != variant.size
    assert _status(demo_store, shown.item_id) == "waiting"
    (job,) = [j for j in queue.item_jobs(demo_store, shown.item_id) if j.status == "queued"]
    assert job.kind == "perturb" and job.payload["attempt"] == 2 and job.loop == "perturbation"

    jobs.run_pending(demo_store)
    again = items.get_item(demo_store, shown.item_id)
    assert again is not None and again.version == shown.version + 1
    assert again.meta["perturbation"]["attempt"] == 2 and again.meta["perturbation"]["seed"] != record["seed"]
    assert again.meta["perturbation"]["parent_version_id"] == shown.version_id
    assert again.image_paths[0] == shown.image_paths[0]  # the same original image, perturbed afresh
    assert _status(demo_store, shown.item_id) == "open"

    admin = users.add_user(demo_store, "ada", "admin")
    variants = perturbation.history(demo_store, admin, shown.item_id)
    assert [v.reason for v in variants] == ["imported", "perturbed", "regenerated"]
    assert variants[1].checks[0]["reviewer"] == "cleo" and variants[1].checks[0]["verdict"] == "fail"
    assert variants[2].parent_version_id == variants[1].version_id


@pytest.mark.parametrize("kind", ["synonym", "syntactic"])
def test_text_variants_record_candidates_and_the_one_transformation(demo_store: Store, kind: str) -> None:
    generator_settings.configure(demo_store, OPERATOR, {"backend": "command", "command": FAKE})
    perturbation.create_check_dataset(demo_store, OPERATOR, "mathvista-quality-gate", "txt", kind, limit=2)
    jobs.run_pending(demo_store)
    shown = _check(demo_store, "cleo", "txt", kind, passes=True)
    record = shown.meta["perturbation"]
    assert len(record["candidates"]) == 5 and shown.steps["perturbed"] == [
        record["candidates"][record["candidate_index"]]
    ]
    assert shown.steps["perturbed"][0].startswith(shown.steps["original"][0])
    if kind == "syntactic":
        assert record["transformation"] == record["assigned"][record["candidate_index"]]
        assert record["transformation_label"]
    else:
        assert record["transformation"] is None
    assert _status(demo_store, shown.item_id) == "accepted"
    assert queue.open_job(demo_store, shown.item_id) is None  # a passed variant is final


def test_past_the_cap_a_unit_is_failed_with_its_history_and_admins_are_warned(demo_store: Store) -> None:
    perturbation.create_check_dataset(
        demo_store, OPERATOR, "mathvista-quality-gate", "capped", "image", limit=1
    )
    datasets.update_settings(demo_store, "capped", {"max_attempts": 2, "warn_after_attempts": 2})
    jobs.run_pending(demo_store)
    first = _check(demo_store, "cleo", "capped", "image", passes=False)
    jobs.run_pending(demo_store)
    admin = users.add_user(demo_store, "ada", "admin")
    assert any("2 variants so far" in w for w in perturbation.warnings(demo_store, admin, "capped"))
    _check(demo_store, "dora", "capped", "image", passes=False)
    st = state.get_item_state(demo_store, first.item_id)
    assert st is not None and st.status == "failed" and "unperturbable" in st.decision["reason"]  # type: ignore[index]
    assert queue.open_job(demo_store, first.item_id) is None
    assert any("failed" in w for w in perturbation.warnings(demo_store, admin, "capped"))
    assert len(perturbation.history(demo_store, admin, first.item_id)) == 3
    assert any(
        w.startswith("capped: mv-geometry-1:image: failed")
        for w in jobs.perturbation_warnings(demo_store, admin)
    )


def test_no_cap_by_default_and_the_paper_defaults() -> None:
    spec = spec_for("perturbation_check")
    assert spec.numbers["max_attempts"].default == 0 and spec.numbers["warn_after_attempts"].default == 5
    assert spec.numbers["candidates"].default == 5 and spec.regenerate_on_reject


def test_a_label_must_answer_every_item_of_its_type(demo_store: Store) -> None:
    spec = spec_for("perturbation_check")

    unit = SimpleNamespace(steps={}, final_answer_correct=None, meta={"perturbation": {"type": "syntactic"}})

    with pytest.raises(PayloadError, match="T3, T4 left open"):
        spec.validate({"checks": {"T1": True, "T2": True}}, unit)
    with pytest.raises(PayloadError, match="S1 are not items"):
        spec.validate({"checks": {"S1": True}}, unit)
    with pytest.raises(PayloadError, match="contradicts"):
        spec.validate({"checks": dict.fromkeys(CHECKLISTS["syntactic"], True), "verdict": "fail"}, unit)
    assert spec.validate({"checks": dict.fromkeys(CHECKLISTS["syntactic"], True)}, unit)["verdict"] == "pass"


def test_creating_a_check_is_for_admins_and_says_what_is_wrong(demo_store: Store) -> None:
    annotator = users.add_user(demo_store, "ann", "annotator")
    with pytest.raises(NotAllowed):
        perturbation.create_check_dataset(demo_store, annotator, "mathvista-quality-gate", "x", "image")
    with pytest.raises(InvalidInput, match="has no items with images"):
        perturbation.create_check_dataset(demo_store, OPERATOR, "qwq-earliest-error", "x", "image")
    with pytest.raises(InvalidInput, match="choose one of synonym, syntactic, image"):
        perturbation.create_check_dataset(demo_store, OPERATOR, "qwq-earliest-error", "x", "blur")


def _value(update: Any) -> Any:
    return update.get("value") if isinstance(update, dict) else getattr(update, "value", update)


def test_the_panel_shows_the_transformation_and_a_failed_check_brings_a_new_variant(
    demo_store: Store,
) -> None:
    import gradio as gr

    from ui.context import AppContext
    from ui.panels import jobs as jobs_panel
    from ui.panels import perturbation_check as panel

    generator_settings.configure(demo_store, OPERATOR, {"backend": "command", "command": FAKE})
    ctx = AppContext(store=demo_store)
    users.add_user(demo_store, "cleo", "annotator")
    users.add_user(demo_store, "ada", "admin")
    cleo, ada = gr.Request(username="cleo"), gr.Request(username="ada")
    made = jobs_panel.on_create_check(ctx, "mathvista-quality-gate", "syn", "syntactic", 1, "all", ada)
    assert "1 units queued" in made["status_line"]
    jobs_panel.on_run(ctx, "all", ada)

    shown = panel.on_tab_open(ctx, None, None, cleo)
    assert "transformation applied:" in shown["made"] and _value(shown["admin_box"].visible) is False
    choices = [key for _, key in shown["checklist"].choices]
    assert choices == ["T1", "T2", "T3", "T4"]
    first = shown["current"]
    saved = panel.on_save(ctx, ["T1", "T2", "T3"], first, cleo)
    assert "failed (T4)" in saved["status"]

    jobs_panel.on_run(ctx, "all", ada)
    again = panel.on_tab_open(ctx, "syn", None, cleo)
    assert (
        again["current"]["item_id"] == first["item_id"]
        and again["current"]["version_id"] != first["version_id"]
    )
    assert "variant" not in again["made"]  # no attempt count: it would tell that the first one failed
    history = panel.on_history(ctx, "syn", again["current"], ada)
    assert list(history["variants"]["reason"]) == ["imported", "perturbed", "regenerated"]
    with pytest.raises(gr.Error):
        panel.on_history(ctx, "syn", again["current"], cleo)
    view = jobs_panel.on_refresh(ctx, "all", ada)
    assert set(view["jobs_table"]["status"]) == {"done"} and list(view["loops"]["loop"]) == ["perturbation"]
    with pytest.raises(gr.Error):
        jobs_panel.on_refresh(ctx, "all", cleo)


def test_reapply_from_the_remaining_candidates_draws_another_without_a_new_generation(
    demo_store: Store,
) -> None:
    generator_settings.configure(demo_store, OPERATOR, {"backend": "command", "command": FAKE})
    perturbation.create_check_dataset(
        demo_store, OPERATOR, "mathvista-quality-gate", "rest", "syntactic", limit=1
    )
    datasets.update_settings(demo_store, "rest", {"reapply": "remaining", "image_draw": "per_image"})
    jobs.run_pending(demo_store)
    first = _check(demo_store, "cleo", "rest", "syntactic", passes=False)
    generator_settings.configure(demo_store, OPERATOR, {"backend": "none"})  # a new generation would fail now
    assert jobs.run_pending(demo_store).done == 1
    again = items.get_item(demo_store, first.item_id)
    assert again is not None
    before, after = first.meta["perturbation"], again.meta["perturbation"]
    assert after["backend"] == "remaining candidate" and after["candidates"] == before["candidates"]
    assert after["candidate_index"] != before["candidate_index"]
    assert after["drawn"] == [before["candidate_index"], after["candidate_index"]]
    assert after["transformation"] == before["assigned"][after["candidate_index"]]
    with pytest.raises(ServiceError, match="reapply"):
        datasets_service_set(demo_store, "rest", {"reapply": "sometimes"})


def datasets_service_set(store: Store, name: str, changes: dict[str, Any]) -> None:
    from services import data

    data.update_settings(store, OPERATOR, name, changes)


def test_without_a_generator_text_variants_wait_spending_no_attempt_then_run(demo_store: Store) -> None:
    """Issue 29: a text perturbation's job waits for the generator as a regeneration does (no attempt
    spent, the Jobs tab says what to set), and runs once one is set; an image's needs none."""
    perturbation.create_check_dataset(
        demo_store, OPERATOR, "mathvista-quality-gate", "txt", "synonym", limit=2
    )
    perturbation.create_check_dataset(demo_store, OPERATOR, "mathvista-quality-gate", "img", "image", limit=1)
    summary = jobs.run_pending(demo_store, backoff_seconds=0.0)
    assert summary.done == 1 and summary.failed == summary.retrying == 0 and summary.waiting == 2
    waiting = [j for j in queue.list_jobs(demo_store) if j.status == "queued"]
    assert len(waiting) == 2 and all(j.attempts == 0 and not j.error for j in waiting)
    admin = users.add_user(demo_store, "ada", "admin")
    rows = [r for r in jobs.job_rows(demo_store, admin) if r["job"] in {j.id for j in waiting}]
    assert [r["status"] for r in rows] == [jobs.WAITING_FOR_GENERATOR] * 2
    generator_settings.configure(demo_store, OPERATOR, {"backend": "command", "command": FAKE})
    assert jobs.run_pending(demo_store).done == 2


def test_a_checker_counts_a_unit_once_whatever_its_variants(demo_store: Store) -> None:
    """The checker's own count (their progress line) is units checked, in memory as recounted from the log:
    a variant made after their failed check is not a second unit when they check it ("You checked 2 of 1
    variants" before), and the count stays when the pools are read again."""
    perturbation.create_check_dataset(
        demo_store, OPERATOR, "mathvista-quality-gate", "img-count", "image", limit=1
    )
    jobs.run_pending(demo_store)
    ds = annotate.dataset_for(demo_store, "img-count")
    cleo = users.add_user(demo_store, "cleo", "annotator")
    first = _check(demo_store, "cleo", "img-count", "image", passes=False)
    assert annotate.progress(demo_store, cleo, ds) == {"total": 1, "mine": 1}
    jobs.run_pending(demo_store)  # the next variant of the same unit
    second = _check(demo_store, "cleo", "img-count", "image", passes=True)
    assert second.item_id == first.item_id and second.version > first.version
    assert annotate.progress(demo_store, cleo, ds) == {"total": 1, "mine": 1}
    leases_of(demo_store).invalidate()
    assert annotate.progress(demo_store, cleo, ds) == {"total": 1, "mine": 1}
