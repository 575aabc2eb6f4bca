#!/bin/sh
# Installs what the dev-page browser tests drive: Debian's chromium and Playwright's Python package.
# Nothing is downloaded by Playwright itself; the tests launch /usr/bin/chromium.
set -eu
PY="${PY:-.venv/bin/python}"
if [ ! -x /usr/bin/chromium ]; then
    SUDO=""
    if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y chromium
fi
if ! "$PY" -c "import playwright" 2>/dev/null; then
    "$PY" -m pip install --quiet 'playwright>=1.40'
fi
/usr/bin/chromium --version 2>/dev/null
