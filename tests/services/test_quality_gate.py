"""The quality gate (CRYSTAL's human gate): its rule on hand-made labels, then its use cases on a real store."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from services.encoder import Encoder
from tasks import QUALITY_GATE, PayloadError, spec_for
from tasks.quality_gate import CRITERIA, NUMBERS, RULING, failed_criteria, is_dual, parse_steps_text

pytestmark = pytest.mark.engines  # tests on the store fixture run on DuckDB and PostgreSQL

SPEC = spec_for(QUALITY_GATE)
ALL = {k: True for k in CRITERIA}


@dataclass
class FakeItem:
    external_id: str = "mv-1"
    steps: dict[str, list[str]] = field(default_factory=lambda: {"candidate": ["a", "b", "c"]})
    final_answer_correct: bool | None = None


def accept(**extra):
    return {"verdict": "accept", "criteria": dict(ALL), **extra}


def reject(*failed, reason="step 2 contradicts step 1", **extra):
    return {
        "verdict": "reject",
        "criteria": {k: k not in failed for k in CRITERIA},
        "reason": reason,
        **extra,
    }


def test_criteria_are_the_supplements_four_in_its_order():
    assert list(CRITERIA) == ["c1", "c2", "c3", "c4"]
    assert [c.name for c in CRITERIA.values()] == [
        "Logical soundness",
        "Sequential coherence",
        "Visual grounding",
        "Answer consistency",
    ]


def test_accept_needs_all_four_criteria():
    item = FakeItem()
    assert SPEC.validate(accept(), item)["failed"] == []
    with pytest.raises(PayloadError, match="C3 Visual grounding"):
        SPEC.validate({"verdict": "accept", "criteria": {**ALL, "c3": False}}, item)


def test_reject_names_the_failed_criteria_and_needs_a_reason():
    item = FakeItem()
    clean = SPEC.validate(reject("c1", "c4"), item)
    assert clean["failed"] == ["c1", "c4"] and clean["reason"] == "step 2 contradicts step 1"
    with pytest.raises(PayloadError, match="reason"):
        SPEC.validate(reject("c1", reason="  "), item)
    with pytest.raises(PayloadError, match="uncheck"):
        SPEC.validate({"verdict": "reject", "criteria": dict(ALL), "reason": "x"}, item)


def test_unknown_criterion_or_mark_is_refused():
    item = FakeItem()
    with pytest.raises(PayloadError, match="criteria"):
        SPEC.validate({"verdict": "accept", "criteria": {**ALL, "c5": True}}, item)
    with pytest.raises(PayloadError, match="steps 1 to 3"):
        SPEC.validate(accept(steps={"4": "correct"}), item)
    with pytest.raises(PayloadError, match="not 'correct'"):
        SPEC.validate(accept(steps={"1": "maybe"}), item)


def test_step_marks_refer_to_the_edited_steps():
    item = FakeItem()
    clean = SPEC.validate(accept(edited_steps=["a", "b", "c", " d "], steps={"4": "incorrect"}), item)
    assert clean["edited_steps"] == ["a", "b", "c", "d"] and clean["steps"] == {"4": "incorrect"}


def test_an_edit_equal_to_the_items_steps_is_no_edit():
    assert "edited_steps" not in SPEC.validate(accept(edited_steps=["a", "b", "c"]), FakeItem())
    with pytest.raises(PayloadError, match="at least one step"):
        SPEC.validate(accept(edited_steps=["", "  "]), FakeItem())


def test_one_step_per_line_parsing_trims_and_drops_empty_lines():
    assert parse_steps_text(" one \n\n two\r\n  \nthree ") == ["one", "two", "three"]


def test_failed_criteria_keep_the_supplements_order():
    assert failed_criteria({"c4": False, "c1": False, "c2": True, "c3": True}) == ["c1", "c4"]


def test_dual_draw_is_stable_and_near_its_share():
    ids = [f"item-{i}" for i in range(2000)]
    drawn = [i for i in ids if is_dual(i, 10, seed=0)]
    assert drawn == [i for i in ids if is_dual(i, 10, seed=0)]
    assert 160 <= len(drawn) <= 240
    assert drawn != [i for i in ids if is_dual(i, 10, seed=1)]
    assert not any(is_dual(i, 0) for i in ids) and all(is_dual(i, 100) for i in ids)


def test_settings_defaults():
    assert NUMBERS["dual_percent"].default == 10
    assert NUMBERS["cluster_threshold"].default == 0.45


def _decide(labels, settings=None, item=None, target=1):
    return SPEC.decide(labels, target, settings or {"dual_percent": 0}, item or FakeItem())


def test_one_annotator_decides_a_single_item():
    item = FakeItem()
    labels = [SPEC.validate(accept(), item)]
    d = _decide(labels)
    assert (d.status, d.target, d.decision["verdict"]) == ("accepted", 1, "accept")
    d = _decide([SPEC.validate(reject("c2", reason="jumps"), item)])
    assert d.status == "rejected" and d.decision["failed"] == ["c2"] and d.decision["reasons"] == ["jumps"]


def test_a_dual_item_waits_for_its_second_annotator():
    item = FakeItem()
    one = [SPEC.validate(accept(), item)]
    d = _decide(one, {"dual_percent": 100})
    assert (d.status, d.target) == ("open", 2)
    d = _decide(one * 2, {"dual_percent": 100})
    assert d.status == "accepted" and d.decision["dual"] is True


def test_two_annotators_who_differ_in_verdict_or_steps_dispute():
    item = FakeItem()
    a = SPEC.validate(accept(), item)
    b = SPEC.validate(reject("c3"), item)
    c = SPEC.validate(accept(edited_steps=["a", "b"]), item)
    assert _decide([a, b], {"dual_percent": 100}).decision["differ"] == ["verdict"]
    assert _decide([a, c], {"dual_percent": 100}).decision["differ"] == ["steps"]
    same = _decide([c, dict(c)], {"dual_percent": 100})
    assert same.status == "accepted" and same.decision["edited_steps"] == ["a", "b"]


def test_the_adjudicators_ruling_is_final():
    item = FakeItem()
    a = SPEC.validate(accept(), item)
    b = SPEC.validate(reject("c3"), item)
    ruling = {RULING: "reject", "criteria": {**ALL, "c4": False}, "failed": ["c4"], "reason": "wrong answer"}
    d = _decide([a, b, ruling], {"dual_percent": 100})
    assert d.status == "rejected" and d.decision["adjudicated"] and d.decision["failed"] == ["c4"]


# --- handlers and services on a real store ---------------------------------------------------------

import gradio as gr  # noqa: E402

from services import adjudicate, gate  # noqa: E402
from services.errors import NotAllowed  # noqa: E402
from store import annotations as annotation_log  # noqa: E402
from store import state, users  # noqa: E402
from store.datasets import update_settings  # noqa: E402
from store.db import Store  # noqa: E402
from ui.context import AppContext  # noqa: E402
from ui.panels import quality_gate as panel  # noqa: E402
from ui.panels import quality_gate_disputes as disputes_panel  # noqa: E402
from ui.panels import quality_gate_render as render  # noqa: E402

DEMO = "mathvista-quality-gate"
ALL_CHECKED = list(CRITERIA)


@pytest.fixture
def ctx(demo_store: Store) -> AppContext:
    for name, role in (("ann", "annotator"), ("bob", "annotator"), ("judy", "adjudicator")):
        users.add_user(demo_store, name, role)
    return AppContext(store=demo_store, encoder=None)  # type: ignore[arg-type]


def as_user(name: str) -> gr.Request:
    return gr.Request(username=name)


def open_tab(ctx: AppContext, name: str) -> dict:
    shown = panel.on_tab_open(ctx, None, None, as_user(name))
    shown.pop("dataset")
    return shown


def test_opening_the_tab_shows_every_element_of_the_figure(ctx: AppContext) -> None:
    shown = open_tab(ctx, "ann")
    item = shown["current"]
    assert item["dataset"] == DEMO and item["external_id"] == "mv-geometry-1"
    assert shown["image"].endswith(".png")
    assert "parallelogram" in shown["question"]
    assert shown["choices"].startswith("**Choices**") and "A. 3" in shown["choices"]
    assert "**Answer:** 6" in shown["answer"] and "**Source:**" in shown["answer"]
    assert list(shown["table"]["Step"])[1] == "In a parallelogram opposite sides are equal, so AB = DC."
    assert "Index 1 / 10" in shown["header"]
    assert shown["slider"].maximum == 10
    assert "Version 1, as imported" in shown["lineage"]


def test_accept_without_all_criteria_or_reject_without_reason_stores_nothing(ctx: AppContext) -> None:
    shown = open_tab(ctx, "ann")
    table, current = shown["table"], shown["current"]
    out = panel.on_decide(ctx, "accept", table, ["c1", "c2"], "", current, as_user("ann"))
    assert "Not saved" in out["status"] and "C3 Visual grounding" in out["status"]
    out = panel.on_decide(ctx, "reject", table, ["c1", "c2"], "", current, as_user("ann"))
    assert "give a reason" in out["status"]
    assert ctx.store.scalar("SELECT count(*) FROM annotations") == 0


def test_an_edited_step_accepted_becomes_a_new_version_with_its_author_and_diff(ctx: AppContext) -> None:
    shown = open_tab(ctx, "ann")
    current = shown["current"]
    table = shown["table"].copy()
    table.loc[3, "Step"] = "Adding 8 to both sides: 3y = 18, hence y = 6."
    table.loc[1, "Incorrect"] = True
    out = panel.on_decide(ctx, "accept", table, ALL_CHECKED, "", current, as_user("ann"))
    assert "✓ Saved: accepted" in out["status"]
    item_id = current["item_id"]
    found = state.get_item_state(ctx.store, item_id)
    assert found.status == "accepted" and found.decision["edited_version"] == 2
    ann = users.get_user(ctx.store, "ann")
    rows = gate.lineage(ctx.store, ann, item_id)
    assert [(r["version"], r["reason"], r["created_by"]) for r in rows] == [
        (1, "imported", None),
        (2, "edited", "ann"),
    ]
    assert rows[1]["steps"][3] == "Adding 8 to both sides: 3y = 18, hence y = 6."
    label = annotation_log.item_annotations(ctx.store, item_id, current["version_id"])[0].payload
    assert label["steps"]["2"] == "incorrect" and label["edited_steps"][3].startswith("Adding 8")
    # The lineage as the panel shows it: who and why, and the step's word diff.
    assert "| 2 | 1 | edited | ann |" in out["lineage"] and "<ins>" in out["lineage"]
    # Another annotator cannot read the history of an item they never held.
    with pytest.raises(NotAllowed):
        gate.lineage(ctx.store, users.get_user(ctx.store, "bob"), item_id)


def test_a_reject_is_stored_as_rejected_with_failed_criteria_and_reason(ctx: AppContext) -> None:
    shown = open_tab(ctx, "ann")
    current = shown["current"]
    out = panel.on_decide(
        ctx, "reject", shown["table"], ["c1", "c2", "c3"], "answer is 8", current, as_user("ann")
    )
    assert r"rejected \(C4 Answer consistency failed\)" in out["status"]
    found = state.get_item_state(ctx.store, current["item_id"])
    assert found.status == "rejected"
    assert found.decision["failed"] == ["c4"] and found.decision["reasons"] == ["answer is 8"]


def test_step_tools_move_insert_delete_and_text(ctx: AppContext) -> None:
    shown = open_tab(ctx, "ann")
    table = shown["table"]
    first = list(table["Step"])
    out = panel.on_move_step(ctx, table, 1, "up", as_user("ann"))
    assert list(out["table"]["Step"])[:2] == [first[1], first[0]] and out["selected"] == 0
    out = panel.on_insert_step(ctx, out["table"], 0, as_user("ann"))
    assert len(out["table"]) == len(first) + 1 and out["selected"] == 1
    out = panel.on_delete_step(ctx, out["table"], 1, as_user("ann"))
    assert len(out["table"]) == len(first)
    assert "Click a step" in panel.on_delete_step(ctx, table, None, as_user("ann"))["step_note"]
    text = panel.on_text_open(ctx, table, as_user("ann"))["steps_text"]
    out = panel.on_steps_from_text(ctx, text + "\n\nA last step.\n", table, as_user("ann"))
    assert list(out["table"]["Step"]) == [*first, "A last step."]


def test_jump_by_index_and_the_slider(ctx: AppContext) -> None:
    shown = open_tab(ctx, "ann")
    out = panel.KIT.on_jump(ctx, 3.0, shown["current"], as_user("ann"))
    assert "Index 3 / 10" in out["header"] and "Jumped to index 3" in out["status"]
    out = panel.KIT.on_jump(ctx, "nope", shown["current"], as_user("ann"))
    assert "Cannot open item" in out["status"]


def _label_dual(ctx: AppContext, name: str, verdict: str, edit: str | None = None) -> dict:
    shown = open_tab(ctx, name)
    table = shown["table"].copy()
    if edit:
        table.loc[0, "Step"] = edit
    checked = ALL_CHECKED if verdict == "accept" else ["c1", "c2", "c4"]
    out = panel.on_decide(
        ctx,
        verdict,
        table,
        checked,
        "" if verdict == "accept" else "figure misread",
        shown["current"],
        as_user(name),
    )
    assert "✓ Saved" in out["status"], out["status"]
    return shown["current"]


def test_a_dual_item_goes_to_a_second_blind_annotator_then_an_adjudicator_decides(ctx: AppContext) -> None:
    update_settings(ctx.store, DEMO, {"dual_percent": 100})
    first = _label_dual(ctx, "ann", "accept", edit="The figure shows parallelogram ABCD.")
    assert state.get_item_state(ctx.store, first["item_id"]).status == "open"
    second = _label_dual(ctx, "bob", "reject")
    assert second["item_id"] == first["item_id"]  # the started item goes to the second annotator first
    assert state.get_item_state(ctx.store, first["item_id"]).status == "disputed"
    # Annotators see no dispute; the adjudicator sees both judgements side by side.
    assert "adjudicators" in disputes_panel.on_list(ctx, DEMO, as_user("ann"))["status"]
    listed = disputes_panel.on_list(ctx, DEMO, as_user("judy"))
    assert "1 disputed" in listed["status"]
    shown = disputes_panel.on_show(ctx, DEMO, first["item_id"], as_user("judy"))
    assert shown["judgements"].count('class="qg-judgement"') == 2
    assert "**ann**: **accept**" in shown["judgements"] and "**bob**: **reject**" in shown["judgements"]
    assert "figure misread" in shown["judgements"]
    out = disputes_panel.on_rule(
        ctx, DEMO, first["item_id"], "accept", ALL_CHECKED, "ann", "", as_user("judy")
    )
    assert "Settled: accepted" in out["status"]
    found = state.get_item_state(ctx.store, first["item_id"])
    assert (
        found.status == "accepted" and found.decision["adjudicated"] and found.decision["edited_version"] == 2
    )
    rows = gate.lineage(ctx.store, users.get_user(ctx.store, "judy"), first["item_id"])
    assert rows[-1]["created_by"] == "judy" and rows[-1]["steps"][0] == "The figure shows parallelogram ABCD."


def test_an_annotator_cannot_rule(ctx: AppContext) -> None:
    with pytest.raises(NotAllowed):
        adjudicate.disputes(ctx.store, users.get_user(ctx.store, "ann"), DEMO)


def test_accepted_items_export_as_a_new_crystal_dataset_that_imports_back(ctx: AppContext, tmp_path) -> None:
    import json

    from services.exports import export
    from services.imports import import_file

    shown = open_tab(ctx, "ann")
    table = shown["table"].copy()
    table.loc[4, "Step"] = "So y = 6, choice B."
    panel.on_decide(ctx, "accept", table, ALL_CHECKED, "", shown["current"], as_user("ann"))
    shown = open_tab(ctx, "ann")  # the next item: rejected, so it is not exported
    panel.on_decide(ctx, "reject", shown["table"], ["c1"], "no", shown["current"], as_user("ann"))
    out = tmp_path / "gated" / "crystal.jsonl"
    out.parent.mkdir()
    written = export(ctx.store, "crystal", out, dataset=DEMO)
    [line] = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert written.rows == 1 and line["id"] == "mv-geometry-1"
    assert line["reference_steps"][-1] == "So y = 6, choice B." and line["answer"] == "6"
    assert line["options"] == ["3", "6", "8", "10"]
    assert (out.parent / line["image"]).is_file()
    assert line["stepgate"]["status"] == "accepted" and line["stepgate"]["version_reason"] == "edited"
    outcome = import_file(ctx.store, out, format="crystal", dataset="gated-again")
    assert outcome.added == 1 and outcome.task == "quality_gate" and not outcome.skipped


def test_candidate_steps_that_say_the_same_thing_are_grouped_when_the_encoder_is_on(
    ctx: AppContext, encoder: Encoder
) -> None:
    from importers.records import ItemRecord
    from store.bulk import write_records

    steps = [
        "The bar for Germans is labelled 45.",
        "Germany's bar shows the value 45.",
        "The triangle has three equal sides.",
        "So the answer is 12.",
    ]
    with ctx.store.writing() as tx:
        write_records(
            tx, "paraphrases", "quality_gate", [ItemRecord("p-1", "How many?", {"candidate": steps})]
        )
    ann = users.get_user(ctx.store, "ann")
    item_id = ctx.store.scalar("SELECT id FROM items WHERE external_id = 'p-1'")
    version_id = ctx.store.scalar("SELECT current_version_id FROM items WHERE id = ?", [item_id])
    judy = users.get_user(ctx.store, "judy")
    assert gate.step_groups(ctx.store, judy, item_id, version_id, encoder) is None  # off by default
    update_settings(ctx.store, "paraphrases", {"step_groups": "encoder", "cluster_threshold": 0.6})
    groups = gate.step_groups(ctx.store, judy, item_id, version_id, encoder)
    assert [g.steps for g in groups] == [(1, 2)] and groups[0].representative in (1, 2)
    with pytest.raises(NotAllowed):  # an annotator who never held the item learns nothing of it
        gate.step_groups(ctx.store, ann, item_id, version_id, encoder)
    assert "**1** ≈ 2" in render.groups_markdown(groups) or "1 ≈ **2**" in render.groups_markdown(groups)


def test_unsaved_edits_come_back_after_a_reload_and_go_once_saved(ctx: AppContext) -> None:
    shown = open_tab(ctx, "ann")
    table = shown["table"].copy()
    table.loc[0, "Step"] = "A step typed but not saved."
    table.loc[2, "Incorrect"] = True
    panel.on_draft(ctx, table, ["c1", "c3"], "half a reason", shown["current"], as_user("ann"))
    again = open_tab(ctx, "ann")  # a reload: a fresh page, the same held item
    assert "with your unsaved changes" in again["header"]
    assert again["table"]["Step"].iloc[0] == "A step typed but not saved."
    assert list(again["table"]["Incorrect"]) == [False, False, True, False, False]
    assert again["criteria"] == ["c1", "c3"] and again["reason"] == "half a reason"
    # Another annotator's page shows none of it.
    assert "unsaved" not in open_tab(ctx, "bob")["header"]
    panel.on_decide(ctx, "accept", again["table"], ALL_CHECKED, "", again["current"], as_user("ann"))
    back = panel.on_draft(ctx, table, [], "", again["current"], as_user("ann"))  # a late edit event
    assert back == {}
    ann = users.get_user(ctx.store, "ann")
    assert drafts_of(ctx, ann) == 0


def drafts_of(ctx: AppContext, user) -> int:
    return int(
        ctx.store.scalar(
            "SELECT count(*) FROM drafts WHERE annotator_id = ? AND panel = ?", [user.id, "quality_gate"]
        )
    )
