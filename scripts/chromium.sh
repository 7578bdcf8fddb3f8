#!/usr/bin/env bash
# Installs Debian's chromium when it is missing: the task page's browser
# tests (journey/page_test.go) drive it headless through chromedp.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  chromium --version
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
chromium --version
