"""The step-match study's files: example sets uploaded by an admin in the Data panel (a bad line named
as file:line, nothing stored), and the report as a Markdown or CSV download that names its encoder and
says plainly that it is not CRYSTAL's all-distilroberta-v1."""

from __future__ import annotations

import io
import uuid
from pathlib import Path

import gradio as gr
import pandas as pd
import pytest

from services import annotate, step_match
from services.encoder import Encoder
from services.errors import InvalidInput, NotAllowed
from store import Store, users
from store.datasets import get_dataset
from ui.context import AppContext
from ui.kit.downloads import find_download
from ui.panels import data_study
from ui.panels import step_match as panel

EXAMPLES = Path(__file__).resolve().parents[2] / "demo_data" / "step_match_examples_demo.jsonl"
NOT_CRYSTAL = "not CRYSTAL's all-distilroberta-v1"


@pytest.fixture
def ctx(store: Store, encoder: Encoder) -> AppContext:
    for name, role in (("root", "admin"), ("judge", "adjudicator"), ("ann", "annotator")):
        users.add_user(store, name, role)
    return AppContext(store=store, encoder=encoder)


def _as(name: str) -> gr.Request:
    return gr.Request(username=name)


def _file(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "examples.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


GOOD = '{"example": "e1", "model": "m", "predicted": ["a = 2"], "reference": ["a is 2"]}'


@pytest.mark.parametrize(
    ("lines", "said"),
    [
        ((GOOD, "", '{"example": "e2", "predicted": ["x"]'), "examples.jsonl:3: not JSON"),
        ((GOOD, '{"example": "e2", "predicted": ["x"]}'), "examples.jsonl:2: 'predicted' and 'reference'"),
        ((GOOD, '{"predicted": ["x"], "reference": [3]}'), "examples.jsonl:2: every step must be text"),
        (('["a", "b"]',), "examples.jsonl:1: an object"),
        (("", "  "), "examples.jsonl: no examples"),
    ],
)
def test_a_bad_examples_file_is_refused_with_its_line(tmp_path: Path, lines: tuple, said: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        step_match.read_examples(_file(tmp_path, *lines))
    assert str(refused.value).startswith(said)


def test_an_examples_file_that_is_not_text_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "examples.jsonl"
    path.write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(InvalidInput, match="not UTF-8"):
        step_match.read_examples(path)


def test_an_admin_samples_an_uploaded_example_set_in_the_data_panel(ctx: AppContext, tmp_path: Path) -> None:
    done = data_study.on_create_study(
        ctx, str(EXAMPLES), "upload", "0.20,0.50", "3,3,3", 1, 2, "assignment", _as("root")
    )
    assert "✓ upload: 9 pairs sampled" in done["study_status"] and "not CRYSTAL" in done["study_status"]
    dataset = get_dataset(ctx.store, "upload")
    assert dataset is not None and dataset.task == "step_match"
    bad = _file(tmp_path, GOOD, "{oops")
    refused = data_study.on_create_study(
        ctx, str(bad), "other", "0.20,0.50", "3,3,3", 0, 1, "assignment", _as("root")
    )
    assert "examples.jsonl:2: not JSON" in refused["study_status"] and get_dataset(ctx.store, "other") is None
    wrong = data_study.on_create_study(
        ctx, str(EXAMPLES), "other", "0.2;0.5", "3,3,3", 0, 1, "assignment", _as("root")
    )
    assert "band edges" in wrong["study_status"] and get_dataset(ctx.store, "other") is None


def test_only_admins_sample_studies_from_files(ctx: AppContext) -> None:
    judge = users.get_user(ctx.store, "judge")
    assert judge is not None
    with pytest.raises(NotAllowed):
        step_match.create_study_from_file(ctx.store, judge, ctx.encoder, EXAMPLES, "sneaky", counts=(3, 3, 3))
    assert get_dataset(ctx.store, "sneaky") is None


def _labelled_study(ctx: AppContext) -> None:
    step_match.create_study(
        ctx.store, ctx.encoder, step_match.read_examples(EXAMPLES), "study", counts=(4, 4, 4)
    )
    ann = users.get_user(ctx.store, "ann")
    assert ann is not None
    dataset = annotate.dataset_for(ctx.store, "study")
    while (work := annotate.next_item(ctx.store, ann, dataset)) is not None:
        says = work.item.meta["similarity"] >= 0.5
        annotate.submit(
            ctx.store,
            annotator=ann,
            item_id=work.item.item_id,
            version_id=work.item.version_id,
            payload={"match": "match" if says else "no_match"},
            request_id=uuid.uuid4().hex,
        )


def test_the_report_files_name_their_encoder_and_say_it_is_not_crystals(
    ctx: AppContext, tmp_path: Path
) -> None:
    _labelled_study(ctx)
    judge = users.get_user(ctx.store, "judge")
    assert judge is not None
    md = step_match.study_report_file(ctx.store, judge, "study", "md", tmp_path / "r.md", ctx.encoder)
    text = md.read_text(encoding="utf-8")
    assert "**Encoder:** all-MiniLM-L6-v2" in text and NOT_CRYSTAL in text
    assert "## Human vs encoder by similarity band (Table S1)" in text and "| Overall |" in text
    csv = step_match.study_report_file(ctx.store, judge, "study", "csv", tmp_path / "r.csv", ctx.encoder)
    frame = pd.read_csv(csv, keep_default_na=False)
    study = frame[frame["section"] == "study"].set_index("statistic")["value"]
    assert study["encoder"] == "all-MiniLM-L6-v2" and NOT_CRYSTAL in study["encoder_note"]
    overall = frame[(frame["section"] == "table_s1") & (frame["group"] == "Overall")].set_index("statistic")
    assert int(overall.loc["pairs", "value"]) == 12
    with pytest.raises(InvalidInput, match="report format"):
        step_match.study_report_file(ctx.store, judge, "study", "xlsx", tmp_path / "r.xlsx")
    ann = users.get_user(ctx.store, "ann")
    assert ann is not None
    with pytest.raises(NotAllowed):
        step_match.study_report_file(ctx.store, ann, "study", "md", tmp_path / "a.md")
    assert not (tmp_path / "a.md").exists()


def test_the_panel_offers_the_report_to_reviewers_only(ctx: AppContext) -> None:
    _labelled_study(ctx)
    offered = panel.on_report_file(ctx, "study", "csv", _as("judge"))
    link = offered["report_file"]["value"]
    token = link.split("/stepgate/download/")[1].split('"')[0]
    found = find_download(ctx, token)
    assert found is not None and found[2] == "judge"
    assert "encoder_note" in io.StringIO(found[0].read_text(encoding="utf-8")).getvalue()
    refused = panel.on_report_file(ctx, "study", "md", _as("ann"))
    assert "report_file" in refused and "adjudicators and admins" in refused["report_note"]
