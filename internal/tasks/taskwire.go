package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/httpbody"
	"github.com/isogate/isogate/internal/jsonrpcio"
)

// The JSON-RPC boundary of gateway-owned tasks (see tasks.go): where
// task-augmented tools/call requests and tasks/* are read before the
// go-sdk, which knows neither. Over stdio a wrapper of the server's
// connection; over streamable HTTP a handler in front of the go-sdk's.

// taskMethods are the tasks/* requests the gateway answers itself.
var taskMethods = map[string]bool{"tasks/get": true, "tasks/result": true, "tasks/list": true, "tasks/cancel": true}

// augment turns a task-augmented tools/call's params into a plain call's
// that carries a task intent's token in _meta (tasks.go), and returns the
// token, for the request's end to drop; params without `task` come back
// unchanged (token ""). Past maxTaskIntents it fails (errTooManyIntents).
func (g *Tasks) augment(params json.RawMessage, owner string, notify func(wireTask)) (json.RawMessage, string, error) {
	if !mayHaveKey(params, "task") {
		return params, "", nil // a plain call: not decoded at all
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil || p["task"] == nil {
		return params, "", nil
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
	token, err := g.intents.add(in)
	if err != nil {
		return params, "", err
	}
	meta[taskMetaKey] = token
	p["_meta"], _ = json.Marshal(meta)
	out, err := json.Marshal(p)
	if err != nil {
		g.intents.drop(token)
		return params, "", nil
	}
	return out, token, nil
}

// mayHaveKey reports whether the JSON text data may hold an object key
// key (plain ASCII, no quote or backslash): false only when key's quoted
// form appears nowhere in data and no escape does (an escaped key could
// spell it otherwise). The boundary looks at every tools/call; this
// keeps a call that is not task-augmented from being decoded.
func mayHaveKey(data []byte, key string) bool {
	return bytes.IndexByte(data, '\\') >= 0 || bytes.Contains(data, []byte(`"`+key+`"`))
}

// taskTransport wraps the stdio transport: each connection's task traffic
// is read by a taskServerConn.
type taskTransport struct {
	mcp.Transport
	tasks *Tasks
	owner string // the process's owner key
}

// Transport wraps the stdio transport t: its connections answer tasks/*
// and run task-augmented calls as tasks, owned by owner (the process's
// owner key).
func (g *Tasks) Transport(t mcp.Transport, owner string) mcp.Transport {
	return taskTransport{Transport: t, tasks: g, owner: owner}
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
	tasks *Tasks
	owner string

	closeOnce sync.Once
	closed    chan struct{}

	mu      sync.Mutex
	pending map[any]string // request id → its intent's token, until answered
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
		var (
			params json.RawMessage
			token  string
		)
		switch {
		case req.Method == "tasks/result":
			// Through the go-sdk, which carries the task's elicitations
			// on this connection (taskelicit.go).
			params, token, err = c.tasks.disguiseResult(req.Params, c.owner)
			if err == nil {
				req.Method = "tools/call"
			}
		case taskMethods[req.Method]:
			go c.answer(req)
			continue
		case req.Method == "tools/call":
			params, token, err = c.tasks.augment(req.Params, c.owner, c.notify)
		default:
			return msg, nil
		}
		if err != nil {
			go c.refuse(req, err)
			continue
		}
		if token != "" {
			req.Params = params
			c.track(req.ID, token)
		}
		return msg, nil
	}
}

// track keeps token until request id is answered (Write) or the
// connection closes: an intent lives as long as its request.
func (c *taskServerConn) track(id jsonrpc.ID, token string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending == nil {
		c.pending = map[any]string{}
	}
	if old, ok := c.pending[id.Raw()]; ok { // an id reused while in flight
		c.tasks.intents.drop(old)
	}
	c.pending[id.Raw()] = token
}

// Write implements mcp.Connection: the answer to a request ends its
// intent, if the go-sdk answered it without taking it.
func (c *taskServerConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		token, found := c.pending[resp.ID.Raw()]
		delete(c.pending, resp.ID.Raw())
		c.mu.Unlock()
		if found {
			c.tasks.intents.drop(token)
		}
	}
	return c.Connection.Write(ctx, msg)
}

// refuse answers request req with err (a task request the gateway cannot
// take now).
func (c *taskServerConn) refuse(req *jsonrpc.Request, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), SendTimeout)
	defer cancel()
	_ = c.Connection.Write(ctx, &jsonrpc.Response{ID: req.ID, Error: WireError(err)})
}

// Close implements mcp.Connection.
func (c *taskServerConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.mu.Lock()
		for _, token := range c.pending {
			c.tasks.intents.drop(token)
		}
		c.pending = nil
		c.mu.Unlock()
	})
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
		resp.Error = WireError(err)
	} else if resp.Result, err = json.Marshal(res); err != nil {
		resp.Error = WireError(err)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), SendTimeout)
	defer wcancel()
	_ = c.Connection.Write(wctx, resp)
}

// notify sends notifications/tasks/status to the connection's client.
func (c *taskServerConn) notify(t wireTask) {
	raw, err := json.Marshal(t)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), SendTimeout)
	defer cancel()
	_ = c.Connection.Write(ctx, &jsonrpc.Request{Method: "notifications/tasks/status", Params: raw})
}

// HTTP is the streamable HTTP boundary, in front of the go-sdk's
// handler and behind the Origin check, authentication and the body read:
// it answers tasks/* itself (as application/json) and passes a
// task-augmented tools/call on with its intent's token. The tasks' owner
// is the caller's principal (Host.Owner), in session and stateless mode
// alike.
func (g *Tasks) HTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := httpbody.Bytes(r) // already read, bounded (the surface's readBody): looked at in place
		if err != nil {
			w.Header().Set("Connection", "close") // as the surface's reject
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		msg, err := jsonrpcio.DecodeMessage(body) // the go-sdk's decoder costs a 32 KB buffer per message
		req, ok := msg.(*jsonrpc.Request)
		if err != nil || !ok || !req.IsCall() {
			next.ServeHTTP(w, r)
			return
		}
		if rm := readRequestMeta(req.Params); rm.modern {
			// 2026-07-28 (taskext.go): on a stateful server the go-sdk
			// refuses the version; tasks/result and tasks/list are gone.
			if g.host.Stateless && (modernMethods[req.Method] || req.Method == "tools/call") {
				g.modernHTTP(w, r, next, req, rm)
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
		if !g.host.Stateless {
			if session == "" {
				if taskMethods[req.Method] {
					http.Error(w, "Bad Request: Mcp-Session-Id header is required", http.StatusBadRequest)
					return
				}
				next.ServeHTTP(w, r) // initialize-less call: the go-sdk answers
				return
			}
			if !g.host.HasSession(session) {
				http.Error(w, "session not found", http.StatusNotFound)
				return
			}
		}
		owner := g.host.Owner(r)
		if req.Method == "tools/call" || (req.Method == "tasks/result" && !g.host.Stateless) {
			var (
				params json.RawMessage
				token  string
			)
			disguised := req.Method == "tasks/result"
			if disguised {
				// Through the go-sdk, which carries the task's
				// elicitations on this request's stream (taskelicit.go).
				params, token, err = g.disguiseResult(req.Params, owner)
				req.Method = "tools/call"
			} else {
				params, token, err = g.augment(req.Params, owner, nil)
			}
			if err != nil {
				tasksBusy(w, req.ID, session)
				return
			}
			if !disguised && token == "" && bytes.Equal(params, req.Params) {
				next.ServeHTTP(w, r) // a plain call: its body as it came, not encoded again
				return
			}
			g.serveIntent(w, r, next, req, params, token)
			return
		}
		res, aerr, _ := g.answer(r.Context(), owner, req.Method, req.Params)
		writeAnswer(w, req.ID, session, http.StatusOK, res, aerr)
	})
}

// modernTaskHTTP is the boundary for a 2026-07-28 request (stateless):
// a tools/call the gateway runs as a task gets its intent's token, and
// tasks/get, tasks/update, tasks/cancel are answered here.
func (g *Tasks) modernHTTP(w http.ResponseWriter, r *http.Request, next http.Handler, req *jsonrpc.Request, rm requestMeta) {
	owner := g.host.Owner(r)
	if req.Method == "tools/call" {
		params, token, err := g.augmentModern(req.Params, rm, owner)
		if err != nil {
			tasksBusy(w, req.ID, "")
			return
		}
		if token == "" && bytes.Equal(params, req.Params) {
			next.ServeHTTP(w, r)
			return
		}
		g.serveIntent(w, r, next, req, params, token)
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
	res, err := g.answerModern(r.Context(), owner, req.Method, req.Params)
	writeAnswer(w, req.ID, "", http.StatusOK, res, err)
}

// serveIntent passes request req on to next with params (carrying the
// intent of token, "" for none), and drops that intent when the request
// ends, whatever the outcome: one the go-sdk refused before any
// middleware (a wrong Accept header, a bad protocol version, an unknown
// tool) leaves nothing behind.
func (g *Tasks) serveIntent(w http.ResponseWriter, r *http.Request, next http.Handler, req *jsonrpc.Request,
	params json.RawMessage, token string) {
	defer g.intents.drop(token)
	req.Params = params
	body, err := jsonrpc.EncodeMessage(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	r.Body = httpbody.New(body)
	r.ContentLength = int64(len(body))
	r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	next.ServeHTTP(w, r)
}

// tasksBusy refuses a task request past maxTaskIntents: 503, Retry-After,
// and a JSON-RPC error with isogate/code TASKS_BUSY.
func tasksBusy(w http.ResponseWriter, id jsonrpc.ID, session string) {
	w.Header().Set("Retry-After", "1")
	writeAnswer(w, id, session, http.StatusServiceUnavailable, nil, errTasksBusy())
}

// writeAnswer writes the JSON-RPC answer to request id (res, or err) as
// application/json.
func writeAnswer(w http.ResponseWriter, id jsonrpc.ID, session string, status int, res any, aerr error) {
	resp := &jsonrpc.Response{ID: id}
	var err error
	if aerr != nil {
		resp.Error = WireError(aerr)
	} else if resp.Result, err = json.Marshal(res); err != nil {
		resp.Error = WireError(err)
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
