// Package gateway is isogate's public face for Go programs: build a gateway
// from a configuration ([New] with a config.Config from config.Load or
// config.Default), start its backends ([Gateway.Start]) and serve MCP over
// stdio ([Gateway.ServeStdio]), streamable HTTP ([Gateway.HTTPHandler],
// [Gateway.Listen] and [Gateway.ServeHTTP]) or any transport of the go-sdk
// ([Gateway.Server]). Backends a file cannot describe, such as MCP servers
// in the same process, are added with [Options.Backends] ([InProcess]).
//
// The gateway offers a few meta-tools instead of every backend tool:
// search_tools, tool_info, list_tools_meta, call_tool_chain (programs in V8
// isolates that call backend tools as async functions) and, when enabled,
// run_code; resources isogate://backends, isogate://backend/{name},
// isogate://stats, isogate://tools, isogate://result/{id} and
// isogate://runs/{id}. docs/tools.md in the repository is the reference.
//
// Everything behind this face is internal: internal/app composes the parts
// (design/ARCHITECTURE.md), and this package's exported signatures name
// only public types.
package gateway
