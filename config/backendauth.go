package config

import "strings"

// BackendAuthType selects how the gateway obtains the access token it
// sends to an HTTP backend (backends.<name>.auth.type).
type BackendAuthType string

// The kinds of backend authentication. The zero value sends no token of
// the gateway's own (static credentials go in backends.<name>.headers).
const (
	// BackendAuthClientCredentials: the gateway's own token, by the OAuth
	// client credentials grant (RFC 6749 §4.4).
	BackendAuthClientCredentials BackendAuthType = "client_credentials"
	// BackendAuthTokenExchange: a token for the calling principal, by
	// exchanging the principal's validated access token (RFC 8693).
	BackendAuthTokenExchange BackendAuthType = "token_exchange"
	// BackendAuthAuthorizationCode: a person's token, obtained once with
	// `isogate login <backend>` (authorization code + PKCE) and refreshed.
	BackendAuthAuthorizationCode BackendAuthType = "authorization_code"
)

// BackendAuth is how the gateway authenticates to an HTTP backend with
// OAuth (backends.<name>.auth). The token it obtains is sent as
// "Authorization: Bearer" on every request to the backend; the client's
// own token is never forwarded.
type BackendAuth struct {
	// Type is client_credentials, token_exchange or authorization_code;
	// empty: none.
	Type BackendAuthType `koanf:"type"`
	// Issuer is the authorization server; its token and authorization
	// endpoints are discovered from its metadata (RFC 8414 / OpenID).
	// Without issuer and token_url, the authorization server, the resource
	// and the scopes are discovered from the backend's protected-resource
	// metadata (RFC 9728), as MCP clients do. ${VAR} is expanded.
	Issuer string `koanf:"issuer"`
	// TokenURL is the token endpoint, instead of discovering it. ${VAR}
	// is expanded.
	TokenURL string `koanf:"token_url"`
	// AuthorizationURL is the authorization endpoint
	// (authorization_code), instead of discovering it.
	AuthorizationURL string `koanf:"authorization_url"`
	// ClientID is the gateway's client at the authorization server; for
	// authorization_code it may be empty (dynamic client registration, or
	// ClientMetadataURL). ${VAR} is expanded.
	ClientID string `koanf:"client_id"`
	// ClientSecret authenticates ClientID (HTTP Basic, or in the form when
	// the server wants it). ${VAR} is expanded.
	ClientSecret string `koanf:"client_secret"`
	// Scopes are the scopes asked for.
	Scopes []string `koanf:"scopes"`
	// Resource is the RFC 8707 resource indicator the token is for;
	// default the backend's url (what the MCP authorization spec asks).
	Resource string `koanf:"resource"`
	// Audience is sent as the "audience" parameter (RFC 8693, and servers
	// such as Auth0 that want it for client credentials); default none.
	Audience string `koanf:"audience"`
	// ClientMetadataURL is an HTTPS URL of a client-ID metadata document
	// used as the client_id (authorization_code) where the server supports
	// them and ClientID is empty.
	ClientMetadataURL string `koanf:"client_metadata_url"`
	// RedirectPort is the loopback port `isogate login` listens on for the
	// redirect (authorization_code); 0: any free port.
	RedirectPort int `koanf:"redirect_port"`
	// TokenFile is where `isogate login` stores the tokens
	// (authorization_code), with 0600 permissions; default
	// <server.cache_dir>/oauth/<backend>.json.
	TokenFile string `koanf:"token_file"`
}

// validateBackendAuth checks backends.<name>.auth of b.
func (c *collector) validateBackendAuth(key string, b Backend) {
	a := b.Auth
	backendKey := key
	key += ".auth"
	switch a.Type {
	case "":
		return
	case BackendAuthClientCredentials, BackendAuthTokenExchange, BackendAuthAuthorizationCode:
	default:
		c.oneOf(key+".type", string(a.Type), string(BackendAuthClientCredentials), string(BackendAuthTokenExchange), string(BackendAuthAuthorizationCode))
		return
	}
	if t := b.Transport; t != "" && t != TransportStreamableHTTP && t != TransportSSE {
		c.add(key, "only used by HTTP backends (streamable-http, sse)")
	}
	for name := range b.Headers {
		if strings.EqualFold(name, "Authorization") {
			c.add(joinKey(backendKey+".headers", name), "auth sets the Authorization header: remove one of them")
		}
	}
	// Without issuer, token_url and authorization_url the authorization
	// server is discovered from the backend (RFC 9728); token_url alone
	// (or with authorization_url) names it, as issuer does.
	if a.Issuer == "" && a.TokenURL == "" && a.AuthorizationURL != "" {
		c.add(key, "authorization_url needs token_url (or issuer)")
	}
	if a.Type == BackendAuthAuthorizationCode {
		if a.Issuer == "" && a.TokenURL != "" && a.AuthorizationURL == "" {
			c.add(key, "authorization_code needs issuer (discovery) or authorization_url")
		}
	} else if a.ClientID == "" {
		c.add(key+".client_id", string(a.Type)+" needs a client_id")
	}
	for field, v := range map[string]string{"issuer": a.Issuer, "token_url": a.TokenURL, "authorization_url": a.AuthorizationURL, "client_metadata_url": a.ClientMetadataURL, "resource": a.Resource} {
		if v != "" {
			c.checkURL(key+"."+field, v)
		}
	}
	c.between(key+".redirect_port", int64(a.RedirectPort), 0, 65535)
	for i, s := range a.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\r\n\"\\") {
			c.add(indexKey(key+".scopes", i), "not a valid OAuth scope")
		}
	}
	if strings.ContainsAny(a.Audience, "\r\n") || strings.ContainsAny(a.ClientID, "\r\n") {
		c.add(key, "audience and client_id must not contain line breaks")
	}
}
