#!/usr/bin/env bash
# Create a separate virtual environment holding the Arize Phoenix server (~850 MB of
# dependencies), used only by the end-to-end tracing test (tests/e2e/test_phoenix_e2e.py),
# which runs `$ENE_PHOENIX_VENV/bin/phoenix serve` as a subprocess on loopback.
#
#   ENE_PHOENIX_VENV   where to create it (default: .phoenix-venv in the repository root)
#   ENE_PHOENIX_SPEC   the pip requirement for the server (default: arize-phoenix==20.26.1, the version tested)
#   PYTHON             the interpreter to build it with (default: python3)
#
# Idempotent: an existing environment whose `phoenix` entry point works is left as it is.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${ENE_PHOENIX_VENV:-$root/.phoenix-venv}"
spec="${ENE_PHOENIX_SPEC:-arize-phoenix==20.26.1}"
python="${PYTHON:-python3}"

if [ -x "$venv/bin/phoenix" ] && "$venv/bin/python" -c "import phoenix.server" 2>/dev/null; then
    echo "phoenix_env: $venv is ready ($("$venv/bin/python" -c 'import phoenix; print(phoenix.__version__)'))"
    exit 0
fi

"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$spec"
"$venv/bin/python" -c "import phoenix.server"
echo "phoenix_env: installed $("$venv/bin/python" -c 'import phoenix; print(phoenix.__version__)') into $venv"
