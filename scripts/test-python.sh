#!/usr/bin/env bash
# The Python package stage of `npm test`: builds the extension into python/.venv (maturin, release profile, in the
# workspace's target directory so the CLI build's artifacts are reused), then ruff, mypy and pytest. Any non-zero
# exit fails the stage, pytest's 5 (no tests collected) included.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../python"
export PATH="$HOME/.cargo/bin:$PATH"

venv="$PWD/.venv"
[ -x "$venv/bin/maturin" ] || {
  echo "test-python: python/.venv is missing or incomplete: run bash scripts/setup.sh" >&2
  exit 1
}
export VIRTUAL_ENV="$venv"
export PATH="$venv/bin:$PATH"

printf '\n== python: maturin develop --release\n'
maturin develop --release --uv -q

printf '\n== python: ruff, mypy\n'
ruff check .
ruff format --check .
mypy schedsim tests examples bench

printf '\n== python: pytest\n'
# The CLI is built by the stage before; without it the CLI comparisons must fail, not skip.
SCHEDSIM_REQUIRE_CLI=1 pytest -q -p no:cacheprovider
