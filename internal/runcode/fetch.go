package runcode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/isogate/isogate/config"
)

// MaxFetchBytes caps the body of a response read by api.fetch.
const MaxFetchBytes = 1 << 20

const maxRedirects = 5

// FetchAPI returns api.fetch for cfg. It only reaches hosts on
// cfg.AllowHosts ("host", "host:port", "*.domain", IP literals; a pattern
// without a port allows any port), re-checks every redirect, and, unless
// cfg.AllowPrivate, refuses to connect to private, loopback, link-local and
// other non-public addresses. The address check runs on the resolved IP
// when dialing, so a host name that resolves (or re-resolves) to such an
// address is refused too. Proxies from the environment are not used.
func FetchAPI(cfg config.FetchConfig) (API, error) {
	f, err := newFetcher(cfg)
	if err != nil {
		return API{}, err
	}
	return API{
		Name:      "fetch",
		Signature: "api.fetch(url, {method, headers, body})",
		Description: "HTTP(S) request. Only these hosts are allowed: " + strings.Join(cfg.AllowHosts, ", ") +
			". method defaults to GET; headers is an object of strings; a non-string body is sent as JSON. " +
			"The response body (at most 1 MiB) is returned as text: use JSON.parse for JSON.",
		ReturnType: "{status, ok, url, headers, body}",
		Params:     fetchParams,
		Handler:    f.handle,
	}, nil
}

var fetchParams = &jsonschema.Schema{
	Type: "array",
	PrefixItems: []*jsonschema.Schema{
		{Type: "string", Description: "url"},
		{Types: []string{"object", "null"}, Properties: map[string]*jsonschema.Schema{
			"method":  {Types: []string{"string", "null"}},
			"headers": {Types: []string{"object", "null"}, AdditionalProperties: &jsonschema.Schema{Type: "string"}},
			"body":    {},
		}, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}},
	},
	MinItems: jsonschema.Ptr(1),
	MaxItems: jsonschema.Ptr(2),
}

var fetchMethods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "OPTIONS": true}

// fetcher is the guarded HTTP client behind api.fetch.
type fetcher struct {
	allow  []hostPattern
	client *http.Client
}

func newFetcher(cfg config.FetchConfig) (*fetcher, error) {
	f := &fetcher{}
	for _, h := range cfg.AllowHosts {
		p, err := parseHostPattern(h)
		if err != nil {
			return nil, err
		}
		f.allow = append(f.allow, p)
	}
	guard := &dialGuard{allowPrivate: cfg.AllowPrivate}
	dialer := &net.Dialer{Timeout: 5 * time.Second, Control: guard.control}
	transport := &http.Transport{
		Proxy:                  nil, // a proxy would make the dial check see the proxy, not the target
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    5 * time.Second,
		MaxIdleConns:           16,
		IdleConnTimeout:        30 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	f.client = &http.Client{
		Transport: transport,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			if err := f.check(req.URL); err != nil {
				return fmt.Errorf("redirect refused: %w", err)
			}
			return nil
		},
	}
	return f, nil
}

type fetchOptions struct {
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
}

type fetchResponse struct {
	Status  int               `json:"status"`
	OK      bool              `json:"ok"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

func (f *fetcher) handle(ctx context.Context, call Call) (any, error) {
	var rawURL string
	if _, err := call.Arg(0, &rawURL); err != nil {
		return nil, err
	}
	var opts fetchOptions
	if _, err := call.Arg(1, &opts); err != nil {
		return nil, err
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("invalid URL %q", rawURL)
	}
	if err := f.check(u); err != nil {
		return nil, err
	}
	method := strings.ToUpper(opts.Method)
	if method == "" {
		method = http.MethodGet
	}
	if !fetchMethods[method] {
		return nil, fmt.Errorf("method %q is not supported", opts.Method)
	}
	var body io.Reader
	contentType := ""
	if len(opts.Body) > 0 && string(opts.Body) != "null" {
		var s string
		if json.Unmarshal(opts.Body, &s) == nil {
			body = strings.NewReader(s)
		} else {
			body = bytes.NewReader(opts.Body)
			contentType = "application/json"
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "isogate-run-code")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range opts.Headers {
		req.Header.Set(k, v)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, fetchError(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxFetchBytes+1))
	if err != nil {
		return nil, fetchError(err)
	}
	if len(data) > MaxFetchBytes {
		return nil, fmt.Errorf("response body from %s exceeds the limit of %d bytes (1 MiB)", resp.Request.URL.Host, MaxFetchBytes)
	}
	headers := make(map[string]string, len(resp.Header))
	for k, v := range resp.Header {
		headers[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	return fetchResponse{
		Status:  resp.StatusCode,
		OK:      resp.StatusCode >= 200 && resp.StatusCode < 300,
		URL:     resp.Request.URL.String(),
		Headers: headers,
		Body:    strings.ToValidUTF8(string(data), "\uFFFD"),
	}, nil
}

// fetchError shortens the errors of the HTTP client.
func fetchError(err error) error {
	var blocked *blockedAddrError
	if errors.As(err, &blocked) {
		return blocked
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s %s: %v", ue.Op, ue.URL, ue.Err)
	}
	return err
}

// check reports whether u may be fetched: http or https, host allowed.
func (f *fetcher) check(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("only http and https URLs can be fetched, not %q", u.String())
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return fmt.Errorf("URL %q has no host", u.String())
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	for _, p := range f.allow {
		if p.match(host, port) {
			return nil
		}
	}
	return fmt.Errorf("host %q is not allowed (allowed hosts: %s)", u.Host, f.allowed())
}

func (f *fetcher) allowed() string {
	s := make([]string, len(f.allow))
	for i, p := range f.allow {
		s[i] = p.raw
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}

// hostPattern is one entry of the allowlist.
type hostPattern struct {
	raw      string
	host     string // lower case, no brackets; for a wildcard, the suffix after "*."
	wildcard bool
	port     string // "" matches any port
	addr     netip.Addr
}

func parseHostPattern(raw string) (hostPattern, error) {
	p := hostPattern{raw: raw}
	h := strings.ToLower(strings.TrimSpace(raw))
	if rest, ok := strings.CutPrefix(h, "*."); ok {
		p.wildcard = true
		h = rest
	}
	if host, port, err := net.SplitHostPort(h); err == nil {
		h, p.port = host, port
	}
	h = strings.TrimSuffix(strings.Trim(h, "[]"), ".")
	if h == "" || strings.ContainsAny(h, "/?#@* ") {
		return p, fmt.Errorf("runcode: invalid fetch allow host %q", raw)
	}
	p.host = h
	if addr, err := netip.ParseAddr(h); err == nil && !p.wildcard {
		p.addr = addr.Unmap()
	}
	return p, nil
}

func (p hostPattern) match(host, port string) bool {
	if p.port != "" && p.port != port {
		return false
	}
	if p.wildcard {
		return strings.HasSuffix(host, "."+p.host)
	}
	if p.addr.IsValid() {
		addr, err := netip.ParseAddr(host)
		return err == nil && addr.Unmap() == p.addr
	}
	return host == p.host
}

// dialGuard refuses connections to non-public addresses, checking the
// address actually dialed (after DNS resolution).
type dialGuard struct{ allowPrivate bool }

type blockedAddrError struct{ addr netip.Addr }

func (e *blockedAddrError) Error() string {
	return fmt.Sprintf("connection to %s refused: private, loopback and link-local addresses are not allowed "+
		"(run_code.fetch.allow_private is false)", e.addr)
}

func (g *dialGuard) control(_, address string, _ syscall.RawConn) error {
	if g.allowPrivate {
		return nil
	}
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("connection to %q refused: %v", address, err)
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("connection to %q refused: not an IP address", address)
	}
	if !publicAddr(addr) {
		return &blockedAddrError{addr: addr.WithZone("")}
	}
	return nil
}

// nonPublic are ranges that are not reachable on the public internet (or
// reach back into it through a translator) besides those netip classifies.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // TEST-NET-1
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
	netip.MustParsePrefix("100::/64"),        // discard
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
}

// Prefixes that embed an IPv4 address: the embedded address is checked too.
var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour  = netip.MustParsePrefix("2002::/16")
)

// publicAddr reports whether addr is a public unicast address.
func publicAddr(addr netip.Addr) bool {
	addr = addr.Unmap()
	if !addr.IsValid() || addr.IsLoopback() || addr.IsPrivate() || addr.IsLinkLocalUnicast() ||
		addr.IsLinkLocalMulticast() || addr.IsInterfaceLocalMulticast() || addr.IsMulticast() || addr.IsUnspecified() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(addr) {
			return false
		}
	}
	if addr.Is6() {
		b := addr.As16()
		switch {
		case nat64Local.Contains(addr):
			return false
		case nat64.Contains(addr):
			return publicAddr(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(addr):
			return publicAddr(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	return true
}
