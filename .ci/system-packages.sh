#!/usr/bin/env bash
# The Debian packages the tests drive for real: Chromium (the dev page), Redis and nginx
# (scale-out). Installs only what is missing, so a machine that has them pays nothing.
set -euo pipefail
needed=()
command -v chromium >/dev/null 2>&1 || needed+=(chromium)
command -v redis-server >/dev/null 2>&1 || needed+=(redis-server)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || needed+=(nginx)
if [ ${#needed[@]} -eq 0 ]; then
    exit 0
fi
echo "Installing system packages for the tests: ${needed[*]}"
if [ "$(id -u)" -ne 0 ]; then
    sudo=sudo
else
    sudo=
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${needed[@]}" >/dev/null
# The packages' own services are not wanted: the tests start their own on free ports.
for service in redis-server nginx; do
    $sudo service "$service" stop >/dev/null 2>&1 || true
done
