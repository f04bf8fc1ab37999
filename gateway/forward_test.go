package gateway

import (
	"context"
	"fmt"
	"log/slog"
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

// eventWait bounds every wait for a forwarded notification: the tests
// wait for events, this only turns a missing one into a failure.
const eventWait = 20 * time.Second

// fwdBackend is an in-process go-sdk MCP server that reports progress,
// logs and completes, and records what the gateway sent it.
type fwdBackend struct {
	server *mcp.Server

	mu     sync.Mutex
	tokens []any                    // progress tokens its work calls received
	refs   []*mcp.CompleteReference // completion references it was asked about
	meet   map[string]chan struct{} // rendezvous name → closed when both arrived
	count  map[string]int           // rendezvous name → arrivals
}

type workArgs struct {
	Who  string `json:"who"`
	Meet string `json:"meet,omitempty" jsonschema:"wait until two calls with this name are in flight"`
	// After is Meet once the call has logged: two calls that meet before
	// and after logging are both in flight while either logs.
	After string `json:"after,omitempty"`
}

func newFwdBackend() *fwdBackend {
	f := &fwdBackend{meet: map[string]chan struct{}{}, count: map[string]int{}}
	f.server = mcp.NewServer(&mcp.Implementation{Name: "fwd"}, &mcp.ServerOptions{
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			f.mu.Lock()
			ref := *req.Params.Ref
			f.refs = append(f.refs, &ref)
			f.mu.Unlock()
			var all []string
			switch {
			case ref.Type == "ref/prompt" && ref.Name == "greet":
				all = []string{"alice", "albert", "bob"}
			case ref.Type == "ref/resource" && ref.URI == "fwd://items/{id}":
				all = []string{"1", "2", "10"}
			default:
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown ref"}
			}
			values := []string{}
			for _, v := range all {
				if strings.HasPrefix(v, req.Params.Argument.Value) {
					values = append(values, v)
				}
			}
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
		},
	})
	mcp.AddTool(f.server, &mcp.Tool{Name: "work", Description: "Reports progress and logs, then answers."},
		func(ctx context.Context, req *mcp.CallToolRequest, in workArgs) (*mcp.CallToolResult, any, error) {
			token := req.Params.GetProgressToken()
			f.mu.Lock()
			f.tokens = append(f.tokens, token)
			f.mu.Unlock()
			if in.Meet != "" {
				if err := f.rendezvous(ctx, in.Meet); err != nil {
					return nil, nil, err
				}
			}
			for _, l := range []struct {
				level mcp.LoggingLevel
				text  string
			}{{"debug", in.Who + " debug"}, {"info", in.Who + " info"}} {
				_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: l.level, Logger: "work", Data: l.text})
			}
			if in.After != "" {
				if err := f.rendezvous(ctx, in.After); err != nil {
					return nil, nil, err
				}
			}
			if token != nil {
				for i := 1; i <= 3; i++ {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
						ProgressToken: token, Progress: float64(i), Total: 3, Message: fmt.Sprintf("%s %d", in.Who, i)})
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done " + in.Who}}}, nil, nil
		})
	f.server.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "name"}}},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}, nil
		})
	f.server.AddResourceTemplate(&mcp.ResourceTemplate{Name: "item", URITemplate: "fwd://items/{id}"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "item"}}}, nil
		})
	return f
}

// rendezvous returns once two calls with the same name are in flight.
func (f *fwdBackend) rendezvous(ctx context.Context, name string) error {
	f.mu.Lock()
	ch := f.meet[name]
	if ch == nil {
		ch = make(chan struct{})
		f.meet[name] = ch
	}
	f.count[name]++
	if f.count[name] == 2 {
		close(ch)
	}
	f.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// broadcast logs from every session of the backend, outside any call.
func (f *fwdBackend) broadcast(t *testing.T, level mcp.LoggingLevel, text string) {
	t.Helper()
	n := 0
	for ss := range f.server.Sessions() {
		n++
		if err := ss.Log(context.Background(), &mcp.LoggingMessageParams{Level: level, Data: text}); err != nil {
			t.Fatal(err)
		}
	}
	if n == 0 {
		t.Fatal("the backend has no session")
	}
}

// fwdGateway is a passthrough gateway over the in-process backends "fwd"
// (a fwdBackend) and "plain" (a prompt, no completions).
func fwdGateway(t *testing.T) (*Gateway, *fwdBackend) {
	t.Helper()
	g, f, _ := fwdGatewayKept(t)
	return g, f
}

// fwdGatewayKept is fwdGateway whose log reports the backend log messages
// it keeps instead of delivering them (see keptLogs).
func fwdGatewayKept(t *testing.T) (*Gateway, *fwdBackend, chan string) {
	t.Helper()
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Server.Expose = config.ExposePassthrough
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	f := newFwdBackend()
	plain := mcp.NewServer(&mcp.Implementation{Name: "plain"}, nil)
	plain.AddPrompt(&mcp.Prompt{Name: "hello", Arguments: []*mcp.PromptArgument{{Name: "x"}}},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello"}}}}, nil
		})
	kept := make(chan string, 16)
	g := startHealthy(t, cfg, app.Options{Runner: testPool(), Logger: slog.New(keptLogs{kept}),
		ExtraSpecs: []backend.Spec{backend.InMemory("fwd", f.server), backend.InMemory("plain", plain)}})
	return g, f, kept
}

// events collects one client's forwarded notifications.
type events struct {
	progress chan *mcp.ProgressNotificationParams
	logs     chan *mcp.LoggingMessageParams
}

func newEvents() *events {
	return &events{progress: make(chan *mcp.ProgressNotificationParams, 64), logs: make(chan *mcp.LoggingMessageParams, 64)}
}

func (e *events) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			e.progress <- req.Params
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			e.logs <- req.Params
		},
	}
}

func (e *events) nextLog(t *testing.T, who string) *mcp.LoggingMessageParams {
	t.Helper()
	return receive(t, e.logs, who+": no log message arrived")
}

func (e *events) nextProgress(t *testing.T, who string) *mcp.ProgressNotificationParams {
	t.Helper()
	return receive(t, e.progress, who+": no progress notification arrived")
}

// receive returns the next value of ch, failing with missing when none
// arrives within eventWait.
func receive[T any](t *testing.T, ch <-chan T, missing string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(eventWait):
		t.Fatal(missing)
		var zero T
		return zero
	}
}

// logCall calls work for who with a progress token and, for
// 2026-07-28 clients, the per-request log level.
func logCall(ctx context.Context, cs *mcp.ClientSession, who, meet string, token any, level mcp.LoggingLevel) (*mcp.CallToolResult, error) {
	meta := mcp.Meta{}
	if token != nil {
		meta["progressToken"] = token
	}
	if level != "" {
		meta[mcp.MetaKeyLogLevel] = string(level)
	}
	args := map[string]any{"who": who}
	if meet != "" {
		args["meet"] = meet
	}
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: "work", Arguments: args, Meta: meta})
}

// TestPassthroughProgressReachesItsCaller: two clients call the same
// backend tool at the same time (both in flight: the backend waits for
// both), each with the same progress token; each receives exactly its own
// call's progress, under its own token, and the backend saw two distinct
// tokens of the gateway's. A call without a token sends none.
func TestPassthroughProgressReachesItsCaller(t *testing.T) {
	for _, version := range []string{"2025-11-25", ""} {
		t.Run("protocol="+cmpOr(version, "latest"), func(t *testing.T) {
			g, f := fwdGateway(t)
			ctx := context.Background()
			evA, evB := newEvents(), newEvents()
			var a, b *mcp.ClientSession
			if version == "" {
				a, b = connect(t, g, evA.options()), connect(t, g, evB.options())
			} else {
				a, b = connect(t, g, evA.options(), version), connect(t, g, evB.options(), version)
			}
			var wg sync.WaitGroup
			errs := make(chan error, 2)
			for _, c := range []struct {
				who string
				cs  *mcp.ClientSession
			}{{"A", a}, {"B", b}} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := logCall(ctx, c.cs, c.who, "both", "tok", "")
					if err == nil && (res.IsError || res.Content[0].(*mcp.TextContent).Text != "done "+c.who) {
						err = fmt.Errorf("%s: unexpected result %+v", c.who, res.Content[0])
					}
					errs <- err
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			for who, ev := range map[string]*events{"A": evA, "B": evB} {
				for i := 1; i <= 3; i++ {
					p := ev.nextProgress(t, who)
					if p.ProgressToken != "tok" || p.Message != fmt.Sprintf("%s %d", who, i) || p.Progress != float64(i) || p.Total != 3 {
						t.Errorf("%s: progress %d is %+v", who, i, p)
					}
				}
			}
			f.mu.Lock()
			tokens := slices.Clone(f.tokens)
			f.mu.Unlock()
			if len(tokens) != 2 || tokens[0] == tokens[1] {
				t.Fatalf("the backend saw tokens %v, want two distinct ones", tokens)
			}
			for _, tok := range tokens {
				if s, _ := tok.(string); !strings.HasPrefix(s, "isogate-progress-") {
					t.Errorf("the backend saw the token %v, not one of the gateway's", tok)
				}
			}

			// No token, no progress: the next event A sees is the progress of
			// a later call with a token.
			if _, err := logCall(ctx, a, "A-none", "", nil, ""); err != nil {
				t.Fatal(err)
			}
			if _, err := logCall(ctx, a, "A-again", "", 7, ""); err != nil {
				t.Fatal(err)
			}
			if p := evA.nextProgress(t, "A"); p.Message != "A-again 1" || fmt.Sprint(p.ProgressToken) != "7" {
				t.Errorf("after a call without a token, A's next progress is %+v", p)
			}
			f.mu.Lock()
			if tok := f.tokens[2]; tok != nil {
				t.Errorf("a call without a progress token reached the backend with %v", tok)
			}
			f.mu.Unlock()
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestPassthroughLogsReachTheCaller: a backend's log messages during a
// call go to the calling session only, tagged with the backend and at the
// session's level; messages outside any call reach no session (they are
// kept in the gateway's log): each session's next message is its own
// call's.
func TestPassthroughLogsReachTheCaller(t *testing.T) {
	g, f, kept := fwdGatewayKept(t)
	ctx := context.Background()
	const version = "2025-11-25" // logging/setLevel sessions
	evA, evB, evC := newEvents(), newEvents(), newEvents()
	a := connect(t, g, evA.options(), version)
	b := connect(t, g, evB.options(), version)
	c := connect(t, g, evC.options(), version)
	for cs, level := range map[*mcp.ClientSession]mcp.LoggingLevel{a: "info", b: "debug", c: "debug"} {
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := logCall(ctx, a, "A", "", nil, ""); err != nil {
		t.Fatal(err)
	}
	// A (info) gets its call's info message, not the debug one.
	if m := evA.nextLog(t, "A"); m.Data != "A info" || m.Level != "info" || m.Logger != "fwd/work" {
		t.Errorf("A's first log message is %+v, want A info from fwd/work", m)
	}
	// Outside any call: nobody's. Each session's next message (in order
	// on its in-memory connection) is its own next call's.
	f.broadcast(t, "info", "outside")
	f.broadcast(t, "error", "outside error")
	for _, want := range []string{"outside", "outside error"} { // handled before the next calls
		if got := receive(t, kept, "a message outside calls was not kept"); got != want {
			t.Errorf("the gateway kept %q, want %q", got, want)
		}
	}
	for _, x := range []struct {
		who, first string
		cs         *mcp.ClientSession
		ev         *events
	}{{"A", "A info", a, evA}, {"B", "B debug", b, evB}, {"C", "C debug", c, evC}} {
		if _, err := logCall(ctx, x.cs, x.who, "", nil, ""); err != nil {
			t.Fatal(err)
		}
		if m := x.ev.nextLog(t, x.who); m.Data != x.first {
			t.Errorf("%s: the next message after the ones outside calls is %+v, want %q", x.who, m, x.first)
		}
	}
}

// TestPassthroughLogsOnlyToSessionsInCalls: with calls of two clients in
// flight on one backend, the gateway cannot tell which call a log message
// belongs to: neither caller nor an idle session receives it (each
// session's next message is its own later call's); with a 2026-07-28
// client the per-request level applies.
func TestPassthroughLogsOnlyToSessionsInCalls(t *testing.T) {
	for _, version := range []string{"2025-11-25", ""} {
		t.Run("protocol="+cmpOr(version, "latest"), func(t *testing.T) {
			g, _ := fwdGateway(t)
			ctx := context.Background()
			evA, evB, evC := newEvents(), newEvents(), newEvents()
			var a, b *mcp.ClientSession
			var level mcp.LoggingLevel // per request (2026-07-28)
			if version == "" {
				a, b = connect(t, g, evA.options()), connect(t, g, evB.options())
				level = "info"
			} else {
				a, b = connect(t, g, evA.options(), version), connect(t, g, evB.options(), version)
				for _, cs := range []*mcp.ClientSession{a, b} {
					if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
						t.Fatal(err)
					}
				}
			}
			// C: a session with a level and no call.
			cSess := connect(t, g, evC.options(), "2025-11-25")
			if err := cSess.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for _, c := range []struct {
				who string
				cs  *mcp.ClientSession
			}{{"A", a}, {"B", b}} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					params := &mcp.CallToolParams{Name: "work", Arguments: map[string]any{"who": c.who, "meet": "both", "after": "logged"}}
					if level != "" {
						params.Meta = mcp.Meta{mcp.MetaKeyLogLevel: string(level)}
					}
					if _, err := c.cs.CallTool(ctx, params); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			for _, x := range []struct {
				who, first string
				cs         *mcp.ClientSession
				ev         *events
				level      mcp.LoggingLevel
			}{{"A", "A2 info", a, evA, level}, {"B", "B2 info", b, evB, level}, {"C", "C2 debug", cSess, evC, ""}} {
				if _, err := logCall(ctx, x.cs, x.who+"2", "", nil, x.level); err != nil {
					t.Fatal(err)
				}
				if m := x.ev.nextLog(t, x.who); m.Data != x.first || m.Logger != "fwd/work" {
					t.Errorf("%s: the first message it received is %+v, want its own %q", x.who, m, x.first)
				}
			}
		})
	}
}
