#!/usr/bin/env bash
# Installs everything the tests need (Debian's Chromium and PostgreSQL included) and runs the whole suite
# (what CI runs). `--fast`: the developer's loop, every test that needs neither a browser nor
# PostgreSQL. Any other argument goes to pytest (`-k gold`, `tests/store/test_store.py`, `-n 0` for one process).
set -euo pipefail
cd "$(dirname "$0")/.."

fast=0
args=()
for arg in "$@"; do
  if [ "$arg" = "--fast" ]; then fast=1; else args+=("$arg"); fi
done

# The PostgreSQL tests start a throwaway server of their own (tests/pg_support.py): only the package.
if [ "$fast" -eq 0 ] && { ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1 \
  || ! command -v chromium-headless-shell >/dev/null 2>&1 || ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q chromium chromium-driver postgresql
  # The browser tests run in Debian's headless shell, Chromium without its windows (bench/browser.py,
  # CHROMIUM); in chromium itself on a release that does not package it.
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q chromium-headless-shell \
    || echo "scripts/test.sh: no chromium-headless-shell in this Debian release; the browser tests run in chromium" >&2
fi
# The install is skipped when this checkout, with this pyproject.toml, is what this Python installed last
# (a developer's loop: ~10 s saved a run). A fresh clone, as in CI, has no stamp and installs.
stamp="build/installed-for-tests"
wanted="$(command -v python3) $PWD $(sha256sum pyproject.toml | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ] \
  || ! python3 -c 'import pathlib, sys, services; sys.exit(pathlib.Path(services.__file__).resolve().parents[1] != pathlib.Path.cwd().resolve())' 2>/dev/null; then
  python3 -m pip install -q -e '.[test]'
  mkdir -p build && echo "$wanted" > "$stamp"
fi

export HF_HUB_OFFLINE=1 GRADIO_ANALYTICS_ENABLED=False
# Bytecode kept between processes: a machine that sets PYTHONDONTWRITEBYTECODE (as container images often
# do) makes each pytest worker rewrite every test module's asserts again (~10 s a worker) and each app the
# tests start compile the project again.
unset PYTHONDONTWRITEBYTECODE
python3 -m ruff check .
python3 -m ruff format --check .
python3 -m mypy qc services tasks

# Two passes. First everything but the load tests, one pytest worker per core (pytest-xdist; a module stays
# on one worker, so the app a browser module serves once is shared by its tests; the browser, PostgreSQL and
# `slow` modules are handed out first, tests/conftest.py). Then the load tests (marked `serial`: a throughput
# bound, kill -9 under 50 annotators, four replicas) alone, in one process, on a machine they have to
# themselves. STEPGATE_TEST_WORKERS sets the first pass's workers (0: one process).
workers="${STEPGATE_TEST_WORKERS:-auto}"
parallel=(-n "$workers" --dist loadfile --no-loadscope-reorder)  # keep tests/conftest.py's order: the long modules first
if [ "$fast" -eq 1 ]; then
  exec python3 -m pytest "${parallel[@]}" -m "not browser and not postgres and not serial" "${args[@]}"
fi
# the PostgreSQL tests fail rather than skip when the server is missing (tests/conftest.py)
export STEPGATE_REQUIRE_POSTGRES=1
if [ "${#args[@]}" -gt 0 ]; then
  exec python3 -m pytest "${parallel[@]}" "${args[@]}"  # a developer's selection: one pass
fi
status=0
serial_list="build/serial-modules"  # the first pass names the load tests' modules here (tests/conftest.py)
rm -f "$serial_list"
STEPGATE_SERIAL_MODULES="$serial_list" python3 -m pytest "${parallel[@]}" -m "not serial" --durations=25 \
  || status=$?
serial_modules=()  # none named (the first pass stopped before it collected): the second collects everything
if [ -s "$serial_list" ]; then mapfile -t serial_modules < "$serial_list"; fi
python3 -m pytest -n 0 -m serial --durations=5 "${serial_modules[@]}" || status=$?
exit "$status"
