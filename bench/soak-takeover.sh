#!/bin/sh
# The soak of issue 35: two isogate replicas on one redis-server
# (sandbox.durable: all, store.lease_ttl 2s), 32 clients starting
# call_tool_chain tasks of 5 backend calls in a loop, one replica
# SIGKILLed and restarted every 20 s. Every task must complete with its
# right answer or fail with a typed code, and no backend call may be
# received twice. Not in make test.
#
#   bench/soak-takeover.sh [duration] [kill every]    (default 3m 20s)
set -eu
cd "$(dirname "$0")/.."
ISOGATE_SOAK="${1:-3m}" ISOGATE_SOAK_KILL_EVERY="${2:-20s}" \
	go test -count=1 -timeout 0 -run '^TestSoakTakeover$' -v ./cmd/isogate/ 2>&1 |
	grep -v 'serve_test.go:[0-9]*: '
