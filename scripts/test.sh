#!/usr/bin/env bash
# The whole test suite, in the order CI runs it (`npm test`, `.ci/run`). Each stage stops the run on failure
# with a message naming the stage; a summary of stage times is printed at the end either way.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="$HOME/.cargo/bin:$PATH"
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

summary=()
current=""
started=0

finish() {
  local rc=$? failed=0
  if [ "$rc" -ne 0 ]; then
    failed=1
    summary+=("FAIL  ${current:-outside any stage} ($((SECONDS - started))s)")
  fi
  printf '\n== summary\n'
  for line in "${summary[@]}"; do printf '  %s\n' "$line"; done
  if [ "$rc" -ne 0 ]; then
    printf 'npm test: FAILED at stage "%s" (exit %d); see its output above.\n' "${current:-?}" "$rc"
  else
    printf 'npm test: all stages passed in %ds.\n' "$SECONDS"
  fi
  # The plain closing line CI reads.
  printf 'stages: %d passed, %d failed\n' "$((${#summary[@]} - failed))" "$failed"
  exit "$rc"
}
trap finish EXIT

stage() {
  current="$1"
  shift
  printf '\n==== stage: %s\n' "$current"
  started=$SECONDS
  "$@"
  summary+=("ok    $current ($((SECONDS - started))s)")
  current=""
}

stage "setup" bash scripts/setup.sh
stage "format and lint" bash scripts/lint.sh
stage "cargo test" bash -c 'cd sim-wasm && cargo test --workspace -q'
stage "wasm build" npm run -s build:wasm
stage "cli build" npm run -s build:cli
stage "unit tests (vitest)" npm run -s test --workspace web
stage "scenario claims" npm run -s check
stage "validation against recordings" npm run -s validate -- --check
stage "python package (pytest)" bash scripts/test-python.sh
stage "web build" npm run -s build:web
stage "e2e (playwright)" npm run -s test --workspace e2e
