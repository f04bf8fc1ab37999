package backendauth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// storedLogin is the token file of an authorization_code backend: the
// client the login used (registered dynamically, perhaps) and its tokens.
type storedLogin struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	TokenURL     string `json:"token_url"`
	// AuthMethod is the client's token endpoint auth method (as
	// registered, or chosen from the server's metadata); "" auto-detects.
	AuthMethod string        `json:"token_endpoint_auth_method,omitempty"`
	Token      *oauth2.Token `json:"token"`
}

// loginFile guards the token file of an Authorizer.
type loginFile struct {
	mu    sync.Mutex
	login *storedLogin
}

// readLogin returns the stored login, loading it once (again with
// reload: another replica may have refreshed it).
func (a *Authorizer) readLogin(ctx context.Context, reload bool) (*storedLogin, error) {
	a.stored.mu.Lock()
	defer a.stored.mu.Unlock()
	if a.stored.login != nil && !reload {
		return a.stored.login, nil
	}
	b, err := a.loadLogin(ctx)
	if errors.Is(err, ErrNoLogin) {
		return nil, fmt.Errorf("no tokens in %s: run `isogate login %s`", a.tokensWhere(), a.opts.Backend)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the tokens: %w", err)
	}
	var l storedLogin
	if err := json.Unmarshal(b, &l); err != nil || l.Token == nil {
		return nil, fmt.Errorf("%s holds no login of isogate login (run it again): %v", a.tokensWhere(), err)
	}
	a.stored.login = &l
	return &l, nil
}

// loadLogin reads the stored login from Options.Tokens, else the file.
func (a *Authorizer) loadLogin(ctx context.Context) ([]byte, error) {
	if a.opts.Tokens != nil {
		return a.opts.Tokens.Load(ctx, a.opts.Backend)
	}
	b, err := os.ReadFile(a.TokenFile())
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoLogin
	}
	return b, err
}

// tokensWhere names where the login is stored.
func (a *Authorizer) tokensWhere() string {
	if a.opts.Tokens != nil {
		return a.opts.Tokens.Where(a.opts.Backend)
	}
	return a.TokenFile()
}

// writeLogin stores l in Options.Tokens, else in the token file, readable
// by its owner only.
func (a *Authorizer) writeLogin(ctx context.Context, l *storedLogin) error {
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	if a.opts.Tokens != nil {
		if err := a.opts.Tokens.Save(ctx, a.opts.Backend, b); err != nil {
			return err
		}
		a.stored.mu.Lock()
		a.stored.login = l
		a.stored.mu.Unlock()
		return nil
	}
	path := a.TokenFile()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("storing the tokens: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".login-*")
	if err != nil {
		return fmt.Errorf("storing the tokens: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("storing the tokens: %w", err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("storing the tokens: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("storing the tokens: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("storing the tokens: %w", err)
	}
	a.stored.mu.Lock()
	a.stored.login = l
	a.stored.mu.Unlock()
	return nil
}

// refreshStored returns the login's access token while it is fresh, and
// else refreshes it (refresh_token grant), storing the new tokens.
func (a *Authorizer) refreshStored(ctx context.Context) (*oauth2.Token, error) {
	l, err := a.readLogin(ctx, false)
	if err != nil {
		return nil, err
	}
	fresh := func(l *storedLogin) bool {
		return l.Token.Expiry.IsZero() || time.Until(l.Token.Expiry) > MaxRefreshMargin
	}
	if fresh(l) {
		return l.Token, nil
	}
	// Another replica may have refreshed it already (the refresh token is
	// then spent): take theirs.
	if l, err = a.readLogin(ctx, true); err != nil {
		return nil, err
	}
	if fresh(l) {
		return l.Token, nil
	}
	if l.Token.RefreshToken == "" {
		return nil, fmt.Errorf("the stored token expires and has no refresh token: run `isogate login %s`", a.opts.Backend)
	}
	cfg := a.loginConfig(l.ClientID, l.ClientSecret, l.AuthMethod, &oauthex.AuthServerMeta{TokenEndpoint: l.TokenURL}, "")
	expired := *l.Token
	expired.Expiry = time.Unix(1, 0) // make x/oauth2 refresh now
	tok, err := cfg.TokenSource(a.httpContext(ctx), &expired).Token()
	if err != nil {
		return nil, fmt.Errorf("refreshing the login's token (run `isogate login %s` if it was revoked): %w", a.opts.Backend, err)
	}
	next := *l
	next.Token = tok
	if err := a.writeLogin(ctx, &next); err != nil {
		a.opts.Logger.Warn("the refreshed token could not be stored", "error", err)
	}
	return tok, nil
}

// loginConfig is the x/oauth2 config of the login's client, which
// authenticates at the token endpoint with method (see authStyle).
func (a *Authorizer) loginConfig(clientID, secret, method string, meta *oauthex.AuthServerMeta, redirect string) *oauth2.Config {
	_, scopes := a.target()
	return &oauth2.Config{
		ClientID:     clientID,
		ClientSecret: secret,
		RedirectURL:  redirect,
		Scopes:       scopes,
		Endpoint:     oauth2.Endpoint{AuthURL: meta.AuthorizationEndpoint, TokenURL: meta.TokenEndpoint, AuthStyle: authStyle(meta, secret, method)},
	}
}

// Login runs the authorization code flow with PKCE for an
// authorization_code backend: it prints the authorization URL to out,
// receives the redirect on a loopback listener, exchanges the code and
// stores the tokens in [Authorizer.TokenFile] (0600). Without a client_id
// it uses auth.client_metadata_url where the server supports client-ID
// metadata documents, else registers a client (RFC 7591).
func (a *Authorizer) Login(ctx context.Context, out io.Writer) error {
	if a.opts.Auth.Type != "authorization_code" {
		return fmt.Errorf("backend %q: auth.type is %q, not authorization_code", a.opts.Backend, a.opts.Auth.Type)
	}
	meta, err := a.endpoints(ctx)
	if err != nil {
		return err
	}
	if meta.AuthorizationEndpoint == "" {
		return errors.New("the authorization server names no authorization_endpoint")
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(a.opts.Auth.RedirectPort)))
	if err != nil {
		return fmt.Errorf("listening for the redirect: %w", err)
	}
	defer ln.Close()
	redirect := "http://" + ln.Addr().String() + "/callback"

	clientID, secret, method := a.opts.Auth.ClientID, a.opts.Auth.ClientSecret, ""
	switch {
	case clientID != "":
	case a.opts.Auth.ClientMetadataURL != "" && meta.ClientIDMetadataDocumentSupported:
		clientID = a.opts.Auth.ClientMetadataURL
	case meta.RegistrationEndpoint != "":
		reg, err := oauthex.RegisterClient(ctx, meta.RegistrationEndpoint, &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect}, ClientName: "isogate", TokenEndpointAuthMethod: "none",
			GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
			ApplicationType: "native", // a loopback redirect (SEP-837)
		}, a.opts.HTTPClient)
		if err != nil {
			return fmt.Errorf("registering a client: %w", err)
		}
		clientID, secret, method = reg.ClientID, reg.ClientSecret, reg.TokenEndpointAuthMethod
		fmt.Fprintf(out, "Registered client %s at %s\n", clientID, meta.RegistrationEndpoint)
	default:
		return errors.New("no client: set auth.client_id (the server offers neither dynamic registration nor, for auth.client_metadata_url, client-ID metadata documents)")
	}

	if method == "" && secret != "" {
		method = methodFor(meta)
	}
	cfg := a.loginConfig(clientID, secret, method, meta, redirect)
	resource, _ := a.target()
	verifier := oauth2.GenerateVerifier()
	state := randomState()
	authURL := cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	fmt.Fprintf(out, "Open this URL in a browser to authorize isogate for backend %s:\n\n  %s\n\nWaiting for the redirect on %s …\n", a.opts.Backend, authURL, redirect)

	code, iss, err := awaitCode(ctx, ln, state)
	if err != nil {
		return err
	}
	if err := checkIss(iss, meta); err != nil {
		return err
	}
	tok, err := cfg.Exchange(a.httpContext(ctx), code, oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	if err != nil {
		return fmt.Errorf("exchanging the authorization code: %w", err)
	}
	if err := a.writeLogin(ctx, &storedLogin{ClientID: clientID, ClientSecret: secret, TokenURL: meta.TokenEndpoint, AuthMethod: method, Token: tok}); err != nil {
		return err
	}
	fmt.Fprintf(out, "Logged in: tokens stored in %s\n", a.tokensWhere())
	return nil
}

// randomState is an unguessable OAuth state.
func randomState() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// redirectPageWait bounds how long awaitCode waits, once it has the code,
// for the browser's page to be written before closing its server.
const redirectPageWait = 2 * time.Second

// awaitCode serves the redirect on ln until one carries state, and returns
// its code and iss (or its error).
func awaitCode(ctx context.Context, ln net.Listener, state string) (code, iss string, err error) {
	type result struct {
		code, iss string
		err       error
	}
	done := make(chan result, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != "/callback" || q.Get("state") != state {
			http.Error(w, "not the redirect isogate waits for", http.StatusBadRequest)
			return
		}
		var res result
		if e := q.Get("error"); e != "" {
			res.err = fmt.Errorf("the authorization server refused: %s %s", e, q.Get("error_description"))
			http.Error(w, "isogate was not authorized: "+e, http.StatusForbidden)
		} else {
			res.code, res.iss = q.Get("code"), q.Get("iss")
			fmt.Fprintln(w, "isogate is authorized; you can close this window.")
		}
		select {
		case done <- res:
		default:
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	// The handler hands the code over before its page is written: shut
	// down gracefully so the browser gets the page, not a cut connection.
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), redirectPageWait)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			srv.Close()
		}
	}()
	select {
	case r := <-done:
		if r.err == nil && r.code == "" {
			r.err = errors.New("the redirect carries no code")
		}
		return r.code, r.iss, r.err
	case <-ctx.Done():
		return "", "", fmt.Errorf("waiting for the redirect: %w", ctx.Err())
	}
}

// methodFor is the token endpoint auth method a client with a secret uses
// at the server of meta: client_secret_post or client_secret_basic,
// whichever it lists first of the two in that order, else "" (found out by
// trying).
func methodFor(meta *oauthex.AuthServerMeta) string {
	for _, m := range []string{"client_secret_post", "client_secret_basic"} {
		if slices.Contains(meta.TokenEndpointAuthMethodsSupported, m) {
			return m
		}
	}
	return ""
}

// checkIss checks the iss of an authorization response (RFC 9207) against
// the authorization server's issuer, compared as strings: required when its
// metadata says it sends one, and when present it must match (a response
// from another server, mixed up with this one's, is refused).
func checkIss(iss string, meta *oauthex.AuthServerMeta) error {
	switch {
	case iss == "" && meta.AuthorizationResponseIssParameterSupported:
		return fmt.Errorf("the authorization response has no iss though %s says it sends one (RFC 9207): refused", meta.Issuer)
	case iss != "" && iss != meta.Issuer:
		return fmt.Errorf("the authorization response comes from issuer %q, not %q (RFC 9207): refused", iss, meta.Issuer)
	}
	return nil
}
