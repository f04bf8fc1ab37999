package authn

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
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

// OAuthOptions configure an [OAuth] verifier; zero values mean defaults
// (those of server.auth keys are config.Default()'s).
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
	// IntrospectionCacheTTL is the longest an introspection answer is
	// reused (server.auth.introspection_cache_ttl).
	IntrospectionCacheTTL time.Duration
	// IntrospectionRate is the most introspection requests per second
	// (server.auth.introspection_rate).
	IntrospectionRate int
	// HTTPClient fetches discovery, JWKS and introspection; default a
	// client with a 10s timeout.
	HTTPClient *http.Client
	// KeyRefreshGap is the least time between two JWKS fetches
	// (server.auth.jwks_min_refresh).
	KeyRefreshGap time.Duration
	// KeyMaxAge is how long a fetched JWKS is used; default
	// DefaultKeyMaxAge.
	KeyMaxAge time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger receives discovery problems; default slog.Default().
	Logger *slog.Logger
}

// OAuth verifies access tokens of one issuer: JWTs by signature (the
// issuer's JWKS), iss, aud, exp/nbf/iat; opaque tokens by introspection
// when configured. Discovery happens on first use and is retried.
type OAuth struct {
	opts      OAuthOptions
	discovery *refresher

	mu    sync.Mutex
	meta  *issuerMetadata
	keys  *keySet
	intro *introspector
}

// NewOAuth returns a verifier for opts; it does not contact the issuer yet.
func NewOAuth(opts OAuthOptions) *OAuth {
	if opts.GroupsClaim == "" {
		opts.GroupsClaim = "groups"
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: issuerTimeout}
	}
	if opts.KeyMaxAge == 0 {
		opts.KeyMaxAge = DefaultKeyMaxAge
	}
	d := config.Default().Server.Auth
	if opts.KeyRefreshGap <= 0 {
		opts.KeyRefreshGap = d.JWKSMinRefresh
	}
	if opts.IntrospectionCacheTTL <= 0 {
		opts.IntrospectionCacheTTL = d.IntrospectionCacheTTL
	}
	if opts.IntrospectionRate <= 0 {
		opts.IntrospectionRate = d.IntrospectionRate
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	o := &OAuth{opts: opts}
	o.discovery = &refresher{gap: discoveryRetryGap, now: opts.Now, fetch: o.discover}
	return o
}

// Discover fetches the issuer's metadata now (it is otherwise fetched on
// the first token), so that a misconfigured issuer shows at startup.
func (o *OAuth) Discover(ctx context.Context) error {
	_, _, _, err := o.discovered(ctx)
	return err
}

// discovered returns the issuer's metadata, key set and introspector,
// discovering them when not yet known: one discovery at a time, shared by
// the checks that wait for it, and at most one per discoveryRetryGap
// after a failure.
func (o *OAuth) discovered(ctx context.Context) (*issuerMetadata, *keySet, *introspector, error) {
	if m, ks, in := o.current(); m != nil {
		return m, ks, in, nil
	}
	a := o.discovery.begin()
	var err error
	if a == nil {
		err = o.discovery.lastError()
	} else {
		err = a.wait(ctx)
	}
	if m, ks, in := o.current(); m != nil {
		return m, ks, in, nil
	}
	if err == nil {
		err = errors.New("issuer discovery under way")
	}
	return nil, nil, nil, &Rejection{Reason: ReasonUnavailable, Detail: err.Error()}
}

// current returns what discovery found, or nils.
func (o *OAuth) current() (*issuerMetadata, *keySet, *introspector) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.meta, o.keys, o.intro
}

// discover reads the issuer's metadata (the refresher's fetch).
func (o *OAuth) discover(ctx context.Context) error {
	meta, err := discoverIssuer(ctx, o.opts.HTTPClient, o.opts.Issuer, o.opts.IntrospectionClientID != "")
	if err != nil {
		err = fmt.Errorf("discovering issuer %s: %w", o.opts.Issuer, err)
		o.opts.Logger.Warn("auth: issuer discovery failed", slog.String("issuer", o.opts.Issuer), slog.Any("error", err))
		return err
	}
	var keys *keySet
	if meta.JWKSURI != "" {
		keys = newKeySet(meta.JWKSURI, o.opts.HTTPClient, o.opts.KeyRefreshGap, o.opts.KeyMaxAge, o.opts.Now)
	}
	var intro *introspector
	if o.opts.IntrospectionClientID != "" && meta.IntrospectionEndpoint != "" {
		intro = newIntrospector(o, meta.IntrospectionEndpoint)
	}
	o.mu.Lock()
	o.meta, o.keys, o.intro = meta, keys, intro
	o.mu.Unlock()
	return nil
}

// Verify is an auth.TokenVerifier.
func (o *OAuth) Verify(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	_, keys, intro, err := o.discovered(ctx)
	if err != nil {
		return nil, err
	}
	if strings.Count(token, ".") != 2 {
		if intro != nil {
			return intro.check(ctx, token)
		}
		return nil, reject(ReasonMalformed, "not a JWT (and introspection is not configured)")
	}
	if keys == nil {
		return nil, reject(ReasonMalformed, "a JWT, but the issuer publishes no jwks_uri (only introspection)")
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
		if crit, ok := t.Header["crit"]; ok {
			// RFC 7515 §4.1.11: a recipient must reject a JWS whose crit
			// names an extension it does not understand; isogate
			// understands none.
			keyErr = reject(ReasonMalformed, "the token's crit header %v names extensions isogate does not implement (RFC 7515 §4.1.11)", crit)
			return nil, keyErr
		}
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
