"""pandas and pyarrow load on first use in a server (ui/web/deferred.py), safely from many threads.

Each check runs in a fresh interpreter: the test process has imported pandas long before.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from store import Store  # noqa: F401 - the package must import before the snippets do

_PRELUDE = """
import sys
from ui.web.deferred import defer_imports, is_loaded, stop_deferring
assert defer_imports() == ["pandas", "pyarrow"]
import pandas as pd
assert not is_loaded("pandas") and not is_loaded("pyarrow")
"""


def _run(snippet: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _PRELUDE + textwrap.dedent(snippet)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_stand_in_loads_the_real_module_on_first_use() -> None:
    out = _run(
        """
        stop_deferring()
        assert "pandas" not in sys.modules  # DuckDB looks there: it must not find a stand-in
        frame = pd.DataFrame({"a": [1, 2]})
        assert is_loaded("pandas") and int(frame["a"].sum()) == 3
        assert pd.DataFrame is sys.modules["pandas"].DataFrame
        print("ok")
        """
    )
    assert out.strip() == "ok"


def test_duckdb_queries_with_parameters_do_not_load_pandas() -> None:
    out = _run(
        """
        from datetime import datetime
        import duckdb
        stop_deferring()
        con = duckdb.connect()
        assert con.execute("SELECT ?::TIMESTAMP, ?", [datetime(2026, 1, 1), "x"]).fetchall()
        print(is_loaded("pandas"), is_loaded("pyarrow"))
        """
    )
    assert out.split() == ["False", "False"]


def test_threads_using_a_stand_in_while_another_imports_pandas_all_see_the_whole_module() -> None:
    # Found in a browser test: a thread reading the stand-in while another imported pandas the
    # ordinary way read the half-imported module ("partially initialized module 'pandas'").
    out = _run(
        """
        import importlib, threading, time
        stop_deferring()
        errors = []

        def use(module_of):
            try:
                assert len(module_of().DataFrame({"a": [1]})) == 1
            except Exception as exc:
                errors.append(repr(exc))

        importing = threading.Thread(target=use, args=(lambda: importlib.import_module("pandas"),))
        importing.start()
        while "pandas" not in sys.modules:  # the ordinary import has begun, and is far from done
            time.sleep(0.0005)
        threads = [threading.Thread(target=use, args=(lambda: pd,)) for _ in range(8)]
        for t in threads:
            t.start()
        for t in [importing, *threads]:
            t.join()
        print(errors or "ok")
        """
    )
    assert out.strip() == "ok"


def test_a_server_refuses_the_notebook_extension_gradio_would_import() -> None:
    out = _run(
        """
        try:
            import IPython  # noqa: F401
        except ImportError:
            print("refused")
        """
    )
    assert out.strip() == "refused"
