package authn

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/isogate/isogate/config"
)

// LegacyPrincipal is the principal of server.auth_token.
const LegacyPrincipal = "default"

// Static verifies the static bearer tokens of token mode. Its tokens can be
// replaced while it serves (a reload).
type Static struct {
	mu     sync.Mutex
	named  []staticEntry
	legacy []staticEntry
	tokens atomic.Pointer[[]staticEntry] // named + legacy, read per request
}

type staticEntry struct {
	digest [32]byte
	p      *Principal
}

// NewStatic returns a verifier of tokens (by principal name) and legacy
// (server.auth_token, principal "default"; "" for none).
func NewStatic(tokens map[string]config.StaticToken, legacy string) *Static {
	s := &Static{}
	s.Set(tokens, legacy)
	return s
}

// Set replaces the accepted tokens from the next request on.
func (s *Static) Set(tokens map[string]config.StaticToken, legacy string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(tokens))
	for n := range tokens {
		names = append(names, n)
	}
	sort.Strings(names)
	var list []staticEntry
	for _, n := range names {
		t := tokens[n]
		list = append(list, staticEntry{sha256.Sum256([]byte(t.Token)), &Principal{Name: n, Groups: t.Groups, Scopes: t.Scopes}})
	}
	s.named = list
	s.setLegacy(legacy)
}

// SetLegacy replaces server.auth_token alone ("" removes it).
func (s *Static) SetLegacy(legacy string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setLegacy(legacy)
}

func (s *Static) setLegacy(legacy string) {
	s.legacy = nil
	if legacy != "" {
		s.legacy = []staticEntry{{sha256.Sum256([]byte(legacy)), &Principal{Name: LegacyPrincipal}}}
	}
	all := append(slices.Clone(s.named), s.legacy...)
	s.tokens.Store(&all)
}

// Empty reports whether no token is accepted.
func (s *Static) Empty() bool { return len(*s.tokens.Load()) == 0 }

// Verify is an auth.TokenVerifier: the principal of the token, compared in
// constant time (digests, so the length of a token is not revealed either).
func (s *Static) Verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	d := sha256.Sum256([]byte(token))
	var found *Principal
	for _, e := range *s.tokens.Load() {
		if subtle.ConstantTimeCompare(d[:], e.digest[:]) == 1 {
			found = e.p
		}
	}
	if found == nil {
		return nil, reject(ReasonUnknownToken, "no such static token")
	}
	// Static tokens do not expire; the go-sdk's check wants a time.
	return tokenInfo(found, &auth.TokenInfo{Expiration: farFuture}), nil
}
