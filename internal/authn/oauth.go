package authn

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/isogate/isogate/config"
)

// Defaults of [OAuthOptions].
const (
	// DefaultKeyRefreshGap is the least time between two JWKS fetches
	// caused by unknown kids (server.auth.jwks_min_refresh).
	DefaultKeyRefreshGap = config.DefaultJWKSMinRefresh
	// DefaultKeyMaxAge is how long a fetched JWKS is used before it is
	// fetched again.
	DefaultKeyMaxAge = time.Hour
	// discoveryRetryGap is the least time between two discovery attempts
	// after a failed one.
	discoveryRetryGap = 5 * time.Second
)

// farFuture stands for "does not expire" where the go-sdk wants a time.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// signingAlgorithms are the JWS algorithms accepted: asymmetric only, so
// "none" and HMAC (which an attacker could key with the public key) are
// refused before any key is looked up.
var signingAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// OAuthOptions configure an [OAuth] verifier; zero values mean defaults.
type OAuthOptions struct {
	// Issuer is server.auth.issuer (required).
	Issuer string
	// Audience is server.auth.audience, the resource URL tokens must be
	// bound to (required).
	Audience string
	// ClockSkew is the tolerance on exp, nbf and iat.
	ClockSkew time.Duration
	// GroupsClaim names the claim with the principal's groups; default
	// "groups".
	GroupsClaim string
	// IntrospectionClientID and IntrospectionClientSecret enable RFC 7662
	// introspection of tokens that are not JWTs.
	IntrospectionClientID, IntrospectionClientSecret string
	// HTTPClient fetches discovery, JWKS and introspection; default a
	// client with a 10s timeout.
	HTTPClient *http.Client
	// KeyRefreshGap and KeyMaxAge bound JWKS fetching (defaults above).
	KeyRefreshGap, KeyMaxAge time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger receives discovery problems; default slog.Default().
	Logger *slog.Logger
}

// OAuth verifies access tokens of one issuer: JWTs by signature (the
// issuer's JWKS), iss, aud, exp/nbf/iat; opaque tokens by introspection
// when configured. Discovery happens on first use and is retried.
type OAuth struct {
	opts OAuthOptions

	mu        sync.Mutex
	meta      *oauthex.AuthServerMeta
	keys      *keySet
	lastTried time.Time
	lastErr   error
}

// NewOAuth returns a verifier for opts; it does not contact the issuer yet.
func NewOAuth(opts OAuthOptions) *OAuth {
	if opts.GroupsClaim == "" {
		opts.GroupsClaim = "groups"
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if opts.KeyRefreshGap == 0 {
		opts.KeyRefreshGap = DefaultKeyRefreshGap
	}
	if opts.KeyMaxAge == 0 {
		opts.KeyMaxAge = DefaultKeyMaxAge
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &OAuth{opts: opts}
}

// Discover fetches the issuer's metadata now (it is otherwise fetched on
// the first token), so that a misconfigured issuer shows at startup.
func (o *OAuth) Discover(ctx context.Context) error {
	_, _, err := o.discovered(ctx)
	return err
}

// discovered returns the issuer's metadata and key set, discovering them
// when not yet known (at most once per discoveryRetryGap after a failure).
func (o *OAuth) discovered(ctx context.Context) (*oauthex.AuthServerMeta, *keySet, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.meta != nil {
		return o.meta, o.keys, nil
	}
	if o.lastErr != nil && o.opts.Now().Sub(o.lastTried) < discoveryRetryGap {
		return nil, nil, o.lastErr
	}
	o.lastTried = o.opts.Now()
	meta, err := auth.GetAuthServerMetadata(ctx, o.opts.Issuer, o.opts.HTTPClient)
	if err == nil && meta == nil {
		err = errors.New("no OpenID or OAuth metadata found")
	}
	if err == nil && meta.JWKSURI == "" && o.opts.IntrospectionClientID == "" {
		err = errors.New("the metadata has no jwks_uri")
	}
	if err != nil {
		o.lastErr = fmt.Errorf("discovering issuer %s: %w", o.opts.Issuer, err)
		o.opts.Logger.Warn("auth: issuer discovery failed", slog.String("issuer", o.opts.Issuer), slog.Any("error", err))
		return nil, nil, o.lastErr
	}
	o.meta, o.lastErr = meta, nil
	o.keys = &keySet{url: meta.JWKSURI, client: o.opts.HTTPClient, minGap: o.opts.KeyRefreshGap, maxAge: o.opts.KeyMaxAge, now: o.opts.Now}
	return o.meta, o.keys, nil
}

// Verify is an auth.TokenVerifier.
func (o *OAuth) Verify(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	meta, keys, err := o.discovered(ctx)
	if err != nil {
		return nil, &Rejection{Reason: ReasonUnavailable, Detail: err.Error()}
	}
	if strings.Count(token, ".") != 2 {
		if o.opts.IntrospectionClientID != "" && meta.IntrospectionEndpoint != "" {
			return o.introspect(ctx, meta.IntrospectionEndpoint, token)
		}
		return nil, reject(ReasonMalformed, "not a JWT (and introspection is not configured)")
	}
	return o.verifyJWT(ctx, keys, token)
}

// verifyJWT checks a JWT access token.
func (o *OAuth) verifyJWT(ctx context.Context, keys *keySet, token string) (*auth.TokenInfo, error) {
	skew := o.opts.ClockSkew
	parser := jwt.NewParser(
		jwt.WithValidMethods(signingAlgorithms),
		jwt.WithIssuer(o.opts.Issuer),
		jwt.WithLeeway(skew),
		jwt.WithIssuedAt(),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(o.opts.Now),
	)
	claims := jwt.MapClaims{}
	var keyErr error
	_, err := parser.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		k, err := keys.key(ctx, kid)
		if err != nil {
			keyErr = err
			return nil, err
		}
		if !keyFits(t.Method.Alg(), k.Key) {
			keyErr = reject(ReasonKeyType, "alg %s does not fit the key of kid %q", t.Method.Alg(), kid)
			return nil, keyErr
		}
		return k.Key, nil
	})
	if err != nil {
		return nil, classify(err, keyErr)
	}
	aud, _ := claims.GetAudience()
	if !oauthex.MatchesResource(aud, o.opts.Audience) {
		return nil, reject(ReasonAudience, "the token is for %q, not %q", []string(aud), o.opts.Audience)
	}
	sub, _ := claims.GetSubject()
	if sub == "" {
		return nil, reject(ReasonNoSubject, "the token names no subject")
	}
	exp, _ := claims.GetExpirationTime()
	p := &Principal{Name: sub, Groups: stringList(claims[o.opts.GroupsClaim]), Scopes: scopes(claims), token: &accessToken{token}}
	// The go-sdk compares Expiration with its own clock: give it ours,
	// with the skew already applied.
	info := &auth.TokenInfo{Expiration: exp.Time.Add(skew).Add(time.Since(o.opts.Now()))}
	return tokenInfo(p, info), nil
}

// keyFits reports whether key is of the family alg needs: an RSA key for
// RS*/PS*, an ECDSA key for ES*, an Ed25519 key for EdDSA.
func keyFits(alg string, key any) bool {
	switch {
	case strings.HasPrefix(alg, "RS"), strings.HasPrefix(alg, "PS"):
		_, ok := key.(*rsa.PublicKey)
		return ok
	case strings.HasPrefix(alg, "ES"):
		_, ok := key.(*ecdsa.PublicKey)
		return ok
	case alg == "EdDSA":
		_, ok := key.(ed25519.PublicKey)
		return ok
	}
	return false
}

// classify turns a parse error into a Rejection.
func classify(err, keyErr error) error {
	if keyErr != nil && ReasonOf(keyErr) != "" {
		return keyErr
	}
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return reject(ReasonMalformed, "%v", err)
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		if strings.Contains(err.Error(), "signing method") {
			return reject(ReasonAlgorithm, "only %s are accepted", strings.Join(signingAlgorithms, ", "))
		}
		return reject(ReasonSignature, "the signature does not verify")
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return reject(ReasonIssuer, "the token's iss is not the configured issuer")
	case errors.Is(err, jwt.ErrTokenExpired):
		return reject(ReasonExpired, "the token has expired")
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return reject(ReasonNotYetValid, "the token is not valid yet")
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return reject(ReasonNoExpiry, "the token has no exp")
	}
	return reject(ReasonMalformed, "%v", err)
}

// introspect asks the issuer about an opaque token (RFC 7662).
func (o *OAuth) introspect(ctx context.Context, endpoint, token string) (*auth.TokenInfo, error) {
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("introspection request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(o.opts.IntrospectionClientID), url.QueryEscape(o.opts.IntrospectionClientSecret))
	resp, err := o.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, &Rejection{Reason: ReasonUnavailable, Detail: "introspection: " + err.Error()}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &Rejection{Reason: ReasonUnavailable, Detail: "introspection: status " + resp.Status}
	}
	claims := jwt.MapClaims{}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxJWKSBytes)).Decode(&claims); err != nil {
		return nil, &Rejection{Reason: ReasonUnavailable, Detail: "introspection: " + err.Error()}
	}
	if active, _ := claims["active"].(bool); !active {
		return nil, reject(ReasonInactive, "the issuer says the token is not active")
	}
	if iss, _ := claims.GetIssuer(); iss != "" && iss != o.opts.Issuer {
		return nil, reject(ReasonIssuer, "the token's iss is not the configured issuer")
	}
	if aud, _ := claims.GetAudience(); !oauthex.MatchesResource(aud, o.opts.Audience) {
		return nil, reject(ReasonAudience, "the token is for %q, not %q", []string(aud), o.opts.Audience)
	}
	now := o.opts.Now()
	exp, _ := claims.GetExpirationTime()
	expires := farFuture
	if exp != nil {
		if now.After(exp.Add(o.opts.ClockSkew)) {
			return nil, reject(ReasonExpired, "the token has expired")
		}
		expires = exp.Time.Add(o.opts.ClockSkew).Add(time.Since(now))
	}
	sub, _ := claims.GetSubject()
	if sub == "" {
		if cid, _ := claims["client_id"].(string); cid != "" {
			sub = cid
		} else {
			return nil, reject(ReasonNoSubject, "the token names no subject")
		}
	}
	p := &Principal{Name: sub, Groups: stringList(claims[o.opts.GroupsClaim]), Scopes: scopes(claims), token: &accessToken{token}}
	return tokenInfo(p, &auth.TokenInfo{Expiration: expires}), nil
}

// scopes reads a token's scopes: "scope" (space-separated, RFC 9068) or
// "scp" (a list, or a string).
func scopes(claims jwt.MapClaims) []string {
	if s := stringList(claims["scope"]); len(s) > 0 {
		return s
	}
	return stringList(claims["scp"])
}

// stringList reads a claim that is a list of strings or a space-separated
// string.
func stringList(v any) []string {
	switch v := v.(type) {
	case string:
		return strings.Fields(v)
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
