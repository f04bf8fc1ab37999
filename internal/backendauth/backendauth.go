// Package backendauth obtains the OAuth access tokens the gateway sends to
// HTTP backends (backends.<name>.auth): its own by the client credentials
// grant (RFC 6749 §4.4), the calling principal's by token exchange
// (RFC 8693), or a person's obtained once by `isogate login` (authorization
// code + PKCE) and refreshed. Tokens are cached and renewed before they
// expire, and set as "Authorization: Bearer" by the backend's HTTP
// transport ([Authorizer.Wrap]). The client's own token is never sent: a
// principal's token is only ever the subject of an exchange.
package backendauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/isogate/isogate/config"
)

// Defaults.
const (
	// MaxRefreshMargin is the most a token is renewed ahead of its expiry
	// (it is renewed at half its lifetime when that is shorter).
	MaxRefreshMargin = 30 * time.Second
	// DefaultHTTPTimeout bounds each request to the authorization server.
	DefaultHTTPTimeout = 10 * time.Second
	// TokenDir is the directory under server.cache_dir where `isogate
	// login` stores tokens by default.
	TokenDir = "oauth"
)

// Options configure an [Authorizer]; zero values mean defaults.
type Options struct {
	// Backend is the backend's name (for messages and the token file).
	Backend string
	// URL is the backend's url, the default resource (RFC 8707).
	URL string
	// Auth is backends.<name>.auth.
	Auth config.BackendAuth
	// CacheDir is server.cache_dir: the default token file is
	// <CacheDir>/oauth/<Backend>.json.
	CacheDir string
	// Tokens, when set, stores logins instead of the token file (e.g.
	// RedisTokens, shared by replicas).
	Tokens TokenStore
	// HTTPClient talks to the authorization server; default a client with
	// DefaultHTTPTimeout.
	HTTPClient *http.Client
	// Logger; default slog.Default().
	Logger *slog.Logger
}

// Authorizer holds one backend's tokens.
type Authorizer struct {
	opts Options

	discoverMu sync.Mutex
	meta       *oauthex.AuthServerMeta
	resource   string   // the RFC 8707 resource: configured, discovered or the url
	scopes     []string // configured, else what the backend asked for

	own      *cachedSource // client credentials, or the login's tokens
	exchange *exchangeCache
	stored   loginFile // authorization_code: the token file
}

// New returns the authorizer of opts, or nil when opts.Auth.Type is empty.
// It contacts nobody yet.
func New(opts Options) (*Authorizer, error) {
	if opts.Auth.Type == "" {
		return nil, nil
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: DefaultHTTPTimeout}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	a := &Authorizer{opts: opts, resource: opts.Auth.Resource, scopes: opts.Auth.Scopes}
	if a.resource == "" {
		a.resource = opts.URL
	}
	switch opts.Auth.Type {
	case config.BackendAuthClientCredentials:
		a.own = &cachedSource{fetch: a.clientCredentials}
	case config.BackendAuthTokenExchange:
		// Requests on nobody's behalf (the shared session's initialize,
		// tools/list, health pings) carry the gateway's own token.
		a.own = &cachedSource{fetch: a.clientCredentials}
		a.exchange = newExchangeCache()
	case config.BackendAuthAuthorizationCode:
		a.own = &cachedSource{fetch: a.refreshStored}
	default:
		return nil, fmt.Errorf("backend %q: unknown auth.type %q", opts.Backend, opts.Auth.Type)
	}
	return a, nil
}

// TokenFile is where `isogate login` stores the backend's tokens.
func (a *Authorizer) TokenFile() string {
	if a.opts.Auth.TokenFile != "" {
		return a.opts.Auth.TokenFile
	}
	return filepath.Join(a.opts.CacheDir, TokenDir, a.opts.Backend+".json")
}

// endpoints returns the authorization server's metadata: discovered from
// auth.issuer, or without one (nor token_url) from the backend's
// protected-resource metadata ([Authorizer.discoverFromBackend]), once (a
// failure is retried at the next use), with token_url and
// authorization_url taking precedence.
func (a *Authorizer) endpoints(ctx context.Context) (*oauthex.AuthServerMeta, error) {
	a.discoverMu.Lock()
	defer a.discoverMu.Unlock()
	if a.meta != nil {
		return a.meta, nil
	}
	au := a.opts.Auth
	meta := &oauthex.AuthServerMeta{Issuer: au.Issuer}
	needDiscovery := au.TokenURL == "" || (au.Type == config.BackendAuthAuthorizationCode && au.AuthorizationURL == "")
	switch {
	case !needDiscovery:
	case au.Issuer == "" && au.TokenURL == "" && au.AuthorizationURL == "":
		found, err := a.discoverFromBackend(ctx)
		if err != nil {
			return nil, err
		}
		meta = found.meta
		if au.Resource == "" && found.resource != "" {
			a.resource = found.resource
		}
		if len(au.Scopes) == 0 {
			a.scopes = found.scopes
		}
	case au.Issuer == "":
		return nil, errors.New("auth needs issuer, or token_url (and authorization_url for authorization_code), or neither for discovery from the backend")
	default:
		m, err := auth.GetAuthServerMetadata(ctx, au.Issuer, a.opts.HTTPClient)
		if err == nil && m == nil {
			err = errors.New("no OpenID or OAuth metadata found")
		}
		if err != nil {
			return nil, fmt.Errorf("discovering issuer %s: %w", au.Issuer, err)
		}
		meta = m
	}
	if au.TokenURL != "" {
		meta.TokenEndpoint = au.TokenURL
	}
	if au.AuthorizationURL != "" {
		meta.AuthorizationEndpoint = au.AuthorizationURL
	}
	if meta.TokenEndpoint == "" {
		return nil, fmt.Errorf("issuer %s names no token_endpoint", meta.Issuer)
	}
	a.meta = meta
	return meta, nil
}

// target returns the resource and scopes tokens are asked for (after
// [Authorizer.endpoints], discovered ones included).
func (a *Authorizer) target() (resource string, scopes []string) {
	a.discoverMu.Lock()
	defer a.discoverMu.Unlock()
	return a.resource, a.scopes
}

// authStyle is how the client authenticates at the token endpoint: as its
// registration says (method), else the first of client_secret_post and
// client_secret_basic the server supports, else found out by trying
// (x/oauth2's auto-detection); a client without a secret sends its
// client_id in the form.
func authStyle(meta *oauthex.AuthServerMeta, secret, method string) oauth2.AuthStyle {
	if secret == "" {
		return oauth2.AuthStyleInParams
	}
	if method == "" && meta != nil {
		method = methodFor(meta)
	}
	switch method {
	case "client_secret_post":
		return oauth2.AuthStyleInParams
	case "client_secret_basic":
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleAutoDetect
}

// httpContext returns ctx in which x/oauth2 uses the authorizer's client.
func (a *Authorizer) httpContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, a.opts.HTTPClient)
}

// Token returns the access token for a request with ctx: the principal's
// exchanged token (token_exchange, when ctx carries a principal), else
// the backend's own.
func (a *Authorizer) Token(ctx context.Context) (string, error) {
	if a.exchange != nil {
		if tok, ok, err := a.exchangedToken(ctx); ok || err != nil {
			return tok, err
		}
	}
	t, err := a.own.token(ctx)
	if err != nil {
		return "", err
	}
	return t.AccessToken, nil
}

// invalidate forgets the token tok (the backend refused it).
func (a *Authorizer) invalidate(ctx context.Context, tok string) {
	a.own.forget(tok)
	if a.exchange != nil {
		a.exchange.forget(tok)
	}
}

// Wrap returns base sending the backend's token on every request.
func (a *Authorizer) Wrap(base http.RoundTripper) http.RoundTripper {
	if a == nil {
		return base
	}
	return &bearerTransport{a: a, base: base}
}

// bearerTransport sets Authorization: Bearer on every request.
type bearerTransport struct {
	a    *Authorizer
	base http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, err := t.a.Token(req.Context())
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, fmt.Errorf("backend %q: obtaining its access token: %w", t.a.opts.Backend, err)
	}
	req = req.Clone(req.Context()) // RoundTrippers must not modify the request
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := t.base.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		// Revoked or rotated early: the next request gets a fresh one.
		t.a.invalidate(req.Context(), tok)
		t.a.opts.Logger.Warn("backend refused its access token; a new one will be obtained",
			slog.String("backend", t.a.opts.Backend), slog.String("challenge", firstLine(resp.Header.Get("WWW-Authenticate"))))
	}
	return resp, err
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// cachedSource caches one token and renews it ahead of expiry.
type cachedSource struct {
	fetch func(ctx context.Context) (*oauth2.Token, error)

	mu       sync.Mutex
	tok      *oauth2.Token
	obtained time.Time
}

// token returns the cached token, fetching a new one when it is missing or
// within its refresh margin of expiry.
func (s *cachedSource) token(ctx context.Context) (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if s.tok != nil && fresh(s.tok, s.obtained, now) {
		return s.tok, nil
	}
	t, err := s.fetch(ctx)
	if err != nil {
		return nil, err
	}
	if t.AccessToken == "" {
		return nil, errors.New("the authorization server returned no access_token")
	}
	s.tok, s.obtained = t, now
	return t, nil
}

// forget drops the cached token if it is tok.
func (s *cachedSource) forget(tok string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tok != nil && s.tok.AccessToken == tok {
		s.tok = nil
	}
}

// fresh reports whether t, obtained at obtained, is still good at now:
// before its expiry less the refresh margin (MaxRefreshMargin, or half
// its lifetime when that is shorter). A token without expiry is good.
func fresh(t *oauth2.Token, obtained, now time.Time) bool {
	if t.Expiry.IsZero() {
		return true
	}
	margin := min(MaxRefreshMargin, t.Expiry.Sub(obtained)/2)
	return now.Before(t.Expiry.Add(-margin))
}

// clientCredentials gets the backend's own token (RFC 6749 §4.4).
func (a *Authorizer) clientCredentials(ctx context.Context) (*oauth2.Token, error) {
	meta, err := a.endpoints(ctx)
	if err != nil {
		return nil, err
	}
	tok, err := a.grant(meta, nil).Token(a.httpContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("client credentials grant at %s: %w", meta.TokenEndpoint, err)
	}
	return tok, nil
}

// grant is a token request of the gateway's client at meta's token
// endpoint: client credentials, or with extra (which may replace
// grant_type) another grant, such as token exchange. Scope, resource and
// audience are sent as configured.
func (a *Authorizer) grant(meta *oauthex.AuthServerMeta, extra url.Values) *clientcredentials.Config {
	au := a.opts.Auth
	resource, scopes := a.target()
	params := url.Values{}
	if resource != "" {
		params.Set("resource", resource)
	}
	if au.Audience != "" {
		params.Set("audience", au.Audience)
	}
	for k, v := range extra {
		params[k] = v
	}
	return &clientcredentials.Config{
		ClientID:       au.ClientID,
		ClientSecret:   au.ClientSecret,
		TokenURL:       meta.TokenEndpoint,
		Scopes:         scopes,
		EndpointParams: params,
		AuthStyle:      authStyle(meta, au.ClientSecret, ""),
	}
}
