#!/usr/bin/env bash
# Format and lint checks for every language in the repo; fails on the first problem with the tool's message.
# Run by `npm run lint` and as the first stage of `npm test`.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="$HOME/.cargo/bin:$PATH"

step() { printf '\n== lint: %s\n' "$*"; }

step "prettier --check"
npx prettier --check .

step "eslint"
npx eslint --max-warnings 0 .

# tsc needs the wasm package's generated typings; build it once if this is a fresh tree.
if [ ! -f web/src/sim/pkg/schedsim_wasm.d.ts ]; then
  step "wasm build (web/src/sim/pkg missing; tsc needs its typings)"
  npm run -s build:wasm
fi

step "tsc --noEmit (web)"
npx tsc --noEmit -p web

step "tsc --noEmit (e2e)"
npx tsc --noEmit -p e2e

step "cargo fmt --check"
(cd sim-wasm && cargo fmt --all --check)

step "cargo clippy -D warnings"
(cd sim-wasm && cargo clippy --workspace --all-targets -q -- -D warnings)
