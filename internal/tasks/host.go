package tasks

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/codemode"
)

// Host is what the tasks need of the surface that serves them.
type Host struct {
	// Logger logs the tasks' events.
	Logger *slog.Logger
	// Durables writes durable runs' journals (a journalled task's).
	Durables *Durables
	// Stateless: the HTTP surface keeps no sessions (server.stateless).
	Stateless bool
	// HasSession reports whether a client session with that
	// Mcp-Session-Id is open.
	HasSession func(id string) bool
	// Owner is the owner key of an HTTP request's caller: its principal's.
	Owner func(r *http.Request) string
	// TaskSupport is a tool's execution.taskSupport ("" for none).
	TaskSupport func(tool string) string
	// ChainJournal is the journal a durable run of call_tool_chain with
	// these arguments starts; nil when they are not a program.
	ChainJournal func(arguments any) *codemode.Journal
	// RunTimeout bounds a run of the program journal j holds.
	RunTimeout func(j *codemode.Journal) time.Duration
	// RunJournal runs the program of journal j again as call_tool_chain,
	// in ctx, which carries its durable run (a task taken over).
	RunJournal func(ctx context.Context, j *codemode.Journal) *mcp.CallToolResult
}

// SendTimeout bounds sending one message to one client: a task's
// notification or answer, a forwarded notification.
const SendTimeout = 5 * time.Second

// RequestKeyHeader carries the key of the HTTP request a message arrived
// in from the HTTP layer to the MCP handlers (RequestExtra.Header). Clients
// cannot set it: the HTTP layer overwrites it. A task's background run
// drops it: the task outlives its request.
const RequestKeyHeader = "Isogate-Http-Request"

// WireError is err as the JSON-RPC error answered for it: err itself when
// it is one with a code, else an internal error (an invalid request for a
// call during the session's initialization).
func WireError(err error) error {
	var coded *jsonrpc.Error
	if errors.As(err, &coded) && coded.Code != 0 {
		return err
	}
	code := int64(jsonrpc.CodeInternalError)
	if strings.Contains(err.Error(), "invalid during session initialization") {
		code = jsonrpc.CodeInvalidRequest
	}
	return &jsonrpc.Error{Code: code, Message: err.Error()}
}
