"""The earliest-error panel without a browser: its step list rendering and its handlers on a real store."""

from __future__ import annotations

import re

import gradio as gr
import pytest

from services import drafts
from store import annotations, users
from store.db import Store
from ui import step_list
from ui.context import AppContext
from ui.panels import earliest_error as panel

pytestmark = pytest.mark.engines  # tests on the store fixture run on DuckDB and PostgreSQL

DEMO = "qwq-earliest-error"
HEADER, QUESTION, IMAGES, REFERENCE_BOX, REFERENCE, STEPS, CHOICE, STATUS, PROGRESS, CURRENT = panel.ITEM


# --- step_list: pure rendering ---------------------------------------------------------------------


def test_steps_are_numbered_from_one_and_carry_their_position() -> None:
    markdown = step_list.steps_markdown(["First.", "Second.", "Third."])
    assert re.findall(r'class="ee-step ee-pos-(\d+)"', markdown) == ["0", "1", "2"]
    assert re.findall(r'<div class="ee-step-title">(Step \d+)</div>', markdown) == [
        "Step 1",
        "Step 2",
        "Step 3",
    ]


def test_hostile_step_text_stays_text() -> None:
    markdown = step_list.steps_markdown(
        ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "</div><div>"]
    )
    assert "<script" not in markdown and "<img" not in markdown
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in markdown
    assert "&lt;img src=x onerror=alert(1)&gt;" in markdown
    # Dataset text cannot close a step's wrapper: only the wrappers' own tags are markup.
    assert markdown.count("<div") == markdown.count("</div>") == 6


def test_an_unclosed_code_fence_is_closed_inside_its_own_step() -> None:
    markdown = step_list.steps_markdown(["```python\nx = 1", "Next step."])
    first, second = markdown.split('<div class="ee-step ee-pos-1"')
    assert first.count("```") == 2
    assert "```" not in second


def test_the_generators_step_prefix_and_indentation_are_removed() -> None:
    text = "Step 2. The problem states:\n\n        - three pencils\n\n        - five pencils\n        "
    assert step_list.tidy_step(text, 1) == "The problem states:\n\n- three pencils\n\n- five pencils"
    assert (
        step_list.tidy_step("Step 7. A mismatched number stays.", 1) == "Step 7. A mismatched number stays."
    )


def test_prices_stay_text_while_math_stays_math() -> None:
    prices = step_list.separate_math("cost $1.24. - Five cost $1.82.")
    assert "$" not in prices and prices.count(step_list.LITERAL_DOLLAR) == 2
    assert step_list.separate_math("let $x = 2$ and $y$") == "let $x = 2$ and $y$"
    assert step_list.separate_math("$x$ costs $5") == f"$x$ costs {step_list.LITERAL_DOLLAR}5"
    assert step_list.separate_math("$$\\frac12$$") == "$$\\frac12$$"


def test_a_product_outside_math_is_not_emphasis() -> None:
    assert step_list.separate_math("5*9^1 + 8*9^0") == r"5\*9^1 + 8\*9^0"
    assert step_list.separate_math("**bold** and $a*b*c$") == "**bold** and $a*b*c$"


def test_an_escaped_dollar_inside_math_cannot_pair_and_one_in_code_is_left_to_read() -> None:
    assert step_list.separate_math(r"cost $\$1.24$.") == f"cost ${step_list.MATH_DOLLAR}1.24$."
    assert step_list.separate_math(r"costs \$5") == f"costs {step_list.LITERAL_DOLLAR}5"
    assert step_list.separate_math("`echo $HOME`") == f"`echo {step_list.CODE_DOLLAR}HOME`"


def test_a_choice_is_accepted_only_as_a_label_of_this_solution() -> None:
    assert step_list.parse_choice("2", 3) == 2
    assert step_list.parse_choice(-1, 3) == -1
    assert [step_list.parse_choice(v, 3) for v in (None, "", 3, -2, "x", True)] == [None] * 6
    assert step_list.choice_options(2) == [("All steps are correct", -1), ("Step 1", 0), ("Step 2", 1)]
    assert step_list.label_title(-1) == "All steps are correct" and step_list.label_title(0) == "Step 1"


def test_the_reference_shows_the_answer_and_the_steps_or_says_there_are_none() -> None:
    with_steps = step_list.reference_markdown(["a", "b"], "a\n\nb", "29")
    assert "**Reference answer:** 29" in with_steps and "Reference step 2" in with_steps
    assert "ee-step " not in with_steps  # the reference is never clickable
    assert "x = 1" in step_list.reference_markdown(None, "x = 1", None)
    assert "no reference solution" in step_list.reference_markdown(None, None, "<b>4</b>")
    assert "<b>" not in step_list.reference_markdown(None, None, "<b>4</b>")


# --- handlers, called directly with a real store --------------------------------------------------


@pytest.fixture
def ctx(demo_store: Store) -> AppContext:
    users.add_user(demo_store, "ann", "annotator")
    users.add_user(demo_store, "bob", "annotator")
    users.add_user(demo_store, "lead", "admin")
    return AppContext(store=demo_store)


def as_user(name: str) -> gr.Request:
    return gr.Request(username=name)


def open_tab(ctx: AppContext, name: str) -> tuple:
    """What opening the tab returns (a fresh page: no state): the dataset picker, then the item's outputs."""
    shown = panel.on_tab_open(ctx, None, None, as_user(name))
    return shown.pop("dataset"), shown


def draft_of(ctx: AppContext, name: str, current: dict) -> object:
    return drafts.get(ctx.store, users.get_user(ctx.store, name), panel.PANEL, panel._draft_key(current))


def test_opening_the_tab_offers_the_earliest_error_datasets_and_claims_an_item(ctx: AppContext) -> None:
    picker, shown = open_tab(ctx, "ann")
    assert picker.choices == [(DEMO, DEMO)] and picker.value == DEMO
    assert shown[CURRENT]["item_id"] is not None and shown[CURRENT]["dataset"] == DEMO
    assert 'class="ee-step ee-pos-0"' in shown[STEPS]
    assert shown[CHOICE].value is None
    assert "Reference answer" in shown[REFERENCE]


def test_saving_without_a_choice_says_so_and_stores_nothing(ctx: AppContext) -> None:
    _, shown = open_tab(ctx, "ann")
    with pytest.warns(UserWarning, match="Nothing saved"):
        result = panel.on_save(ctx, None, shown[CURRENT], as_user("ann"))
    assert "Nothing saved" in result[STATUS]
    assert annotations.count_annotations(ctx.store) == 0


def test_a_save_stores_the_label_and_the_seconds_spent_then_shows_the_next_item(ctx: AppContext) -> None:
    _, shown = open_tab(ctx, "ann")
    current = shown[CURRENT]
    status = panel.on_choose(ctx, 2, current, as_user("ann"))["chosen"]
    assert draft_of(ctx, "ann", current) == 2 and "Step 3" in status
    after = panel.on_save(ctx, 2, current, as_user("ann"))
    assert draft_of(ctx, "ann", current) is None
    assert "Saved" in after[STATUS] and "Step 3" in after[STATUS]
    assert after[CURRENT]["item_id"] != current["item_id"]
    log = annotations.annotations_frame(ctx.store)
    assert log["payload"].tolist() == ['{"earliest_error": 2}']
    assert log["seconds_spent"].iloc[0] >= 0


def test_a_retried_save_of_the_same_attempt_is_stored_once(ctx: AppContext) -> None:
    _, shown = open_tab(ctx, "ann")
    panel.on_save(ctx, 1, shown[CURRENT], as_user("ann"))
    again = panel.on_save(ctx, 1, shown[CURRENT], as_user("ann"))
    assert "Already saved" in again[STATUS]
    assert annotations.count_annotations(ctx.store) == 1


def test_coming_back_resumes_the_held_item_with_the_draft(ctx: AppContext) -> None:
    _, shown = open_tab(ctx, "ann")
    panel.on_choose(ctx, 4, shown[CURRENT], as_user("ann"))
    _, again = open_tab(ctx, "ann")  # a reload: no page state, the draft kept on the server
    assert again[CURRENT]["item_id"] == shown[CURRENT]["item_id"]
    assert again[CHOICE].value == 4
    assert "resumed" in again[HEADER]


def test_another_annotators_label_and_draft_never_reach_a_second_annotator(ctx: AppContext) -> None:
    _, first = open_tab(ctx, "ann")
    panel.on_choose(ctx, 3, first[CURRENT], as_user("ann"))
    panel.on_save(ctx, 3, first[CURRENT], as_user("ann"))
    _, second = open_tab(ctx, "ann")
    panel.on_choose(ctx, 6, second[CURRENT], as_user("ann"))  # a draft of ann's on her next item
    # The same item (quorum 3: bob is given the item ann started): neither her label nor her draft.
    _, shown = open_tab(ctx, "bob")
    assert shown[CURRENT]["item_id"] == first[CURRENT]["item_id"]
    assert shown[CHOICE].value is None
    assert shown[CURRENT]["my_label"] is None and shown[CURRENT]["state"] == "new"
    assert "Step 4" not in shown[HEADER] + shown[STATUS]
    stats = panel.on_statistics(ctx, DEMO, as_user("bob"))
    note, summary, distribution = stats["stats_note"], stats["summary"], stats["distribution"]
    assert summary.empty and "ann" not in distribution["annotator"].tolist()
    assert "Your own labels only" in note


def test_a_done_item_shows_its_own_label_and_a_new_save_is_a_correction(ctx: AppContext) -> None:
    _, shown = open_tab(ctx, "ann")
    item_id = shown[CURRENT]["item_id"]
    after = panel.on_save(ctx, 2, shown[CURRENT], as_user("ann"))
    back = panel.KIT.on_previous(ctx, after[CURRENT], as_user("ann"))
    assert back[CURRENT]["item_id"] == item_id and back[CURRENT]["state"] == "done"
    assert back[CHOICE].value == 2 and "you labelled it **Step 3**" in back[HEADER]
    corrected = panel.on_save(ctx, 5, back[CURRENT], as_user("ann"))
    assert "Saved your correction" in corrected[STATUS]
    ann = users.get_user(ctx.store, "ann")
    version = back[CURRENT]["version_id"]
    assert annotations.my_label(ctx.store, ann.id, item_id, version) == {"earliest_error": 5}
    assert annotations.count_annotations(ctx.store) == 2  # append-only: the first label stays in the log


def test_a_first_label_goes_on_to_new_work_and_a_correction_to_the_next_of_ones_own_labels(
    ctx: AppContext,
) -> None:
    """A save of a new item moves on without reading the annotator's history (the item is its newest);
    a correction further back, and a retried first save, still walk the history."""
    _, shown = open_tab(ctx, "ann")
    first = panel.on_save(ctx, 1, shown[CURRENT], as_user("ann"))
    second = panel.on_save(ctx, 2, first[CURRENT], as_user("ann"))
    held = second[CURRENT]["item_id"]
    labelled = [shown[CURRENT]["item_id"], first[CURRENT]["item_id"]]
    assert held not in labelled
    retried = panel.on_save(ctx, 1, shown[CURRENT], as_user("ann"))  # the first save sent again
    assert "Already saved" in retried[STATUS] and retried[CURRENT]["item_id"] == labelled[1]
    back = panel.KIT.on_previous(
        ctx, panel.KIT.on_previous(ctx, second[CURRENT], as_user("ann"))[CURRENT], as_user("ann")
    )
    assert back[CURRENT]["item_id"] == labelled[0]
    corrected = panel.on_save(ctx, 3, back[CURRENT], as_user("ann"))
    assert "correction" in corrected[STATUS] and corrected[CURRENT]["item_id"] == labelled[1]
    last = panel.on_save(ctx, 2, corrected[CURRENT], as_user("ann"))  # unchanged: on to the held item
    assert last[CURRENT]["item_id"] == held


def test_skip_gives_the_item_to_the_next_annotator(ctx: AppContext) -> None:
    _, shown = open_tab(ctx, "ann")
    skipped = shown[CURRENT]["item_id"]
    after = panel.KIT.on_skip(ctx, shown[CURRENT], as_user("ann"))
    assert after[CURRENT]["item_id"] != skipped and "Skipped" in after[STATUS]
    _, bob = open_tab(ctx, "bob")
    assert bob[CURRENT]["item_id"] == skipped


def test_next_on_the_current_item_says_to_save_or_skip(ctx: AppContext) -> None:
    _, shown = open_tab(ctx, "ann")
    result = panel.KIT.on_next(ctx, shown[CURRENT], as_user("ann"))
    assert "save it, or skip it" in result[STATUS]
    assert CURRENT not in result  # the item stays as it is


def test_jump_opens_an_item_by_number_and_explains_a_bad_reference(ctx: AppContext) -> None:
    _, shown = open_tab(ctx, "ann")
    opened = panel.KIT.on_jump(ctx, "5", shown[CURRENT], as_user("ann"))
    assert "5 of 174" in opened[HEADER] and opened["jump"] == ""
    with pytest.warns(UserWarning):
        failed = panel.KIT.on_jump(ctx, "<b>nope</b>", shown[CURRENT], as_user("ann"))
    assert "Cannot open item" in failed[STATUS] and "<b>" not in failed[STATUS]


def test_reviewers_see_every_annotators_row_and_the_settlement_shares(ctx: AppContext) -> None:
    for name in ("ann", "bob"):
        _, shown = open_tab(ctx, name)
        panel.on_save(ctx, 0, shown[CURRENT], as_user(name))
    stats = panel.on_statistics(ctx, DEMO, as_user("lead"))
    summary, distribution, shares = stats["summary"], stats["distribution"], stats["shares"]
    assert summary["annotator"].tolist() == ["ann", "bob"]
    assert distribution.columns.tolist() == ["annotator", "Step 1"]
    assert "all annotators" in distribution["annotator"].tolist()
    assert shares["visible"] and shares["value"].set_index("settled").loc["open", "items"] == 174
    mine = panel.on_statistics(ctx, DEMO, as_user("ann"))
    own, hidden = mine["summary"], mine["shares"]
    assert own["annotator"].tolist() == ["ann"]
    assert hidden == {
        "__type__": "update",
        "value": None,
        "visible": False,
    }  # shares move with others' labels


def test_all_steps_correct_is_a_choice_of_its_own_and_switching_to_the_same_dataset_keeps_the_item(
    ctx: AppContext,
) -> None:
    _, shown = open_tab(ctx, "ann")
    chosen = panel.on_all_correct(ctx, shown[CURRENT], as_user("ann"))
    radio, status = chosen["choice"], chosen["chosen"]
    assert radio.value == step_list.ALL_CORRECT and draft_of(ctx, "ann", shown[CURRENT]) == -1
    assert "All steps are correct" in status
    assert panel.KIT.on_dataset_change(ctx, DEMO, shown[CURRENT], as_user("ann")) == {}


def test_a_request_without_a_known_user_is_refused(ctx: AppContext) -> None:
    with pytest.raises(gr.Error, match="not logged in"):
        panel.on_tab_open(ctx, None, None, as_user("nobody"))


def test_a_second_tab_on_the_same_item_warns_instead_of_recording_a_correction(ctx: AppContext) -> None:
    _, first_tab = open_tab(ctx, "ann")
    _, second_tab = open_tab(ctx, "ann")  # the same user, another tab: the item they hold
    assert first_tab[CURRENT]["item_id"] == second_tab[CURRENT]["item_id"]
    assert "Saved" in panel.on_save(ctx, 2, first_tab[CURRENT], as_user("ann"))[STATUS]
    with pytest.warns(UserWarning, match="another tab"):
        late = panel.on_save(ctx, 4, second_tab[CURRENT], as_user("ann"))
    assert "already saved a label" in late[STATUS]
    assert late[CURRENT]["state"] == "done" and late[CHOICE].value == 2  # the stored label, shown again
    assert annotations.count_annotations(ctx.store) == 1  # the first tab's label stands, unchanged
    ann = users.get_user(ctx.store, "ann")
    item, version = first_tab[CURRENT]["item_id"], first_tab[CURRENT]["version_id"]
    assert annotations.my_label(ctx.store, ann.id, item, version) == {"earliest_error": 2}
