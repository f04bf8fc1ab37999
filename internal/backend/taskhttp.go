package backend

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpTasks carries the gateway's own task requests to a backend reached
// over streamable HTTP. The go-sdk's streamable client connection cannot
// be wrapped as taskConn wraps the others (its unexported sessionUpdated
// hook, which starts the standalone stream and sets the protocol version
// header, would be hidden: see lifetimeTransport), so these requests go
// beside the SDK: each one is its own POST to the backend's endpoint, on
// the same HTTP client (headers, backends.<name>.auth) with the session's
// Mcp-Session-Id and Mcp-Protocol-Version, and its answer is read here,
// from application/json or from the text/event-stream the backend opens
// for it. notifications/tasks/status on that stream polls at once; a
// request the backend sends on it (an elicitation inside its task, sent
// on tasks/result) takes the path of the session's client requests
// (serve), its answer POSTed back.
type httpTasks struct {
	client  *http.Client
	url     string
	session func() string // the SDK connection's Mcp-Session-Id
	version func() string // the negotiated protocol version
	// serve answers a request of the backend's; nil: refused. Set once,
	// before the connection serves calls.
	serve func(ctx context.Context, method string, params json.RawMessage) (any, error)

	taskStatus // request ids, status watchers
}

// taskChannel is how the gateway speaks tasks with a backend: taskConn
// (on the SDK's connection) or httpTasks (beside it).
type taskChannel interface {
	request(ctx context.Context, method string, params any) (json.RawMessage, error)
	watch(taskID string) (<-chan struct{}, func())
	capabilities() taskCapabilities
}

func newHTTPTasks(client *http.Client, url string, session, version func() string) *httpTasks {
	if client == nil {
		client = http.DefaultClient // as the SDK's transport does
	}
	return &httpTasks{client: client, url: url, session: session, version: version}
}

// capabilities implements taskChannel. The tasks capability of the
// initialize result is decoded away by the SDK and not seen here: a
// backend that lists a task-required tool takes task-augmented calls, and
// tasks/cancel is tried (a refusal is only logged).
func (h *httpTasks) capabilities() taskCapabilities {
	return taskCapabilities{Call: true, Cancel: true}
}

// request implements taskChannel: one POST, its answer read from JSON or
// SSE. When ctx ends first the POST is abandoned and the backend is sent
// notifications/cancelled for it.
func (h *httpTasks) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding the parameters: %w", method, err)
	}
	id, jid, err := h.nextID()
	if err != nil {
		return nil, err
	}
	resp, err := h.post(ctx, &jsonrpc.Request{ID: jid, Method: method, Params: raw})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	defer resp.Body.Close()
	answer, err := h.read(ctx, resp, id)
	if err != nil {
		if ctx.Err() != nil {
			h.notifyCancelled(id)
			return nil, fmt.Errorf("%s: %w", method, ctx.Err())
		}
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if answer.Error != nil {
		return nil, fmt.Errorf("%s: %w", method, answer.Error)
	}
	return answer.Result, nil
}

// post sends msg on the session.
func (h *httpTasks) post(ctx context.Context, msg jsonrpc.Message) (*http.Response, error) {
	body, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s := h.session(); s != "" {
		req.Header.Set("Mcp-Session-Id", s)
	}
	if v := h.version(); v != "" {
		req.Header.Set("Mcp-Protocol-Version", v)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		text, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, fmt.Errorf("HTTP %s: %s", resp.Status, strings.TrimSpace(string(text)))
	}
	return resp, nil
}

// maxTaskAnswerBytes bounds one answer (or SSE event) to a task request.
const maxTaskAnswerBytes = 16 << 20

// read returns the response to request id from resp: its JSON body, or
// the event carrying it on its SSE stream.
func (h *httpTasks) read(ctx context.Context, resp *http.Response, id string) (*jsonrpc.Response, error) {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct == "application/json" {
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxTaskAnswerBytes))
		if err != nil {
			return nil, fmt.Errorf("reading the answer: %w", err)
		}
		return asResponse(body, id)
	}
	if ct != "text/event-stream" {
		return nil, fmt.Errorf("unexpected content type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), maxTaskAnswerBytes)
	var data []byte
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
			data = append(data, '\n')
		case line == "" && len(data) > 0:
			if r, err := h.event(ctx, data, id); r != nil || err != nil {
				return r, err
			}
			data = data[:0]
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the answer's stream: %w", err)
	}
	return nil, fmt.Errorf("the answer's stream ended without the answer: %w", io.ErrUnexpectedEOF)
}

// event handles one SSE event of a task request's stream: the response to
// id is returned; a task status notification pokes its watcher; a request
// is refused.
func (h *httpTasks) event(ctx context.Context, data []byte, id string) (*jsonrpc.Response, error) {
	msg, err := jsonrpc.DecodeMessage(bytes.TrimSpace(data))
	if err != nil {
		return nil, nil // not JSON-RPC (a priming event): skipped
	}
	switch m := msg.(type) {
	case *jsonrpc.Response:
		if s, ok := m.ID.Raw().(string); ok && s == id {
			return m, nil
		}
	case *jsonrpc.Request:
		if m.IsCall() {
			h.answer(ctx, m)
			return nil, nil
		}
		if m.Method == "notifications/tasks/status" {
			h.notified(m.Params)
		}
	}
	return nil, nil
}

// asResponse decodes a JSON answer to request id.
func asResponse(body []byte, id string) (*jsonrpc.Response, error) {
	msg, err := jsonrpc.DecodeMessage(bytes.TrimSpace(body))
	if err != nil {
		return nil, fmt.Errorf("decoding the answer: %w", err)
	}
	r, ok := msg.(*jsonrpc.Response)
	if !ok {
		return nil, fmt.Errorf("the answer is not a response")
	}
	if s, _ := r.ID.Raw().(string); s != id {
		return nil, fmt.Errorf("the answer is not the response to %s", id)
	}
	return r, nil
}

// notifyCancelled tells the backend that the gateway no longer waits for
// its request id.
func (h *httpTasks) notifyCancelled(id string) {
	raw, err := json.Marshal(map[string]any{"requestId": id, "reason": "the caller gave up"})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), taskCancelTimeout)
	defer cancel()
	if resp, err := h.post(ctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: raw}); err == nil {
		resp.Body.Close()
	}
}

// listTaskSupport notes the execution.taskSupport of a backend's tools
// from a tools/list of its own (all pages), which the SDK's listing
// decodes away.
func (b *backend) listTaskSupport(ctx context.Context, h *httpTasks) error {
	support := map[string]string{}
	cursor := ""
	for page := 0; page < 1000; page++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		raw, err := h.request(ctx, "tools/list", params)
		if err != nil {
			return err
		}
		var res struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return fmt.Errorf("decoding tools/list: %w", err)
		}
		for _, item := range res.Tools {
			var t struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(item, &t) == nil && t.Name != "" {
				support[t.Name] = taskSupportOf(item)
			}
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	b.mu.Lock()
	b.taskSupport = map[string]string{}
	b.mu.Unlock()
	b.noteTaskSupport(support)
	return nil
}

// sessionID is the Mcp-Session-Id of an SDK streamable connection.
func sessionID(c mcp.Connection) func() string {
	s, ok := c.(interface{ SessionID() string })
	if !ok {
		return func() string { return "" }
	}
	return s.SessionID
}

// modernProtocol is the first protocol version in which tasks are an
// extension (io.modelcontextprotocol/tasks) rather than the 2025-11-25
// utility the gateway drives.
const modernProtocol = "2026-07-28"

// protocolVersion is the version the connection's session negotiated
// ("" before the handshake).
func (c *conn) protocolVersion() string {
	if c.sess == nil {
		return ""
	}
	if ir := c.sess.InitializeResult(); ir != nil {
		return ir.ProtocolVersion
	}
	return ""
}

// answer serves a request the backend sent on a task request's stream and
// POSTs the answer back.
func (h *httpTasks) answer(ctx context.Context, req *jsonrpc.Request) {
	resp := &jsonrpc.Response{ID: req.ID}
	if h.serve == nil {
		resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "isogate: " + req.Method + " is not routed to a client"}
	} else if res, err := h.serve(ctx, req.Method, req.Params); err != nil {
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) {
			werr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		resp.Error = werr
	} else if resp.Result, err = json.Marshal(res); err != nil {
		resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	if r, err := h.post(ctx, resp); err == nil {
		r.Body.Close()
	}
}

// clientRequestServer answers a backend's requests with cr, as the
// session's own routing does (clientreq/clientrequests.go).
func (b *backend) clientRequestServer(cr ClientRequests) func(context.Context, string, json.RawMessage) (any, error) {
	if cr == nil {
		return nil
	}
	name := b.spec.Name
	return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		switch method {
		case "elicitation/create":
			var p mcp.ElicitParams
			if err := json.Unmarshal(params, &p); err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
			}
			return cr.Elicit(ctx, name, &p)
		case "sampling/createMessage":
			var p mcp.CreateMessageWithToolsParams
			if err := json.Unmarshal(params, &p); err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
			}
			return cr.CreateMessage(ctx, name, &p)
		case "roots/list":
			return cr.ListRoots(ctx, name, &mcp.ListRootsParams{})
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "isogate: " + method + " is not routed to a client"}
	}
}
