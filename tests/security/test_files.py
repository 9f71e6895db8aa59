"""Findings 1 and 2: files made for a user (exports, QC reports) reach that user and admins only.

The old app wrote them into a folder Gradio served (allowed_paths) under guessable names; an
annotator downloaded the annotation log and QC reports by guessing. Kept holding: path traversal on
Gradio's file route.
"""

from __future__ import annotations

import re
import secrets

import pytest
import requests

from tests.security.support import call_event, config, event_of, login, team_server

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    db = tmp_path_factory.mktemp("files") / "files.duckdb"
    with team_server(db) as running:
        yield running


def _export_link(server) -> str:
    lead = login(server.url, "lead")
    fn, _ = event_of(config(lead, server.url), "data-export-run")
    status, text = call_event(lead, server.url, fn, ["items-jsonl", ""])
    assert status == 200
    found = re.search(r'href=\\"(/stepgate/download/[^\\"]+)\\"', text)
    assert found, text[:500]
    return found.group(1)


def test_an_export_is_fetched_by_its_admin_only_never_by_a_guessing_annotator(server) -> None:
    link = _export_link(server)
    lead, ann = login(server.url, "lead"), login(server.url, "ann")
    got = lead.get(server.url + link, timeout=30)
    assert got.status_code == 200
    assert got.headers["content-disposition"].startswith("attachment")
    assert got.headers["cache-control"] == "no-store"
    # The annotator who learns the link, guesses one, or tries the files on disk gets nothing.
    stolen = ann.get(server.url + link, timeout=30)
    unknown = ann.get(server.url + "/stepgate/download/" + secrets.token_urlsafe(32), timeout=30)
    assert stolen.status_code == unknown.status_code == 404 and stolen.text == unknown.text
    private = server.db.parent / (server.db.name + ".files") / "private"
    on_disk = next(p for p in private.rglob("*") if p.is_file())
    assert ann.get(f"{server.url}/gradio_api/file={on_disk}", timeout=30).status_code != 200
    assert lead.get(f"{server.url}/gradio_api/file={on_disk}", timeout=30).status_code != 200
    # Anonymous: not even the download route answers.
    assert requests.get(server.url + link, timeout=30).status_code == 401


def test_files_left_in_the_old_export_folder_are_not_served(server) -> None:
    """Where the old panels wrote step-review exports and QC reports (exports/qc/<reviewer>/...)."""
    exports = server.db.parent / (server.db.name + ".files") / "exports"
    report = exports / "qc" / "lead" / "qc-report-dataset-demo.md"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text("# QC report with every annotator's labels\n")
    ann = login(server.url, "ann")
    for path in (report, exports / "step-review-all-20260101T000000.csv"):
        assert ann.get(f"{server.url}/gradio_api/file={path}", timeout=30).status_code in (403, 404)


@pytest.mark.parametrize(
    "target",
    [
        "../../../../etc/passwd",
        "/etc/passwd",
        "{images}/../../{db}",
        "{images}/%2e%2e/%2e%2e/{db}",
        "{files}/browser-state.key",
    ],
)
def test_path_traversal_on_the_file_route_still_fails(server, target: str) -> None:
    files = server.db.parent / (server.db.name + ".files")
    path = target.format(images=files / "images", db=server.db.name, files=files)
    ann = login(server.url, "ann")
    reply = ann.get(f"{server.url}/gradio_api/file={path}", timeout=30)
    assert reply.status_code in (400, 403, 404), reply.status_code
    assert "root:" not in reply.text
