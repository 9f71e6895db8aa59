#!/usr/bin/env bash
# Installs everything the tests need (Debian's Chromium and PostgreSQL included) and runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."

# The PostgreSQL tests start a throwaway server of their own (tests/pg_support.py): only the package.
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1 \
  || ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q chromium chromium-driver postgresql
fi
python3 -m pip install -q -e '.[test]'

export HF_HUB_OFFLINE=1 GRADIO_ANALYTICS_ENABLED=False
# the PostgreSQL tests fail rather than skip when the server is missing (tests/conftest.py)
export STEPGATE_REQUIRE_POSTGRES=1
python3 -m ruff check .
python3 -m ruff format --check .
python3 -m mypy qc services tasks
python3 -m pytest "$@"
