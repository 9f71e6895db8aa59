"""Two worlds for the differential test (test_annotator_worlds.py), and a page that fires every event.

`build(db, agreed)` makes a team database with the demo data where bob, an annotator, has done the
same work in both worlds; what differs is only what he must not know (DIFFERENCES). `Page` is bob's
browser over HTTP: it keeps every component's value as the replies set it and fires each event of the
app's own listing with those values.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import uuid
from pathlib import Path
from typing import Any

from PIL import Image

from services import annotate
from services import gold as gold_service
from services.access import OPERATOR
from services.annotate import now_utc
from services.demo import populate_demo
from services.leasing import leases_of
from services.studies import draw_study
from store import Store, users, work
from store.datasets import get_dataset, update_settings
from tests.gold_support import GOOD, label
from tests.security.support import call_event, config, login, make_team, outputs, run_api

__all__ = ["DIFFERENCES", "Page", "build", "world_facts"]

STEP_REVIEW, EARLIEST, GATE = "prmbench-step-review", "qwq-earliest-error", "mathvista-quality-gate"
DIFFERENCES = ("others agreed", "first gate verdict", "gold", "study rater agreed")
ALL = {"c1": True, "c2": True, "c3": True, "c4": True}
BOB_STUDY = {"original": "incorrect", "modification": "unreasonable", "difficulty": "hard"}
# What bob submits through the public API, per dataset (a valid label of its task).
API_LABELS = {
    STEP_REVIEW: GOOD,
    EARLIEST: {"earliest_error": -1},
    GATE: {"verdict": "reject", "criteria": {**ALL, "c2": False}, "reason": "a jump between steps"},
}


def _submit(store: Store, name: str, found: Any, payload: dict) -> None:
    annotate.submit(
        store,
        annotator=users.get_user(store, name),
        item_id=found.item.item_id,
        version_id=found.item.version_id,
        payload=payload,
        request_id=uuid.uuid4().hex,
        seconds_spent=5.0,
    )


def _next(store: Store, name: str, dataset: str) -> Any:
    found = work.next_item(
        store, leases_of(store), users.get_user(store, name), get_dataset(store, dataset), now_utc()
    )
    assert found is not None, f"nothing for {name} in {dataset}"
    return found


def build(db: Path, *, agreed: bool) -> dict[str, Any]:
    """The world; returns what bob types during the run (the same in both worlds, asserted by the test)."""
    make_team(db)
    with Store(db) as store:
        populate_demo(store)
        # Step review: a study of 4 items for bob and cat, then 3 more of bob's items, gold or not.
        label(store, "ann", 6, GOOD)  # kept items the study draws from
        lead = users.get_user(store, "lead")
        draw_study(
            store, lead, dataset=STEP_REVIEW, name="iaa", n_items=4, raters=2, rater_names=["bob", "cat"]
        )
        for _ in range(4):
            found = _next(store, "bob", STEP_REVIEW)
            _submit(store, "bob", found, BOB_STUDY)
        for _ in range(4):
            found = _next(store, "cat", STEP_REVIEW)
            _submit(store, "cat", found, BOB_STUDY if agreed else GOOD)
        mine = label(store, "bob", 3, GOOD)
        if agreed:
            gold_service.mark_items(store, OPERATOR, STEP_REVIEW, mine)
        update_settings(store, STEP_REVIEW, {"gold_feedback": 1})
        # Earliest error: bob's two labels; ann and cat then agree with him or not.
        bobs = [_next(store, "bob", EARLIEST) for _ in range(1)]
        _submit(store, "bob", bobs[0], {"earliest_error": -1})
        bobs.append(_next(store, "bob", EARLIEST))
        _submit(store, "bob", bobs[1], {"earliest_error": -1})
        dataset = annotate.dataset_for(store, EARLIEST)
        for name in ("ann", "cat"):
            for found in bobs:
                held = annotate.jump_to(store, users.get_user(store, name), dataset, found.item.external_id)
                _submit(store, name, held, {"earliest_error": -1 if agreed else 0})
        # Quality gate: every item dual; ann's verdict on the item bob opens first: accept with the edit
        # bob will make, or reject.
        update_settings(store, GATE, {"dual_percent": 100})
        held = _next(store, "ann", GATE)
        steps = list(held.item.steps["candidate"])
        edit = [steps[0] + " (counted again, step by step)", *steps[1:]]
        verdict = (
            {"verdict": "accept", "criteria": ALL, "edited_steps": edit}
            if agreed
            else {"verdict": "reject", "criteria": {**ALL, "c3": False}, "reason": "a step is missing"}
        )
        _submit(store, "ann", held, verdict)
    return {
        "qg-steps": {"headers": ["Step", "Incorrect"], "data": [[step, False] for step in edit]},
        "qg-criteria": list(ALL),
        "br-open-id": str(held.item.item_id),
        "step-review-jump": "2",
        "ee-jump": "2",
        "qg-jump": "1",
        "pc-jump": "1",
    }


def world_facts(db: Path) -> dict[str, Any]:
    """What bob must not know, read from the database after his run (the worlds must differ in each)."""
    with Store(db) as store:
        return {
            "others agreed": store.fetchall(
                "SELECT s.status FROM item_state s JOIN datasets d ON d.id = s.dataset_id "
                "WHERE d.name = ? ORDER BY s.item_id",
                [EARLIEST],
            ),
            "first gate verdict": store.fetchall(
                "SELECT s.status, (SELECT count(*) FROM item_versions v WHERE v.item_id = s.item_id) "
                "FROM item_state s JOIN datasets d ON d.id = s.dataset_id WHERE d.name = ? ORDER BY s.item_id",
                [GATE],
            ),
            "gold": store.scalar("SELECT count(*) FROM gold"),
            "study rater agreed": store.fetchall("SELECT payload FROM study_labels ORDER BY 1"),
        }


# Plots of the time bob's own page measured (seconds an item was open): they differ run to run.
TIMED_PLOTS = {"br-plot-time"}
_HEX = re.compile(r"\b[0-9a-f]{32}\b")
_DOWNLOAD = re.compile(r"/stepgate/download/[A-Za-z0-9_-]+")
_GRADIO_FILE = re.compile(r"/gradio_api/file=[^\"'\s)<>]+")
_TMP = re.compile(r"/tmp/[^\"'\s)<>]+")
_ORIGIN = re.compile(r"http://127\.0\.0\.1:\d+")


_PNG = re.compile(r"data:image/png;base64,([A-Za-z0-9+/=]+)")


def _pixels(found: re.Match) -> str:
    """A plot by its pixels: matplotlib writes the same picture in bytes that differ from run to run."""
    image = Image.open(io.BytesIO(base64.b64decode(found.group(1)))).convert("RGBA")
    return f"<png {image.size} {hashlib.sha256(image.tobytes()).hexdigest()[:16]}>"


def _timed(value: Any) -> Any:
    """A table's time columns (seconds spent, when) as <time>: how long bob's own page took."""
    if isinstance(value, list):
        return [_timed(v) for v in value]
    if not isinstance(value, dict):
        return value
    if isinstance(value.get("headers"), list) and isinstance(value.get("data"), list):
        timed = [i for i, h in enumerate(value["headers"]) if re.search(r"second|time|when", str(h), re.I)]
        rows = [[("<time>" if i in timed else cell) for i, cell in enumerate(row)] for row in value["data"]]
        return {**value, "data": rows}
    return {k: _timed(v) for k, v in value.items()}


def _normal(text: str) -> str:
    """Ids, download tokens, temporary paths and plots' bytes as placeholders (times: support.outputs)."""
    text = _PNG.sub(_pixels, text)
    text = _DOWNLOAD.sub("/stepgate/download/<token>", _ORIGIN.sub("<origin>", text))
    text = _GRADIO_FILE.sub("/gradio_api/file=<file>", text)
    return _HEX.sub("<id>", _TMP.sub("<tmp>", text))


class Page:
    """bob's page over HTTP: component values as the replies left them; every event fired once."""

    def __init__(self, url: str, name: str, typed: dict[str, Any]) -> None:
        self.url = url
        self.http = login(url, name)
        self.conf = config(self.http, url)
        self.session = uuid.uuid4().hex
        self.typed = typed
        self.props = {c["id"]: dict(c.get("props", {})) for c in self.conf["components"]}
        self.types = {c["id"]: c.get("type") for c in self.conf["components"]}
        self.elem = {i: p.get("elem_id") or "" for i, p in self.props.items()}
        self.tab_of, self.tabs = self._tabs()
        self.covered: list[int] = []  # every event's id, once each
        self.replies: list[tuple[str, Any]] = []
        self.fired: list[str] = []
        self.files: dict[str, str] = {}

    def _tabs(self) -> tuple[dict[int, int], list[int]]:
        """Each component's innermost tab (0: none), and the tabs in the page's order."""
        found: dict[int, int] = {}
        order: list[int] = []

        def walk(node: dict, tab: int) -> None:
            here = node["id"] if self.types.get(node["id"]) == "tabitem" else tab
            if here != tab:
                order.append(here)
            found[node["id"]] = here
            for child in node.get("children", []):
                walk(child, here)

        walk(self.conf["layout"], 0)
        return found, order

    # --- firing -----------------------------------------------------------------------------------

    def _inputs(self, dep: dict) -> list:
        data = []
        for i in dep.get("inputs", []):
            props = self.props.get(i, {})
            value = self.typed.get(self.elem.get(i, ""), props.get("value"))
            if value is None and self.types.get(i) == "radio" and props.get("choices"):
                value = props["choices"][0][1]  # the annotator picks the first option
            data.append(value)
        return data

    def _apply(self, dep: dict, data: list | None) -> None:
        for i, value in zip(dep.get("outputs", []), data or [], strict=False):
            if isinstance(value, dict) and value.get("__type__") == "update":
                self.props.setdefault(i, {}).update({k: v for k, v in value.items() if k != "__type__"})
            else:
                self.props.setdefault(i, {})["value"] = value

    def fire(self, dep: dict, name: str) -> None:
        event_data = None
        if dep.get("collects_event_data"):
            event_data = {"index": [0, 0], "value": None, "row_value": None, "selected": True}
        body_data = self._inputs(dep)
        status, text = self._call(dep["id"], body_data, event_data)
        assert status == 200, f"{name}: HTTP {status} {text[:200]}"
        reply = _timed(outputs(_normal(text)))
        if reply and reply[0] is True and isinstance(reply[1], list):  # plots of bob's own time spent
            timed = [self.elem.get(i) in TIMED_PLOTS for i in dep.get("outputs", [])]
            reply[1] = ["<time>" if t else v for t, v in zip(timed, reply[1], strict=False)] + reply[1][
                len(timed) :
            ]
        self.fired.append(name)
        self.covered.append(dep["id"])
        self.replies.append((name, reply))
        self._collect_files(text)
        if reply and reply[0] is True:
            self._apply(dep, reply[1])
        for chained in self.conf["dependencies"]:
            after = chained.get("trigger_after") == dep["id"] and chained.get("backend_fn", True)
            if after and reply and (reply[0] is True or not chained.get("trigger_only_on_success")):
                self.fire(chained, f"{name} then {chained['id']}")

    def _call(self, fn_index: int, data: list, event_data: Any) -> tuple[int, str]:
        return call_event(self.http, self.url, fn_index, data, self.session, event_data)

    def _collect_files(self, text: str) -> None:
        for link in sorted(set(_DOWNLOAD.findall(text)) | set(_GRADIO_FILE.findall(text))):
            reply = self.http.get(self.url + link, timeout=60)
            kind = (
                "text"
                if reply.headers.get("content-type", "").startswith(("text", "application/json"))
                else ""
            )
            body = reply.content.decode("utf-8", "replace") if kind or b"\0" not in reply.content else ""
            key = f"{len(self.files)}:{_normal(link)}"
            self.files[key] = f"{reply.status_code} " + (
                json.dumps(outputs_text(_normal(body))) if body else str(len(reply.content))
            )

    # --- the whole run ----------------------------------------------------------------------------

    def _order(self) -> list[tuple[str, dict]]:
        """Load events, then tab by tab: the tab's select first, then its other events; chained ones are
        fired after their parent. Named by the trigger's elem_id and event."""
        deps = [
            d for d in self.conf["dependencies"] if d.get("backend_fn", True) and not d.get("trigger_after")
        ]

        def name(dep: dict) -> str:
            target, trigger = dep["targets"][0]
            return f"{self.elem.get(target) or self.types.get(target)}.{trigger}#{dep['id']}"

        loads = [d for d in deps if d["targets"] and d["targets"][0][1] == "load"]
        ordered = [(name(d), d) for d in loads]
        for tab in [0, *self.tabs]:
            here = [
                d
                for d in deps
                if d["targets"] and d not in loads and self.tab_of.get(d["targets"][0][0]) == tab
            ]
            here.sort(key=lambda d, tab=tab: (d["targets"][0][0] != tab, d["id"]))
            ordered += [(name(d), d) for d in here]
        return ordered

    def run_everything(self) -> None:
        for name, dep in self._order():
            self.fire(dep, name)
        self.run_api()

    def run_api(self) -> None:
        """The public API (events with no trigger): each endpoint on every dataset; a new endpoint must be
        given arguments here (the test fails naming it)."""
        endpoints = {d["api_name"] for d in self.conf["dependencies"] if not d["targets"]}
        assert endpoints == {"next_item", "submit_label", "skip_item"}, f"new API endpoints: {endpoints}"
        for dataset, payload in API_LABELS.items():
            item = self._api("next_item", dataset)
            if isinstance(item, dict) and item.get("item_id") is not None:
                args = (item["item_id"], item["version_id"], payload, uuid.uuid4().hex, 5.0)
                self._api("submit_label", *args)
                self._api("submit_label", *args)  # a retry
                following = self._api("next_item", dataset)
                if isinstance(following, dict) and following.get("item_id") is not None:
                    self._api("skip_item", dataset, following["item_id"])
        self._api("next_item", "no-such-dataset")

    def _api(self, endpoint: str, *args: object) -> Any:
        reply = run_api(self.http, self.url, endpoint, *args, session_hash=self.session)
        body = (
            reply.json()
            if reply.headers.get("content-type", "").startswith("application/json")
            else reply.text
        )
        if isinstance(body, dict):  # how long the server took is no part of the answer
            body = {k: v for k, v in body.items() if k not in ("duration", "average_duration")}
        self.fired.append(f"api:{endpoint}")
        self.replies.append((f"api:{endpoint}", [reply.status_code, outputs_text(_normal(json.dumps(body)))]))
        data = body.get("data") if isinstance(body, dict) else None
        return data[0] if data else None


def outputs_text(text: str) -> str:
    """Times in any text as <time> (support.outputs does the same for an event's stream)."""
    return re.sub(
        r"\d{4}-\d{2}-\d{2}[ T_]\d{2}[:-]\d{2}[:-]\d{2}(\.\d+)?([+-]\d{2}:?\d{2}|Z)?", "<time>", text
    )
