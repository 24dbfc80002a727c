#!/usr/bin/env sh
# The test suite checks the run report and the web view in a real headless browser: Debian's chromium.
# Installed here when it is missing (as root, or through sudo); otherwise says the one command to run.
set -eu
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" = 0 ]; then
  as_root=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root="sudo"
else
  echo "chromium is missing: run 'sudo apt-get install -y chromium' (the tests use it), then the test command again" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "chromium is missing: install it with your system's package manager (the tests use it)" >&2
  exit 1
fi
echo "installing chromium (the tests check pages in a real headless browser)" >&2
$as_root apt-get update -qq
$as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
