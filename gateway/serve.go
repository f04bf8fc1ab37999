package gateway

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves MCP over stdin/stdout until the client disconnects or
// ctx ends.
func (g *Gateway) ServeStdio(ctx context.Context) error {
	return g.server.Run(ctx, &mcp.StdioTransport{})
}

// ErrInsecureBind refuses a non-loopback HTTP address without a token.
var ErrInsecureBind = errors.New("refusing to serve HTTP on a non-loopback address without server.auth_token: set a token (env-expandable, e.g. auth_token: ${ISOGATE_TOKEN}) or bind 127.0.0.1")

// HTTPHandler returns the streamable HTTP handler: MCP at /mcp, guarded by
// the bearer token when one is configured.
func (g *Gateway) HTTPHandler() http.Handler {
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.server },
		&mcp.StreamableHTTPOptions{Logger: g.logger, PropagateRequestCancellation: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", requireToken(g.cfg.Server.AuthToken, mcpHandler))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	return mux
}

// requireToken checks "Authorization: Bearer <token>" when token is set.
func requireToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="isogate"`)
			http.Error(w, "missing or invalid bearer token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Listen checks addr against the token policy and opens the listener.
func (g *Gateway) Listen(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("server.http %q: %w", addr, err)
	}
	if !isLoopback(host) && g.cfg.Server.AuthToken == "" {
		return nil, ErrInsecureBind
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	return ln, nil
}

// ServeHTTP serves streamable HTTP on ln until ctx ends, then shuts down
// gracefully.
func (g *Gateway) ServeHTTP(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: g.HTTPHandler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
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
