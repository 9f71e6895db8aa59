"""services.step_match on a real store with the real encoder: a sampled study, blind items, Table S1."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from services import annotate, step_match
from services.encoder import Encoder
from services.errors import InvalidInput, NotAllowed
from store import Store, users

EXAMPLES = Path(__file__).resolve().parents[2] / "demo_data" / "step_match_examples_demo.jsonl"


def examples() -> list[dict]:
    return [json.loads(line) for line in EXAMPLES.read_text(encoding="utf-8").splitlines()]


def test_a_study_is_sampled_labelled_blind_and_reported(tmp_path: Path, encoder: Encoder) -> None:
    with Store(tmp_path / "study.duckdb") as store:
        created = step_match.create_study(
            store, encoder, examples(), "study", counts=(6, 6, 6), seed=3, annotators_per_item=2
        )
        assert created.pairs == 18 and created.per_band == {"< 0.20": 6, "[0.20, 0.50)": 6, ">= 0.50": 6}
        assert "not CRYSTAL's all-distilroberta-v1" in created.note
        with pytest.raises(InvalidInput, match="already"):
            step_match.create_study(store, encoder, examples(), "study")
        ann = users.add_user(store, "ann", "annotator", "ann-password")
        bob = users.add_user(store, "bob", "annotator", "bob-password")
        admin = users.add_user(store, "root", "admin", "root-password")
        dataset = annotate.dataset_for(store, "study")
        for user in (ann, bob):
            while (work := annotate.next_item(store, user, dataset)) is not None:
                item = work.item
                assert item.external_id.startswith("pair-")
                sim = item.meta["similarity"]
                # a human who says "match" above 0.5 and bob who also disagrees now and then
                says = sim >= 0.5 if user is ann else sim >= 0.45
                annotate.submit(
                    store,
                    annotator=user,
                    item_id=item.item_id,
                    version_id=item.version_id,
                    payload={"match": "match" if says else "no_match"},
                    request_id=uuid.uuid4().hex,
                )
        with pytest.raises(NotAllowed):
            step_match.study_report(store, ann, "study", encoder)
        report = step_match.study_report(store, admin, "study", encoder, replicates=50)
        assert report.pairs == 18 and 0 < report.labelled <= 18
        assert report.table.loc["Overall", "pairs"] == report.labelled
        assert list(report.table.columns)[:5] == [
            "pairs",
            "agreement",
            "kappa",
            "false_matches",
            "missed_matches",
        ]
        assert report.humans.pairs == 18 and report.humans.annotators == 2
        assert report.encoder == "all-MiniLM-L6-v2" and "not comparable" in report.note
        assert report.calibration is not None and 0.05 <= report.calibration.threshold <= 0.95
        assert 0 <= report.f1_at_tau <= 1 and 0 <= report.f1_calibrated <= 1
        kinds = set(report.disagreements["kind"])
        assert kinds <= {"false match", "missed match"}
        assert len(report.disagreements) == int(
            report.table.loc["Overall", "false_matches"] + report.table.loc["Overall", "missed_matches"]
        )
        assert set(report.sampling.index) <= {"< 0.20", "[0.20, 0.50)", ">= 0.50"}
