package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/testutil"
)

// The protocol-era matrix: every client version among 2025-06-18,
// 2025-11-25 and 2026-07-28 against backends that speak each of them
// (in-process go-sdk servers; the gateway asks the two older ones for their
// version, the newest negotiates 2026-07-28), with the default
// backends.<name>.sessions (auto).

var eraVersions = []string{"2025-06-18", "2025-11-25", "2026-07-28"}

// eraBackendName names the backend that speaks version.
func eraBackendName(version string) string { return "b" + strings.ReplaceAll(version[2:], "-", "") }

// newEraBackend is the askBackend (sampling, elicitation and roots during a
// call, input requests in results) plus tools that report progress, log,
// and wait to be cancelled.
func newEraBackend(name string, cancelled chan<- string) *mcp.Server {
	s := newAskBackend(name, nil).server
	s.AddTool(&mcp.Tool{Name: "progress", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if t := req.Params.GetProgressToken(); t != nil {
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: t, Progress: 1, Total: 2, Message: "half"}); err != nil {
				return nil, err
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "log", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Logger: "era", Data: "from " + name}); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "logged"}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "block", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if t := req.Params.GetProgressToken(); t != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: t, Progress: 0, Message: "blocking"})
		}
		<-ctx.Done()
		cancelled <- name
		return nil, ctx.Err()
	})
	return s
}

// eraGateway serves one backend per version (passthrough, names prefixed).
func eraGateway(t *testing.T) (*Gateway, chan string) {
	t.Helper()
	cfg := passthroughConfig(t)
	cancelled := make(chan string, 16)
	var specs []backend.Spec
	for _, v := range eraVersions {
		name := eraBackendName(v)
		s := backend.InMemory(name, newEraBackend(name, cancelled))
		if v != "2026-07-28" {
			s.ProtocolVersion = v
		}
		specs = append(specs, s)
	}
	return startHealthy(t, cfg, app.Options{Runner: testPool(), ExtraSpecs: specs}), cancelled
}

// eraClient connects a client of version that answers sampling,
// elicitation and roots, and collects progress and log messages.
func eraClient(t *testing.T, g *Gateway, version string) (*mcp.ClientSession, *answering, *events) {
	t.Helper()
	a, ev := &answering{label: "C" + version}, newEvents()
	opts := a.options()
	opts.Capabilities.Sampling = &mcp.SamplingCapabilities{}
	evOpts := ev.options()
	opts.ProgressNotificationHandler, opts.LoggingMessageHandler = evOpts.ProgressNotificationHandler, evOpts.LoggingMessageHandler
	cs := connectWithClient(t, g, opts, version, func(c *mcp.Client) { c.AddRoots(&mcp.Root{URI: "file:///" + version}) })
	if version < "2026-07-28" {
		if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			t.Fatal(err)
		}
	}
	return cs, a, ev
}

// eraCall calls tool with meta and returns its text, or the error (a tool
// error or a JSON-RPC error) as text prefixed "error: ".
func eraCall(ctx context.Context, cs *mcp.ClientSession, tool string, meta mcp.Meta) string {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"who": "x"}, Meta: meta})
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return "error: " + b.String()
	}
	return b.String()
}

// TestEraMatrix: for each of the 9 pairs of client and backend versions,
// sampling, elicitation and roots requests during a call, input requests
// in results, progress, logging and cancellation behave as the spec of the
// client's era says, and nothing hangs: a client before 2026-07-28 is asked
// and its answer reaches the backend, whatever the backend speaks (a
// 2026-07-28 backend's client gets a backend session of its own, on its
// version); a 2026-07-28 client is never sent a request — it answers input
// requests by retrying, and a backend that can only ask the old way gets
// the spec's error; progress, log messages and cancellation cross every
// pair.
func TestEraMatrix(t *testing.T) {
	g, cancelled := eraGateway(t)
	for _, cv := range eraVersions {
		cs, a, ev := eraClient(t, g, cv)
		label := "C" + cv
		legacyClient := cv < "2026-07-28"
		for _, bv := range eraVersions {
			b := eraBackendName(bv)
			legacyBackend := bv < "2026-07-28"
			t.Run(cv+"-to-"+bv, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), eventWait)
				defer cancel()
				before := len(a.asked())
				for _, c := range []struct {
					tool, want string
					ok         bool // the call succeeds with want
				}{
					{"sample", label + "-model: " + label + " answers prompt from x", legacyClient},
					{"elicit", "accept " + label, legacyClient},
					{"roots", "roots file:///" + cv, legacyClient},
					{"inputs", "accept " + label + " / " + label + " answers greet x", legacyClient || !legacyBackend},
				} {
					got := eraCall(ctx, cs, b+"__"+c.tool, nil)
					if c.ok && got != c.want {
						t.Errorf("%s: %q, want %q", c.tool, got, c.want)
					}
					if !c.ok && !strings.HasPrefix(got, "error: ") {
						t.Errorf("%s: %q, want an error (the client cannot be asked)", c.tool, got)
					}
					if !c.ok && legacyBackend && !strings.Contains(got, "a client on 2026-07-28 cannot receive one") {
						t.Errorf("%s: %q, want the missing-capability error (-32021)", c.tool, got)
					}
				}
				asked := len(a.asked()) - before
				switch {
				case legacyClient && asked != 4: // roots are answered by the go-sdk client, unrecorded
					t.Errorf("the client was asked %d times, want 4: %q", asked, a.asked()[before:])
				case !legacyClient && !legacyBackend && asked != 2:
					t.Errorf("the client answered %d input requests, want 2: %q", asked, a.asked()[before:])
				case !legacyClient && legacyBackend && asked != 0:
					t.Errorf("a 2026-07-28 client was sent %d requests: %q", asked, a.asked()[before:])
				}

				token := "tok-" + cv + "-" + bv
				meta := mcp.Meta{"progressToken": token}
				if !legacyClient {
					meta[mcp.MetaKeyLogLevel] = "info"
				}
				if got := eraCall(ctx, cs, b+"__progress", meta); got != "done" {
					t.Errorf("progress: %q", got)
				}
				if p := ev.nextProgress(t, label); p.ProgressToken != token || p.Message != "half" {
					t.Errorf("progress: %+v, want the client's token %q", p, token)
				}
				if got := eraCall(ctx, cs, b+"__log", meta); got != "logged" {
					t.Errorf("log: %q", got)
				}
				if m := ev.nextLog(t, label); m.Logger != b+"/era" || m.Data != "from "+b {
					t.Errorf("log message: logger %q data %v, want %s/era from %s", m.Logger, m.Data, b, b)
				}

				cctx, stop := context.WithCancel(ctx)
				done := make(chan string, 1)
				go func() { done <- eraCall(cctx, cs, b+"__block", mcp.Meta{"progressToken": token + "-block"}) }()
				ev.nextProgress(t, label) // the call is in the backend
				stop()
				select {
				case name := <-cancelled:
					if name != b {
						t.Errorf("cancellation reached %s, want %s", name, b)
					}
				case <-time.After(eventWait):
					t.Errorf("the client's cancellation did not reach %s", b)
				}
				if got := <-done; !strings.HasPrefix(got, "error: ") {
					t.Errorf("cancelled call: %q", got)
				}
			})
		}
	}
	// Only the 2026-07-28 backend needed sessions of the clients' own: one
	// per client before 2026-07-28.
	for _, st := range g.Backends() {
		want := 0
		if st.Name == eraBackendName("2026-07-28") {
			want = 2
		}
		if st.ClientSessions != want {
			t.Errorf("%s: %d clients' own sessions, want %d", st.Name, st.ClientSessions, want)
		}
	}
}

// TestPerClientSessions: with backends.<name>.sessions: per_client every
// client session that initialized gets a backend session of its own,
// closed when the client's session ends. Past max_sessions, the session
// used least recently with no call in flight makes room; with every one
// busy the call is refused with BACKEND_BUSY, and with auto the client
// shares the supervised session instead.
func TestPerClientSessions(t *testing.T) {
	cfg := passthroughConfig(t)
	cancelled := make(chan string, 4)
	per := backend.InMemory("per", newEraBackend("per", cancelled))
	per.Sessions, per.MaxSessions = config.SessionsPerClient, 1
	auto := backend.InMemory("auto", newEraBackend("auto", cancelled))
	auto.MaxSessions = 1
	g := startHealthy(t, cfg, app.Options{Runner: testPool(), ExtraSpecs: []backend.Spec{per, auto}})
	sessions := func(name string) int {
		for _, st := range g.Backends() {
			if st.Name == name {
				return st.ClientSessions
			}
		}
		t.Fatalf("no backend %s", name)
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), eventWait)
	defer cancel()

	first, _, firstEv := eraClient(t, g, "2025-06-18")
	second, _, _ := eraClient(t, g, "2025-11-25")
	// The first client's call holds its session busy.
	blockCtx, unblock := context.WithCancel(ctx)
	blocked := make(chan string, 1)
	go func() { blocked <- eraCall(blockCtx, first, "per__block", mcp.Meta{"progressToken": "b"}) }()
	firstEv.nextProgress(t, "first")
	if n := sessions("per"); n != 1 {
		t.Errorf("per_client: %d clients' own sessions, want 1", n)
	}
	if got := eraCall(ctx, second, "per__progress", nil); !strings.Contains(got, "no room for another client session") {
		t.Errorf("second client while the only session is busy: %q, want BACKEND_BUSY", got)
	}
	// auto falls back to sharing instead (the first client's own auto
	// session is busy too): a backend's input requests still reach the
	// client (the gateway runs the rounds), a request during the call
	// cannot on the shared 2026-07-28 session.
	go func() { _ = eraCall(blockCtx, first, "auto__block", mcp.Meta{"progressToken": "b2"}) }()
	firstEv.nextProgress(t, "first")
	if got := eraCall(ctx, second, "auto__inputs", nil); got != "accept C2025-11-25 / C2025-11-25 answers greet x" {
		t.Errorf("auto with no room, on the shared session: %q", got)
	}
	if n := sessions("auto"); n != 1 {
		t.Errorf("auto: %d clients' own sessions, want 1 (the first client's)", n)
	}
	unblock()
	<-blocked
	<-cancelled
	<-cancelled
	// Now idle, the first client's session makes room for the second's.
	if got := eraCall(ctx, second, "per__progress", nil); got != "done" {
		t.Errorf("second client once the first's session is idle: %q", got)
	}
	if n := sessions("per"); n != 1 {
		t.Errorf("per_client after the eviction: %d clients' own sessions, want 1", n)
	}
	// A 2026-07-28 client has no session to key on (no initialize): it
	// shares.
	modern, _, _ := eraClient(t, g, "2026-07-28")
	if got := eraCall(ctx, modern, "per__progress", nil); got != "done" {
		t.Errorf("2026-07-28 client: %q", got)
	}

	// The second client's session ends: its backend session closes.
	second.Close()
	testutil.Eventually(t, eventWait, func() bool { return sessions("per") == 0 }, "the ended client's backend session is still open")
}
