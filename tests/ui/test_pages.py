"""Each role's page (ui/web/pages.py): the tabs it may open and nothing of the others, served at its
own path, and every request for another role's page sent to the user's own."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
import requests

from bench.server import Server
from services.demo import populate_demo
from services.records import Annotator
from store import Store
from tests.security.support import PASSWORD, login, make_team, team_server
from ui import panels
from ui.app import build_app
from ui.context import AppContext
from ui.web.pages import PAGES, page_for, role_page
from ui.web.server import build_server

ROLE_OF = {"ann": "annotator", "judge": "adjudicator", "lead": "admin"}
PAGE_OF = {"ann": "/annotate", "judge": "/review", "lead": "/"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    db = tmp_path_factory.mktemp("pages") / "pages.duckdb"
    make_team(db)
    with team_server(db, demo=True) as served:
        yield served


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The whole app's config, as Gradio serves it once mounted."""
    db = tmp_path_factory.mktemp("pages-config") / "config.duckdb"
    with Store(db) as store:
        populate_demo(store)
        ctx = AppContext(store=store)
        blocks = build_app(ctx)
        build_server(ctx, blocks, "log in")
        assert blocks.config is not None
        return blocks.config


def _inside(node: dict) -> set[int]:
    found: set[int] = set()
    for child in node.get("children", []) or []:
        found |= {child["id"], *_inside(child)}
    return found


def _tabs(config: dict) -> dict[str, dict]:
    """Each panel's tab node in the layout, by title."""
    by_id: dict[int, dict] = {}

    def index(node: dict) -> None:
        by_id[node["id"]] = node
        for child in node.get("children", []) or []:
            index(child)

    index(config["layout"])
    elem = {c["props"].get("elem_id"): c["id"] for c in config["components"]}
    return {title: by_id[elem[panels.tab_elem_id(module)]] for title, module, _ in panels.PANELS}


@pytest.mark.parametrize("role", ["annotator", "adjudicator", "admin"])
def test_a_roles_page_holds_the_tabs_it_may_open_and_only_events_of_what_it_holds(
    role: str, whole: dict
) -> None:
    user = Annotator(0, role, role, True)
    page = whole["page"][page_for(user)]
    shown = set(page["components"])
    tabs = _tabs(whole)
    for title, _, audience in panels.PANELS:
        inside = _inside(tabs[title])
        assert tabs[title]["id"] in shown  # every tab stays: the load event hides the others
        if user.is_admin or audience == "everyone" or (audience == "reviewers" and user.can_see_labels):
            assert inside and inside <= shown, f"{role}: {title} is missing parts"
        else:
            assert not inside & shown, f"{role}: {title}'s contents are on the page"
    events = {event["id"]: event for event in whole["dependencies"]}
    components = {c["id"] for c in whole["components"]}  # a load event's target is the app, not one of them
    for event_id in page["dependencies"]:
        event = events[event_id]
        named = {target[0] for target in event["targets"]} | set(event["inputs"]) | set(event["outputs"])
        assert named & components <= shown, f"{role}: event {event_id} names what is not there"
    if user.is_admin:
        assert len(shown) == len(whole["components"]) and len(page["dependencies"]) == len(events)
    elif not user.can_see_labels:
        assert len(shown) < len(whole["components"]) / 2  # the point: an annotator's browser builds far less


def test_a_page_leaves_out_nothing_when_it_hides_nothing(whole: dict) -> None:
    page = role_page(whole, hidden=[])
    assert len(page["components"]) == len(whole["components"])
    assert len(page["dependencies"]) == len(whole["dependencies"])
    assert page["layout"] == whole["layout"]


def test_each_role_is_sent_to_its_own_page_with_its_query(server: Server) -> None:
    for name, own in PAGE_OF.items():
        form = {"username": name, "password": f"{name}-{PASSWORD}"}
        logged_in = requests.post(f"{server.url}/login", data=form, allow_redirects=False, timeout=30)
        assert logged_in.status_code == 303 and logged_in.headers["location"] == own  # no second hop
        http = login(server.url, name)
        for path in sorted(f"/{page}" for page in PAGES):
            reply = http.get(
                f"{server.url}{path}?tab=step_review&dataset=x", allow_redirects=False, timeout=30
            )
            if path == own:
                assert reply.status_code == 200, (name, path)
            else:
                assert reply.status_code == 303, (name, path, reply.status_code)
                assert reply.headers["location"] == f"{own}?tab=step_review&dataset=x"
        page = http.get(server.url + own, timeout=30).text
        served = json.loads(re.search(r"window\.gradio_config = (.*?);</script>", page, re.S).group(1))
        assert served["current_page"] == own.strip("/")
        assert len(served["pages"]) == 1  # one page named: Gradio's navbar (shown for two or more) stays away
        elem_ids = {c["props"].get("elem_id") for c in served["components"]}
        assert ("tokens-create" in elem_ids) == (ROLE_OF[name] == "admin"), name  # Data panel: admins
        assert ("qc-refresh" in elem_ids) == (ROLE_OF[name] != "annotator"), name  # QC: reviewers
        assert "step-review-save" in elem_ids


def test_before_login_every_page_sends_to_the_login(server: Server) -> None:
    for page in PAGES:
        reply = requests.get(
            f"{server.url}/{page}", headers={"Accept": "text/html"}, allow_redirects=False, timeout=30
        )
        assert reply.status_code == 303 and reply.headers["location"] == "/login"
