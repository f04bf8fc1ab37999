package app

import (
	"fmt"
	"log/slog"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/surface"
)

// authOptions maps server.auth (and server.auth_token) onto the surface's
// authentication: the static tokens always (empty outside token mode), and
// in oauth mode a verifier of server.auth.issuer's tokens.
func authOptions(s config.ServerConfig, logger *slog.Logger) surface.AuthOptions {
	a := s.Auth
	out := surface.AuthOptions{Admins: a.Admins, ApprovalAtSave: a.ApprovalAtSave}
	switch s.EffectiveMode() {
	case config.AuthToken:
		out.Tokens = authn.NewStatic(a.Tokens, s.AuthToken)
	case config.AuthOAuth:
		out.Tokens = authn.NewStatic(nil, "")
		out.Issuer, out.Audience, out.Scopes = a.Issuer, a.Audience, a.Scopes
		out.OAuth = authn.NewOAuth(authn.OAuthOptions{
			Issuer: a.Issuer, Audience: a.Audience, ClockSkew: a.ClockSkew, GroupsClaim: a.GroupsClaim, KeyRefreshGap: a.JWKSMinRefresh,
			IntrospectionClientID: a.IntrospectionClientID, IntrospectionClientSecret: a.IntrospectionClientSecret,
			IntrospectionCacheTTL: a.IntrospectionCacheTTL, IntrospectionRate: a.IntrospectionRate,
			Logger: logger,
		})
	default:
		out.Tokens = authn.NewStatic(nil, "")
	}
	return out
}

// warnShortToken warns, loudly, about a server.auth_token shorter than
// config.MinAuthTokenLength: it is accepted (a loopback gateway for one
// user may not need more) but can be guessed.
func warnShortToken(logger *slog.Logger, token string) {
	if token == "" || len(token) >= config.MinAuthTokenLength {
		return
	}
	logger.Warn(fmt.Sprintf("server.auth_token is %d characters, shorter than %d: a client can guess it; "+
		"use a random token of at least %d characters (e.g. openssl rand -hex 16)", len(token), config.MinAuthTokenLength, config.MinAuthTokenLength),
		slog.Int("length", len(token)))
}
