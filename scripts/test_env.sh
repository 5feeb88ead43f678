#!/usr/bin/env bash
# System pieces the test suite needs beyond `pip install -e ".[dev]"`:
#   * Chromium (Debian package) for the browser tests of the HTML viewer and the Phoenix screenshot;
#   * the Phoenix server in its own virtual environment (~850 MB) for the end-to-end tracing test.
# Idempotent. Without them those tests skip with a reason (CI sets ENE_REQUIRE_PHOENIX=1 instead).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
bash scripts/phoenix_env.sh
