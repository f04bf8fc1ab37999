package authn

import (
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Reason names why a token was rejected, for the log line and the
// isogate_auth_rejections_total metric; it never includes token material.
type Reason string

// The reasons a token is rejected.
const (
	ReasonMissing      Reason = "missing_token"
	ReasonMalformed    Reason = "malformed"
	ReasonUnknownToken Reason = "unknown_token" // token mode: no such token
	ReasonAlgorithm    Reason = "alg_not_allowed"
	ReasonKeyType      Reason = "key_type_mismatch"
	ReasonUnknownKid   Reason = "unknown_kid"
	ReasonSignature    Reason = "bad_signature"
	ReasonIssuer       Reason = "wrong_issuer"
	ReasonAudience     Reason = "wrong_audience"
	ReasonExpired      Reason = "expired"
	ReasonNotYetValid  Reason = "not_yet_valid"
	ReasonNoExpiry     Reason = "missing_exp"
	ReasonNoSubject    Reason = "missing_sub"
	ReasonInactive     Reason = "inactive" // introspection said active: false
	ReasonScope        Reason = "insufficient_scope"
	ReasonUnavailable  Reason = "issuer_unavailable"    // discovery, JWKS or introspection failed
	ReasonRateLimited  Reason = "introspection_limited" // server.auth.introspection_rate reached
)

// Rejection is a token refused for Reason. It unwraps to
// auth.ErrInvalidToken, which auth.RequireBearerToken answers with 401.
type Rejection struct {
	Reason Reason
	Detail string // what was wrong, without token material
	// RetryAfter, when set, is how long until asking again may succeed.
	RetryAfter time.Duration
}

// Undecided reports whether the token was not judged at all because the
// issuer could not be asked (ReasonUnavailable, ReasonRateLimited): the
// answer is then 503, not 401, so that a client keeps its token.
func (r *Rejection) Undecided() bool {
	return r.Reason == ReasonUnavailable || r.Reason == ReasonRateLimited
}

func (r *Rejection) Error() string {
	if r.Detail == "" {
		return fmt.Sprintf("invalid token (%s)", r.Reason)
	}
	return fmt.Sprintf("invalid token (%s): %s", r.Reason, r.Detail)
}

// Unwrap makes a Rejection an auth.ErrInvalidToken.
func (r *Rejection) Unwrap() error { return auth.ErrInvalidToken }

func reject(reason Reason, format string, args ...any) error {
	return &Rejection{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// ReasonOf returns err's Reason, or "" for another error.
func ReasonOf(err error) Reason {
	var r *Rejection
	if errors.As(err, &r) {
		return r.Reason
	}
	return ""
}
