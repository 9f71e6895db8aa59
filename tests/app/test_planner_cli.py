"""The planner on the command line and behind the dashboard's section: answers, refusals, bad inputs."""

from __future__ import annotations

from pathlib import Path

import gradio as gr
import pytest

from store import Store, users
from tests.browser_support import app_py, cli
from ui.context import TEAM, AppContext
from ui.panels import planner


def test_plan_prints_the_prmbench_v_interval_and_writes_the_plot(tmp_path: Path) -> None:
    plot = tmp_path / "plan.png"
    out = cli(
        "plan", "--preset", "prmbench_v", "--sims", "50", "--plot", str(plot), db=tmp_path / "x.duckdb"
    ).stdout
    assert "95% interval 0.875 to 0.972" in out and "items needed for a half-width of 0.05: 95" in out
    assert "half-width by raters" in out and plot.stat().st_size > 5000
    assert not (tmp_path / "x.duckdb").exists()  # planning opens no database


def test_plan_for_a_coefficient_states_the_simulation_error() -> None:
    done = app_py(
        "plan",
        "--statistic",
        "fleiss_kappa",
        "--expected",
        "0.6",
        "--shares",
        "0.7,0.3",
        "--raters",
        "3",
        "--half-width",
        "0.1",
        "--sims",
        "100",
    )
    assert done.returncode == 0, done.stderr
    assert "(by simulation)" in done.stdout and "+/-" in done.stdout and "seed 0" in done.stdout
    assert "spread over the simulated studies" in done.stdout  # which interval it is, beside it


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--shares", "0.9,x"), "Category shares: '0.9,x' is not a list of numbers"),
        (("--expected", "0.5", "--shares", "0.9,0.1"), "below chance agreement"),
        (("--statistic", "cohen_kappa", "--raters", "3"), "Cohen's kappa is for 2 raters"),
        (("--half-width", "0"), "half-width"),
    ],
)
def test_bad_plans_say_what_is_wrong(args: tuple[str, ...], message: str) -> None:
    done = app_py("plan", *args)
    assert done.returncode == 1 and message in done.stderr and done.stdout == ""


def test_the_section_plans_for_reviewers_and_refuses_annotators(store: Store) -> None:
    users.add_user(store, "lead", "admin", password=None)
    users.add_user(store, "ann", "annotator", password=None)
    ctx = AppContext(store=store, mode=TEAM)
    answer, figure, series = planner.on_plan(
        ctx,
        "observed_agreement",
        0.94,
        0.05,
        "0.95,0.05",
        2,
        0.95,
        None,
        0,
        "nominal",
        gr.Request(username="lead"),
    )
    assert "items needed for a half-width of 0.05: 95" in answer and figure is not None
    assert "95" in set(series["items"])
    refused, *_ = planner.on_plan(
        ctx,
        "observed_agreement",
        0.94,
        0.05,
        "0.9,<b>",
        2,
        0.95,
        None,
        0,
        "nominal",
        gr.Request(username="lead"),
    )
    assert refused.startswith("Not planned") and "<b>" not in refused
    with pytest.raises(gr.Error):
        planner.on_plan(
            ctx,
            "observed_agreement",
            0.94,
            0.05,
            "0.5,0.5",
            2,
            0.95,
            None,
            0,
            "nominal",
            gr.Request(username="ann"),
        )
    preset = planner.on_preset(ctx, "mpbench", gr.Request(username="lead"))
    assert "0.923 to 0.972" in preset[0] and preset[7] == 3 and preset[9] == 300


def test_the_section_checks_a_study_under_a_stopping_rule(store: Store) -> None:
    users.add_user(store, "lead", "admin")
    ctx = AppContext(store=store, mode=TEAM)
    refused = planner.on_sequential(ctx, "no-such-study", 0.05, 20, None, True, gr.Request(username="lead"))
    assert refused == "Not checked: There is no study named 'no-such-study'."


def test_sequential_verb_names_a_missing_study(tmp_path: Path) -> None:
    done = app_py("sequential", "nope", "--target", "0.05", "--db", str(tmp_path / "s.duckdb"))
    assert done.returncode == 1 and "There is no study named 'nope'" in done.stderr


def test_the_section_plans_ordinal_alpha_at_the_fields_level(store: Store) -> None:
    users.add_user(store, "lead", "admin")
    ctx = AppContext(store=store, mode=TEAM)
    answer, _, series = planner.on_plan(
        ctx,
        "krippendorff_alpha",
        0.6,
        0.1,
        "0.3,0.4,0.3",
        3,
        0.95,
        None,
        0,
        "ordinal",
        gr.Request(username="lead"),
    )
    assert "(by simulation)" in answer and "+/-" in answer and len(series) == 5
