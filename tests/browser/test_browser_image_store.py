"""The panels show images kept in object storage: a replica that never imported them (its own empty
image folder) fetches each from the bucket once and serves it to a logged-in user only, through the
same route as images in the folder; nothing names the bucket to the browser."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from playwright.sync_api import Browser, expect

from tests.browser_support import Server, cli, login, running
from tests.conftest import MATHVISTA_DIR
from tests.s3_support import S3Server, s3_server
from tests.store.test_image_store import BUCKET, STORAGE, gate_file

pytestmark = pytest.mark.browser
expect.set_options(timeout=20_000)


@pytest.fixture(scope="module")
def setup(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Server, S3Server, dict[str, bytes], Path]]:
    folder = tmp_path_factory.mktemp("image-store")
    with s3_server() as s3:
        s3.bucket(BUCKET)
        db = folder / "team.duckdb"
        source, by_hash = gate_file(folder / "src")
        cli("users", "add", "lead", "--role", "admin", "--password", "lead-password-1", db=db)
        cli("users", "add", "ann", "--role", "annotator", "--password", "ann-password-1", db=db)
        stored = ("--image-store", STORAGE)
        cli(
            "import",
            str(source),
            "--format",
            "crystal",
            "--dataset",
            "figures",
            *stored,
            "--data-dir",
            str(folder / "replica-1"),
            db=db,
        )
        cli("datasets", "set", "figures", "dual_percent=0", db=db)
        replica = folder / "replica-2"
        with running(db, "--no-demo", "--team", *stored, "--data-dir", str(replica)) as app:
            yield app, s3, by_hash, replica


def test_an_annotator_sees_an_image_from_the_bucket_and_only_logged_in_users_fetch_it(
    setup: tuple[Server, S3Server, dict[str, bytes], Path], browser: Browser
) -> None:
    app, s3, by_hash, replica = setup
    page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    login(page, app.url, "ann", "ann-password-1")
    page.get_by_role("tab", name="Quality gate").click()
    expect(page.locator("#qg-header")).to_contain_text("Item fig-")
    image = page.locator("#qg-image img")
    expect(image).to_be_visible()
    assert page.evaluate("document.querySelector('#qg-image img').naturalWidth") > 0
    src = image.get_attribute("src") or ""
    assert s3.endpoint not in src and BUCKET not in src  # the browser never learns the bucket
    url = src if src.startswith("http") else app.url + src
    shown = page.request.get(url)
    assert shown.status == 200 and hashlib.sha256(shown.body()).hexdigest() in by_hash
    # Without a login: neither the panel's link nor the replica's copy on disk.
    assert requests.get(url, timeout=30).status_code == 401
    copies = list((replica / "images").rglob("*.png"))
    assert copies and {p.name.split(".")[0] for p in copies} <= set(by_hash)
    for copy in copies:
        assert requests.get(f"{app.url}/gradio_api/file={copy}", timeout=30).status_code == 401
    page.context.close()


def test_a_script_upload_the_bucket_refuses_gets_503_and_stores_nothing(
    setup: tuple[Server, S3Server, dict[str, bytes], Path],
) -> None:
    app, s3, _, _ = setup
    token = cli("tokens", "create", "generator", "--user", "lead", db=app.db).stdout.strip().splitlines()[-1]
    picture = sorted(MATHVISTA_DIR.glob("*.png"))[-1]  # a figure the setup's gate file does not use
    record = {"id": "new-1", "question": "Which piece is missing?", "answer": "A", "steps": ["Look.", "A."]}
    body = json.dumps({**record, "image": base64.b64encode(picture.read_bytes()).decode("ascii")})

    def send() -> requests.Response:
        return requests.post(
            f"{app.url}/api/items",
            params={"dataset": "uploaded", "format": "crystal"},
            data=body.encode(),
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        )

    s3.enforce_credentials(True)
    try:
        sent = send()
    finally:
        s3.enforce_credentials(False)
    assert sent.status_code == 503, sent.text
    error = sent.json()["error"]
    assert "credentials were refused" in error and STORAGE in error and "nothing was stored" in error
    assert "uploaded" not in cli("datasets", "list", db=app.db).stdout
    again = send()
    assert again.status_code == 200 and again.json()["added"] == 1
    digest = hashlib.sha256(picture.read_bytes()).hexdigest()
    assert f"team-a/{digest[:2]}/{digest}.png" in s3.objects(BUCKET, "team-a/")
