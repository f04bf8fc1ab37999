package backend

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/testutil"
)

// inProcess returns a "custom" spec connected to server through in-memory
// transports; every (re)connection creates a new server session.
func inProcess(name string, server *mcp.Server) Spec { return InMemory(name, server) }

type abIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

func newCalcServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "calc", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "a+b"}, func(_ context.Context, _ *mcp.CallToolRequest, in abIn) (*mcp.CallToolResult, any, error) {
		return textResult(strconv.Itoa(in.A + in.B)), nil, nil
	})
	return s
}

func nextEvent(t *testing.T, ch <-chan []string) []string {
	t.Helper()
	select {
	case names := <-ch:
		return names
	case <-time.After(20 * time.Second):
		t.Fatal("timed out waiting for OnToolsChanged")
		return nil
	}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

func TestInProcessToolsCallAndListChanged(t *testing.T) {
	srv := newCalcServer()
	events := make(chan []string, 16)
	m := startManager(t, Options{
		Specs: []Spec{inProcess("calc", srv)},
		OnToolsChanged: func(backend string, tools []*mcp.Tool) {
			if backend == "calc" {
				events <- toolNames(tools)
			}
		},
	})
	waitHealthy(t, m)
	// Healthy implies that OnToolsChanged has already seen the live list.
	select {
	case got := <-events:
		if !slices.Equal(got, []string{"add"}) {
			t.Fatalf("OnToolsChanged after connect = %v, want [add]", got)
		}
	default:
		t.Fatal("OnToolsChanged had not run when WaitHealthy returned")
	}
	if got := toolNames(m.Tools()["calc"]); !slices.Equal(got, []string{"add"}) {
		t.Fatalf("Tools()[calc] = %v, want [add]", got)
	}

	ctx := context.Background()
	res, err := m.CallTool(ctx, "calc", "add", map[string]any{"a": 2, "b": 40})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, res); got != "42" {
		t.Fatalf("add(2, 40) = %q, want 42", got)
	}

	// The server adds a tool after the client connected: it sends
	// notifications/tools/list_changed, and the manager must refresh.
	mcp.AddTool(srv, &mcp.Tool{Name: "mul"}, func(_ context.Context, _ *mcp.CallToolRequest, in abIn) (*mcp.CallToolResult, any, error) {
		return textResult(strconv.Itoa(in.A * in.B)), nil, nil
	})
	if got := sorted(nextEvent(t, events)); !slices.Equal(got, []string{"add", "mul"}) {
		t.Fatalf("OnToolsChanged after list_changed = %v, want [add mul]", got)
	}
	if got := sorted(toolNames(m.Tools()["calc"])); !slices.Equal(got, []string{"add", "mul"}) {
		t.Fatalf("Tools()[calc] after list_changed = %v", got)
	}
	res, err = m.Call(ctx, "calc", &mcp.CallToolParams{Name: "mul", Arguments: map[string]any{"a": 6, "b": 7}})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, res); got != "42" {
		t.Fatalf("mul(6, 7) = %q, want 42", got)
	}

	// An unknown tool is an error response from the backend, not a
	// connection problem: the backend stays healthy.
	if _, err := m.CallTool(ctx, "calc", "nope", nil); err == nil {
		t.Fatal("calling an unknown tool succeeded")
	} else if errors.Is(err, ErrConnectionLost) || errors.Is(err, ErrUnavailable) {
		t.Fatalf("unknown tool error misclassified: %v", err)
	}

	st := statusOf(t, m, "calc")
	if st.State != StateHealthy || st.Transport != string(TransportCustom) || st.ToolCount != 2 || st.ToolsCached ||
		st.Calls != 3 || st.Errors != 1 || st.ConnectedAt.IsZero() || st.PID != 0 || st.Restarts != 0 {
		t.Fatalf("unexpected status %+v", st)
	}
}

func TestUnknownBackend(t *testing.T) {
	m := startManager(t, Options{Specs: []Spec{inProcess("calc", newCalcServer())}})
	_, err := m.CallTool(context.Background(), "nope", "add", nil)
	var ue *UnknownBackendError
	if !errors.Is(err, ErrUnknownBackend) || !errors.As(err, &ue) || ue.Backend != "nope" {
		t.Fatalf("err = %v, want UnknownBackendError for nope", err)
	}
	if err.Error() != `unknown backend "nope"` {
		t.Fatalf("message = %q", err.Error())
	}
}

// blockingServer has a tool "block" that waits until its context is
// cancelled and reports that cancellation on cancelled.
func blockingServer() (srv *mcp.Server, started, cancelled chan struct{}) {
	srv = mcp.NewServer(&mcp.Implementation{Name: "blocker", Version: "1"}, nil)
	started, cancelled = make(chan struct{}), make(chan struct{})
	mcp.AddTool(srv, &mcp.Tool{Name: "block"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return nil, nil, ctx.Err()
	})
	return srv, started, cancelled
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func TestCallerCancellationCancelsBackendCall(t *testing.T) {
	srv, started, cancelled := blockingServer()
	m := startManager(t, Options{Specs: []Spec{inProcess("b", srv)}})
	waitHealthy(t, m)

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := m.CallTool(ctx, "b", "block", nil)
		errc <- err
	}()
	waitClosed(t, started, "the tool to start")
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	// The SDK sent notifications/cancelled: the server-side handler's
	// context was cancelled.
	waitClosed(t, cancelled, "the backend handler to be cancelled")
	if st := statusOf(t, m, "b"); st.State != StateHealthy {
		t.Fatalf("backend not healthy after a cancelled call: %+v", st)
	}
}

func TestPerCallTimeout(t *testing.T) {
	srv, started, cancelled := blockingServer()
	spec := inProcess("slow", srv)
	spec.Timeout = 200 * time.Millisecond
	m := startManager(t, Options{Specs: []Spec{spec}})
	waitHealthy(t, m)

	_, err := m.CallTool(context.Background(), "slow", "block", nil)
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrTimeout and context.DeadlineExceeded", err)
	}
	if !strings.Contains(err.Error(), `backend "slow": tool "block"`) {
		t.Fatalf("timeout error lacks context: %v", err)
	}
	waitClosed(t, started, "the tool to start")
	waitClosed(t, cancelled, "the backend handler to be cancelled")
	// The slot is held until the SDK call returns, a moment after the
	// handler saw the cancellation.
	testutil.Eventually(t, 20*time.Second, func() bool {
		st := statusOf(t, m, "slow")
		return st.Errors == 1 && st.InFlight == 0
	}, "one error and no call in flight after the timeout")
}

func TestConcurrencyLimit(t *testing.T) {
	const limit, calls = 3, 10
	var cur, peak atomic.Int32
	release := make(chan struct{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "conc", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		n := cur.Add(1)
		defer cur.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return textResult("done"), nil, nil
	})
	spec := inProcess("conc", srv)
	spec.MaxConcurrentCalls = limit
	m := startManager(t, Options{Specs: []Spec{spec}})
	waitHealthy(t, m)

	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for range calls {
		wg.Go(func() {
			_, err := m.CallTool(context.Background(), "conc", "slow", nil)
			errs <- err
		})
	}
	// Every call is accounted for: limit of them inside the tool, the rest
	// queued for a slot. Without the limit this state is never reached.
	testutil.Eventually(t, 20*time.Second, func() bool {
		st := statusOf(t, m, "conc")
		return cur.Load() == limit && st.InFlight == limit && st.Queued == calls-limit
	}, "limit calls running and the rest queued")
	if p := peak.Load(); p != limit {
		t.Fatalf("peak concurrency = %d, want %d", p, limit)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if p := peak.Load(); p != limit {
		t.Fatalf("peak concurrency = %d, want %d", p, limit)
	}
	if st := statusOf(t, m, "conc"); st.Calls != calls || st.InFlight != 0 || st.Queued != 0 {
		t.Fatalf("status after calls: %+v", st)
	}
}

func TestCacheServesToolsWhileStarting(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()

	// A first manager learns the tools and writes the cache.
	srvA := mcp.NewServer(&mcp.Implementation{Name: "a", Version: "1"}, nil)
	for _, name := range []string{"alpha", "beta"} {
		mcp.AddTool(srvA, &mcp.Tool{Name: name}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return textResult("from A"), nil, nil
		})
	}
	ghost := mcp.NewServer(&mcp.Implementation{Name: "ghost", Version: "1"}, nil)
	mcp.AddTool(ghost, &mcp.Tool{Name: "boo"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return textResult("boo"), nil, nil
	})
	mA := NewManager(Options{CacheDir: dir, Logger: testLogger(t), Specs: []Spec{inProcess("cached", srvA), inProcess("ghost", ghost)}})
	if err := mA.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitHealthy(t, mA)
	if err := mA.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, CacheSubdir, "*.json")); len(files) != 2 {
		t.Fatalf("cache after first manager: files %v, want one per backend", files)
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, CacheSubdir, "*tmp*")); len(tmp) != 0 {
		t.Fatalf("temporary files left behind: %v", tmp)
	}

	// A second manager, whose backend cannot connect yet, answers from the
	// cache; "ghost" is no longer configured and must be ignored.
	srvB := mcp.NewServer(&mcp.Implementation{Name: "b", Version: "1"}, nil)
	for _, name := range []string{"alpha", "beta", "gamma"} {
		mcp.AddTool(srvB, &mcp.Tool{Name: name}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return textResult("from B"), nil, nil
		})
	}
	release := make(chan struct{})
	spec := inProcess("cached", srvB)
	dial := spec.Dial
	spec.Dial = func(ctx context.Context) (mcp.Transport, error) {
		select {
		case <-release:
			return dial(ctx)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	events := make(chan []string, 16)
	mB := NewManager(Options{
		CacheDir: dir, Logger: testLogger(t), StartWait: 50 * time.Millisecond, Specs: []Spec{spec},
		OnToolsChanged: func(backend string, tools []*mcp.Tool) { events <- toolNames(tools) },
	})
	t.Cleanup(func() { _ = mB.Close(ctx) })

	tools := mB.Tools()
	if _, ok := tools["ghost"]; ok || len(tools) != 1 {
		t.Fatalf("Tools() = %v, want only the configured backend", tools)
	}
	if got := sorted(toolNames(tools["cached"])); !slices.Equal(got, []string{"alpha", "beta"}) {
		t.Fatalf("cached tools before Start = %v, want [alpha beta]", got)
	}
	if err := mB.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if got := sorted(nextEvent(t, events)); !slices.Equal(got, []string{"alpha", "beta"}) {
		t.Fatalf("OnToolsChanged for the cache = %v", got)
	}
	if st := statusOf(t, mB, "cached"); st.State != StateStarting || !st.ToolsCached || st.ToolCount != 2 {
		t.Fatalf("status while starting: %+v", st)
	}

	_, err := mB.CallTool(ctx, "cached", "alpha", nil)
	var se *StartingError
	if !errors.Is(err, ErrStarting) || !errors.As(err, &se) || se.Backend != "cached" {
		t.Fatalf("call while starting: err = %v, want StartingError", err)
	}
	if want := `backend "cached" is still starting`; err.Error() != want {
		t.Fatalf("message = %q, want %q", err.Error(), want)
	}

	// Once the backend connects, the live list replaces the cached one.
	close(release)
	waitHealthy(t, mB)
	if got := sorted(nextEvent(t, events)); !slices.Equal(got, []string{"alpha", "beta", "gamma"}) {
		t.Fatalf("OnToolsChanged after connect = %v", got)
	}
	if st := statusOf(t, mB, "cached"); st.ToolsCached || st.ToolCount != 3 {
		t.Fatalf("status after connect: %+v", st)
	}
	res, err := mB.CallTool(ctx, "cached", "alpha", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, res); got != "from B" {
		t.Fatalf("alpha = %q", got)
	}
	e, err := loadCacheEntry(dir, fingerprint(&spec))
	if err != nil || e == nil || len(e.Tools) != 3 {
		t.Fatalf("cache after second manager: %+v, err %v", e, err)
	}
}

func TestCacheIgnoredWhenSpecChanges(t *testing.T) {
	dir := t.TempDir()
	old := helperSpec(t, "x", nil)
	if err := writeCacheEntry(dir, fingerprint(&old), &cacheEntry{Tools: []*mcp.Tool{{Name: "t"}}}); err != nil {
		t.Fatal(err)
	}
	same := NewManager(Options{CacheDir: dir, Logger: testLogger(t), Specs: []Spec{old}})
	if n := len(same.Tools()["x"]); n != 1 {
		t.Fatalf("same spec: %d cached tools, want 1", n)
	}
	// Another name for the same server (another configuration file) finds
	// the entry; any change to what runs does not.
	renamed := old
	renamed.Name = "y"
	if n := len(NewManager(Options{CacheDir: dir, Logger: testLogger(t), Specs: []Spec{renamed}}).Tools()["y"]); n != 1 {
		t.Fatalf("renamed backend: %d cached tools, want 1", n)
	}
	for what, change := range map[string]func(*Spec){
		"args":        func(s *Spec) { s.Args = []string{"--other"} },
		"env":         func(s *Spec) { s.Env = map[string]string{helperEnv: "serve", "TOOLSET": "all"} },
		"inherit_env": func(s *Spec) { s.InheritEnv = true },
		"cwd":         func(s *Spec) { s.Cwd = "/" },
	} {
		changed := old
		change(&changed)
		other := NewManager(Options{CacheDir: dir, Logger: testLogger(t), Specs: []Spec{changed}})
		if tools, ok := other.Tools()["x"]; ok {
			t.Fatalf("changed %s: cached tools %v were used", what, toolNames(tools))
		}
	}
}

func TestRestartBudgetAndManualRestart(t *testing.T) {
	var dials atomic.Int32
	var up atomic.Bool
	spec := inProcess("flaky", newCalcServer())
	dial := spec.Dial
	spec.Dial = func(ctx context.Context) (mcp.Transport, error) {
		dials.Add(1)
		if !up.Load() {
			return nil, errors.New("connection refused (test)")
		}
		return dial(ctx)
	}
	m := startManager(t, Options{
		Specs:              []Spec{spec},
		RestartBudget:      2,
		RestartWindow:      time.Hour,
		RestartBackoffBase: time.Millisecond,
		RestartBackoffMax:  2 * time.Millisecond,
		StartWait:          time.Minute,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.WaitHealthy(ctx); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("WaitHealthy = %v, want ErrUnavailable", err)
	}
	st := statusOf(t, m, "flaky")
	if st.State != StateUnhealthy || st.Restarts != 2 || dials.Load() != 3 ||
		!strings.Contains(st.LastError, "restart budget exhausted") || !strings.Contains(st.LastError, "connection refused (test)") {
		t.Fatalf("status after exhausting the budget: %+v (dials %d)", st, dials.Load())
	}
	// A call fails without waiting out StartWait (a minute; ctx would
	// expire first), whether or not it made an on-demand attempt.
	_, err := m.CallTool(ctx, "flaky", "add", nil)
	var ue *UnavailableError
	if !errors.Is(err, ErrUnavailable) || !errors.As(err, &ue) || !strings.Contains(err.Error(), "restart budget exhausted") {
		t.Fatalf("call to exhausted backend: %v", err)
	}
	restarts := statusOf(t, m, "flaky").Restarts

	up.Store(true)
	if err := m.Restart("flaky"); err != nil {
		t.Fatal(err)
	}
	waitHealthy(t, m)
	if _, err := m.CallTool(ctx, "flaky", "add", map[string]any{"a": 1, "b": 1}); err != nil {
		t.Fatal(err)
	}
	if st := statusOf(t, m, "flaky"); st.Restarts != restarts+1 || st.LastError != "" {
		t.Fatalf("status after manual restart: %+v", st)
	}
}

// faultyConn wraps the client side of an in-memory connection and can
// simulate failures.
type faultyConn struct {
	mcp.Connection
	blackhole  atomic.Bool // drop outgoing messages: the backend stops answering
	failWrites atomic.Bool // fail writes like a pipe to a dead process
}

func (c *faultyConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if c.failWrites.Load() {
		return &os.PathError{Op: "write", Path: "|1", Err: syscall.EPIPE}
	}
	if c.blackhole.Load() {
		return nil
	}
	return c.Connection.Write(ctx, msg)
}

type faultyTransport struct {
	inner  mcp.Transport
	onConn func(*faultyConn)
}

func (t faultyTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	fc := &faultyConn{Connection: c}
	t.onConn(fc)
	return fc, nil
}

// faultySpec is inProcess with every client connection wrapped in a
// faultyConn. gate, if non-nil, is consulted before every reconnection.
func faultySpec(name string, srv *mcp.Server, gate func(ctx context.Context) error) (Spec, func(i int) *faultyConn) {
	var mu sync.Mutex
	var conns []*faultyConn
	spec := inProcess(name, srv)
	dial := spec.Dial
	spec.Dial = func(ctx context.Context) (mcp.Transport, error) {
		mu.Lock()
		n := len(conns)
		mu.Unlock()
		if n > 0 && gate != nil {
			if err := gate(ctx); err != nil {
				return nil, err
			}
		}
		tr, err := dial(ctx)
		if err != nil {
			return nil, err
		}
		return faultyTransport{tr, func(c *faultyConn) {
			mu.Lock()
			defer mu.Unlock()
			conns = append(conns, c)
		}}, nil
	}
	return spec, func(i int) *faultyConn {
		mu.Lock()
		defer mu.Unlock()
		return conns[i]
	}
}

func TestFailedHealthCheckReconnects(t *testing.T) {
	// The reconnection, which comes after the failed ping marked the
	// backend unhealthy, is announced and then held until the test has
	// seen the unhealthy state.
	reconnecting, proceed := make(chan struct{}), make(chan struct{})
	var once sync.Once
	spec, conn := faultySpec("hc", newCalcServer(), func(ctx context.Context) error {
		once.Do(func() { close(reconnecting) })
		select {
		case <-proceed:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	m := startManager(t, Options{
		Specs:              []Spec{spec},
		HealthInterval:     100 * time.Millisecond,
		HealthTimeout:      100 * time.Millisecond,
		RestartBackoffBase: time.Millisecond,
	})
	waitHealthy(t, m)
	conn(0).blackhole.Store(true)

	waitClosed(t, reconnecting, "the reconnection after the failed ping")
	if st := statusOf(t, m, "hc"); st.State != StateUnhealthy || !strings.Contains(st.LastError, "health check failed") {
		t.Fatalf("status before the reconnection: %+v", st)
	}
	close(proceed)
	waitHealthy(t, m)
	res, err := m.CallTool(context.Background(), "hc", "add", map[string]any{"a": 1, "b": 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, res); got != "3" {
		t.Fatalf("add = %q", got)
	}
	if st := statusOf(t, m, "hc"); st.Restarts != 1 {
		t.Fatalf("restarts = %d, want 1", st.Restarts)
	}
}

// countingServer has a tool "count" that counts its invocations and, if
// block is set, waits for its context to end after signalling started.
func countingServer(block bool) (srv *mcp.Server, calls *atomic.Int32, started chan struct{}) {
	srv = mcp.NewServer(&mcp.Implementation{Name: "counter", Version: "1"}, nil)
	calls, started = new(atomic.Int32), make(chan struct{}, 16)
	mcp.AddTool(srv, &mcp.Tool{Name: "count"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		n := calls.Add(1)
		started <- struct{}{}
		if block {
			<-ctx.Done()
			return nil, nil, ctx.Err()
		}
		return textResult(strconv.Itoa(int(n))), nil, nil
	})
	return srv, calls, started
}

func TestCallRetriedWhenConnectionDeadBeforeSend(t *testing.T) {
	srv, calls, _ := countingServer(false)
	spec, conn := faultySpec("r", srv, nil)
	m := startManager(t, Options{Specs: []Spec{spec}, RestartBackoffBase: time.Millisecond})
	waitHealthy(t, m)

	// Writes now fail as they do on the pipe of a crashed child: the request
	// cannot have been delivered, so the call moves to the next connection.
	conn(0).failWrites.Store(true)
	res, err := m.CallTool(context.Background(), "r", "count", nil)
	if err != nil {
		t.Fatalf("call on a dead connection was not retried: %v", err)
	}
	if got := resultText(t, res); got != "1" || calls.Load() != 1 {
		t.Fatalf("tool ran %d times (result %q), want once", calls.Load(), got)
	}
	if st := statusOf(t, m, "r"); st.Restarts != 1 || st.Errors != 0 {
		t.Fatalf("status: %+v", st)
	}
}

func TestCallNotRetriedWhenConnectionLostInFlight(t *testing.T) {
	srv, calls, started := countingServer(true)
	spec, conn := faultySpec("r", srv, nil)
	m := startManager(t, Options{Specs: []Spec{spec}, RestartBackoffBase: time.Millisecond})
	waitHealthy(t, m)

	errc := make(chan error, 1)
	go func() {
		_, err := m.CallTool(context.Background(), "r", "count", nil)
		errc <- err
	}()
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		t.Fatal("tool did not start")
	}
	// The connection breaks after the request was delivered: the tool may
	// have had effects, so the call must fail instead of running again.
	_ = conn(0).Connection.Close()
	var err error
	select {
	case err = <-errc:
	case <-time.After(20 * time.Second):
		t.Fatal("call did not return after the connection broke")
	}
	if !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("err = %v, want ErrConnectionLost", err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("tool ran %d times, want 1", n)
	}
	waitHealthy(t, m) // and the backend reconnects
}

func TestHTTPTransportsSendHeaders(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in in) (*mcp.CallToolResult, any, error) {
		return textResult(in.Text), nil, nil
	})
	requireToken := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Test-Token") != "secret" {
				http.Error(w, "missing token", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	getServer := func(*http.Request) *mcp.Server { return srv }
	streamable := httptest.NewServer(requireToken(mcp.NewStreamableHTTPHandler(getServer, nil)))
	t.Cleanup(streamable.Close)
	sse := httptest.NewServer(requireToken(mcp.NewSSEHandler(getServer, nil)))
	t.Cleanup(sse.Close)

	headers := map[string]string{"X-Test-Token": "secret"}
	m := startManager(t, Options{
		Specs: []Spec{
			{Backend: config.Backend{Name: "http", Transport: config.TransportStreamableHTTP, URL: streamable.URL, Headers: headers}},
			{Backend: config.Backend{Name: "sse", Transport: config.TransportSSE, URL: sse.URL, Headers: headers}},
			{Backend: config.Backend{Name: "noauth", Transport: config.TransportStreamableHTTP, URL: streamable.URL}},
		},
		RestartBudget:      1,
		RestartBackoffBase: time.Millisecond,
	})
	waitHealthy(t, m, "http", "sse")
	for _, name := range []string{"http", "sse"} {
		res, err := m.CallTool(context.Background(), name, "echo", map[string]any{"text": "hi " + name})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := resultText(t, res); got != "hi "+name {
			t.Fatalf("%s: echo = %q", name, got)
		}
	}
	// Without the header the server refuses the connection.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.WaitHealthy(ctx, "noauth"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("noauth: WaitHealthy = %v, want ErrUnavailable", err)
	}
}

func TestInvalidSpecs(t *testing.T) {
	m := startManager(t, Options{Specs: []Spec{
		{Backend: config.Backend{Name: "nocmd", Transport: config.TransportStdio}},
		{Backend: config.Backend{Name: "badurl", Transport: config.TransportSSE, URL: "ftp://x"}},
		{Backend: config.Backend{Name: "weird", Transport: "carrier-pigeon"}},
		{Backend: config.Backend{Name: "ok", Transport: TransportCustom}, Dial: inProcess("ok", newCalcServer()).Dial},
		{Backend: config.Backend{Name: "ok", Transport: config.TransportStdio, Command: "duplicate-is-ignored"}},
	}})
	waitHealthy(t, m, "ok")
	if got := m.Backends(); !slices.Equal(got, []string{"badurl", "nocmd", "ok", "weird"}) {
		t.Fatalf("Backends() = %v", got)
	}
	for _, st := range m.Status() {
		if st.Name == "ok" {
			if st.Transport != string(TransportCustom) {
				t.Fatalf("duplicate replaced the first spec: %+v", st)
			}
			continue
		}
		if st.State != StateUnhealthy || !strings.HasPrefix(st.LastError, "invalid configuration: ") {
			t.Fatalf("invalid backend status: %+v", st)
		}
		// Spec.Validate holds configured transports to config's rules.
		want := map[string]string{
			"nocmd":  "backends.nocmd: stdio transport needs command",
			"badurl": `backends.badurl.url: expected an http or https URL such as "https://example.com/mcp", got "ftp://x"`,
			"weird":  `backends.weird.transport: must be one of stdio, streamable-http, sse (got "carrier-pigeon")`,
		}[st.Name]
		if !strings.Contains(st.LastError, want) {
			t.Errorf("%s: last error %q, want it to contain %q", st.Name, st.LastError, want)
		}
		if _, err := m.CallTool(context.Background(), st.Name, "x", nil); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("call to invalid backend %s: %v", st.Name, err)
		}
	}
}

func TestCloseStopsEverything(t *testing.T) {
	m := startManager(t, Options{Specs: []Spec{inProcess("calc", newCalcServer())}})
	waitHealthy(t, m)
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := statusOf(t, m, "calc"); st.State != StateStopped {
		t.Fatalf("state after Close = %s", st.State)
	}
	if _, err := m.CallTool(context.Background(), "calc", "add", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after Close: %v", err)
	}
	if err := m.Start(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Start after Close: %v", err)
	}
}

func TestRingBufferKeepsLastLines(t *testing.T) {
	r := newRingBuffer(100)
	if got := r.snapshot(); len(got) != 0 {
		t.Fatalf("empty snapshot = %v", got)
	}
	w := &lineWriter{ring: r, log: testLogger(t)}
	for i := 1; i <= 150; i++ {
		// Split writes across line boundaries on purpose.
		s := "line-" + strconv.Itoa(i) + "\r\n"
		_, _ = w.Write([]byte(s[:3]))
		_, _ = w.Write([]byte(s[3:]))
	}
	_, _ = w.Write([]byte("partial"))
	got := r.snapshot()
	if len(got) != 100 || got[0] != "line-51" || got[99] != "line-150" {
		t.Fatalf("snapshot: len %d, first %q, last %q", len(got), got[0], got[len(got)-1])
	}
	w.flush()
	if got := r.snapshot(); len(got) != 100 || got[0] != "line-52" || got[99] != "partial" || r.last() != "partial" {
		t.Fatalf("after flush: first %q, last %q", got[0], got[len(got)-1])
	}
}

func TestStateString(t *testing.T) {
	for s, want := range map[State]string{StateStarting: "starting", StateHealthy: "healthy", StateUnhealthy: "unhealthy", StateStopped: "stopped"} {
		if s.String() != want {
			t.Errorf("%d.String() = %q, want %q", int(s), s.String(), want)
		}
	}
}

func TestStatusJSON(t *testing.T) {
	b, err := json.Marshal(Status{Name: "x", State: StateHealthy})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"state":"healthy"`) || strings.Contains(string(b), "connected_at") {
		t.Fatalf("Status JSON = %s", b)
	}
}

func TestBackendEnv(t *testing.T) {
	environ := []string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "GITHUB_TOKEN=secret", "ISOGATE_SERVER__AUTH_TOKEN=tok", "B=2"}
	extra := map[string]string{"B": "3", "C": "4", "ISOGATE_X": "explicit"}
	if env := backendEnv(environ, false, extra); !slices.Equal(env, []string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "B=3", "C=4", "ISOGATE_X=explicit"}) {
		t.Fatalf("minimal env = %v", env)
	}
	if env := backendEnv(environ, true, extra); !slices.Equal(env,
		[]string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "GITHUB_TOKEN=secret", "B=2", "B=3", "C=4", "ISOGATE_X=explicit"}) {
		t.Fatalf("inherited env = %v", env)
	}
}

func TestProgressTokenPassThrough(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "prog", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "work"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		token := req.Params.GetProgressToken()
		if token == nil {
			return nil, nil, errors.New("no progress token")
		}
		err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: 1, Total: 1, Message: "done"})
		return textResult("ok"), nil, err
	})
	progress := make(chan *mcp.ProgressNotificationParams, 1)
	m := startManager(t, Options{
		Specs: []Spec{inProcess("p", srv)},
		OnProgress: func(backend string, p *mcp.ProgressNotificationParams) {
			if backend == "p" {
				progress <- p
			}
		},
	})
	waitHealthy(t, m)
	params := &mcp.CallToolParams{Name: "work", Meta: mcp.Meta{"progressToken": "tok-1"}}
	if _, err := m.Call(context.Background(), "p", params); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-progress:
		if p.ProgressToken != "tok-1" || p.Message != "done" {
			t.Fatalf("progress = %+v", p)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no progress notification")
	}
	if len(params.Meta) != 1 || params.Arguments != nil {
		t.Fatalf("Call modified its params: %+v", params)
	}
}
