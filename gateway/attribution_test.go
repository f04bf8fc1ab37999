package gateway

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/app"
	"github.com/isogate/isogate/internal/backend"
)

// Attribution across principals: a backend's requests and log messages
// reach only the client whose call caused them, program runs
// (call_tool_chain) and passthrough calls alike; what cannot be attributed
// is refused (requests) or kept in the gateway's log (log messages).

// principals are the static tokens of the attribution tests.
var principals = map[string]config.StaticToken{
	"alice": {Token: "alice-token-0123456789"},
	"bob":   {Token: "bob-token-0123456789ab"},
	"carol": {Token: "carol-token-0123456789"},
}

// keptLogs is a slog handler that reports the data of every backend log
// message the gateway keeps in its own log instead of delivering it.
type keptLogs struct{ kept chan string }

func (k keptLogs) Enabled(context.Context, slog.Level) bool { return true }
func (k keptLogs) WithAttrs([]slog.Attr) slog.Handler       { return k }
func (k keptLogs) WithGroup(string) slog.Handler            { return k }
func (k keptLogs) Handle(_ context.Context, r slog.Record) error {
	if !strings.Contains(r.Message, "kept in the gateway's log") {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "data" {
			select {
			case k.kept <- a.Value.String():
			default:
			}
		}
		return true
	})
	return nil
}

// principal is one token holder's go-sdk client session over HTTP, which
// answers sampling and elicitation as its name and records what it was
// asked and which log messages it received.
type principal struct {
	*answering
	cs *mcp.ClientSession

	mu   sync.Mutex
	logs []string
	got  chan string // each log message's data
}

func (p *principal) received() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.logs...)
}

// attributionGateway serves HTTP with token auth (alice, bob, carol),
// code mode and passthrough (prefixed names) over the in-process "ask"
// backend (2025-11-25: requests during calls) and, with everything, the
// real server-everything.
func attributionGateway(t *testing.T, everything bool) (*httpGateway, *askBackend, chan string) {
	t.Helper()
	ask := newAskBackend("ask", nil)
	kept := make(chan string, 16)
	h := &httpGateway{}
	cfg := config.Default()
	cfg.Server.CacheDir = t.TempDir()
	cfg.Sandbox.Isolation = config.IsolationThread // the shared test pool
	cfg.Sandbox.TrustedCode = true
	cfg.Sandbox.Timeout = time.Minute
	cfg.Server.Expose = config.ExposeBoth
	cfg.Server.ToolNames = config.ToolNamesPrefixed
	cfg.Server.Auth.Mode = config.AuthToken
	cfg.Server.Auth.Tokens = principals
	if everything {
		cfg.Backends = map[string]config.Backend{"everything": {
			Name: "everything", Transport: config.TransportStdio, Command: "node",
			Args: []string{everythingPath(t), "stdio"}, Timeout: time.Minute, MaxConcurrentCalls: 8,
		}}
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	g, base := serveHealthy(t, cfg, app.Options{Runner: testPool(), Logger: slog.New(keptLogs{kept}),
		ExtraSpecs: []backend.Spec{legacy(backend.InMemory("ask", ask.server))}})
	h.g, h.url = g, base+"/mcp"
	return h, ask, kept
}

// join connects name's client with its token, at logging level debug.
func (h *httpGateway) join(t *testing.T, name string) *principal {
	t.Helper()
	return h.joinWith(t, name, nil)
}

// joinWith is join with changes to the client's options.
func (h *httpGateway) joinWith(t *testing.T, name string, change func(*mcp.ClientOptions)) *principal {
	t.Helper()
	p := &principal{answering: &answering{label: name}, got: make(chan string, 16)}
	opts := p.options()
	if change != nil {
		change(opts)
	}
	opts.LoggingMessageHandler = func(_ context.Context, req *mcp.LoggingMessageRequest) {
		data, _ := req.Params.Data.(string)
		p.mu.Lock()
		p.logs = append(p.logs, data)
		p.mu.Unlock()
		p.got <- data
	}
	c := mcp.NewClient(&mcp.Implementation{Name: name}, opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: h.url,
		HTTPClient: &http.Client{Transport: bearer{principals[name].Token}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("%s connects: %v", name, err)
	}
	t.Cleanup(func() { cs.Close() })
	if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	p.cs = cs
	return p
}

// chain runs a call_tool_chain program and returns its text.
func (p *principal) chain(t *testing.T, code string) string {
	t.Helper()
	text, _ := askCall(t, p.cs, "call_tool_chain", map[string]any{"code": code})
	return text
}

// noneSaw fails if any of the principals was asked anything or received a
// log message containing secret.
func noneSaw(t *testing.T, secret string, ps ...*principal) {
	t.Helper()
	for _, p := range ps {
		for _, a := range p.asked() {
			t.Errorf("%s was asked %q", p.label, a)
		}
		for _, l := range p.received() {
			if strings.Contains(l, secret) {
				t.Errorf("%s received the log message %q", p.label, l)
			}
		}
	}
}

// TestProgramRequestsAndLogsStayWithTheirPrincipal: while bob's
// passthrough call is in flight on a backend, alice's program asks that
// backend for sampling and elicitation with her secret, and has it log
// her secret: bob (in flight) and carol (idle) see none of it; alice's
// program gets a refusal (never bob's answer), and the log message is
// kept in the gateway's log. Alone on the backend, alice's program gets
// her own answers and her own log message.
func TestProgramRequestsAndLogsStayWithTheirPrincipal(t *testing.T) {
	h, ask, kept := attributionGateway(t, false)
	alice, bob, carol := h.join(t, "alice"), h.join(t, "bob"), h.join(t, "carol")
	const secret = "alice-secret-7f3a"

	held := make(chan string, 1)
	go func() {
		text, _ := askCall(t, bob.cs, "ask__hold", map[string]any{"who": "bob"})
		held <- text
	}()
	<-ask.arrived // bob's call is in flight on "ask"

	for _, code := range []string{
		`try { return await ask.sample({who: "` + secret + `"}) } catch (e) { return "refused: " + e.message }`,
		`try { return await ask.elicit({who: "` + secret + `"}) } catch (e) { return "refused: " + e.message }`,
	} {
		got := alice.chain(t, code)
		if !strings.Contains(got, "refused") || !strings.Contains(got, "cannot be attributed") || strings.Contains(got, "B-model") || strings.Contains(got, "bob") {
			t.Errorf("alice's program, with bob's call in flight, got %q, want a refusal", got)
		}
	}
	alice.chain(t, `return await ask.tell({who: "`+secret+`"})`)
	select {
	case data := <-kept:
		if !strings.Contains(data, secret) {
			t.Errorf("the gateway kept %q", data)
		}
	case data := <-bob.got:
		t.Errorf("bob received %q", data)
	case data := <-carol.got:
		t.Errorf("carol received %q", data)
	case <-time.After(eventWait):
		t.Error("the log message of alice's program was neither kept nor delivered")
	}
	close(ask.release)
	if text := <-held; text != "released bob" {
		t.Errorf("bob's call: %q", text)
	}

	// Alone on the backend: alice's own answers and log message.
	if got := alice.chain(t, `return await ask.sample({who: "x"})`); !strings.Contains(got, "alice-model: alice answers prompt from x") {
		t.Errorf("alice's program alone: %q", got)
	}
	alice.chain(t, `return await ask.tell({who: "alice alone"})`)
	if got := receive(t, alice.got, "alice: no log message"); got != "told alice alone" {
		t.Errorf("alice received %q", got)
	}
	if got := alice.asked(); len(got) != 1 || got[0] != "sampling: prompt from x" {
		t.Errorf("alice was asked %q", got)
	}
	noneSaw(t, secret, bob, carol)
	noneSaw(t, "alice alone", bob, carol)
}

// TestProgramSamplingOfServerEverythingStaysWithItsPrincipal: against the
// real server-everything, while bob's passthrough
// trigger-sampling-request waits for bob's answer, alice's program calls
// trigger_sampling_request with her secret and trigger_elicitation_request:
// neither reaches bob or carol, and alice's program gets a refusal, never
// bob's answer.
func TestProgramSamplingOfServerEverythingStaysWithItsPrincipal(t *testing.T) {
	h, _, _ := attributionGateway(t, true)
	alice, carol := h.join(t, "alice"), h.join(t, "carol")
	const secret = "alice-secret-9c1d"

	// bob's first sampling request holds his call in flight until released.
	inFlight, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	bob := h.joinWith(t, "bob", func(o *mcp.ClientOptions) {
		next := o.CreateMessageHandler
		o.CreateMessageHandler = func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			first := false
			once.Do(func() { first = true })
			if first {
				close(inFlight)
				<-release
				return &mcp.CreateMessageResult{Model: "bob-model", Role: "assistant", Content: &mcp.TextContent{Text: "bob held"}}, nil
			}
			return next(ctx, req)
		}
	})
	held := make(chan string, 1)
	go func() {
		text, _ := askCall(t, bob.cs, "everything__trigger-sampling-request", map[string]any{"prompt": "bob's own"})
		held <- text
	}()
	<-inFlight

	for _, code := range []string{
		`try { return await everything.trigger_sampling_request({prompt: "` + secret + `"}) } catch (e) { return "refused: " + e.message }`,
		`try { return await everything.trigger_elicitation_request({}) } catch (e) { return "refused: " + e.message }`,
	} {
		got := alice.chain(t, code)
		if !strings.Contains(got, "cannot be attributed") || strings.Contains(got, "bob") {
			t.Errorf("alice's program, with bob's call in flight, got %q, want a refusal", got)
		}
	}
	close(release)
	if text := <-held; !strings.Contains(text, "bob held") {
		t.Errorf("bob's call: %q", text)
	}
	noneSaw(t, secret, bob, carol)
	if got := alice.chain(t, `return await everything.trigger_sampling_request({prompt: "alone"})`); !strings.Contains(got, "alice answers") {
		t.Errorf("alice's program alone: %q", got)
	}
}

// TestCallerlessProgramNeverReachesAnotherPrincipal: a 2026-07-28 client
// has no session of its own, so its calls carry no backend.Caller: while
// bob's passthrough call is in flight, alice's (2026-07-28) program asking
// for sampling is refused, never routed to bob, the one Caller in flight.
func TestCallerlessProgramNeverReachesAnotherPrincipal(t *testing.T) {
	h, ask, _ := attributionGateway(t, false)
	bob := h.join(t, "bob")
	c := mcp.NewClient(&mcp.Implementation{Name: "alice"}, (&answering{label: "alice"}).options())
	alice, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: h.url,
		HTTPClient: &http.Client{Transport: bearer{principals["alice"].Token}}}, nil) // 2026-07-28
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { alice.Close() })
	const secret = "alice-secret-2026"

	held := make(chan string, 1)
	go func() {
		text, _ := askCall(t, bob.cs, "ask__hold", map[string]any{"who": "bob"})
		held <- text
	}()
	<-ask.arrived
	got, _ := askCall(t, alice, "call_tool_chain", map[string]any{
		"code": `try { return await ask.sample({who: "` + secret + `"}) } catch (e) { return "refused: " + e.message }`})
	if strings.Contains(got, "bob") {
		t.Errorf("alice's program got %q", got)
	}
	close(ask.release)
	<-held
	noneSaw(t, secret, bob)
}

// TestProgressTokensCannotBeGuessed: while alice's passthrough call with a
// progress token is in flight, bob's call makes the backend send progress
// under guessed gateway tokens: alice receives only her own call's
// progress.
func TestProgressTokensCannotBeGuessed(t *testing.T) {
	h, ask, _ := attributionGateway(t, false)
	progress := make(chan string, 128)
	alice := h.joinWith(t, "alice", func(o *mcp.ClientOptions) {
		o.ProgressNotificationHandler = func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			progress <- req.Params.Message
		}
	})
	bob := h.join(t, "bob")
	done := make(chan error, 1)
	go func() {
		_, err := alice.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask__hold",
			Arguments: map[string]any{"who": "alice"}, Meta: mcp.Meta{"progressToken": "alice-token"}})
		done <- err
	}()
	<-ask.arrived
	if text, isErr := askCall(t, bob.cs, "ask__guess", map[string]any{"who": "bob"}); isErr {
		t.Fatalf("guess: %s", text)
	}
	close(ask.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Her own progress comes last: whatever came before it is all she got.
	for msg := receive(t, progress, "alice: no progress"); msg != "released"; msg = receive(t, progress, "alice: no progress") {
		t.Errorf("alice received the progress %q", msg)
	}
}
