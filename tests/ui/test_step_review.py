"""Step review handlers on the real demo store: save, navigation, blindness of statistics and export."""

from __future__ import annotations

import json
import re
from pathlib import Path

import gradio as gr
import pandas as pd
import pytest

from importers.records import ItemRecord
from services import drafts
from store import Store, datasets, users
from store.annotations import annotations_frame, count_annotations
from store.bulk import write_records
from store.items import get_item
from ui.context import AppContext
from ui.kit.downloads import find_download
from ui.panels import step_review as panel
from ui.panels import step_review_actions as actions
from ui.panels import step_review_render as render

pytestmark = [
    pytest.mark.filterwarnings("ignore::UserWarning:gradio.helpers"),  # gr.Warning outside a request
    pytest.mark.engines,  # tests on the store fixture run on DuckDB and PostgreSQL
]

DATASET = "prmbench-step-review"
VIEW = list(panel.VIEW)  # the names of the sample view, as the panel defines them


def view(out: dict) -> dict:
    """A handler's named outputs; a full view names every component of the sample."""
    assert set(out) <= set(VIEW) == set(panel.VIEW)
    return out


def value(update):
    return update.get("value") if isinstance(update, dict) else update


def plain(markdown: str) -> str:
    """A status line as the page shows it: Markdown's backslash escapes undone."""
    return re.sub(r"\\(.)", r"\1", markdown)


@pytest.fixture
def ctx(demo_store: Store) -> AppContext:
    for name, role in (("ann", "annotator"), ("bea", "annotator"), ("lead", "admin")):
        users.add_user(demo_store, name, role, "password-1")
    return AppContext(store=demo_store)


def as_user(name: str) -> gr.Request:
    return gr.Request(username=name)


def open_sample(ctx: AppContext, who: str = "ann", dataset: str = DATASET) -> dict:
    """What opening the tab shows (a fresh page): the dataset picker, the export choices, then the sample."""
    shown = panel.on_tab_open(ctx, dataset, {}, as_user(who))
    return view({k: v for k, v in shown.items() if k not in ("dataset", "exports", "disputes")})


def draft_of(ctx: AppContext, who: str, work: dict) -> object:
    return drafts.get(ctx.store, users.get_user(ctx.store, who), actions.PANEL, actions.draft_key(work))


def save(
    ctx: AppContext,
    work: dict,
    who: str = "ann",
    choices=("correct", "reasonable", "easy"),
    note="",
):
    out = panel.on_save(ctx, work, *choices, note, [], [], False, as_user(who))
    return plain(out["status"]), out.get("sample"), out.get("work"), out["saved"]


def after_save(ctx: AppContext, work: dict, saved, who: str = "ann") -> dict:
    """What "Next sample after saving" shows once a save is stored (the same reply as the save)."""
    return view(panel.next_after_save(ctx, users.get_user(ctx.store, who), work, saved))


def test_opening_the_tab_shows_the_first_sample_with_its_steps_side_by_side(ctx: AppContext) -> None:
    opened = panel.on_tab_open(ctx, None, {}, as_user("ann"))
    picker, exports = opened.pop("dataset"), opened.pop("exports")
    assert opened.pop("disputes")["visible"] is False  # an annotator has no disputes to settle
    assert picker["value"] == DATASET and DATASET in picker["choices"]
    assert [key for _, key in exports["choices"]] == ["mine-csv", "mine-jsonl"]
    shown = view(opened)
    assert "Sample 1 / 394" in shown["progress"]
    assert "prm\\_test\\_p1\\_0:confidence" in shown["info"] and "Confident hallucination" in shown["info"]
    assert "**Annotators** 1 (you)" in shown["info"]
    assert "Original steps (6)" in shown["steps"] and "Modified steps (6)" in shown["steps"]
    assert "So <ins>$p=0.58$</ins>." in shown["steps"]
    assert "Steps 5 and 6 contain confident hallucinations" in shown["rationale"]
    assert value(shown["original"]) is None and shown["work"]["state"] == "new"
    assert (
        "Suggested (2 error steps): Easy, Hard if unclear. Needed if retained." in shown["difficulty"]["info"]
    )
    # The prices of the question are text and "\$" inside math cannot pair with another dollar.
    assert "$\\char36 1.24$" in shown["question"] and "$\\$" not in shown["question"]


def test_coming_back_to_the_tab_keeps_the_sample_and_the_dataset_is_remembered_per_annotator(
    ctx: AppContext,
) -> None:
    work = open_sample(ctx)["work"]
    again = panel.on_tab_open(ctx, DATASET, work, as_user("ann"))
    assert set(again) == {"dataset", "exports", "disputes"}  # the sample on the page stays as it is
    other = panel.KIT.on_dataset_change(ctx, "qwq-earliest-error", work, as_user("ann"))
    assert "is a earliest\\_error dataset, not step\\_review" in view(other)["status"]
    panel.KIT.on_dataset_change(ctx, "second", work, as_user("ann"))  # remembered for ann, on the server
    with ctx.store.writing() as tx:
        write_records(
            tx,
            "second",
            "step_review",
            [
                ItemRecord(
                    external_id="s-1",
                    question="q",
                    steps={"original": ["a"], "modified": ["b"]},
                    error_steps=[0],
                )
            ],
            "test",
        )
    panel.KIT.on_dataset_change(ctx, "second", work, as_user("ann"))
    shown = panel.on_tab_open(ctx, DATASET, {}, as_user("ann"))  # a reload
    picker = shown["dataset"]
    assert picker["value"] == "second" and shown["work"]["external_id"] == "s-1"
    picker = panel.on_tab_open(ctx, DATASET, {}, as_user("bea"))["dataset"]
    assert picker["value"] == DATASET  # another annotator starts where the page does, not where ann was


def test_save_stores_the_three_choices_and_a_retry_is_counted_once(ctx: AppContext) -> None:
    work = open_sample(ctx)["work"]
    status, _, after, saved = save(ctx, work, note="clear case")
    assert status == "Saved sample 1 (prm_test_p1_0:confidence): Correct · Reasonable · Easy."
    assert saved and after["request_id"] != work["request_id"] and after["state"] == "saved"
    retry = save(ctx, work)  # the same attempt again (a flaky network resends it)
    assert "counted once" in retry[0]
    frame = annotations_frame(ctx.store)
    assert len(frame) == 1 and frame.iloc[0]["seconds_spent"] >= 0
    assert json.loads(frame.iloc[0]["payload"]) == {
        "original": "correct",
        "modification": "reasonable",
        "difficulty": "easy",
        "note": "clear case",
    }
    moved = after_save(ctx, after, saved)
    assert "Sample 2 / 394" in moved["progress"] and plain(moved["status"]).startswith("Saved sample 1")
    # With "Next sample after saving" on, one event stores the label and shows the next sample.
    one = panel.on_save(ctx, moved["work"], "correct", "reasonable", "easy", "", [], [], True, as_user("ann"))
    assert "Sample 3 / 394" in one["progress"] and plain(one["status"]).startswith("Saved sample 2")
    assert count_annotations(ctx.store) == 2


def test_a_missing_choice_is_named_and_nothing_is_stored(ctx: AppContext) -> None:
    work = open_sample(ctx)["work"]
    status, *_, saved = save(ctx, work, choices=("correct", None, None))
    assert (
        status
        == "⚠ Not saved (sample 1 (prm_test_p1_0:confidence)): please choose: Modification, Difficulty."
    )
    assert saved is None and count_annotations(ctx.store) == 0
    refused = panel.on_save(ctx, work, "correct", None, None, "", [], [], True, as_user("ann"))
    assert set(refused) == {"status", "saved"}  # nothing moves after a refused save


def test_a_sample_changed_since_it_was_opened_is_not_saved(ctx: AppContext) -> None:
    work = open_sample(ctx)["work"]
    item = get_item(ctx.store, work["item_id"])
    assert item is not None
    with ctx.store.writing() as tx:  # the file was re-imported with an edited question
        write_records(
            tx,
            DATASET,
            "step_review",
            [ItemRecord(external_id=item.external_id, question="changed", steps=item.steps)],
            "prmbench",
        )
    status, *_ = save(ctx, work)
    assert "changed (now version 2)" in status and count_annotations(ctx.store) == 0


def test_a_draft_comes_back_to_the_same_annotator_only_and_a_save_clears_it(ctx: AppContext) -> None:
    work = open_sample(ctx)["work"]
    line = panel.on_choice(ctx, "incorrect", None, "hard", "odd step 3", [], [], work, as_user("ann"))[
        "sample"
    ]
    assert line.startswith("Current sample: 2/3 assessments (66%) · not saved yet")
    assert draft_of(ctx, "ann", work) == {"original": "incorrect", "difficulty": "hard", "note": "odd step 3"}
    back = open_sample(ctx, "ann")  # a reload: the held sample again, the draft on it
    assert back["work"]["item_id"] == work["item_id"] and back["work"]["state"] == "resumed"
    assert [value(back[f]) for f in ("original", "modification", "difficulty", "note")] == [
        "incorrect",
        None,
        "hard",
        "odd step 3",
    ]
    assert "unsaved choices on this sample are back" in back["status"] and "not saved yet" in back["sample"]
    datasets.update_settings(ctx.store, DATASET, {"annotators_per_item": 2})
    other = open_sample(ctx, "bea")  # another annotator, the same sample
    assert other["work"]["item_id"] == work["item_id"] and value(other["original"]) is None
    assert "you are 1 of 2, blind to each other" in other["info"]
    panel.on_choice(ctx, "correct", None, None, "", [], [], other["work"], as_user("bea"))
    assert draft_of(ctx, "bea", work) == {"original": "correct"}
    assert draft_of(ctx, "ann", work)["original"] == "incorrect"  # each keeps their own
    panel.on_save(ctx, back["work"], "incorrect", "reasonable", "hard", "", [], [], False, as_user("ann"))
    assert draft_of(ctx, "ann", work) is None
    panel.on_choice(ctx, None, None, None, "", [], [], work, as_user("ann"))
    assert draft_of(ctx, "ann", work) is None  # choices taken back: no draft left to restore


def test_next_and_jump_refuse_to_drop_unsaved_choices(ctx: AppContext) -> None:
    work = open_sample(ctx)["work"]
    blocked = view(panel.on_next(ctx, work, "incorrect", None, None, "", [], [], as_user("ann")))
    assert "unsaved choices" in blocked["status"] and "progress" not in blocked  # the page stays
    jumped = panel.on_jump(ctx, work, DATASET, "5", None, None, None, "a note", [], [], as_user("ann"))
    assert "unsaved choices" in jumped["status"]
    not_saved = view(panel.on_next(ctx, work, None, None, None, "", [], [], as_user("ann")))
    assert "is not saved" in not_saved["status"]
    _, _, after, _ = save(ctx, work)
    changed = view(
        panel.on_previous(ctx, after, "incorrect", "reasonable", "easy", "", [], [], as_user("ann"))
    )
    assert "unsaved choices" in changed["status"]  # a saved label changed on the page is unsaved again
    line = panel.on_choice(ctx, "correct", "reasonable", "easy", "", [], [], after, as_user("ann"))["sample"]
    assert line.endswith("· saved")


def test_skip_gives_the_sample_back_and_it_returns_last(ctx: AppContext) -> None:
    first = open_sample(ctx)["work"]
    panel.on_choice(ctx, "correct", None, None, "", [], [], first, as_user("ann"))
    after = panel.on_skip(ctx, first, as_user("ann"))
    assert draft_of(ctx, "ann", first) is None  # leaving without saving drops the sample's unsaved choices
    shown = view(after)
    assert shown["work"]["position"] == 2 and "Skipped sample 1" in plain(shown["status"])
    other = open_sample(ctx, "bea")
    assert other["work"]["item_id"] == first["item_id"]  # back in the pool for everyone else at once


def test_previous_reopens_my_own_label_and_a_correction_is_a_new_row(ctx: AppContext) -> None:
    work = open_sample(ctx)["work"]
    _, _, after, saved = save(ctx, work)
    second = after_save(ctx, after, saved)
    back = view(panel.on_previous(ctx, second["work"], None, None, None, "", [], [], as_user("ann")))
    assert back["work"]["item_id"] == work["item_id"] and back["work"]["state"] == "done"
    assert [value(back[f]) for f in ("original", "modification", "difficulty")] == [
        "correct",
        "reasonable",
        "easy",
    ]
    assert "already labelled" in back["status"]
    unchanged = save(ctx, back["work"])  # confirming a saved label as it is adds no row
    assert unchanged[0].startswith("Nothing changed on sample 1") and count_annotations(ctx.store) == 1
    moved = after_save(ctx, back["work"], unchanged[3])
    assert moved["work"]["item_id"] == second["work"]["item_id"] and "unchanged" in moved["status"]
    save(ctx, back["work"], choices=("incorrect", "reasonable", "hard"))
    frame = annotations_frame(ctx.store)
    assert len(frame) == 2 and json.loads(frame.iloc[-1]["payload"])["original"] == "incorrect"
    forward = view(
        panel.on_skip(ctx, back["work"], as_user("ann"))
    )  # leaving a labelled sample: no skip stored
    assert forward["work"]["item_id"] == second["work"]["item_id"] and "unchanged" in forward["status"]


def test_jump_by_number_or_id_and_a_bad_reference_says_what_to_type(ctx: AppContext) -> None:
    work = open_sample(ctx)["work"]
    by_number = panel.on_jump(ctx, work, DATASET, " 7 ", None, None, None, "", [], [], as_user("ann"))
    assert "Sample 7 / 394" in by_number["progress"] and by_number["jump_box"] == ""
    reference = by_number["work"]["external_id"]
    by_id = panel.on_jump(
        ctx, by_number["work"], DATASET, reference, None, None, None, "", [], [], as_user("ann")
    )
    assert by_id["work"]["position"] == 7
    bad = panel.on_jump(ctx, work, DATASET, "9999", None, None, None, "", [], [], as_user("ann"))
    assert "Cannot jump to '9999'" in bad["status"] and "a number from 1 to the dataset size" in bad["status"]


def test_every_sample_done_says_so(ctx: AppContext) -> None:
    with ctx.store.writing() as tx:
        write_records(
            tx,
            "tiny",
            "step_review",
            [
                ItemRecord(
                    external_id="only",
                    question="q",
                    steps={"original": ["a"], "modified": ["b"]},
                    error_steps=[0],
                )
            ],
            "test",
        )
    work = open_sample(ctx, dataset="tiny")["work"]
    _, _, after, saved = save(ctx, work)
    done = after_save(ctx, after, saved)
    assert "Nothing left for you in tiny" in done["status"] and "you labelled 1" in done["progress"]
    back = view(
        panel.on_previous(ctx, done["work"], None, None, None, "", [], [], as_user("ann"))
    )  # the done page keeps its dataset
    assert back["work"]["item_id"] == work["item_id"] and back["work"]["state"] == "done"


def _two_annotators_label_the_same_sample(ctx: AppContext) -> None:
    datasets.update_settings(ctx.store, DATASET, {"annotators_per_item": 2})
    save(ctx, open_sample(ctx, "ann")["work"], "ann", ("correct", "reasonable", "easy"))
    other = open_sample(ctx, "bea")
    assert value(other["original"]) is None  # blind: bea never sees ann's label on the same sample
    save(ctx, other["work"], "bea", ("incorrect", "unreasonable", "hard"))


def test_an_annotator_sees_statistics_and_exports_of_their_own_labels_only(
    ctx: AppContext, tmp_path: Path
) -> None:
    _two_annotators_label_the_same_sample(ctx)
    summary, original, modification, difficulty, note = actions.on_stats(ctx, DATASET, as_user("bea"))
    assert list(summary["value"]["annotator"]) == ["bea"] and "your own labels only" in note
    everything = json.dumps([t["value"].to_dict() for t in (summary, original, modification, difficulty)])
    assert '"ann"' not in everything and "all annotators" not in everything
    assert '"Correct": {"0": 0}' in everything  # ann's "correct" is not counted in what bea receives
    assert [c for _, c in actions.export_choices(users.get_user(ctx.store, "bea"))] == [
        "mine-csv",
        "mine-jsonl",
    ]
    for choice in ("log-csv", "prmbench"):
        with pytest.raises(gr.Error, match="only adjudicators and admins"):
            actions.on_export(ctx, DATASET, choice, as_user("bea"))
    file, status = actions.on_export(ctx, DATASET, "mine-csv", as_user("bea"))
    exported = pd.read_csv(_offered(ctx, file, "bea"))
    assert set(exported["annotator"]) == {"bea"} and list(exported["label_original"]) == ["incorrect"]
    assert status.startswith("Exported 1 row of prmbench-step-review: My labels (CSV)")


def _offered(ctx: AppContext, update: dict, owner: str) -> Path:
    """The file behind the offered link, found as the download route finds it; bound to `owner`."""
    token = re.search(r'href="/stepgate/download/([^"]+)"', update["value"]).group(1)
    path, _, bound_to = find_download(ctx, token)
    assert bound_to == owner
    return path


def test_an_admin_sees_and_exports_every_annotators_labels(ctx: AppContext) -> None:
    _two_annotators_label_the_same_sample(ctx)
    summary, original, *_ = actions.on_stats(ctx, DATASET, as_user("lead"))
    assert list(summary["value"]["annotator"]) == ["ann", "bea"]
    table = original["value"].set_index("Original steps")
    assert table.loc["all annotators", "Correct"] == 1 and table.loc["all annotators", "Incorrect"] == 1
    file, _ = actions.on_export(ctx, DATASET, "log-jsonl", as_user("lead"))
    rows = pd.read_json(_offered(ctx, file, "lead"), lines=True)
    assert sorted(rows["annotator"]) == ["ann", "bea"]
    _, status = actions.on_export(ctx, DATASET, None, as_user("lead"))
    assert status == "Choose what to export first."


def test_difficulty_is_needed_only_while_the_sample_could_be_retained(ctx: AppContext) -> None:
    """PRMBench-V leaves difficulty open for a rejected modification: the sheet's default asks for it only
    where the item would be retained (original correct, modification reasonable)."""
    work = open_sample(ctx)["work"]
    status, *_, saved = save(ctx, work, choices=("correct", "reasonable", None))
    assert status.endswith("please choose: Difficulty.") and saved is None
    status, *_, saved = save(ctx, work, choices=("correct", "unreasonable", None))
    assert status.startswith("Saved sample 1") and saved is not None
    stored = annotations_frame(ctx.store)
    assert json.loads(stored["payload"].iloc[-1]) == {"original": "correct", "modification": "unreasonable"}
    datasets.update_settings(ctx.store, DATASET, {"difficulty_required": "always"})
    other = open_sample(ctx, "bea")["work"]
    status, *_, saved = save(ctx, other, who="bea", choices=("incorrect", "unreasonable", None))
    assert status.endswith("please choose: Difficulty.") and saved is None


def test_applicable_features_are_offered_only_when_the_dataset_names_some(ctx: AppContext) -> None:
    shown = open_sample(ctx)
    assert all(shown[key]["visible"] is False for key in panel.FEATURES)
    datasets.update_settings(ctx.store, DATASET, {"features": "uses the figure, <b>long</b> chain"})
    shown = open_sample(ctx, "bea")
    for key in panel.FEATURES:
        assert shown[key]["visible"] is True
        assert shown[key]["choices"] == ["uses the figure", "<b>long</b> chain"]  # Gradio escapes labels
    work = shown["work"]
    out = panel.on_save(
        ctx, work, "correct", "reasonable", "hard", "", ["uses the figure"], [], False, as_user("bea")
    )
    assert plain(out["status"]).startswith("Saved sample")
    payload = json.loads(annotations_frame(ctx.store)["payload"].iloc[-1])
    assert payload["original_features"] == ["uses the figure"] and "modified_features" not in payload
    again = panel.on_save(
        ctx, out["work"], "correct", "reasonable", "hard", "", [], ["made up"], False, as_user("bea")
    )
    assert "made up not among this dataset's features" in plain(again["status"])
    assert count_annotations(ctx.store) == 1


def test_a_bad_step_review_setting_is_named_and_nothing_changes(ctx: AppContext) -> None:
    with pytest.raises(datasets.DatasetError, match=r"retain_rule.*correct_and_reasonable, reasonable"):
        datasets.update_settings(ctx.store, DATASET, {"retain_rule": "always"})
    with pytest.raises(datasets.DatasetError, match="unknown setting 'retain_rule' for a earliest_error"):
        datasets.update_settings(ctx.store, "qwq-earliest-error", {"retain_rule": "reasonable"})
    found = datasets.get_dataset(ctx.store, DATASET)
    assert found is not None and found.setting("retain_rule") == "correct_and_reasonable"
    assert found.setting("disagreement_policy") == "majority" and found.setting("features") == []


def test_a_typed_note_alone_comes_back_after_a_reload_and_the_notices_read_plainly(ctx: AppContext) -> None:
    """The note is part of the draft the server keeps (issue 29): a reload brings it back, and the status
    line says where it was kept. A labelled sample's notice does not say "correct", a choice's name."""
    work = open_sample(ctx)["work"]
    panel.on_choice(ctx, None, None, None, "step 5 doubles the price", None, None, work, as_user("ann"))
    again = panel.on_tab_open(ctx, DATASET, {}, as_user("ann"))  # a reload: no state in the page
    assert again["work"]["item_id"] == work["item_id"]
    assert value(again["note"]) == "step 5 doubles the price"
    assert "kept on the server" in plain(again["status"]) and "browser" not in again["status"]
    for notice in render.NOTICES.values():
        assert "correct it" not in notice and ".." not in notice
