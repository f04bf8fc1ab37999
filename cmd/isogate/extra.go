package main

import (
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
)

// extraTools registers optional MCP tools (run_code) on the server.
func extraTools(cfg *config.Config, logger *slog.Logger) func(*mcp.Server) {
	return nil
}
