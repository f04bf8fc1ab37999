package surface

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestHostRules decides the Host guard's cases the real-HTTP tests
// (gateway, TestEveryRouteRefusesAForeignHost) cannot reach from a
// loopback-only test machine: requests arriving at a non-loopback
// address, with and without authentication, with and without
// server.allowed_hosts, and a handler served without a local address.
func TestHostRules(t *testing.T) {
	lo := &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 8787}
	wild := &net.TCPAddr{IP: net.ParseIP("10.0.0.5"), Port: 8787}
	v6 := &net.TCPAddr{IP: net.ParseIP("fd00::5"), Port: 8787}
	for _, tt := range []struct {
		local   net.Addr
		auth    bool
		allowed []string
		host    string
		want    bool
	}{
		{lo, false, nil, "localhost:8787", true},
		{lo, false, nil, "127.0.0.1:8787", true},
		{lo, false, nil, "127.0.0.2", true},
		{lo, false, nil, "[::1]:8787", true},
		{lo, false, nil, "[::1]", true},
		{lo, false, nil, "evil.example:8787", false},
		{lo, false, nil, "", false},
		{lo, true, nil, "evil.example:8787", false}, // authentication does not open a loopback listener to names
		{lo, false, []string{"mcp.example.com"}, "mcp.example.com:443", true},
		{lo, false, []string{"mcp.example.com"}, "MCP.Example.com", true},
		{lo, false, []string{"mcp.example.com:8443"}, "mcp.example.com:443", false},
		{lo, false, []string{"mcp.example.com:8443"}, "mcp.example.com:8443", true},
		{wild, false, nil, "10.0.0.5:8787", true}, // the address itself
		{wild, false, nil, "10.0.0.5", true},
		{wild, false, nil, "10.0.0.6:8787", false},
		{wild, false, nil, "isogate:8787", false}, // no authentication: no names
		{wild, true, nil, "isogate:8787", true},   // a token gateway reached by any name, as before
		{wild, true, []string{"mcp.example.com"}, "isogate:8787", false},
		{wild, true, []string{"mcp.example.com"}, "mcp.example.com", true},
		{wild, true, []string{"mcp.example.com"}, "localhost:8787", true},
		{v6, false, nil, "[fd00::5]:8787", true},
		{v6, false, nil, "[fd00::5]", true},
		{nil, true, nil, "evil.example", false}, // no local address: loopback names and the list only
		{nil, true, nil, "localhost", true},
	} {
		h := checkHost(tt.allowed, func() bool { return tt.auth }, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		r := httptest.NewRequest(http.MethodGet, "/healthz", nil)
		r.Host = tt.host
		if tt.local != nil {
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, tt.local))
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if got := w.Code != http.StatusForbidden; got != tt.want {
			t.Errorf("local %v, auth %v, allowed %v, Host %q: passed %v, want %v (%d %q)", tt.local, tt.auth, tt.allowed, tt.host, got, tt.want, w.Code, w.Body)
		}
	}
}
