package backendauth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/isogate/isogate/internal/authn"
)

// RFC 8693 identifiers.
const (
	grantTokenExchange   = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeAccessToken = "urn:ietf:params:oauth:token-type:access_token"
)

// maxExchanged bounds the exchanged tokens kept (one per principal and
// subject token); past it, expired ones are dropped, then the oldest.
const maxExchanged = 1024

// exchangeCache keeps exchanged tokens per principal and subject token.
type exchangeCache struct {
	mu      sync.Mutex
	entries map[string]*exchanged
}

// exchanged is one principal's cached token (or the exchange under way).
type exchanged struct {
	mu       sync.Mutex // held during the exchange
	tok      *oauth2.Token
	obtained time.Time
}

func newExchangeCache() *exchangeCache {
	return &exchangeCache{entries: map[string]*exchanged{}}
}

// entry returns key's entry, making room for it if needed.
func (c *exchangeCache) entry(key string) *exchanged {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[key]; e != nil {
		return e
	}
	if len(c.entries) >= maxExchanged {
		c.prune()
	}
	e := &exchanged{}
	c.entries[key] = e
	return e
}

// prune drops expired entries and, if still full, the oldest. c.mu is held.
func (c *exchangeCache) prune() {
	now := time.Now()
	var oldestKey string
	var oldest time.Time
	for k, e := range c.entries {
		if !e.mu.TryLock() {
			continue // being exchanged
		}
		switch {
		case e.tok == nil || !fresh(e.tok, e.obtained, now):
			delete(c.entries, k)
		case oldestKey == "" || e.obtained.Before(oldest):
			oldestKey, oldest = k, e.obtained
		}
		e.mu.Unlock()
	}
	if len(c.entries) >= maxExchanged && oldestKey != "" {
		delete(c.entries, oldestKey)
	}
}

// forget drops the exchanged token tok.
func (c *exchangeCache) forget(tok string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.entries {
		if e.mu.TryLock() {
			if e.tok != nil && e.tok.AccessToken == tok {
				delete(c.entries, k)
			}
			e.mu.Unlock()
		}
	}
}

// errNoSubjectToken: a principal that did not present an OAuth token.
var errNoSubjectToken = errors.New("token exchange needs the caller's OAuth access token (server.auth.mode oauth); this caller has none")

// exchangedToken returns the token of the principal ctx carries, exchanged
// for one for the backend (RFC 8693) and cached until near its expiry;
// ok is false when ctx carries no principal.
func (a *Authorizer) exchangedToken(ctx context.Context) (tok string, ok bool, err error) {
	p := authn.FromContext(ctx)
	if p == nil {
		return "", false, nil
	}
	subject := p.AccessToken()
	if subject == "" {
		return "", true, errNoSubjectToken
	}
	sum := sha256.Sum256([]byte(subject))
	e := a.exchange.entry(p.Name + "\x00" + string(sum[:]))
	e.mu.Lock()
	defer e.mu.Unlock()
	now := time.Now()
	if e.tok != nil && fresh(e.tok, e.obtained, now) {
		return e.tok.AccessToken, true, nil
	}
	meta, err := a.endpoints(ctx)
	if err != nil {
		return "", true, err
	}
	t, err := a.grant(meta, url.Values{
		"grant_type":           {grantTokenExchange},
		"subject_token":        {subject},
		"subject_token_type":   {tokenTypeAccessToken},
		"requested_token_type": {tokenTypeAccessToken},
	}).Token(a.httpContext(ctx))
	if err != nil {
		return "", true, fmt.Errorf("token exchange for principal %q at %s: %w", p.Name, meta.TokenEndpoint, err)
	}
	if t.AccessToken == "" {
		return "", true, errors.New("the token exchange returned no access_token")
	}
	if t.AccessToken == subject {
		// Never forward the client's own token, even if the server hands
		// it back.
		return "", true, errors.New("the token exchange returned the caller's own token")
	}
	e.tok, e.obtained = t, now
	return t.AccessToken, true, nil
}
