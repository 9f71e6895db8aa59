"""Issue 32, hole 6: an event reads only files this login session uploaded.

Over HTTP, as a script would: the Data panel's import is sent a FileData naming the control file
(`<db>.files/control.json`, whose token runs every command-line verb), a file outside Gradio's upload
folder, and a file another login session uploaded; each is refused with a message and nothing is
imported. The other events that take a file (a study's examples, gold marks, model predictions) refuse
the control file too. The admin's own upload still imports.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from store import Store
from store.datasets import list_datasets
from tests.conftest import PRMBENCH_FILE
from tests.security.support import call_event, config, event_of, login, team_server

pytestmark = pytest.mark.browser  # starts the real app


def _file(path: str, meta: bool = True) -> dict:
    data = {"path": path, "orig_name": Path(path).name, "size": None, "mime_type": None, "url": None}
    return {**data, "meta": {"_type": "gradio.FileData"}} if meta else data


def _inputs(conf: dict, elem_id: str, file: dict, **values: object) -> tuple[int, list]:
    """The event's fn_index and its inputs: the page's defaults, the file where the file box is."""
    fn, inputs = event_of(conf, elem_id)
    by_id = {c["id"]: c for c in conf["components"]}
    data = []
    for component_id in inputs:
        component = by_id[component_id]
        props = component.get("props", {})
        if component["type"] == "file":
            data.append(file)
        else:
            data.append(values.get(props.get("elem_id"), props.get("value")))
    return fn, data


def test_the_import_reads_no_file_but_this_sessions_own_upload(tmp_path: Path) -> None:
    db = tmp_path / "team.duckdb"
    with team_server(db) as server:
        url = server.url
        lead = login(url, "lead")
        small = b"".join(PRMBENCH_FILE.read_bytes().splitlines(keepends=True)[:5])
        upload = {"files": ("mine.jsonl", small, "application/json")}
        stored = lead.post(f"{url}/gradio_api/upload", files=upload, timeout=30)
        assert stored.status_code == 200
        mine = stored.json()[0]
        control = db.with_name(db.name + ".files") / "control.json"
        assert control.exists()
        outside = tmp_path / "outside.jsonl"
        outside.write_bytes(small)
        again = login(url, "lead")  # the same admin in another login session
        conf = config(lead, url)
        name = {"data-import-name": "stolen"}
        attempts = [
            (lead, _file(str(control))),
            (lead, _file(str(control), meta=False)),
            (lead, _file(str(outside))),
            (lead, _file(f"{Path(mine).parent}/../{Path(mine).parent.name}/{Path(mine).name}x")),
            (again, _file(mine)),  # another session's upload
        ]
        for who, file in attempts:
            fn, data = _inputs(conf, "data-import-run", file, **name)
            status, text = call_event(who, url, fn, data, session_hash=uuid.uuid4().hex)
            assert status == 403 and "not uploaded in this session" in text, (
                file["path"],
                status,
                text[-300:],
            )
        for elem_id in ("data-study-run", "gold-mark-file", "sc-import"):
            fn, data = _inputs(conf, elem_id, _file(str(control)))
            status, text = call_event(lead, url, fn, data)
            assert status == 403 and "not uploaded in this session" in text, (elem_id, status, text[-300:])
        # A FileData where no file is expected (a search box): Gradio would copy it into its cache.
        fn, data = _inputs(conf, "br-search", _file(str(control)))
        data[0] = _file(str(control))
        status, text = call_event(lead, url, fn, data)
        assert status == 403 and "not uploaded in this session" in text, text[-300:]
        # The admin's own upload, in the session that uploaded it, imports.
        fn, data = _inputs(conf, "data-import-run", _file(mine), **{"data-import-name": "own"})
        status, text = call_event(lead, url, fn, data)
        assert status == 200 and "Nothing imported" not in text and "own" in text, text[-500:]
    with Store(db) as store:
        assert [d.name for d in list_datasets(store)] == ["own"]  # nothing else was imported
