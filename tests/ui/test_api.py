"""The public HTTP API, driven over plain HTTP against the real app: who acts, what comes back."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from bench.client import ApiError, StepgateClient
from tests.browser_support import cli, running

REVIEW = {"original": "incorrect", "modification": "reasonable", "difficulty": "hard"}
EE = "qwq-earliest-error"


@pytest.fixture(scope="module")
def team_server(tmp_path_factory: pytest.TempPathFactory):
    db: Path = tmp_path_factory.mktemp("api") / "api.duckdb"
    for name in ("ann", "bob", "cat"):
        cli("users", "add", name, "--password", f"{name}-password", db=db)
    with running(db, "--team") as server:
        yield server


def _client(server, name: str) -> StepgateClient:
    return StepgateClient(server.url, name, f"{name}-password")


def test_unauthenticated_requests_are_refused(team_server) -> None:
    for path in ("/gradio_api/run/next_item", "/gradio_api/call/next_item"):
        assert requests.post(team_server.url + path, json={"data": [EE]}, timeout=10).status_code == 401
    assert requests.get(team_server.url + "/gradio_api/info", timeout=10).status_code == 401


def test_wrong_password_is_refused(team_server) -> None:
    with pytest.raises(ApiError, match="login"):
        StepgateClient(team_server.url, "ann", "bob-password")


def test_a_label_is_stored_once_and_never_shown_to_another_annotator(team_server) -> None:
    ann, bob = _client(team_server, "ann"), _client(team_server, "bob")
    item = ann.run("next_item", EE)
    label = {"earliest_error": 2}
    first = ann.run("submit_label", item["item_id"], item["version_id"], label, "ann-ee-1", 12.5)
    retry = ann.run("submit_label", item["item_id"], item["version_id"], label, "ann-ee-1", 12.5)
    assert first["annotation_id"] == retry["annotation_id"] and retry["duplicate"] is True
    # Bob is given the same item (it needs 3 annotators) with no trace of Ann's label.
    seen = bob.run("next_item", EE)
    assert seen["item_id"] == item["item_id"]
    assert seen["my_label"] is None and seen["state"] == "new"
    assert "ann" not in str(seen) and "earliest_error" not in str(seen)
    # Ann's own view of her item returns her label.
    with pytest.raises(ApiError, match="already used"):
        bob.run("submit_label", item["item_id"], item["version_id"], label, "ann-ee-1", 1.0)


def test_nobody_can_act_as_another_user(team_server) -> None:
    cat, ann = _client(team_server, "cat"), _client(team_server, "ann")
    item = cat.run("next_item", "prmbench-step-review")
    # There is no user parameter to forge: a trailing "ann" is ignored and the label is Cat's.
    stored = cat.run("submit_label", item["item_id"], item["version_id"], REVIEW, "cat-1", 1.0, "ann")
    assert (
        cat.run("submit_label", item["item_id"], item["version_id"], REVIEW, "cat-1", 1.0)["annotation_id"]
        == (stored["annotation_id"])
    )
    with pytest.raises(ApiError, match="already used"):
        ann.run("submit_label", item["item_id"], item["version_id"], REVIEW, "cat-1", 1.0)


def test_an_incomplete_label_gets_the_message_and_is_not_stored(team_server) -> None:
    ann = _client(team_server, "ann")
    item = ann.run("next_item", "prmbench-step-review")
    with pytest.raises(ApiError, match="please choose: Modification, Difficulty"):
        ann.run("submit_label", item["item_id"], item["version_id"], {"original": "correct"}, "ann-bad", 1.0)
    again = ann.run("next_item", "prmbench-step-review")
    assert again["item_id"] == item["item_id"] and again["state"] == "resumed"
