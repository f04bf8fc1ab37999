package surface

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/isogate/isogate/internal/authn"
)

// AuthOptions configure who may call the HTTP endpoint (server.auth).
type AuthOptions struct {
	// Tokens verifies the static tokens of token mode (server.auth.tokens
	// and server.auth_token); nil: built from Options.AuthToken.
	Tokens *authn.Static
	// OAuth, when set, makes /mcp an OAuth 2.1 resource server of Issuer
	// for Audience (server.auth.mode oauth); Tokens are then not accepted.
	OAuth *authn.OAuth
	// Issuer, Audience and Scopes are server.auth.issuer, .audience and
	// .scopes (oauth mode).
	Issuer, Audience string
	Scopes           []string
	// Admins see gateway-wide figures in isogate://stats
	// (server.auth.admins).
	Admins []string
	// ApprovalAtSave (server.auth.approval_at_save) lets the plan approval
	// a saved version got at save stand for its saver's direct calls.
	ApprovalAtSave bool
}

// verifier is the token verifier in force, or nil when every caller is let
// in (no token configured and not oauth mode).
func (sf *Surface) verifier() auth.TokenVerifier {
	if sf.opts.Auth.OAuth != nil {
		return sf.opts.Auth.OAuth.Verify
	}
	if sf.tokens.Empty() {
		return nil
	}
	return sf.tokens.Verify
}

// authEnabled reports whether callers must authenticate.
func (sf *Surface) authEnabled() bool { return sf.verifier() != nil }

// requireAuth guards next with auth.RequireBearerToken over the verifier in
// force. A rejected request is answered 401 (no, or an invalid, token) or
// 403 (insufficient_scope) with the challenge of RFC 6750 and RFC 9728,
// without its body being read, and logged with the reason (never token
// material). An accepted request carries its principal to next.
func (sf *Surface) requireAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		verify := sf.verifier()
		if verify == nil {
			next.ServeHTTP(w, r)
			return
		}
		var (
			verr error
			info *auth.TokenInfo
		)
		capture := func(ctx context.Context, token string, req *http.Request) (*auth.TokenInfo, error) {
			info, verr = verify(ctx, token, req)
			return info, verr
		}
		cw := &challengeWriter{ResponseWriter: w, sf: sf, r: r, verr: &verr, info: &info}
		// next gets the real writer: cw only sees rejections.
		inner := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { next.ServeHTTP(w, r) })
		auth.RequireBearerToken(capture, &auth.RequireBearerTokenOptions{Scopes: sf.opts.Auth.Scopes})(inner).ServeHTTP(cw, r)
	})
}

// challengeWriter rewrites the go-sdk's rejection: the WWW-Authenticate
// challenge with error, scope and resource_metadata (or 503 with
// Retry-After when the issuer could not be asked), the connection closed,
// and a log line naming the reason.
type challengeWriter struct {
	http.ResponseWriter
	sf   *Surface
	r    *http.Request
	verr *error
	info **auth.TokenInfo
	done bool
}

func (cw *challengeWriter) WriteHeader(code int) {
	if cw.done {
		return
	}
	cw.done = true
	var rej *authn.Rejection
	undecided := code == http.StatusUnauthorized && errors.As(*cw.verr, &rej) && rej.Undecided()
	if code == http.StatusUnauthorized || code == http.StatusForbidden {
		reason, detail := cw.reason(code)
		if undecided {
			// The issuer could not be asked: the token is not known to be
			// bad, so no invalid_token (which would make a client drop it).
			code = http.StatusServiceUnavailable
			cw.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(rej.RetryAfter.Seconds())))))
		} else {
			cw.Header().Set("WWW-Authenticate", cw.sf.challenge(reason))
		}
		cw.Header().Set("Connection", "close")
		attrs := []any{slog.String("reason", string(reason)), slog.Int("status", code),
			slog.String("remote", cw.r.RemoteAddr), slog.String("path", cw.r.URL.Path)}
		if detail != "" {
			attrs = append(attrs, slog.String("detail", detail))
		}
		if p := authn.FromTokenInfo(*cw.info); p != nil {
			attrs = append(attrs, slog.String("principal", p.Name))
		}
		cw.sf.logger.Warn("auth: request rejected", attrs...)
		cw.sf.metrics.AuthRejection(string(reason))
	}
	cw.ResponseWriter.WriteHeader(code)
}

func (cw *challengeWriter) Write(b []byte) (int, error) {
	if !cw.done {
		cw.WriteHeader(http.StatusOK)
	}
	return cw.ResponseWriter.Write(b)
}

// reason names why the go-sdk rejected the request.
func (cw *challengeWriter) reason(code int) (authn.Reason, string) {
	if code == http.StatusForbidden {
		var have []string
		if *cw.info != nil {
			have = (*cw.info).Scopes
		}
		var missing []string
		for _, s := range cw.sf.opts.Auth.Scopes {
			if !slices.Contains(have, s) {
				missing = append(missing, s)
			}
		}
		return authn.ReasonScope, "missing scopes: " + strings.Join(missing, " ")
	}
	if err := *cw.verr; err != nil {
		if reason := authn.ReasonOf(err); reason != "" {
			var rej *authn.Rejection
			if errors.As(err, &rej) {
				return reason, rej.Detail
			}
			return reason, ""
		}
		return authn.ReasonMalformed, ""
	}
	if *cw.info != nil {
		return authn.ReasonExpired, ""
	}
	return authn.ReasonMissing, ""
}

// challenge is the WWW-Authenticate value for a rejection: RFC 6750's
// error (none when no token was sent), the required scope, and RFC 9728's
// resource_metadata in oauth mode.
func (sf *Surface) challenge(reason authn.Reason) string {
	params := []string{`realm="isogate"`}
	switch reason {
	case authn.ReasonMissing:
	case authn.ReasonScope:
		params = append(params, `error="insufficient_scope"`)
	default:
		params = append(params, `error="invalid_token"`)
	}
	if len(sf.opts.Auth.Scopes) > 0 {
		params = append(params, fmt.Sprintf("scope=%q", strings.Join(sf.opts.Auth.Scopes, " ")))
	}
	if u := sf.resourceMetadataURL(); u != "" {
		params = append(params, fmt.Sprintf("resource_metadata=%q", u))
	}
	return "Bearer " + strings.Join(params, ", ")
}

// resourceMetadataURL is where the protected-resource metadata of
// server.auth.audience is served: the path-suffixed well-known URL of
// RFC 9728 §3.1 ("" outside oauth mode).
func (sf *Surface) resourceMetadataURL() string {
	if sf.opts.Auth.OAuth == nil {
		return ""
	}
	u, err := url.Parse(sf.opts.Auth.Audience)
	if err != nil {
		return ""
	}
	u.Path = protectedResourcePath + strings.TrimSuffix(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	return u.String()
}

// protectedResourcePath is RFC 9728's well-known path.
const protectedResourcePath = "/.well-known/oauth-protected-resource"

// protectedResource serves RFC 9728 metadata (oauth mode): at the plain
// well-known path and at the one suffixed with /mcp.
func (sf *Surface) protectedResource() []httpRoute {
	if sf.opts.Auth.OAuth == nil {
		return nil
	}
	h := auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               sf.opts.Auth.Audience,
		AuthorizationServers:   []string{sf.opts.Auth.Issuer},
		ScopesSupported:        sf.opts.Auth.Scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "isogate",
	})
	rs := []httpRoute{{protectedResourcePath, h}, {protectedResourcePath + "/mcp", h}}
	if u, err := url.Parse(sf.opts.Auth.Audience); err == nil {
		if p := strings.TrimSuffix(u.Path, "/"); p != "" && p != "/mcp" {
			rs = append(rs, httpRoute{protectedResourcePath + p, h})
		}
	}
	return rs
}

// principalOf is the principal req was authenticated as, or nil (stdio,
// no auth configured).
func principalOf(req mcp.Request) *authn.Principal {
	if req == nil {
		return nil
	}
	if extra := req.GetExtra(); extra != nil {
		return authn.FromTokenInfo(extra.TokenInfo)
	}
	return nil
}
