"""The agreement studies' preset tables, cell by cell by hand, their files, and the service on a real store."""

from __future__ import annotations

import csv
import io
import json
import math
import uuid

import pandas as pd
import pytest

from exports.presets import format_cell, preset_csv, preset_latex, preset_markdown
from qc.matching import table_s1
from qc.presets import MPBENCH_ROWS, crystal_table_s1, mpbench_study, prmbench_v_study
from services import annotate, data, presets
from services.errors import InvalidInput, NotAllowed
from services.leasing import leases_of
from services.studies import draw_study
from store import Store, users, work
from store.datasets import get_dataset
from tests.gold_support import GOOD, label
from tests.services.test_predictions import settle

Z = 1.959963984540054  # the 97.5% normal quantile


def wilson(p: float, n: int) -> tuple[float, float]:
    """Wilson's score interval written out (Wilson 1927)."""
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return centre - half, centre + half


def check(table: pd.DataFrame, column: str, expected: dict[str, float]) -> None:
    for row, want in expected.items():
        got = table.loc[row, column]
        assert (math.isnan(want) and math.isnan(got)) or got == pytest.approx(want), (row, column, got, want)


def test_prmbench_v_study_cell_by_cell() -> None:
    pairs = [("ok", "ok")] * 6 + [("ok", "bad"), ("bad", "ok")] + [("bad", "bad")] * 2 + [("ok", None)]
    ratings = pd.DataFrame(pairs, columns=["a", "b"], dtype=object)
    table = prmbench_v_study(ratings, "ok")
    low, high = wilson(0.8, 10)
    check(
        table,
        "this study",
        {
            "# Items": 10,  # the single-rated item takes no part
            "# Agreements": 8,
            "% Observed agreement": 80.0,
            "% OA 95% Wilson low": 100 * low,
            "% OA 95% Wilson high": 100 * high,
            "# Both valid": 6,
            "# A valid, B invalid": 1,
            "# A invalid, B valid": 1,
            "# Both invalid": 2,
            "Cohen's kappa": (0.8 - 0.58) / 0.42,  # pA = pB = 0.7 valid: Pe = 0.49 + 0.09
            "PABAK": 0.6,  # 2 * 0.8 - 1
            "Gwet's AC1": (0.8 - 0.42) / 0.58,  # pi = 0.7: Pe = 2 * 0.7 * 0.3 / 1
        },
    )
    check(
        table, "paper", {"# Items": 100, "# Agreements": 94, "% Observed agreement": 94.0, "PABAK": math.nan}
    )


def test_mpbench_study_with_its_allocation_cell_by_cell() -> None:
    v, x = "valid", "invalid"
    rows = {
        1: ("SC", [v, v, v]),
        2: ("SC", [v, v, v]),
        3: ("SC", [v, v, x]),
        4: ("SC", [x, x, x]),
        5: ("AA", [v, v, v]),
        6: ("AA", [v, x, None]),
        7: ("AA", [v, None, None]),  # one rating: takes no part
    }
    ratings = pd.DataFrame({i: r for i, (_, r) in rows.items()}, index=["r1", "r2", "r3"], dtype=object).T
    paradigm = pd.Series({i: p for i, (p, _) in rows.items()})
    table = mpbench_study(ratings, paradigm, v, pool={"SC": 40, "AA": 10})
    assert list(table.columns) == ["SC", "AA", "Pooled"] and tuple(table.index) == MPBENCH_ROWS
    sc_low, sc_high = wilson(0.5, 4)
    check(
        table,
        "SC",
        {
            "# Items": 4,
            "% Of the study": 400 / 6,
            "# Pool": 40,
            "% Sampling fraction": 10.0,
            "% Unanimous valid": 50.0,
            "% Unanimous valid 95% Wilson low": 100 * sc_low,
            "% Unanimous valid 95% Wilson high": 100 * sc_high,
            "% Majority valid": 75.0,
            "% Unanimous agreement": 75.0,
            "% Pairwise agreement": 100 * (3 + 1 / 3) / 4,
            # counts (3,0) (3,0) (2,1) (0,3): P-bar 5/6, p = 2/3, Pe = 5/9
            "Fleiss' kappa": (5 / 6 - 5 / 9) / (4 / 9),
        },
    )
    check(
        table,
        "AA",
        {
            "# Items": 2,
            "% Of the study": 200 / 6,
            "# Pool": 10,
            "% Sampling fraction": 20.0,
            "% Unanimous valid": 50.0,
            "% Majority valid": 50.0,  # 1 of 2 is no majority
            "% Unanimous agreement": 50.0,
            "% Pairwise agreement": 50.0,
            # counts (3,0) (1,1): P-bar 1/2, pooled p = 4/5, Pe = 0.68
            "Fleiss' kappa": (0.5 - 0.68) / 0.32,
        },
    )
    check(
        table,
        "Pooled",
        {
            "# Items": 6,
            "% Of the study": 100.0,
            "# Pool": 50,
            "% Sampling fraction": 12.0,
            "% Unanimous valid": 50.0,
            "% Majority valid": 400 / 6,
            "% Unanimous agreement": 400 / 6,
            "% Pairwise agreement": 100 * (4 + 1 / 3) / 6,
            # 17 ratings, 12 valid: Pe = (144 + 25)/289; P-bar = (4 + 1/3)/6
            "Fleiss' kappa": ((4 + 1 / 3) / 6 - 169 / 289) / (1 - 169 / 289),
        },
    )


def test_preset_files_print_as_the_paper_and_read_back_exactly() -> None:
    table = pd.DataFrame(
        {"this study": [10.0, 6.5, 80.0, 0.5238095], "paper": [100.0, float("nan"), 94.0, float("nan")]},
        index=["# Items", "# Steps", "% Observed agreement", "Cohen's kappa"],
    )
    assert [format_cell(r, v) for r, v in zip(table.index, table["this study"], strict=True)] == [
        "10",
        "6.5",
        "80.0%",
        "0.524",
    ]
    md = preset_markdown(table, "Study | A", "a note")
    assert (
        "| % Observed agreement | 80.0% | 94.0% |" in md
        and "Study \\| A" in md
        and "| Cohen's kappa | 0.524 | n/a |" in md
    )
    rows = list(csv.DictReader(io.StringIO(preset_csv(table))))
    assert len(rows) == 8 and float(rows[6]["value"]) == 0.5238095 and rows[7]["value"] == ""
    tex = preset_latex(table, "R&D #1 100%", "50% of items_x")
    assert r"\caption{R\&D \#1 100\%}" in tex and r"\# Items & 10 & 100 \\" in tex
    assert r"\% Observed agreement & 80.0\% & 94.0\% \\" in tex and r"items\_x" in tex


LABEL = {"original": "incorrect", "modification": "reasonable", "difficulty": "medium"}


def _user(store: Store, name: str, role: str = "annotator") -> users.Annotator:
    users.add_user(store, name, role, None)
    found = users.get_user(store, name)
    assert found is not None
    return found


def test_study_presets_and_table2_from_the_store(demo_store: Store, tmp_path) -> None:
    lead = _user(demo_store, "lead", "admin")
    _user(demo_store, "kim")
    label(demo_store, "kim", 10, GOOD)  # kim keeps 10 items in the gate: the study's pool
    raters = [_user(demo_store, name) for name in ("una", "vic")]
    study = draw_study(
        demo_store,
        lead,
        dataset="prmbench-step-review",
        name="pilot",
        n_items=6,
        raters=2,
        seed=1,
        rater_names=["una", "vic"],
    )
    dataset = get_dataset(demo_store, "prmbench-step-review")
    for who in raters:
        for _ in range(6):
            got = work.next_item(demo_store, leases_of(demo_store), who, dataset, annotate.now_utc())
            annotate.submit(
                demo_store,
                annotator=who,
                item_id=got.item.item_id,
                version_id=got.item.version_id,
                payload=LABEL,
                request_id=str(uuid.uuid4()),
                seconds_spent=4.0,
            )
    v = presets.build_preset(demo_store, lead, "prmbench_v_study", study=study.name)
    check(
        v.table,
        "this study",
        {"# Items": 6, "# Agreements": 6, "% Observed agreement": 100.0, "# Both valid": 6},
    )
    assert v.table.loc["% OA 95% Wilson low", "this study"] < 100.0  # Wilson keeps its width at 6/6
    m = presets.build_preset(demo_store, lead, "mpbench_study", study=study.name)
    assert m.table.loc["# Items", "Pooled"] == 6 and m.table.loc["% Unanimous valid", "Pooled"] == 100.0
    strata = [c for c in m.table.columns if c != "Pooled"]
    assert sum(m.table.loc["# Items", c] for c in strata) == 6
    assert m.table.loc["# Pool", "Pooled"] == 10  # drawn from the kept items only
    assert v.table.loc["# Items", "this study"] == 6  # the raters' own labels, never kim's gate labels
    path = presets.write_preset(m, tmp_path, "latex")
    assert path.name == "mpbench_study-pilot.tex" and r"\begin{tabular}" in path.read_text(encoding="utf-8")

    gold = settle(demo_store)
    t2 = presets.build_preset(demo_store, lead, "processbench_table2", dataset="qwq-earliest-error")
    assert t2.table.loc["# Samples"].sum() == len(gold)
    with pytest.raises(InvalidInput, match="needs an earliest-error dataset"):
        presets.build_preset(demo_store, lead, "processbench_table2", dataset="prmbench-step-review")
    with pytest.raises(NotAllowed):
        presets.build_preset(demo_store, users.get_user(demo_store, "una"), "mpbench_study", study="pilot")


def test_crystal_table_s1_as_a_preset_by_hand() -> None:
    # Two bands: < 0.20 holds 2 pairs (encoder no, human no / yes), >= 0.70 holds 2 (yes/yes, yes/no).
    table = crystal_table_s1(
        table_s1(
            [0.1, 0.15, 0.8, 0.9], [False, False, True, True], [False, True, True, False], with_means=True
        )
    )
    assert list(table.columns)[-1] == "Overall" and table.loc["# Pairs", "Overall"] == 4
    assert table.loc["% Agreement", "< 0.20"] == 50.0 and table.loc["% Agreement", "Overall"] == 50.0
    assert table.loc["# False matches", ">= 0.70"] == 1 and table.loc["# Missed matches", "< 0.20"] == 1
    assert table.loc["False matches: mean similarity", "Overall"] == pytest.approx(0.9)
    assert table.loc["Cohen's kappa", "Overall"] == pytest.approx(0.0)  # Po 1/2, Pe 1/2
    assert "\\# Pairs & 2 &" in preset_latex(table, "S1")


def test_table_s1_preset_from_a_step_match_dataset(demo_store: Store, tmp_path) -> None:
    lead = _user(demo_store, "lead", "admin")
    path = tmp_path / "pairs.jsonl"
    rows = [
        {"id": f"p{i}", "predicted": f"step {i}", "reference": f"ref {i}", "similarity": s}
        for i, s in enumerate([0.1, 0.3, 0.6, 0.9])
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    data.import_file(demo_store, lead, path, format="steppairs", dataset="pairs")
    made = presets.build_preset(demo_store, lead, "crystal_table_s1", dataset="pairs")
    assert made.title == "CRYSTAL Table S1: pairs" and "Overall" in made.table.columns
    assert made.table.loc["# Pairs", "Overall"] == 0  # no human labels yet: nothing to compare
