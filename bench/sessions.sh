#!/bin/sh
# The thousand-sessions ramp of issue 44: two isogate replicas on one
# redis-server, go-sdk client sessions (half 2026-07-28, half 2025-11-25)
# ramped 100, 250, 500, 1000, each running a small call_tool_chain
# program every 5 s; errors, p50/p99, RSS, fds, CPU per replica and
# Redis memory per step. Not in make test.
#
#   bench/sessions.sh [-quick]     (ISOGATE_SESSIONS_STEPS=100,250 ISOGATE_SESSIONS_HOLD=30s
#                                   ISOGATE_SESSIONS_EVERY=5s ISOGATE_SESSIONS_STATEFUL=1 ISOGATE_BIN=…)
set -eu
cd "$(dirname "$0")"
exec go run ./cmd/benchreport -sections sessions "$@"
