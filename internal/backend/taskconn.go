package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// taskRequestPrefix starts the ids of the requests the gateway sends a
// backend itself (tasks.go): strings, which cannot collide with the go-sdk's
// integer ids on the same connection.
const taskRequestPrefix = "isogate-task-"

// taskConn wraps the client side of a backend connection so that the
// gateway can speak MCP Tasks (2025-11-25) with the backend, which go-sdk
// v1.8.0 cannot: it sends requests of its own on the connection (a
// task-augmented tools/call, tasks/get, tasks/result, tasks/cancel) and
// takes their responses, and the backend's notifications/tasks/status, out
// of the stream before the SDK reads it. It also keeps the `tasks`
// capability of the backend's initialize result, which the SDK's decoding
// drops.
//
// The SDK's streamable HTTP connection cannot be wrapped (see
// lifetimeTransport): on such backends the requests go beside it
// (httpTasks).
type taskConn struct {
	mcp.Connection
	taskStatus // request ids, status watchers (its mu guards the fields below too)

	pending map[string]chan *jsonrpc.Response // our requests in flight, by id
	initIDs map[jsonrpc.ID]bool               // initialize (or server/discover) requests in flight (the SDK's)
	caps    *taskCapabilities                 // from the initialize result; nil: none declared
	dead    chan struct{}                     // closed when Read fails: the connection is over
	deadErr error
}

// taskCapabilities is what a backend's `capabilities.tasks` declares.
type taskCapabilities struct {
	List   bool // tasks/list
	Cancel bool // tasks/cancel
	Call   bool // task-augmented tools/call
}

func newTaskConn(inner mcp.Connection) *taskConn {
	return &taskConn{
		Connection: inner,
		pending:    map[string]chan *jsonrpc.Response{},
		initIDs:    map[jsonrpc.ID]bool{},
		dead:       make(chan struct{}),
	}
}

// Write implements mcp.Connection.
func (t *taskConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && (req.Method == "initialize" || req.Method == "server/discover") && req.ID.IsValid() {
		t.mu.Lock()
		t.initIDs[req.ID] = true
		t.mu.Unlock()
	}
	return t.Connection.Write(ctx, msg)
}

// Read implements mcp.Connection: the messages meant for the gateway's own
// requests are consumed here, the others go to the SDK.
func (t *taskConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := t.Connection.Read(ctx)
		if err != nil {
			t.fail(err)
			return msg, err
		}
		if !t.take(msg) {
			return msg, nil
		}
	}
}

// fail ends every request of the gateway in flight on the connection.
func (t *taskConn) fail(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-t.dead:
	default:
		t.deadErr = err
		close(t.dead)
	}
}

// take consumes msg if it is the answer to a request of the gateway's or a
// task status notification; it notes the tasks capability of an
// initialize result and lets that through.
func (t *taskConn) take(msg jsonrpc.Message) bool {
	switch m := msg.(type) {
	case *jsonrpc.Response:
		if id, ok := m.ID.Raw().(string); ok && strings.HasPrefix(id, taskRequestPrefix) {
			t.mu.Lock()
			ch := t.pending[id]
			delete(t.pending, id)
			t.mu.Unlock()
			if ch != nil {
				ch <- m // buffered: never blocks the read loop
			}
			return true // an answer nobody waits for any more is dropped
		}
		t.mu.Lock()
		isInit := t.initIDs[m.ID]
		delete(t.initIDs, m.ID)
		t.mu.Unlock()
		if isInit && m.Error == nil {
			t.noteCapabilities(m.Result)
		}
	case *jsonrpc.Request:
		if m.Method == "notifications/tasks/status" && !m.ID.IsValid() {
			t.notified(m.Params)
			return true // the SDK knows no such notification
		}
	}
	return false
}

// noteCapabilities keeps the `tasks` capability of an initialize result.
func (t *taskConn) noteCapabilities(result json.RawMessage) {
	var r struct {
		Capabilities struct {
			Tasks *struct {
				List     json.RawMessage `json:"list"`
				Cancel   json.RawMessage `json:"cancel"`
				Requests struct {
					Tools struct {
						Call json.RawMessage `json:"call"`
					} `json:"tools"`
				} `json:"requests"`
			} `json:"tasks"`
		} `json:"capabilities"`
	}
	if json.Unmarshal(result, &r) != nil || r.Capabilities.Tasks == nil {
		return
	}
	tc := r.Capabilities.Tasks
	present := func(v json.RawMessage) bool { return len(v) > 0 && string(v) != "null" }
	caps := &taskCapabilities{List: present(tc.List), Cancel: present(tc.Cancel), Call: present(tc.Requests.Tools.Call)}
	t.mu.Lock()
	t.caps = caps
	t.mu.Unlock()
}

// capabilities returns the backend's tasks capability (zero: none).
func (t *taskConn) capabilities() taskCapabilities {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.caps == nil {
		return taskCapabilities{}
	}
	return *t.caps
}

// request sends method with params to the backend and waits for its
// answer, ctx or the end of the connection. An error response is returned
// as a *jsonrpc.Error. When ctx ends first, the backend is sent
// notifications/cancelled for the request, as the SDK does for its own.
func (t *taskConn) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding the parameters: %w", method, err)
	}
	id, jid, err := t.nextID()
	if err != nil {
		return nil, err
	}
	ch := make(chan *jsonrpc.Response, 1)
	t.mu.Lock()
	t.pending[id] = ch
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(t.pending, id)
		t.mu.Unlock()
	}()
	select {
	case <-t.dead:
		return nil, fmt.Errorf("%s: %w", method, mcp.ErrConnectionClosed)
	default:
	}
	if err := t.Connection.Write(ctx, &jsonrpc.Request{ID: jid, Method: method, Params: raw}); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case resp := <-ch:
		if resp.Error != nil {
			return nil, fmt.Errorf("%s: %w", method, resp.Error)
		}
		return resp.Result, nil
	case <-t.dead:
		// Sent, maybe delivered: not an error that makes the call safe to
		// retry (see notDelivered), but a lost connection.
		t.mu.Lock()
		err := t.deadErr
		t.mu.Unlock()
		return nil, fmt.Errorf("%s: %w (%v)", method, io.ErrUnexpectedEOF, err)
	case <-ctx.Done():
		t.notifyCancelled(id)
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// notifyCancelled tells the backend that the gateway no longer waits for
// its request id.
func (t *taskConn) notifyCancelled(id string) {
	raw, err := json.Marshal(map[string]any{"requestId": id, "reason": "the caller gave up"})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), taskCancelTimeout)
	defer cancel()
	_ = t.Connection.Write(ctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: raw})
}

// errorCode returns the JSON-RPC code of an error response, or 0.
func errorCode(err error) int64 {
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		return werr.Code
	}
	return 0
}
