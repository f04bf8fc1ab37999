package surface

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/resume"
)

// HTTP server timeouts. There is no write timeout: a response streams for
// as long as the run behind it (bounded by sandbox.timeout) or, for a
// session's GET stream, for as long as the session lives.
const (
	// readHeaderTimeout bounds reading a request's headers.
	readHeaderTimeout = 10 * time.Second
	// readBodyTimeout bounds reading a request's body, once authenticated.
	readBodyTimeout = 30 * time.Second
	// idleTimeout closes keep-alive connections with no request.
	idleTimeout = 2 * time.Minute
)

// ServeStdio serves MCP over stdin/stdout until the client disconnects or
// ctx ends. When ctx ends the requests in flight are cancelled at once
// (their runs end, busy or waiting on a backend), so that closing the
// session does not wait for them.
func (sf *Surface) ServeStdio(ctx context.Context) error {
	return sf.ServeTransport(ctx, stdioTransport(sf.logger))
}

// ServeTransport serves one client connection made over t as stdio's is
// served (the task boundary, coded errors, the process's owner): how a
// benchmark reaches the whole served path without the process's stdin.
func (sf *Surface) ServeTransport(ctx context.Context, t mcp.Transport) error {
	defer context.AfterFunc(ctx, sf.inflight.cancelAll)()
	return sf.server.Run(ctx, codedTransport{sf.tasks.Transport(t, sf.processOwner)})
}

// ErrInsecureBind refuses a non-loopback HTTP address without a token.
var ErrInsecureBind = errors.New("refusing to serve HTTP on a non-loopback address without server.auth_token: " +
	"set a token in the file (env-expandable, e.g. auth_token: ${ISOGATE_TOKEN}) or in the environment variable ISOGATE_SERVER__AUTH_TOKEN, " +
	"or bind 127.0.0.1")

// HTTPHandler returns the streamable HTTP handler: MCP at /mcp, guarded by
// the bearer token (before the body is read), plus /healthz, /readyz,
// /metrics, the console and the OAuth metadata (Routes). Every route, and
// every path no route serves, is behind the Host and Origin guards
// (guardHTTP), which answer before any handler.
func (sf *Surface) HTTPHandler() http.Handler { return sf.guardHTTP(muxOf(sf.routes())) }

// Routes lists the patterns HTTPHandler serves, in the order they are
// registered. Each is behind the Host and Origin guards: the tests walk
// this list, so a route added here is checked for them.
func (sf *Surface) Routes() []string { return patternsOf(sf.routes()) }

// MetricsRoutes lists the patterns ServeMetrics serves, each behind the
// same guards as HTTPHandler's.
func (sf *Surface) MetricsRoutes() []string { return patternsOf(sf.metricsRoutes()) }

// httpRoute is one pattern an HTTP listener serves and its handler.
type httpRoute struct {
	pattern string
	handler http.Handler
}

// routes are HTTPHandler's routes. The go-sdk's own DNS rebinding check
// is off (DisableLocalhostProtection): guardHTTP applies the same rule,
// and server.allowed_hosts, to every route, /mcp included, and the task
// boundary (tasks.Tasks.HTTP) answers some /mcp requests before the go-sdk sees
// them.
func (sf *Surface) routes() []httpRoute {
	hopts := &mcp.StreamableHTTPOptions{Logger: sf.logger, PropagateRequestCancellation: true,
		SessionTimeout: sf.opts.SessionIdleTimeout, Stateless: sf.opts.Stateless, MaxRequestBodyBytes: maxBodyBytes,
		DisableLocalhostProtection: true}
	if !sf.opts.Stateless {
		hopts.EventStore = resume.NewStore() // resumable streams (internal/resume)
	}
	var h http.Handler = resume.RetryFirst(mcp.NewStreamableHTTPHandler(sf.serverForRequest, hopts))
	h = sf.tasks.HTTP(h)
	h = sf.sessionGuard(h)
	h = sf.requests.link(h)
	h = readBody(readBodyTimeout, h)
	h = sf.requireAuth(h)
	rs := []httpRoute{{"/mcp", h}}
	rs = append(rs, sf.protectedResource()...)
	rs = append(rs, sf.metricsRoutes()...)
	if sf.opts.Console != nil {
		rs = append(rs, httpRoute{"/console", sf.opts.Console}, httpRoute{"/console/", sf.opts.Console})
	}
	return rs
}

// metricsRoutes are /healthz, /readyz and /metrics: on the HTTP listener
// and on server.metrics_addr.
func (sf *Surface) metricsRoutes() []httpRoute {
	return []httpRoute{
		{"/healthz", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })},
		{"/readyz", http.HandlerFunc(sf.readyz)},
		{"/metrics", sf.metricsHandler()},
	}
}

// muxOf serves rs.
func muxOf(rs []httpRoute) *http.ServeMux {
	mux := http.NewServeMux()
	for _, r := range rs {
		mux.Handle(r.pattern, r.handler)
	}
	return mux
}

func patternsOf(rs []httpRoute) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.pattern
	}
	return out
}

// metricsHandler serves /metrics, behind the token with
// server.metrics_auth.
func (sf *Surface) metricsHandler() http.Handler {
	if !sf.opts.MetricsAuth {
		return sf.metrics.Handler()
	}
	return sf.requireAuth(sf.metrics.Handler())
}

// tokenPresented reports whether r carries a valid bearer token (or no
// authentication is configured), and the principal of that token (nil
// without authentication).
func (sf *Surface) tokenPresented(r *http.Request) (*authn.Principal, bool) {
	verify := sf.verifier()
	if verify == nil {
		return nil, true
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil, false
	}
	info, err := verify(r.Context(), strings.TrimSpace(token), r)
	if err != nil {
		return nil, false
	}
	return authn.FromTokenInfo(info), true
}

// serverForRequest picks the server for an HTTP client: server.expose, or
// the one its URL asks for with ?expose=meta|passthrough|both (nil, a 400,
// for another value).
func (sf *Surface) serverForRequest(r *http.Request) *mcp.Server {
	if e := r.URL.Query().Get("expose"); e != "" {
		return sf.ServerFor(config.Expose(e))
	}
	return sf.server
}

// Listen checks addr against the token policy and opens the listener.
func (sf *Surface) Listen(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("server.http %q: %w", addr, err)
	}
	if !isLoopback(host) && !sf.authEnabled() {
		return nil, ErrInsecureBind
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	return ln, nil
}

// ServeHTTP serves streamable HTTP on ln until ctx ends, then shuts down:
// requests in flight (and the runs behind them) are cancelled at once and
// given up to server.shutdown_grace to answer before their connections are
// closed.
func (sf *Surface) ServeHTTP(ctx context.Context, ln net.Listener) error {
	go sf.tasks.SweepLapsed(ctx) // tasks of replicas that died (leases.go)
	return serveUntil(ctx, ln, newHTTPServer(sf.HTTPHandler()), sf.opts.ShutdownGrace)
}

// ServeMetrics serves /metrics (and /healthz, /readyz) on ln until ctx
// ends: server.metrics_addr, for stdio mode or a separate scrape port.
func (sf *Surface) ServeMetrics(ctx context.Context, ln net.Listener) error {
	return serveUntil(ctx, ln, newHTTPServer(sf.guardHTTP(muxOf(sf.metricsRoutes()))), sf.opts.ShutdownGrace)
}

// newHTTPServer applies the server timeouts to h.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout, IdleTimeout: idleTimeout}
}

// serveUntil serves srv on ln until ctx ends, then shuts it down: the
// contexts of requests in flight are cancelled at once, and after grace
// the connections still open are closed.
func serveUntil(ctx context.Context, ln net.Listener, srv *http.Server, grace time.Duration) error {
	base, cancelRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRequests()
	srv.BaseContext = func(net.Listener) context.Context { return base }
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		cancelRequests()
		if grace <= 0 {
			grace = config.DefaultShutdownGrace
		}
		shutdown, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		if err := srv.Shutdown(shutdown); err != nil {
			_ = srv.Close()
		}
		return nil
	}
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
