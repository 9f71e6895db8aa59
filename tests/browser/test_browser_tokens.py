"""API tokens from the admin's panel, in headless Chromium: an admin makes one (the secret shown
once), a script uses it over HTTP to upload model-generated items with their pre-labels and real
images, the admin revokes it and the script gets 401 with nothing stored; an annotator's token is
refused, and an annotator reaches none of the panel's handlers over HTTP."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

import pytest
import requests
from playwright.sync_api import Browser, Page, expect

from bench.server import Server
from tests.browser_support import login, screenshot
from tests.conftest import MATHVISTA_DIR
from tests.security.support import PASSWORD, call_event, config, event_of, team_server
from tests.security.support import login as http_login

pytestmark = pytest.mark.browser
expect.set_options(timeout=20_000)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with team_server(tmp_path_factory.mktemp("tokens") / "tokens.duckdb") as running:
        yield running


def model_items(n: int = 2) -> bytes:
    """CRYSTAL-style records as a generator script sends them: candidate steps and a real figure."""
    pictures = sorted(MATHVISTA_DIR.glob("*.png"))[:n]
    lines = [
        {
            "id": f"gen-{i}",
            "question": f"What does figure {i} show?",
            "image": base64.b64encode(p.read_bytes()).decode("ascii"),
            "answer": "A",
            "steps": ["The figure shows a chart.", "So the answer is A."],
        }
        for i, p in enumerate(pictures)
    ]
    return ("\n".join(json.dumps(line) for line in lines) + "\n").encode()


def upload(server: Server, token: str, dataset: str) -> requests.Response:
    return requests.post(
        f"{server.url}/api/items",
        params={"dataset": dataset, "format": "crystal"},
        data=model_items(),
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    )


def open_tokens(browser: Browser, server: Server) -> Page:
    page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    page.set_default_timeout(20_000)
    login(page, server.url, "lead", f"lead-{PASSWORD}")
    page.get_by_role("tab", name="Data").click()
    page.get_by_role("tab", name="API tokens").click()
    expect(page.locator("#tokens-create")).to_be_visible()
    return page


def make_token(page: Page, owner: str, name: str) -> str:
    page.locator("#tokens-owner input").click()
    page.get_by_role("option", name=owner, exact=True).click()
    page.locator("#tokens-name textarea, #tokens-name input").first.fill(name)
    page.locator("#tokens-create").click()
    # this token's own line: a token made before left "shown only this once" in the status too
    expect(page.locator("#tokens-status")).to_contain_text(f"({name}) acts as {owner}")
    expect(page.locator("#tokens-status")).to_contain_text("shown only this once")
    secret = page.locator("#tokens-new-token textarea, #tokens-new-token input").first.input_value()
    assert secret.startswith("sgt_")
    expect(page.locator("#tokens-table")).to_contain_text(name)
    assert secret not in page.locator("#tokens-table").inner_text()  # the list shows its start only
    return secret


def test_an_admin_makes_a_token_a_script_uploads_with_it_and_a_revoke_stops_it(
    server: Server, browser: Browser
) -> None:
    page = open_tokens(browser, server)
    secret = make_token(page, "lead", "nightly generator")
    screenshot(page, "tokens-created")
    sent = upload(server, secret, "generated")
    assert sent.status_code == 200, sent.text
    assert sent.json()["added"] == 2 and sent.json()["task"] == "quality_gate"
    metrics = requests.get(f"{server.url}/metrics", headers={"Authorization": f"Bearer {secret}"}, timeout=30)
    assert metrics.status_code == 200
    # Revoke it in the panel: the next request gets 401 and stores nothing.
    page.locator("#tokens-pick input").click()
    page.get_by_role("option", name="nightly generator", exact=False).click()
    page.locator("#tokens-revoke").click()
    expect(page.locator("#tokens-status")).to_contain_text("is revoked")
    expect(page.locator("#tokens-table")).to_contain_text("revoked")
    expect(page.locator("#tokens-new-token")).to_be_hidden()
    refused = upload(server, secret, "generated-after-revoke")
    assert refused.status_code == 401 and "revoked" in refused.json()["error"]
    wrong = upload(server, secret + "x", "generated-after-revoke")
    assert wrong.status_code == 401
    lead = http_login(server.url, "lead")
    listing = requests.get(f"{server.url}/metrics", cookies=lead.cookies, timeout=30)
    assert listing.status_code == 200  # the admin's session still works; the dataset was never made:
    fresh = make_token(page, "lead", "checker")
    again = upload(server, fresh, "generated-after-revoke")
    assert again.status_code == 200 and again.json()["added"] == 2  # first import there, not a repeat
    page.context.close()


def test_an_annotators_token_acts_as_an_annotator_and_stores_nothing(
    server: Server, browser: Browser
) -> None:
    page = open_tokens(browser, server)
    secret = make_token(page, "ann", "ann's script")
    refused = upload(server, secret, "by-annotator")
    assert refused.status_code == 403, refused.text
    assert (
        requests.get(
            f"{server.url}/metrics", headers={"Authorization": f"Bearer {secret}"}, timeout=30
        ).status_code
        == 403
    )
    fresh = make_token(page, "lead", "admin script")
    reply = upload(server, fresh, "by-annotator")
    assert reply.status_code == 200 and reply.json()["added"] == 2, reply.text  # nothing was there before
    page.context.close()


def test_an_annotator_reaches_none_of_the_token_handlers_over_http(server: Server, browser: Browser) -> None:
    page = open_tokens(browser, server)
    make_token(page, "lead", "kept-secret-name")
    page.context.close()
    ann = http_login(server.url, "ann")
    conf = config(ann, server.url)
    for elem_id, trigger, data in (
        ("tokens-create", "click", ["ann", "stolen"]),
        ("tokens-revoke", "click", ["1"]),
        ("data-tokens-tab", "select", []),
    ):
        fn, _ = event_of(conf, elem_id, trigger)
        status, text = call_event(ann, server.url, fn, data)
        assert status == 200 and "only an admin can do this" in text and '"success":false' in text, text[:400]
        assert "sgt_" not in text and "kept-secret-name" not in text
    # The admin still sees every token live and no token named "stolen".
    page = open_tokens(browser, server)
    expect(page.locator("#tokens-table")).to_contain_text("kept-secret-name")
    assert "stolen" not in page.locator("#tokens-table").inner_text()
    page.context.close()


def test_a_bad_upload_is_refused_with_where_and_stores_nothing(server: Server, browser: Browser) -> None:
    page = open_tokens(browser, server)
    secret = make_token(page, "lead", "careless script")
    page.context.close()
    auth = {"Authorization": f"Bearer {secret}"}
    unnamed = requests.post(f"{server.url}/api/items", data=model_items(), headers=auth, timeout=60)
    assert unnamed.status_code == 400 and "dataset" in unnamed.json()["error"]
    broken = model_items() + b'{"id": "gen-9", "question": \n'
    sent = requests.post(
        f"{server.url}/api/items",
        params={"dataset": "half", "format": "crystal"},
        data=broken,
        headers=auth,
        timeout=60,
    )
    assert sent.status_code == 400 and "the request body" in sent.json()["error"], sent.text
    assert "request-body.jsonl:3:" in sent.json()["error"]
    after = requests.post(
        f"{server.url}/api/items",
        params={"dataset": "half", "format": "crystal"},
        data=model_items(),
        headers=auth,
        timeout=60,
    )
    assert after.json()["added"] == 2  # the refused upload left nothing behind
