package surface

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/programs"
)

// programCallsMiddleware makes a tools/call of a saved program the
// call_tool_chain call of its code before the tasks see it (server.go
// puts it between the principal's middleware and the tasks'): a program
// called as a task is then a call_tool_chain task in every way, its
// deadline, its lease and, with sandbox.durable: all, its journal, which
// holds the call pinned to its version, programs["name@3"](args) (a
// replica taking the task over runs that version, whatever version is
// current by then). A call the program's resolution
// refuses goes on unchanged: programsMiddleware refuses it, inside the
// task when one was asked for.
func (sf *Surface) programCallsMiddleware(expose config.Expose) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		if sf.programs.programs == nil || expose == config.ExposePassthrough {
			return next
		}
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				if chain := sf.programChainCall(ctx, req); chain != nil {
					return next(withCalledProgram(ctx, calledName(req), callArguments(req)), method, chain)
				}
			}
			return next(ctx, method, req)
		}
	}
}

// programChainCall is the call_tool_chain request a tools/call of a saved
// program is, nil when req is no call of one the caller may make now.
func (sf *Surface) programChainCall(ctx context.Context, req mcp.Request) *mcp.CallToolRequest {
	call, ok := req.(*mcp.CallToolRequest)
	if !ok || call.Params == nil || !sf.isProgramTool(call.Params.Name) {
		return nil
	}
	if _, _, listed := sf.passthrough.origin(call.Params.Name); listed {
		return nil // a backend tool passed through under that name
	}
	code, refused := sf.programCode(ctx, strings.TrimPrefix(call.Params.Name, programs.ToolPrefix), call.Params.Arguments)
	if refused != nil {
		return nil
	}
	args, _ := json.Marshal(chainInput{Code: code})
	params := *call.Params
	params.Name, params.Arguments = "call_tool_chain", json.RawMessage(args)
	return &mcp.CallToolRequest{Session: call.Session, Params: &params, Extra: call.Extra}
}

// calledName is the saved program a tools/call of program_<name> names.
func calledName(req mcp.Request) string {
	return strings.TrimPrefix(req.(*mcp.CallToolRequest).Params.Name, programs.ToolPrefix)
}

// callArguments are a tools/call's arguments.
func callArguments(req mcp.Request) json.RawMessage {
	return req.(*mcp.CallToolRequest).Params.Arguments
}
