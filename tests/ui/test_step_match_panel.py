"""The step-match panel's handlers on a real store: blind replies for annotators, the report for reviewers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import gradio as gr
import pytest

from importers.records import ItemRecord
from services import step_match
from services.encoder import Encoder
from store import Store, users
from store.bulk import write_records
from ui.api import api_next_item
from ui.context import AppContext
from ui.panels import step_match as panel
from ui.render import LITERAL_DOLLAR, safe_markdown

EXAMPLES = Path(__file__).resolve().parents[2] / "demo_data" / "step_match_examples_demo.jsonl"


@pytest.fixture
def ctx(store: Store, encoder: Encoder) -> AppContext:
    examples = [json.loads(line) for line in EXAMPLES.read_text(encoding="utf-8").splitlines()]
    step_match.create_study(store, encoder, examples, "study", counts=(3, 3, 3), seed=1)
    users.add_user(store, "ann", "annotator")
    users.add_user(store, "lead", "admin")
    return AppContext(store=store, encoder=encoder)


def as_user(name: str) -> gr.Request:
    return gr.Request(username=name)


def _blind(reply: dict) -> None:
    """No reply to an annotator carries the score, the band or the encoder's decision."""
    text = repr({k: (v if not hasattr(v, "value") else v.value) for k, v in reply.items()})
    for word in ("similarity", "band", "encoder_match", "sampling"):
        assert word not in text
    # The band edges as numbers of their own (a timestamp such as 1795514610.5032 is not one).
    assert not re.search(r"(?<![\d.])0\.(20|50)(?!\d)", text)


def test_an_annotator_labels_pairs_blind_and_cannot_open_the_report(ctx: AppContext) -> None:
    shown = panel.on_tab_open(ctx, None, None, as_user("ann"))
    assert shown["dataset"].value == "study"
    assert shown["report_box"].visible is False
    assert shown["current"]["item_id"] is not None and shown["predicted"] and shown["reference"]
    assert set(shown["current"]) == {"dataset", "item_id", "version_id", "state", "request_id", "opened_at"}
    _blind(shown)
    api = api_next_item(ctx, "study", as_user("ann"))  # the HTTP API gives the same blind view
    assert api["item_id"] == shown["current"]["item_id"]
    assert set(api["steps"]) == {"predicted", "reference"} and "meta" not in api
    _blind(api)
    refused = panel.on_save(ctx, None, shown["current"], as_user("ann"))
    assert "Nothing saved" in refused["status"]
    current, labelled = shown["current"], 0
    while current.get("item_id") is not None:
        reply = panel.on_save(ctx, "match" if labelled % 2 else "no_match", current, as_user("ann"))
        _blind(reply)
        assert "Saved" in reply["status"]
        current, labelled = reply["current"], labelled + 1
    assert labelled == 9 and "Nothing left" in reply["header"]
    denied = panel.on_report(ctx, "study", as_user("ann"))
    assert set(denied) == {"report_note"} and "adjudicators and admins" in denied["report_note"]


def test_a_reviewer_sees_table_s1_and_the_calibrated_threshold(ctx: AppContext) -> None:
    current = panel.on_tab_open(ctx, None, None, as_user("ann"))["current"]
    while current.get("item_id") is not None:
        current = panel.on_save(ctx, "match", current, as_user("ann"))["current"]
    assert panel.on_tab_open(ctx, None, None, as_user("lead"))["report_box"].visible is True
    report = panel.on_report(ctx, "study", as_user("lead"))
    assert "9 of 9 pairs labelled" in report["report_note"]
    assert "not CRYSTAL" in report["report_note"]
    table = report["table"]
    assert list(table["band"]) == [
        "< 0.20",
        "[0.20, 0.35)",
        "[0.35, 0.50)",
        "[0.50, 0.70)",
        ">= 0.70",
        "Overall",
    ]
    assert int(table.set_index("band").loc["Overall", "pairs"]) == 9
    assert "Calibrated threshold for all-MiniLM-L6-v2" in report["calibration"]
    assert list(report["models"]["model"]) == ["prmbench-modified"]


def test_an_unsaved_choice_is_kept_on_the_server(ctx: AppContext) -> None:
    current = panel.on_tab_open(ctx, None, None, as_user("ann"))["current"]
    assert panel.on_choose(ctx, "match", current, as_user("ann")) == {}
    again = panel.on_tab_open(ctx, None, None, as_user("ann"))  # a reload: a fresh page
    assert again["current"]["item_id"] == current["item_id"]
    assert again["choice"].value == "match" and "unsaved choice" in again["header"]
    saved = panel.on_save(ctx, "match", again["current"], as_user("ann"))
    assert "Saved" in saved["status"] and saved["choice"].value is None


def test_a_pair_reads_as_every_panel_reads_dataset_text(store: Store) -> None:
    """The step-match study shows math typeset, prices as prices and markup as text (issue 29): the same
    safe Markdown step review shows, not escape_text's raw `\\(-5,5\\)` or one italic run between two prices."""
    predicted = "The interval is $(-5,5)$. Pencils cost $1.24. Five cost $1.82 <img src=x onerror=alert(1)>"
    with store.writing() as tx:
        write_records(
            tx,
            "pairs",
            "step_match",
            [
                ItemRecord(
                    external_id="p-1",
                    question="Cost $5 and $10?",
                    steps={"predicted": [predicted], "reference": ["$x^2$ and *twice*"]},
                )
            ],
            "steppairs",
        )
    users.add_user(store, "ann", "annotator")
    shown = panel.on_tab_open(AppContext(store=store), None, None, as_user("ann"))
    assert shown["predicted"] == safe_markdown(predicted)
    assert "$(-5,5)$" in shown["predicted"] and "\\(" not in shown["predicted"]
    assert shown["predicted"].count(LITERAL_DOLLAR) == 2 and "&lt;img" in shown["predicted"]
    assert "<img" not in shown["predicted"]
    assert shown["question"].count(LITERAL_DOLLAR) == 2 and "$x^2$" in shown["reference"]
