package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
)

// askBackend is an in-process go-sdk MCP server whose tools ask their
// client something (sampling, elicitation in both modes, roots) during the
// call and answer with what came back, or with the error.
type askBackend struct {
	server  *mcp.Server
	arrived chan string   // "hold" calls report here once in flight
	release chan struct{} // and wait for this
	meet    *meeting      // "meet" argument: wait for the other party first
}

// meeting lets two calls (on any backends) wait for each other.
type meeting struct {
	mu    sync.Mutex
	count int
	both  chan struct{}
}

func (m *meeting) arrive(ctx context.Context) error {
	m.mu.Lock()
	m.count++
	if m.count == 2 {
		close(m.both)
	}
	m.mu.Unlock()
	select {
	case <-m.both:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type askArgs struct {
	Who  string `json:"who"`
	Meet bool   `json:"meet,omitempty"`
}

func newAskBackend(name string, meet *meeting) *askBackend {
	a := &askBackend{arrived: make(chan string, 4), release: make(chan struct{}), meet: meet}
	a.server = mcp.NewServer(&mcp.Implementation{Name: name}, nil)
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	wait := func(ctx context.Context, in askArgs) error {
		if in.Meet && a.meet != nil {
			return a.meet.arrive(ctx)
		}
		return nil
	}
	mcp.AddTool(a.server, &mcp.Tool{Name: "sample"}, func(ctx context.Context, req *mcp.CallToolRequest, in askArgs) (*mcp.CallToolResult, any, error) {
		if err := wait(ctx, in); err != nil {
			return nil, nil, err
		}
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "prompt from " + in.Who}}}})
		if err != nil {
			return nil, nil, err
		}
		return text(res.Model + ": " + res.Content.(*mcp.TextContent).Text), nil, nil
	})
	mcp.AddTool(a.server, &mcp.Tool{Name: "elicit"}, func(ctx context.Context, req *mcp.CallToolRequest, in askArgs) (*mcp.CallToolResult, any, error) {
		if err := wait(ctx, in); err != nil {
			return nil, nil, err
		}
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "name? " + in.Who,
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
		if err != nil {
			return nil, nil, err
		}
		return text(fmt.Sprintf("%s %v", res.Action, res.Content["name"])), nil, nil
	})
	mcp.AddTool(a.server, &mcp.Tool{Name: "elicit_url"}, func(ctx context.Context, req *mcp.CallToolRequest, in askArgs) (*mcp.CallToolResult, any, error) {
		id := "el-" + in.Who
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "url", Message: "open", URL: "https://example.com/" + in.Who, ElicitationID: id})
		if err != nil {
			return nil, nil, err
		}
		if err := req.Session.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: id}); err != nil {
			return nil, nil, err
		}
		return text(res.Action), nil, nil
	})
	mcp.AddTool(a.server, &mcp.Tool{Name: "roots"}, func(ctx context.Context, req *mcp.CallToolRequest, in askArgs) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, nil, err
		}
		var uris []string
		for _, r := range res.Roots {
			uris = append(uris, r.URI)
		}
		return text("roots " + strings.Join(uris, ",")), nil, nil
	})
	// "inputs" asks in the 2026-07-28 way, with inputRequests in its
	// result; a go-sdk server fulfils them itself with requests to a
	// 2025-11-25 client (the gateway) and calls again with the answers.
	mcp.AddTool(a.server, &mcp.Tool{Name: "inputs"}, func(ctx context.Context, req *mcp.CallToolRequest, in askArgs) (*mcp.CallToolResult, any, error) {
		el, ok1 := req.Params.InputResponses["name"].(*mcp.ElicitResult)
		sm, ok2 := req.Params.InputResponses["greeting"].(*mcp.CreateMessageWithToolsResult)
		if ok1 && ok2 && len(sm.Content) == 1 {
			return text(fmt.Sprintf("%s %v / %s", el.Action, el.Content["name"], sm.Content[0].(*mcp.TextContent).Text)), nil, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
			"name": &mcp.ElicitParams{Message: "name? " + in.Who,
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}},
			"greeting": &mcp.CreateMessageParams{MaxTokens: 10,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "greet " + in.Who}}}},
		}}, nil, nil
	})
	// "tell" logs who (at info, logger "tell") during the call.
	mcp.AddTool(a.server, &mcp.Tool{Name: "tell"}, func(ctx context.Context, req *mcp.CallToolRequest, in askArgs) (*mcp.CallToolResult, any, error) {
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "tell", Data: "told " + in.Who}); err != nil {
			return nil, nil, err
		}
		return text("told"), nil, nil
	})
	mcp.AddTool(a.server, &mcp.Tool{Name: "hold"}, func(ctx context.Context, req *mcp.CallToolRequest, in askArgs) (*mcp.CallToolResult, any, error) {
		a.arrived <- in.Who
		select {
		case <-a.release:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		if token := req.Params.GetProgressToken(); token != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: 1, Message: "released"})
		}
		return text("released " + in.Who), nil, nil
	})
	// "guess" sends progress under the tokens isogate-progress-1 to 64:
	// those of the calls before it, were the gateway's tokens a counter.
	mcp.AddTool(a.server, &mcp.Tool{Name: "guess"}, func(ctx context.Context, req *mcp.CallToolRequest, in askArgs) (*mcp.CallToolResult, any, error) {
		for i := 1; i <= 64; i++ {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: fmt.Sprintf("isogate-progress-%d", i),
				Progress: 1, Message: "guessed by " + in.Who})
		}
		return text("guessed"), nil, nil
	})
	return a
}

// askGateway is a passthrough gateway (tool names prefixed) over two
// askBackends, "ask" and "ask2", that share one meeting.
func askGateway(t *testing.T) (*Gateway, *askBackend, *askBackend) {
	t.Helper()
	cfg := passthroughConfig(t)
	meet := &meeting{both: make(chan struct{})}
	a, b := newAskBackend("ask", meet), newAskBackend("ask2", meet)
	g := startHealthy(t, cfg, app.Options{Runner: testPool(),
		ExtraSpecs: []backend.Spec{legacy(backend.InMemory("ask", a.server)), legacy(backend.InMemory("ask2", b.server))}})
	return g, a, b
}

// passthroughConfig is the default configuration serving passthrough
// tools named <backend>__<tool>, with its own cache directory.
func passthroughConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Server.Expose = config.ExposePassthrough
	cfg.Server.ToolNames = config.ToolNamesPrefixed
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// answering is a client that answers sampling, elicitation and roots as
// label, and records the elicitations it completed.
type answering struct {
	label    string
	mu       sync.Mutex
	seen     []string    // what it was asked, in order
	complete chan string // elicitation ids of notifications/elicitation/complete
}

func (c *answering) options() *mcp.ClientOptions {
	c.complete = make(chan string, 4)
	note := func(s string) {
		c.mu.Lock()
		c.seen = append(c.seen, s)
		c.mu.Unlock()
	}
	return &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{
			RootsV2:     &mcp.RootCapabilities{},
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			in := req.Params.Messages[0].Content.(*mcp.TextContent).Text
			note("sampling: " + in)
			return &mcp.CreateMessageResult{Model: c.label + "-model", Role: "assistant",
				Content: &mcp.TextContent{Text: c.label + " answers " + in}}, nil
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			note("elicit " + req.Params.Mode + ": " + req.Params.Message + req.Params.URL)
			if req.Params.Mode == "url" {
				return &mcp.ElicitResult{Action: "accept"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": c.label}}, nil
		},
		ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			c.complete <- req.Params.ElicitationID
		},
	}
}

func (c *answering) asked() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.seen...)
}

// askCall calls a passthrough tool and returns its text and error flag.
func askCall(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), eventWait)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// TestPassthroughClientRequestsReachTheCaller: during a passthrough call a
// backend's sampling/createMessage, elicitation/create (form and url,
// with its notifications/elicitation/complete) and roots/list reach the
// calling 2025-11-25 client, and its answers reach the backend; so do the
// inputRequests a backend returns (which the go-sdk backend turns into
// requests to the gateway).
func TestPassthroughClientRequestsReachTheCaller(t *testing.T) {
	g, _, _ := askGateway(t)
	a := &answering{label: "A"}
	opts := a.options()
	client := connectWithClient(t, g, opts, "2025-11-25", func(c *mcp.Client) { c.AddRoots(&mcp.Root{URI: "file:///a"}) })
	other := &answering{label: "O"}
	connect(t, g, other.options(), "2025-11-25") // an idle session: never asked

	if got, isErr := askCall(t, client, "ask__sample", map[string]any{"who": "x"}); isErr || got != "A-model: A answers prompt from x" {
		t.Errorf("sampling: %q (error %v)", got, isErr)
	}
	if got, isErr := askCall(t, client, "ask__elicit", map[string]any{"who": "x"}); isErr || got != "accept A" {
		t.Errorf("form elicitation: %q (error %v)", got, isErr)
	}
	if got, isErr := askCall(t, client, "ask__elicit_url", map[string]any{"who": "x"}); isErr || got != "accept" {
		t.Errorf("url elicitation: %q (error %v)", got, isErr)
	}
	select {
	case id := <-a.complete:
		if id != "el-x" {
			t.Errorf("elicitation/complete for %q, want el-x", id)
		}
	case <-time.After(eventWait):
		t.Error("no notifications/elicitation/complete reached the client")
	}
	if got, isErr := askCall(t, client, "ask__roots", map[string]any{"who": "x"}); isErr || got != "roots file:///a" {
		t.Errorf("roots: %q (error %v)", got, isErr)
	}
	if got, isErr := askCall(t, client, "ask__inputs", map[string]any{"who": "y"}); isErr || got != "accept A / A answers greet y" {
		t.Errorf("input requests of the backend: %q (error %v)", got, isErr)
	}
	want := []string{"sampling: prompt from x", "elicit form: name? x", "elicit url: openhttps://example.com/x"}
	got := a.asked()
	if len(got) == 5 {
		slices.Sort(got[3:]) // the two input requests go out concurrently
	}
	want = append(want, "elicit form: name? y", "sampling: greet y")
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the client was asked %q, want %q", got, want)
	}
	if got := other.asked(); len(got) != 0 {
		t.Errorf("an idle session was asked %q", got)
	}
}

// connectWithClient is connect with a hook on the client before it connects.
func connectWithClient(t *testing.T, g *Gateway, opts *mcp.ClientOptions, version string, setup func(*mcp.Client)) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := g.Server().Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "agent"}, opts)
	setup(c)
	cs, err := c.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestPassthroughClientRequestsWithoutCapability: a client that did not
// declare sampling or elicitation, and a 2026-07-28 client (no
// server-to-client requests), give the backend an error at once; the call
// ends with it instead of hanging (for the 2026-07-28 client, with the
// spec's missing-capability error).
func TestPassthroughClientRequestsWithoutCapability(t *testing.T) {
	g, _, _ := askGateway(t)
	bare := connect(t, g, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}, "2025-11-25")
	for tool, want := range map[string]string{
		"ask__sample":     `method not found: "sampling/createMessage"`,
		"ask__elicit":     `method not found: "elicitation/create"`,
		"ask__elicit_url": `method not found: "elicitation/create"`,
	} {
		if got, isErr := askCall(t, bare, tool, map[string]any{"who": "x"}); !isErr || !strings.Contains(got, want) {
			t.Errorf("%s without the capability: %q (error %v), want an error with %q", tool, got, isErr, want)
		}
	}
	formOnly := connect(t, g, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}}, "2025-11-25")
	if got, isErr := askCall(t, formOnly, "ask__elicit_url", map[string]any{"who": "x"}); !isErr || !strings.Contains(got, `does not support "url" elicitation`) {
		t.Errorf("url elicitation of a form-only client: %q (error %v)", got, isErr)
	}
	if got, isErr := askCall(t, formOnly, "ask__elicit", map[string]any{"who": "x"}); isErr || got != "decline <nil>" {
		t.Errorf("form elicitation of a form-only client: %q (error %v)", got, isErr)
	}

	// A 2026-07-28 client: the backend gets -32601, the client the
	// spec's -32021 naming the capability.
	a := &answering{label: "L"}
	latest := connect(t, g, a.options()) // 2026-07-28
	ctx, cancel := context.WithTimeout(context.Background(), eventWait)
	defer cancel()
	_, err := latest.CallTool(ctx, &mcp.CallToolParams{Name: "ask__elicit", Arguments: map[string]any{"who": "x"}})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != mcp.CodeMissingRequiredClientCapabilities || !strings.Contains(string(rpc.Data), `"elicitation"`) {
		t.Errorf("elicitation for a 2026-07-28 client: %v, want -32021 naming elicitation", err)
	}
	if got := a.asked(); len(got) != 0 {
		t.Errorf("the 2026-07-28 client was asked %q", got)
	}
}

// TestPassthroughClientRequestsConcurrentClients: two clients' calls in
// flight at once (on two backends, each waiting for the other) each get
// their own request and answer; with calls of two clients in flight on one
// backend, the request cannot be attributed and is refused.
func TestPassthroughClientRequestsConcurrentClients(t *testing.T) {
	g, ask, _ := askGateway(t)
	a, b := &answering{label: "A"}, &answering{label: "B"}
	ca, cb := connect(t, g, a.options(), "2025-11-25"), connect(t, g, b.options(), "2025-11-25")

	type out struct {
		who, text string
		isErr     bool
	}
	results := make(chan out, 2)
	var wg sync.WaitGroup
	for _, c := range []struct {
		who, tool string
		cs        *mcp.ClientSession
	}{{"A", "ask__elicit", ca}, {"B", "ask2__elicit", cb}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text, isErr := askCall(t, c.cs, c.tool, map[string]any{"who": c.who, "meet": true})
			results <- out{c.who, text, isErr}
		}()
	}
	wg.Wait()
	close(results)
	for r := range results {
		if r.isErr || r.text != "accept "+r.who {
			t.Errorf("%s: %q (error %v), want its own answer", r.who, r.text, r.isErr)
		}
	}
	for who, c := range map[string]*answering{"A": a, "B": b} {
		if got := c.asked(); len(got) != 1 || got[0] != "elicit form: name? "+who {
			t.Errorf("%s was asked %q", who, got)
		}
	}

	// A's call holds on "ask"; B's call there cannot be told from it.
	held := make(chan out, 1)
	go func() {
		text, isErr := askCall(t, ca, "ask__hold", map[string]any{"who": "A"})
		held <- out{"A", text, isErr}
	}()
	<-ask.arrived
	if got, isErr := askCall(t, cb, "ask__elicit", map[string]any{"who": "B2"}); !isErr || !strings.Contains(got, "several clients") {
		t.Errorf("an unattributable elicitation: %q (error %v)", got, isErr)
	}
	close(ask.release)
	if r := <-held; r.isErr || r.text != "released A" {
		t.Errorf("the held call: %q (error %v)", r.text, r.isErr)
	}
	if got := a.asked(); len(got) != 1 {
		t.Errorf("A was asked %q", got)
	}
	if got := b.asked(); len(got) != 1 {
		t.Errorf("B was asked %q", got)
	}
}

// TestPassthroughClientRequestEndsWithTheCall: a client that cancels its
// call while its elicitation is pending sees the elicitation cancelled
// too.
func TestPassthroughClientRequestEndsWithTheCall(t *testing.T) {
	g, _, _ := askGateway(t)
	asked, ended := make(chan struct{}), make(chan error, 1)
	cs := connect(t, g, &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		close(asked)
		<-ctx.Done()
		ended <- ctx.Err()
		return nil, ctx.Err()
	}}, "2025-11-25")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask__elicit", Arguments: map[string]any{"who": "x"}})
		done <- err
	}()
	select {
	case <-asked:
	case <-time.After(eventWait):
		t.Fatal("the elicitation did not reach the client")
	}
	cancel()
	select {
	case <-ended:
	case <-time.After(eventWait):
		t.Fatal("the pending elicitation was not cancelled with the call")
	}
	if err := <-done; err == nil {
		t.Error("the cancelled call succeeded")
	}
}

// legacy pins an in-process go-sdk backend to 2025-11-25, the version whose
// servers send sampling, elicitation and roots requests during a call (on
// 2026-07-28 they return input requests in results instead).
func legacy(s backend.Spec) backend.Spec {
	s.ProtocolVersion = "2025-11-25"
	return s
}
