#!/usr/bin/env bash
# Installs what schedlab needs to build and test, skipping whatever is already there.
# Idempotent: every step checks first and prints one line saying what it did or skipped.
# Only package registries are reachable on our machines, so everything comes from cargo, apt or npm
# (never a downloaded browser or prebuilt toolchain); the Python package's packages come from PyPI.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PATH="$HOME/.cargo/bin:$PATH"
# Playwright must use Debian's chromium; its own browser download is unreachable here.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

say() { printf 'setup: %s\n' "$*"; }
die() {
  printf 'setup: ERROR: %s\n' "$*" >&2
  exit 1
}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

command -v cargo >/dev/null || die "cargo not found: install Rust with rustup first"
command -v node >/dev/null || die "node not found: install Node.js 20.19+ first"

# 1. The wasm target.
if rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  say "skip rustup target wasm32-unknown-unknown (installed)"
else
  rustup target add wasm32-unknown-unknown >/dev/null
  say "did rustup target add wasm32-unknown-unknown"
fi

# 2. wasm-pack.
if command -v wasm-pack >/dev/null; then
  say "skip wasm-pack ($(wasm-pack --version))"
else
  cargo install wasm-pack --locked
  say "did cargo install wasm-pack --locked"
fi

# 3. wasm-bindgen CLI at exactly the version the crate links against: a mismatch makes wasm-pack fall back to
# its own slow install on every fresh cache. No --locked: its pinned transitive versions are not all served.
bindgen_version=""
if [ -f sim-wasm/Cargo.lock ]; then
  bindgen_version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' sim-wasm/Cargo.lock)
fi
if [ -z "$bindgen_version" ]; then
  # No lock file yet: the workspace pins wasm-bindgen with "=X".
  bindgen_version=$(sed -n 's/^wasm-bindgen = "=\([0-9.]*\)".*/\1/p' sim-wasm/Cargo.toml | head -n1)
fi
[ -n "$bindgen_version" ] || die "cannot read the wasm-bindgen version from sim-wasm/Cargo.lock or Cargo.toml"
if command -v wasm-bindgen >/dev/null && [ "$(wasm-bindgen --version 2>/dev/null)" = "wasm-bindgen $bindgen_version" ]; then
  say "skip wasm-bindgen-cli $bindgen_version (installed)"
else
  cargo install wasm-bindgen-cli --version "$bindgen_version" --force
  say "did cargo install wasm-bindgen-cli --version $bindgen_version"
fi

# 4. Debian's chromium for Playwright.
if [ -x /usr/bin/chromium ]; then
  say "skip chromium (/usr/bin/chromium present)"
else
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  say "did apt-get install chromium"
fi

# 5. npm packages, when node_modules is missing or older than the lock file.
if [ -d node_modules ] && [ ! package-lock.json -nt node_modules ]; then
  say "skip npm ci (node_modules up to date)"
else
  npm ci --no-audit --no-fund
  # npm ci may leave node_modules' mtime older than a lock file it did not touch; mark it fresh.
  touch node_modules
  say "did npm ci"
fi

# 6. The Python package's virtual environment, python/.venv: uv from PyPI (its parallel downloads take seconds where
# pip takes minutes), then the pinned packages of python/requirements-dev.txt. A stamp of the file's hash, uv's
# version and python3's says whether it is up to date. The package itself is built by the test stage.
uv_version="0.13.8"
venv=python/.venv
command -v python3 >/dev/null || die "python3 not found: install Python 3.9+ (with venv) first"
want="$(sha256sum python/requirements-dev.txt | cut -d' ' -f1) uv $uv_version $(python3 --version 2>&1)"
if [ -x "$venv/bin/python" ] && [ -f "$venv/.installed" ] && [ "$(cat "$venv/.installed")" = "$want" ]; then
  say "skip python venv (python/.venv matches python/requirements-dev.txt)"
else
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "uv==$uv_version"
  "$venv/bin/uv" pip install -q --python "$venv/bin/python" -r python/requirements-dev.txt
  printf '%s\n' "$want" >"$venv/.installed"
  say "did python3 -m venv python/.venv and uv pip install -r python/requirements-dev.txt"
fi
