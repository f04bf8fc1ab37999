package authn

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// introspectionCacheEntries bounds the introspection cache; when it is
// full, expired answers go first, then arbitrary ones.
const introspectionCacheEntries = 10_000

// maxIntrospectionBytes bounds an introspection answer.
const maxIntrospectionBytes = 1 << 20

// introspector checks opaque tokens at the issuer's introspection
// endpoint (RFC 7662). Answers are cached by the SHA-256 of the token
// (the token itself is neither a key nor logged) for
// server.auth.introspection_cache_ttl at most, an active token's no longer
// than its exp; concurrent checks of one token share one request; and at
// most server.auth.introspection_rate requests per second reach the
// issuer (a token bucket with a burst of as many), whatever they answer,
// so a flood of made-up tokens, or a failing issuer, costs the issuer that
// many requests and the flood's senders a 503.
type introspector struct {
	o        *OAuth
	endpoint string

	mu        sync.Mutex
	cache     map[[32]byte]introspected
	asking    map[[32]byte]*introspection
	allowance float64   // requests the bucket holds
	refilled  time.Time // when allowance was last topped up
}

// introspected is the issuer's judgement of one token: a principal (and
// the token's expiry, zero for none) or a rejection; until is when it is
// no longer reused.
type introspected struct {
	p       *Principal
	expires time.Time
	err     error
	until   time.Time
}

// introspection is one request in flight; done is closed once res is set.
type introspection struct {
	done chan struct{}
	res  introspected
}

func newIntrospector(o *OAuth, endpoint string) *introspector {
	return &introspector{o: o, endpoint: endpoint, cache: map[[32]byte]introspected{}, asking: map[[32]byte]*introspection{},
		allowance: float64(o.opts.IntrospectionRate), refilled: o.opts.Now()}
}

// check judges an opaque token: from the cache, by joining the request in
// flight for it, or by asking the issuer if the rate allows.
func (in *introspector) check(ctx context.Context, token string) (*auth.TokenInfo, error) {
	key := sha256.Sum256([]byte(token))
	now := in.o.opts.Now()
	in.mu.Lock()
	if e, ok := in.cache[key]; ok && now.Before(e.until) {
		in.mu.Unlock()
		return in.answer(e)
	}
	if q := in.asking[key]; q != nil {
		in.mu.Unlock()
		select {
		case <-q.done:
			return in.answer(q.res)
		case <-ctx.Done():
			return nil, &Rejection{Reason: ReasonUnavailable, Detail: "introspection: " + ctx.Err().Error()}
		}
	}
	if wait, ok := in.take(now); !ok {
		in.mu.Unlock()
		return nil, &Rejection{Reason: ReasonRateLimited, RetryAfter: wait,
			Detail: fmt.Sprintf("more than %d introspection requests per second (server.auth.introspection_rate)", in.o.opts.IntrospectionRate)}
	}
	q := &introspection{done: make(chan struct{})}
	in.asking[key] = q
	in.mu.Unlock()

	// The request is everyone's who waits for it: it does not end with
	// this caller's context.
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), issuerTimeout)
	res, cacheable := in.ask(actx, token)
	cancel()
	in.mu.Lock()
	delete(in.asking, key)
	if cacheable {
		in.store(key, res)
	}
	q.res = res
	in.mu.Unlock()
	close(q.done)
	return in.answer(res)
}

// take takes one request from the bucket, or says how long until one is
// there.
func (in *introspector) take(now time.Time) (time.Duration, bool) {
	rate := float64(in.o.opts.IntrospectionRate)
	if elapsed := now.Sub(in.refilled).Seconds(); elapsed > 0 {
		in.allowance = math.Min(rate, in.allowance+elapsed*rate)
		in.refilled = now
	}
	if in.allowance >= 1 {
		in.allowance--
		return 0, true
	}
	return time.Duration((1 - in.allowance) / rate * float64(time.Second)), false
}

// store caches res under key, making room when the cache is full.
func (in *introspector) store(key [32]byte, res introspected) {
	if len(in.cache) >= introspectionCacheEntries {
		now := in.o.opts.Now()
		for k, e := range in.cache {
			if !now.Before(e.until) {
				delete(in.cache, k)
			}
		}
		for k := range in.cache {
			if len(in.cache) < introspectionCacheEntries {
				break
			}
			delete(in.cache, k)
		}
	}
	in.cache[key] = res
}

// answer turns a judgement into the verifier's result, checking expiry
// again (a cached answer may outlive the token by the clock skew only).
func (in *introspector) answer(e introspected) (*auth.TokenInfo, error) {
	if e.err != nil {
		return nil, e.err
	}
	expires := farFuture
	if !e.expires.IsZero() {
		now := in.o.opts.Now()
		if now.After(e.expires.Add(in.o.opts.ClockSkew)) {
			return nil, reject(ReasonExpired, "the token has expired")
		}
		// The go-sdk compares Expiration with its own clock.
		expires = e.expires.Add(in.o.opts.ClockSkew).Add(time.Since(now))
	}
	return tokenInfo(e.p, &auth.TokenInfo{Expiration: expires}), nil
}

// ask asks the issuer about token. cacheable is false when the issuer
// could not answer (that is not the token's fault).
func (in *introspector) ask(ctx context.Context, token string) (res introspected, cacheable bool) {
	unavailable := func(detail string) (introspected, bool) {
		return introspected{err: &Rejection{Reason: ReasonUnavailable, Detail: "introspection: " + detail}}, false
	}
	opts := in.o.opts
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return unavailable(err.Error())
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(opts.IntrospectionClientID), url.QueryEscape(opts.IntrospectionClientSecret))
	resp, err := opts.HTTPClient.Do(req)
	if err != nil {
		return unavailable(err.Error())
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return unavailable("status " + resp.Status)
	}
	claims := jwt.MapClaims{}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxIntrospectionBytes)).Decode(&claims); err != nil {
		return unavailable(err.Error())
	}
	now := opts.Now()
	until := now.Add(opts.IntrospectionCacheTTL)
	refused := func(err error) (introspected, bool) { return introspected{err: err, until: until}, true }
	if active, _ := claims["active"].(bool); !active {
		return refused(reject(ReasonInactive, "the issuer says the token is not active"))
	}
	if iss, _ := claims.GetIssuer(); iss != "" && iss != opts.Issuer {
		return refused(reject(ReasonIssuer, "the token's iss is not the configured issuer"))
	}
	if aud, _ := claims.GetAudience(); !oauthex.MatchesResource(aud, opts.Audience) {
		return refused(reject(ReasonAudience, "the token is for %q, not %q", []string(aud), opts.Audience))
	}
	var expires time.Time
	if exp, _ := claims.GetExpirationTime(); exp != nil {
		expires = exp.Time
		if now.After(expires.Add(opts.ClockSkew)) {
			return refused(reject(ReasonExpired, "the token has expired"))
		}
		if end := expires.Add(opts.ClockSkew); end.Before(until) {
			until = end
		}
	}
	sub, _ := claims.GetSubject()
	if sub == "" {
		sub, _ = claims["client_id"].(string)
	}
	if sub == "" {
		return refused(reject(ReasonNoSubject, "the token names no subject"))
	}
	p := &Principal{Name: sub, Groups: stringList(claims[opts.GroupsClaim]), Scopes: scopes(claims), token: &accessToken{token}}
	return introspected{p: p, expires: expires, until: until}, true
}
