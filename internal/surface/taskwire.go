package surface

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/authn"
)

// The JSON-RPC boundary of gateway-owned tasks (see tasks.go): where
// task-augmented tools/call requests and tasks/* are read before the
// go-sdk, which knows neither. Over stdio a wrapper of the server's
// connection; over streamable HTTP a handler in front of the go-sdk's.

// taskMethods are the tasks/* requests the gateway answers itself.
var taskMethods = map[string]bool{"tasks/get": true, "tasks/result": true, "tasks/list": true, "tasks/cancel": true}

// augment turns a task-augmented tools/call's params into a plain call's
// that carries a task intent's token in _meta (tasks.go); params without
// `task` come back unchanged (ok false).
func (g *gatewayTasks) augment(params json.RawMessage, owner string, notify func(wireTask)) (json.RawMessage, bool) {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil || p["task"] == nil {
		return params, false
	}
	var task struct {
		TTL *float64 `json:"ttl"`
	}
	_ = json.Unmarshal(p["task"], &task)
	delete(p, "task")
	in := &taskIntent{owner: owner, notify: notify}
	if task.TTL != nil && *task.TTL > 0 {
		in.ttl = time.Duration(*task.TTL) * time.Millisecond
	}
	meta := map[string]any{}
	_ = json.Unmarshal(p["_meta"], &meta)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[taskMetaKey] = g.register(in)
	p["_meta"], _ = json.Marshal(meta)
	out, err := json.Marshal(p)
	if err != nil {
		return params, false
	}
	return out, true
}

// taskTransport wraps the stdio transport: each connection's task traffic
// is read by a taskServerConn.
type taskTransport struct {
	mcp.Transport
	tasks *gatewayTasks
	owner string // the process's owner key (Surface.processOwner)
}

// Connect implements mcp.Transport.
func (t taskTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	c := &taskServerConn{Connection: conn, tasks: t.tasks, closed: make(chan struct{}), owner: t.owner}
	return c, nil
}

// taskServerConn answers tasks/* on a stdio connection and passes a
// task-augmented tools/call on with its intent's token. Its tasks are the
// process's (stdio has no principal but the process), and its client
// receives notifications/tasks/status.
type taskServerConn struct {
	mcp.Connection
	tasks *gatewayTasks
	owner string

	closeOnce sync.Once
	closed    chan struct{}
}

// Read implements mcp.Connection.
func (c *taskServerConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return msg, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.IsCall() {
			return msg, nil
		}
		if req.Method == "tasks/result" {
			// Through the go-sdk, which carries the task's elicitations
			// on this connection (taskelicit.go).
			if params, err := c.tasks.disguiseResult(req.Params, c.owner); err == nil {
				req.Method, req.Params = "tools/call", params
				return msg, nil
			}
		}
		if taskMethods[req.Method] {
			go c.answer(req)
			continue
		}
		if req.Method == "tools/call" {
			req.Params, _ = c.tasks.augment(req.Params, c.owner, c.notify)
		}
		return msg, nil
	}
}

// Close implements mcp.Connection.
func (c *taskServerConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Connection.Close()
}

// answer answers one tasks/* request.
func (c *taskServerConn) answer(req *jsonrpc.Request) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-c.closed:
			cancel()
		case <-ctx.Done():
		}
	}()
	res, err, _ := c.tasks.answer(ctx, c.owner, req.Method, req.Params)
	resp := &jsonrpc.Response{ID: req.ID}
	if err != nil {
		resp.Error = withCode(err)
	} else if resp.Result, err = json.Marshal(res); err != nil {
		resp.Error = withCode(err)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), forwardTimeout)
	defer wcancel()
	_ = c.Connection.Write(wctx, resp)
}

// notify sends notifications/tasks/status to the connection's client.
func (c *taskServerConn) notify(t wireTask) {
	raw, err := json.Marshal(t)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), forwardTimeout)
	defer cancel()
	_ = c.Connection.Write(ctx, &jsonrpc.Request{Method: "notifications/tasks/status", Params: raw})
}

// taskHTTP is the streamable HTTP boundary, in front of the go-sdk's
// handler and behind the Origin check, authentication and the body read:
// it answers tasks/* itself (as application/json) and passes a
// task-augmented tools/call on with its intent's token. The tasks' owner
// is the caller's principal (httpOwner), in session and stateless mode
// alike.
func (sf *Surface) taskHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body) // already read, bounded (readBody)
		if err != nil {
			reject(w, "reading request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		msg, err := jsonrpc.DecodeMessage(body)
		req, ok := msg.(*jsonrpc.Request)
		if err != nil || !ok || !req.IsCall() {
			next.ServeHTTP(w, r)
			return
		}
		if rm := readRequestMeta(req.Params); rm.modern {
			// 2026-07-28 (taskext.go): on a stateful server the go-sdk
			// refuses the version; tasks/result and tasks/list are gone.
			if sf.opts.Stateless && (modernMethods[req.Method] || req.Method == "tools/call") {
				sf.modernTaskHTTP(w, r, next, req, rm)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if !taskMethods[req.Method] && req.Method != "tools/call" {
			next.ServeHTTP(w, r)
			return
		}
		session := r.Header.Get("Mcp-Session-Id")
		if !sf.opts.Stateless {
			if session == "" {
				if taskMethods[req.Method] {
					http.Error(w, "Bad Request: Mcp-Session-Id header is required", http.StatusBadRequest)
					return
				}
				next.ServeHTTP(w, r) // initialize-less call: the go-sdk answers
				return
			}
			if !sf.sessions.has(session) {
				http.Error(w, "session not found", http.StatusNotFound)
				return
			}
		}
		owner := sf.httpOwner(authn.FromTokenInfo(auth.TokenInfoFromContext(r.Context())))
		if req.Method == "tools/call" || (req.Method == "tasks/result" && !sf.opts.Stateless) {
			params, augmented := sf.tasks.augment(req.Params, owner, nil)
			if req.Method == "tasks/result" {
				// Through the go-sdk, which carries the task's
				// elicitations on this request's stream (taskelicit.go).
				params, err = sf.tasks.disguiseResult(req.Params, owner)
				req.Method, augmented = "tools/call", err == nil
			}
			if augmented {
				req.Params = params
				if body, err = jsonrpc.EncodeMessage(req); err != nil {
					http.Error(w, err.Error(), http.StatusInternalServerError)
					return
				}
				r.Body = io.NopCloser(bytes.NewReader(body))
				r.ContentLength = int64(len(body))
				r.Header.Set("Content-Length", strconv.Itoa(len(body)))
			}
			next.ServeHTTP(w, r)
			return
		}
		res, aerr, _ := sf.tasks.answer(r.Context(), owner, req.Method, req.Params)
		writeAnswer(w, req.ID, session, http.StatusOK, res, aerr)
	})
}

// modernTaskHTTP is the boundary for a 2026-07-28 request (stateless):
// a tools/call the gateway runs as a task gets its intent's token, and
// tasks/get, tasks/update, tasks/cancel are answered here.
func (sf *Surface) modernTaskHTTP(w http.ResponseWriter, r *http.Request, next http.Handler, req *jsonrpc.Request, rm requestMeta) {
	owner := sf.httpOwner(authn.FromTokenInfo(auth.TokenInfoFromContext(r.Context())))
	if req.Method == "tools/call" {
		if params, changed := sf.tasks.augmentModern(req.Params, rm, owner); changed || !bytes.Equal(params, req.Params) {
			req.Params = params
			body, err := jsonrpc.EncodeMessage(req)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			r.Header.Set("Content-Length", strconv.Itoa(len(body)))
		}
		next.ServeHTTP(w, r)
		return
	}
	var p taskParams
	_ = json.Unmarshal(req.Params, &p)
	if err := checkModernHeaders(r.Header, req.Method, rm.version, p.TaskID); err != nil {
		writeAnswer(w, req.ID, "", http.StatusBadRequest, nil, err)
		return
	}
	if !rm.declared {
		writeAnswer(w, req.ID, "", http.StatusOK, nil, errMissingTasksExtension())
		return
	}
	res, err := sf.tasks.answerModern(r.Context(), owner, req.Method, req.Params)
	writeAnswer(w, req.ID, "", http.StatusOK, res, err)
}

// writeAnswer writes the JSON-RPC answer to request id (res, or err) as
// application/json.
func writeAnswer(w http.ResponseWriter, id jsonrpc.ID, session string, status int, res any, aerr error) {
	resp := &jsonrpc.Response{ID: id}
	var err error
	if aerr != nil {
		resp.Error = withCode(aerr)
	} else if resp.Result, err = json.Marshal(res); err != nil {
		resp.Error = withCode(err)
	}
	out, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if session != "" {
		w.Header().Set("Mcp-Session-Id", session)
	}
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

// has reports whether a session with that id is open.
func (t *sessionTracker) has(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.byID[id]
	return ok
}
