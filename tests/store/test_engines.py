"""DuckDB runs a label's statements on the calling thread and a whole dataset's work on every core."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from services import annotate
from services.exports import export
from services.imports import import_file
from store import Store, on_all_cores
from store.datasets import get_dataset
from store.users import add_user

pytestmark = pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: there is nothing to switch")


def _threads(store: Store) -> int:
    return int(store.scalar("SELECT current_setting('threads')"))


def _items(path: Path, n: int) -> Path:
    rows = (
        {
            "id": f"t-{i}",
            "problem": f"Problem {i}",
            "steps": [f"step {k} of {i}" for k in range(4)],
            "label": -1,
        }
        for i in range(n)
    )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_label_runs_on_one_thread_and_an_import_and_an_export_on_every_core(tmp_path: Path) -> None:
    seen: dict[str, int] = {}
    with Store(tmp_path / "engines.duckdb") as store:
        assert _threads(store) == 1  # what a label's statements run with
        import_file(
            store,
            _items(tmp_path / "items.jsonl", 50),
            format="processbench",
            dataset="d",
            progress=lambda _n: seen.setdefault("import", _threads(store)),
        )
        assert _threads(store) == 1
        dataset = get_dataset(store, "d")
        assert dataset is not None
        user = add_user(store, "ann", "annotator")
        shown = annotate.next_item(store, user, dataset)
        assert shown is not None
        annotate.submit(
            store,
            annotator=user,
            item_id=shown.item.item_id,
            version_id=shown.item.version_id,
            payload={"earliest_error": -1},
            request_id="r-1",
        )
        assert _threads(store) == 1
        export(
            store,
            "log-csv",
            tmp_path / "log.csv",
            dataset="d",
            progress=lambda _done, _what: seen.setdefault("export", _threads(store)),
        )
        assert _threads(store) == 1
    assert seen == {"import": os.cpu_count(), "export": os.cpu_count()}


def test_the_cores_stay_on_until_the_last_whole_dataset_work_ends(tmp_path: Path) -> None:
    with Store(tmp_path / "engines.duckdb") as store:
        first_in, first_may_leave = threading.Event(), threading.Event()
        seen: list[int] = []

        def first() -> None:
            with store.all_cores():
                first_in.set()
                first_may_leave.wait(10)
            seen.append(_threads(store))  # the second is still inside

        thread = threading.Thread(target=first)
        thread.start()
        assert first_in.wait(10)
        with store.all_cores():
            first_may_leave.set()
            thread.join(10)
            seen.append(_threads(store))
        assert seen == [os.cpu_count(), os.cpu_count()]
        assert _threads(store) == 1
        assert on_all_cores(_threads)(store) == os.cpu_count()  # a reviewer's search, report or figures
        assert _threads(store) == 1
        with pytest.raises(RuntimeError), store.all_cores():  # work that fails gives the cores back too
            raise RuntimeError("failed")
        assert _threads(store) == 1
