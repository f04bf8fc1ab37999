// Package gateway assembles isogate: backend MCP servers (internal/backend),
// the tool catalogue (internal/catalog), code mode (internal/codemode) and
// the V8 engine (v8sandbox) behind one MCP server that offers a few
// meta-tools instead of hundreds of tools.
//
// MCP tools: search_tools, tool_info, list_tools_meta, call_tool_chain and,
// when enabled, run_code. Resources: isogate://backends,
// isogate://backend/{name}, isogate://stats, isogate://tools and
// isogate://result/{id} (full results of summarised outputs).
package gateway
