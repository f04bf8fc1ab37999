package surface

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/resultstore"
	"github.com/isogate/isogate/internal/tasks"
)

// JSON-RPC error codes isogate sends (besides the go-sdk's own).
const (
	// codeInvalidParams: a malformed result URI or path.
	codeInvalidParams = jsonrpc.CodeInvalidParams // -32602
	// codeInternal: a failure that has no more specific code.
	codeInternal = jsonrpc.CodeInternalError // -32603
)

// resultReadError maps a failed read of isogate://result/... to a JSON-RPC
// error: an unknown or expired result, or a part that does not exist, is
// resource-not-found (-32002); a malformed URI or path, or a path into a
// result that is not JSON, is invalid params (-32602).
func resultReadError(uri string, err error, ttl time.Duration) error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	switch {
	case errors.Is(err, resultstore.ErrNotFound):
		msg := "Resource not found: " + err.Error()
		if ttl > 0 {
			msg += fmt.Sprintf(" (results are kept for %v)", ttl)
		}
		return &jsonrpc.Error{Code: mcp.CodeResourceNotFound, Message: msg, Data: data}
	case errors.Is(err, resultstore.ErrBadPath), errors.Is(err, resultstore.ErrNotJSON):
		return &jsonrpc.Error{Code: codeInvalidParams, Message: err.Error(), Data: data}
	}
	return &jsonrpc.Error{Code: codeInternal, Message: err.Error(), Data: data}
}

// wireSafe is a receiving middleware that keeps every answer valid for
// strict clients (the TypeScript SDK validates each response with zod):
//   - an error without a JSON-RPC code (a plain Go error, which the go-sdk
//     would send with code 0) goes out as internal error (-32603), keeping
//     its message; errors that carry a code are left alone;
//   - resource contents always carry text or blob: an empty text, which the
//     go-sdk's omitempty would drop, is sent as "text": "".
func wireSafe(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, withCode(err)
		}
		if rr, ok := res.(*mcp.ReadResourceResult); ok && rr != nil {
			return readResourceResult{rr}, nil
		}
		return res, nil
	}
}

// readResourceResult marshals a ReadResourceResult with "text": "" on contents that
// have neither text nor blob.
type readResourceResult struct{ *mcp.ReadResourceResult }

// MarshalJSON implements json.Marshaler.
func (r readResourceResult) MarshalJSON() ([]byte, error) {
	raw, err := json.Marshal(r.ReadResourceResult)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	var contents []map[string]json.RawMessage
	if err := json.Unmarshal(m["contents"], &contents); err != nil {
		return raw, nil // no contents to fix
	}
	changed := false
	for _, c := range contents {
		_, hasText := c["text"]
		_, hasBlob := c["blob"]
		if !hasText && !hasBlob {
			c["text"] = json.RawMessage(`""`)
			changed = true
		}
	}
	if !changed {
		return raw, nil
	}
	if m["contents"], err = json.Marshal(contents); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// codedTransport wraps a transport so that no response leaves it with
// JSON-RPC code 0. The go-sdk answers some requests before any middleware
// runs, with a plain Go error (code 0 on the wire): notably a request sent
// before "notifications/initialized" ("method ... is invalid during session
// initialization"), which is the client's mistake: invalid request
// (-32600). Any other uncoded error becomes internal error (-32603).
// (The streamable HTTP handler builds its transports itself, so only stdio
// is wrapped; the receiving middleware covers everything after the gate.)
type codedTransport struct{ mcp.Transport }

// Connect implements mcp.Transport.
func (t codedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return codedConn{conn}, nil
}

type codedConn struct{ mcp.Connection }

// Write implements mcp.Connection.
func (c codedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error != nil {
		resp.Error = withCode(resp.Error)
	}
	return c.Connection.Write(ctx, msg)
}

// withCode gives err a JSON-RPC code when it has none.
func withCode(err error) error { return tasks.WireError(err) }
