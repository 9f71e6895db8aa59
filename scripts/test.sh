#!/usr/bin/env bash
# Installs everything the tests need (Debian's Chromium and PostgreSQL included) and runs the whole suite
# on every core (what CI runs). `--fast`: the developer's loop, every test that needs neither a browser nor
# PostgreSQL. Any other argument goes to pytest (`-k gold`, `tests/test_store.py`, `-n 0` for one process).
set -euo pipefail
cd "$(dirname "$0")/.."

fast=0
args=()
for arg in "$@"; do
  if [ "$arg" = "--fast" ]; then fast=1; else args+=("$arg"); fi
done

# The PostgreSQL tests start a throwaway server of their own (tests/pg_support.py): only the package.
if [ "$fast" -eq 0 ] && { ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1 \
  || ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q chromium chromium-driver postgresql
fi
python3 -m pip install -q -e '.[test]'

export HF_HUB_OFFLINE=1 GRADIO_ANALYTICS_ENABLED=False
python3 -m ruff check .
python3 -m ruff format --check .
python3 -m mypy qc services tasks

# One pytest worker per core (pytest-xdist); a test module stays on one worker, so the app a browser
# module serves once is shared by its tests. The full run stays in one process (-n 0) until the
# timing-bound tests (tests/test_load.py's throughput floor) are shown to hold beside a browser worker
# on 2 cores; STEPGATE_TEST_WORKERS=auto (or a count) runs it in parallel. --fast runs in parallel.
workers="${STEPGATE_TEST_WORKERS:-0}"
[ "$fast" -eq 1 ] && workers="${STEPGATE_TEST_WORKERS:-auto}"
parallel=(-n "$workers" --dist loadfile)
if [ "$fast" -eq 1 ]; then
  exec python3 -m pytest "${parallel[@]}" -m "not browser and not postgres" "${args[@]}"
fi
# the PostgreSQL tests fail rather than skip when the server is missing (tests/conftest.py)
export STEPGATE_REQUIRE_POSTGRES=1
exec python3 -m pytest "${parallel[@]}" "${args[@]}"
