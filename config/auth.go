package config

import (
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"
)

// AuthMode is how HTTP clients authenticate (server.auth.mode).
type AuthMode string

// The values of server.auth.mode.
const (
	// AuthNone lets every HTTP client in (allowed on a loopback listener
	// only).
	AuthNone AuthMode = "none"
	// AuthToken accepts the static bearer tokens of server.auth.tokens
	// (each a named principal) and server.auth_token (the principal
	// "default").
	AuthToken AuthMode = "token"
	// AuthOAuth makes isogate an OAuth 2.1 resource server: it accepts
	// access tokens of server.auth.issuer bound to server.auth.audience.
	AuthOAuth AuthMode = "oauth"
)

// AuthModes lists the valid values of server.auth.mode.
var AuthModes = []AuthMode{AuthNone, AuthToken, AuthOAuth}

// Defaults of server.auth.
const (
	// DefaultAuthClockSkew is the default of server.auth.clock_skew.
	DefaultAuthClockSkew = 30 * time.Second
	// DefaultJWKSMinRefresh is the default of server.auth.jwks_min_refresh.
	DefaultJWKSMinRefresh = 10 * time.Second
	// DefaultIntrospectionCacheTTL is the default of
	// server.auth.introspection_cache_ttl.
	DefaultIntrospectionCacheTTL = time.Minute
	// DefaultIntrospectionRate is the default of
	// server.auth.introspection_rate.
	DefaultIntrospectionRate = 10
)

// AuthConfig configures who may call the HTTP endpoint and what each
// principal may do (server.auth).
type AuthConfig struct {
	// Mode is AuthNone, AuthToken or AuthOAuth. Empty picks AuthToken when
	// server.auth_token or Tokens is set and AuthNone otherwise.
	Mode AuthMode `koanf:"mode"`
	// Issuer is the authorization server (oauth mode), discovered at
	// <issuer>/.well-known/openid-configuration or
	// /.well-known/oauth-authorization-server; tokens must carry it as iss.
	Issuer string `koanf:"issuer"`
	// Audience is the resource URL tokens must be bound to (their aud;
	// RFC 8707), normally isogate's own https://host/mcp. It is the
	// resource of /.well-known/oauth-protected-resource.
	Audience string `koanf:"audience"`
	// Scopes are required of every token (all of them); a token without
	// one is answered 403 insufficient_scope.
	Scopes []string `koanf:"scopes"`
	// ClockSkew is the tolerance on exp, nbf and iat. Default 30s.
	ClockSkew time.Duration `koanf:"clock_skew"`
	// JWKSMinRefresh is the least time between two fetches of the
	// issuer's JWKS caused by tokens with an unknown kid (a rotated key is
	// picked up by the first such token; made-up kids cost one fetch per
	// interval at most, even while the JWKS endpoint fails). Default 10s.
	JWKSMinRefresh time.Duration `koanf:"jwks_min_refresh"`
	// IntrospectionClientID and IntrospectionClientSecret, when set, make
	// isogate introspect tokens that are not JWTs (RFC 7662) at the
	// issuer's introspection_endpoint with these client credentials.
	IntrospectionClientID string `koanf:"introspection_client_id"`
	// IntrospectionClientSecret is the secret of IntrospectionClientID.
	// ${VAR} is expanded.
	IntrospectionClientSecret string `koanf:"introspection_client_secret"`
	// IntrospectionCacheTTL is the longest an introspection answer is
	// reused for the same token (an active token's at most until its exp;
	// a revoked token keeps working this long at most). Default 1m.
	IntrospectionCacheTTL time.Duration `koanf:"introspection_cache_ttl"`
	// IntrospectionRate is the most introspection requests per second
	// isogate sends the issuer (a burst of as many); a token that would
	// exceed it is answered 503. Default 10.
	IntrospectionRate int `koanf:"introspection_rate"`
	// GroupsClaim is the token claim holding the principal's groups (a
	// list of strings or one space-separated string). Default "groups".
	GroupsClaim string `koanf:"groups_claim"`
	// Tokens are the static bearer tokens of token mode, by principal
	// name.
	Tokens map[string]StaticToken `koanf:"tokens"`
	// Admins are the principals that see gateway-wide figures in
	// isogate://stats (others see their own): principal names, or
	// "group:<name>" for every member of a group.
	Admins []string `koanf:"admins"`
	// ApprovalAtSave lets a plan approval given when a program is saved
	// stand for later direct calls of that version by the principal that
	// saved it (issue 45); off: every call asks as any run does.
	ApprovalAtSave bool `koanf:"approval_at_save"`
	// Rules restrict what principals may do, by rule name; every rule
	// whose match holds applies.
	Rules map[string]AccessRule `koanf:"rules"`
}

// StaticToken is one named bearer token of token mode.
type StaticToken struct {
	// Token is the secret the client sends as "Authorization: Bearer …".
	// ${VAR} is expanded; at least 16 characters.
	Token string `koanf:"token"`
	// Groups are the principal's groups, for rules and admins.
	Groups []string `koanf:"groups"`
	// Scopes are the principal's scopes, for rules.
	Scopes []string `koanf:"scopes"`
}

// AccessRule applies to the principals it matches: those named in
// Principals, members of one of Groups, or holders of one of Scopes (a
// rule with no match list applies to every principal).
type AccessRule struct {
	// Principals are principal names (token names, or the subject of an
	// OAuth token).
	Principals []string `koanf:"principals"`
	// Groups are group names.
	Groups []string `koanf:"groups"`
	// Scopes are scope names.
	Scopes []string `koanf:"scopes"`
	// Allow lists the tools the matched principals may call, as
	// "<backend>.<tool>" globs ("github.*" a whole backend); empty means
	// every tool the backend policy allows.
	Allow []string `koanf:"allow"`
	// Deny lists tools the matched principals may not call; deny wins.
	Deny []string `koanf:"deny"`
	// Approve lists tools whose every call by the matched principals needs
	// a person's yes.
	Approve []string `koanf:"approve"`
	// MaxToolCalls bounds the tool calls of one program run of the matched
	// principals (below sandbox.max_tool_calls); 0 means no further bound.
	MaxToolCalls int `koanf:"max_tool_calls"`
}

// EffectiveMode is the mode in force: Mode, or when empty AuthToken if a
// static token is configured and AuthNone otherwise.
func (s ServerConfig) EffectiveMode() AuthMode {
	if s.Auth.Mode != "" {
		return s.Auth.Mode
	}
	if s.AuthToken != "" || len(s.Auth.Tokens) > 0 {
		return AuthToken
	}
	return AuthNone
}

// validateAuth checks server.auth.
func (c *collector) validateAuth(s *ServerConfig) {
	a := &s.Auth
	if a.Mode != "" {
		c.oneOf("server.auth.mode", string(a.Mode), string(AuthNone), string(AuthToken), string(AuthOAuth))
	}
	switch s.EffectiveMode() {
	case AuthNone:
		if s.AuthToken != "" || len(a.Tokens) > 0 {
			c.add("server.auth.mode", `is "none" but server.auth_token or server.auth.tokens is set; remove them or use "token"`)
		}
	case AuthToken:
		if s.AuthToken == "" && len(a.Tokens) == 0 {
			c.add("server.auth.mode", `is "token" but no token is configured: set server.auth.tokens.<name>.token or server.auth_token`)
		}
	case AuthOAuth:
		for _, k := range []struct{ key, v string }{{"server.auth.issuer", a.Issuer}, {"server.auth.audience", a.Audience}} {
			u, err := url.Parse(k.v)
			if k.v == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				c.add(k.key, fmt.Sprintf(`is required in oauth mode: an absolute https URL such as "https://idp.example.com", got %q`, k.v))
			}
		}
		if (a.IntrospectionClientID == "") != (a.IntrospectionClientSecret == "") {
			c.add("server.auth.introspection_client_id", "and server.auth.introspection_client_secret go together")
		}
	}
	c.durationBetween("server.auth.clock_skew", a.ClockSkew, 10*time.Minute)
	c.durationBetween("server.auth.jwks_min_refresh", a.JWKSMinRefresh, time.Hour)
	c.durationBetween("server.auth.introspection_cache_ttl", a.IntrospectionCacheTTL, time.Hour)
	c.between("server.auth.introspection_rate", int64(a.IntrospectionRate), 1, 10_000)
	seen := map[string]string{}
	for _, name := range sortedKeys(a.Tokens) {
		t := a.Tokens[name]
		key := joinKey("server.auth.tokens", name) + ".token"
		switch {
		case len(t.Token) < 16:
			c.add(key, fmt.Sprintf("must be at least 16 characters (got %d); use a long random secret", len(t.Token)))
		case strings.ContainsAny(t.Token, "\r\n "):
			c.add(key, "must not contain spaces or line breaks")
		case seen[t.Token] != "":
			c.add(key, "is the same token as server.auth.tokens."+seen[t.Token]+"; each principal needs its own")
		}
		seen[t.Token] = name
	}
	c.names("server.auth.admins", a.Admins)
	for _, name := range sortedKeys(a.Rules) {
		r, key := a.Rules[name], joinKey("server.auth.rules", name)
		if r.MaxToolCalls < 0 {
			c.add(key+".max_tool_calls", "must not be negative")
		}
		// A glob or name that looks like another (U+202E, U+200B, …)
		// would let a rule read as deny what it does not deny.
		c.globs(key+".allow", r.Allow)
		c.globs(key+".deny", r.Deny)
		c.globs(key+".approve", r.Approve)
		c.names(key+".principals", r.Principals)
		c.names(key+".groups", r.Groups)
		c.names(key+".scopes", r.Scopes)
	}
}

// names checks principal, group or scope names: no control or invisible
// characters (bidi controls, zero-width and other format characters).
func (c *collector) names(key string, names []string) {
	for i, n := range names {
		if strings.IndexFunc(n, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
			c.add(indexKey(key, i), fmt.Sprintf("must not contain control or invisible characters (got %q)", n))
		}
	}
}
