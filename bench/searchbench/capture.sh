#!/bin/sh
# Captures the tool catalogues of the benchmark's real MCP servers into
# catalogs/*.json (see README.md). Installs the pinned versions below with
# npm into a temporary directory (never into the repository), starts each
# server once over stdio and saves its tools/list. Needs node and npm.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
servers="
everything=@modelcontextprotocol/server-everything@2026.8.31
filesystem=@modelcontextprotocol/server-filesystem@2026.8.31
memory=@modelcontextprotocol/server-memory@2026.8.31
github=@modelcontextprotocol/server-github@2025.4.8
gitlab=@modelcontextprotocol/server-gitlab@2025.4.25
slack=@modelcontextprotocol/server-slack@2025.4.25
google-maps=@modelcontextprotocol/server-google-maps@0.6.2
brave-search=@modelcontextprotocol/server-brave-search@0.6.2
"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
npm init -y >/dev/null
pkgs=""
for s in $servers; do pkgs="$pkgs ${s#*=}"; done
# shellcheck disable=SC2086
npm install --no-audit --no-fund --silent $pkgs @modelcontextprotocol/sdk@1.32.2
cp "$here/capture.mjs" .
# shellcheck disable=SC2086
node capture.mjs "$here/catalogs" $servers
