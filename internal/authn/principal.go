// Package authn authenticates HTTP callers and names them: the static
// bearer tokens of server.auth.tokens, and OAuth 2.1 access tokens of a
// configured issuer (JWTs checked against its JWKS, or opaque tokens
// introspected per RFC 7662). Each verifier is an auth.TokenVerifier of the
// go-sdk, so the surface guards /mcp with auth.RequireBearerToken; the
// [Principal] it finds travels in the token info to every request.
package authn

import (
	"context"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Principal is who a request comes from: a token name or a token's
// subject, with its groups and scopes.
type Principal struct {
	// Name is the static token's name, or the OAuth token's subject.
	Name string
	// Groups are the principal's groups (the token's groups claim, or the
	// static token's configured groups).
	Groups []string
	// Scopes are the scopes the token grants.
	Scopes []string

	// token is the OAuth access token the principal presented (nil for a
	// static token): a pointer, so that printing a Principal shows an
	// address and never the token.
	token *accessToken
}

// accessToken holds a validated OAuth access token.
type accessToken struct{ value string }

// AccessToken returns the validated OAuth access token the principal
// presented, or "" (static tokens, no auth). It exists for RFC 8693 token
// exchange (backends.<name>.auth.type token_exchange): it is the subject
// token the gateway trades for a backend's token. It is never forwarded to
// a backend nor logged.
func (p *Principal) AccessToken() string {
	if p == nil || p.token == nil {
		return ""
	}
	return p.token.value
}

// WithAccessToken returns a copy of p that presented the OAuth access
// token tok (see [Principal.AccessToken]).
func (p *Principal) WithAccessToken(tok string) *Principal {
	q := *p
	q.token = &accessToken{tok}
	return &q
}

// Owner is the owner key of what the principal stores (results, run
// records, approvals): the same for every session and replica.
func (p *Principal) Owner() string { return "principal:" + p.Name }

// InGroup reports whether the principal is a member of group.
func (p *Principal) InGroup(group string) bool { return p != nil && slices.Contains(p.Groups, group) }

// HasScope reports whether the principal holds scope.
func (p *Principal) HasScope(scope string) bool { return p != nil && slices.Contains(p.Scopes, scope) }

// Matches reports whether the principal is one of names: a principal name,
// "group:<g>" for a member of g, or "scope:<s>" for a holder of scope s.
func (p *Principal) Matches(names []string) bool {
	if p == nil {
		return false
	}
	for _, n := range names {
		if g, ok := strings.CutPrefix(n, "group:"); ok {
			if p.InGroup(g) {
				return true
			}
		} else if s, ok := strings.CutPrefix(n, "scope:"); ok {
			if p.HasScope(s) {
				return true
			}
		} else if n == p.Name {
			return true
		}
	}
	return false
}

// principalKey is the TokenInfo.Extra key of the principal.
const principalKey = "isogate/principal"

// tokenInfo is the go-sdk token info carrying p: UserID is p's name, so
// the go-sdk refuses a session's requests that come from someone else.
func tokenInfo(p *Principal, info *auth.TokenInfo) *auth.TokenInfo {
	info.UserID = p.Name
	info.Scopes = p.Scopes
	if info.Extra == nil {
		info.Extra = map[string]any{}
	}
	info.Extra[principalKey] = p
	return info
}

// FromTokenInfo returns the principal a verifier of this package put in
// info, or nil.
func FromTokenInfo(info *auth.TokenInfo) *Principal {
	if info == nil {
		return nil
	}
	p, _ := info.Extra[principalKey].(*Principal)
	return p
}

type ctxKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	if p == nil {
		return ctx
	}
	return context.WithValue(ctx, ctxKey{}, p)
}

// FromContext returns the principal ctx carries, or nil (stdio, no auth).
func FromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(ctxKey{}).(*Principal)
	return p
}
