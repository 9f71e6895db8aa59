"""Fixtures: a real DuckDB file in tmp_path, populated by the same function the demo uses."""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bench.server import server_env, use_starter
from services.compose import compose
from services.demo import DEMO_DIR, populate_demo
from services.encoder import Encoder, EncoderSettings
from store import Store
from tests.app_forks import AppForks
from tests.pg_support import PostgresServer, find_bin

compose()  # as app.py does: the default follow-ups of a decision and the job runners (services/hooks.py)

ROOT = Path(__file__).resolve().parent.parent
_SHARED = ROOT.parent / "shared" / "data"
# The real public files; the project ships identical copies in demo_data/ for machines without ../shared.
PRMBENCH_FILE = _SHARED / "prmbench_subset400.jsonl" if _SHARED.exists() else DEMO_DIR / "prmbench_demo.jsonl"
QWQ_FILE = (
    _SHARED / "prmbench_qwq_annotated_solutions.jsonl"
    if _SHARED.exists()
    else DEMO_DIR / "qwq_solutions_demo.jsonl"
)
MATHVISTA_DIR = _SHARED / "mathvista_context_images" if _SHARED.exists() else DEMO_DIR / "images"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
# as `serve` names it (ui/web/memory.py): Gradio's wrapper around each in-process event never touches pyplot
os.environ["MPLBACKEND"] = "agg"


ENGINES = ("duckdb", "postgresql")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test marked `engines` that uses the store runs once on DuckDB and once on PostgreSQL;
    `engines("duckdb")` on one test of such a module keeps it to the engines named."""
    marker = metafunc.definition.get_closest_marker("engines")
    if marker and "store" in metafunc.fixturenames:
        metafunc.parametrize("store", marker.args or ENGINES, indirect=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark what a test needs, from its fixtures, so that `-m "not browser and not postgres"` (what
    `scripts/test.sh --fast` runs) leaves out every test that drives Chromium or PostgreSQL.

    In a parallel run (pytest-xdist hands out whole modules in collection order: scripts/test.sh turns
    off its reordering by size), the modules that drive Chromium go first, then those on PostgreSQL,
    then those holding a test marked `slow`: the long ones start early, and the short ones fill the
    workers at the end instead of one long module running alone."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if names & {"browser", "page"}:
            item.add_marker(pytest.mark.browser)
        callspec = getattr(item, "callspec", None)
        on_postgres = callspec is not None and any(v == "postgresql" for v in callspec.params.values())
        if on_postgres or names & {"postgres_server", "postgres_url"}:
            item.add_marker(pytest.mark.postgres)
    if hasattr(config, "workerinput"):
        first = ("browser", "postgres", "slow")  # a module holding no such test comes after them all
        rank: dict[str, int] = {}
        for item in items:
            needs = [item.get_closest_marker(m) is not None for m in first]
            module = item.nodeid.split("::")[0]
            rank[module] = min(rank.get(module, len(first)), needs.index(True) if any(needs) else len(first))
        items.sort(key=lambda item: rank[item.nodeid.split("::")[0]])  # stable: modules stay whole


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A throwaway PostgreSQL server for the session (tests/pg_support.py)."""
    bin_dir = find_bin()
    if bin_dir is None:
        # scripts/test.sh (what CI runs) installs it and sets STEPGATE_REQUIRE_POSTGRES: there a
        # missing server fails; a developer running pytest alone without it is told what to install
        if os.environ.get("CI") or os.environ.get("STEPGATE_REQUIRE_POSTGRES"):
            pytest.fail("PostgreSQL is not installed: scripts/test.sh installs Debian's postgresql")
        pytest.skip(
            "PostgreSQL is not installed here (apt-get install postgresql); scripts/test.sh installs it"
        )
    server = PostgresServer(bin_dir).start()
    yield server
    server.stop()


def pytest_deselected(items: list[pytest.Item]) -> None:
    """scripts/test.sh's first pass leaves the load tests out (`-m "not serial"`) and names their modules
    in the file STEPGATE_SERIAL_MODULES names, so that its second pass collects those few modules rather
    than the whole suite again (2 s instead of 9 s). Each worker writes the whole list, atomically."""
    listed = os.environ.get("STEPGATE_SERIAL_MODULES")
    if not listed:
        return
    target = Path(listed)
    named = set(target.read_text().split()) if target.exists() else set()
    named |= {item.nodeid.split("::")[0] for item in items if item.get_closest_marker("serial")}
    target.parent.mkdir(parents=True, exist_ok=True)
    written = target.with_name(f"{target.name}.{os.getpid()}")
    written.write_text("".join(f"{module}\n" for module in sorted(named)))
    written.replace(target)


_STORE_URL = pytest.StashKey[str]()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer, request: pytest.FixtureRequest) -> str:
    """A fresh, empty PostgreSQL database of this test's own; with `store` on PostgreSQL, its database
    (a second Store on it is a second replica)."""
    return request.node.stash.get(_STORE_URL, None) or postgres_server.new_database()


@pytest.fixture(scope="session")
def _templates(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, Path]:
    """DuckDB files made once per worker, migrated, empty (False) and with the demo imported (True):
    `store` starts from a copy of one, instead of migrating, and importing, for every test."""
    made = {}
    for with_demo in (False, True):
        folder = tmp_path_factory.mktemp("template")
        with Store(folder / "stepgate.duckdb") as template:
            if with_demo:
                populate_demo(template)
        made[with_demo] = folder
    return made


@pytest.fixture(scope="session")
def _templates_postgres(
    postgres_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path]:
    """The demo on PostgreSQL: a database later ones are created from (CREATE DATABASE ... TEMPLATE),
    and the image folder it holds."""
    files = tmp_path_factory.mktemp("template-pg") / "files"
    url = postgres_server.new_database()
    with Store(url, data_dir=files) as template:
        populate_demo(template)
    return url.rsplit("/", 1)[-1], files


@pytest.fixture
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A database of the test's own; with `demo_store`, holding the demo's datasets. On DuckDB each is a
    copy of a file the worker migrated (and imported the demo into) once, on PostgreSQL the demo's
    likewise (tests/store and tests/services test the migrations and the import themselves)."""
    # STEPGATE_TEST_ENGINE=postgresql runs every other test on the store fixture on PostgreSQL too.
    engine = getattr(request, "param", os.environ.get("STEPGATE_TEST_ENGINE", "duckdb"))
    with_demo = "demo_store" in request.fixturenames
    if engine == "postgresql":
        copy = with_demo and "postgres_url" not in request.fixturenames  # else the test's own, empty
        if copy:
            name, files = request.getfixturevalue("_templates_postgres")
            shutil.copytree(files, tmp_path / "files")
            url = request.getfixturevalue("postgres_server").new_database(template=name)
        else:
            url = request.getfixturevalue("postgres_url")
        request.node.stash[_STORE_URL] = url
        db = Store(url, data_dir=tmp_path / "files")
        if with_demo and not copy:
            populate_demo(db)
    else:
        template = request.getfixturevalue("_templates")[with_demo]
        shutil.copytree(template, tmp_path, dirs_exist_ok=True)
        db = Store(tmp_path / "stepgate.duckdb")
    yield db
    db.close()


@pytest.fixture
def demo_store(store: Store) -> Store:
    """`store`, holding the demo's datasets (see `store`)."""
    assert populate_demo(store) == [], "the demo template was not copied"
    return store


@pytest.fixture(scope="session", autouse=True)
def _servers_forked() -> Iterator[None]:
    """Served apps and `cli` commands are forked from one process per worker that has imported the app,
    instead of each importing Gradio anew (~7 s of CPU a start on CI): tests/app_forks.py. A start
    that is itself checked asks for a process of its own (`start_server(cold=True)`)."""
    forks = AppForks(server_env())
    use_starter(forks)
    yield
    use_starter(None)
    forks.close()


# The ONNX export the encoder fixture uses, kept between runs as the app keeps its own beside its database
# (commands.make_encoder; a folder per model fingerprint). A fresh checkout, as in CI, makes it once.
ENCODER_EXPORTS = ROOT / "build" / "test-encoders"


@pytest.fixture(scope="session")
def encoder() -> Encoder:
    """The real sentence encoder: its ONNX export (and the check of it against sentence-transformers)
    made by the first run of a checkout (the first pytest-xdist worker makes it, holding a lock, and the
    other loads what it made), then loaded; its model loaded once per worker. Tests of loading and
    exporting make their own (tests/services/test_encoder.py)."""
    ENCODER_EXPORTS.mkdir(parents=True, exist_ok=True)
    with open(ENCODER_EXPORTS / "made.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        encoder = Encoder(EncoderSettings(export_dir=ENCODER_EXPORTS))
        encoder.encode(["made and checked under the lock"])
    return encoder


@pytest.fixture(scope="session")
def give_encoder_export(encoder: Encoder) -> Callable[[Path], None]:
    """Gives a database the ONNX export the `encoder` fixture made, where the app keeps its own
    (commands.make_encoder: the database's folder, `encoders/`): a test that samples a study in the served
    app or its command line then loads the model, as on any later day, instead of exporting and checking
    it again (~12 s of CPU, PyTorch loaded). The export itself is made fresh and checked by
    tests/services/test_encoder.py."""

    def give(db: Path) -> None:
        with Store(db) as store:
            target = store.data_dir / "encoders"
        for made in ENCODER_EXPORTS.iterdir():
            if made.is_dir():
                shutil.copytree(made, target / made.name, dirs_exist_ok=True)

    return give


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium through Playwright (Playwright cannot download browsers here)."""
    from playwright.sync_api import sync_playwright

    from tests.browser_support import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture(autouse=True)
def _pages_end_with_their_test(request: pytest.FixtureRequest) -> Iterator[None]:
    """Close every page a test opened, however it opened it: a Gradio page left open keeps reconnecting
    to its server after the module stops it, at ~7% of a core each, and a whole run left dozens."""
    yield
    if "browser" in request.fixturenames:
        for context in list(request.getfixturevalue("browser").contexts):
            context.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    tab = context.new_page()
    tab.set_default_timeout(20_000)
    yield tab
    context.close()
