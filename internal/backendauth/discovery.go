package backendauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// probeBody is the request that asks an unauthorized backend for its
// challenge: an MCP initialize, what a client sends first.
const probeBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"isogate","version":"discovery"}}}`

// fromBackend is what the backend said about its authorization: its
// authorization server's metadata, the resource its protected-resource
// metadata names and the scopes it asks for.
type fromBackend struct {
	meta     *oauthex.AuthServerMeta
	resource string
	scopes   []string
}

// discoverFromBackend finds the backend's authorization server as the MCP
// authorization spec has a client do (auth configured with neither issuer
// nor token_url): it sends the backend an unauthenticated initialize, reads
// resource_metadata and scope from the 401's WWW-Authenticate, fetches the
// protected-resource metadata (RFC 9728) from there, else from the
// well-known URL at the backend's path, else at its root, and then the
// metadata of its first authorization server (RFC 8414 / OpenID, whose
// issuer must match). A backend without protected-resource metadata is its
// own authorization server (MCP 2025-03-26); one without server metadata
// either has the default endpoints /authorize, /token and /register.
func (a *Authorizer) discoverFromBackend(ctx context.Context) (*fromBackend, error) {
	challenges := a.probe(ctx)
	var metadataURL, scope string
	for _, c := range challenges {
		if metadataURL == "" {
			metadataURL = c.Params["resource_metadata"]
		}
		if c.Scheme == "bearer" && scope == "" {
			scope = c.Params["scope"]
		}
	}
	prm, err := a.resourceMetadata(ctx, metadataURL)
	if err != nil {
		return nil, err
	}
	var found fromBackend
	issuer := ""
	if prm != nil {
		found.resource = prm.Resource
		issuer = prm.AuthorizationServers[0]
	} else {
		u, err := url.Parse(a.opts.URL)
		if err != nil {
			return nil, fmt.Errorf("backend url: %w", err)
		}
		u.Path, u.RawPath, u.RawQuery, u.Fragment = "", "", "", ""
		issuer = u.String()
	}
	meta, err := auth.GetAuthServerMetadata(ctx, issuer, a.opts.HTTPClient)
	if err != nil {
		return nil, fmt.Errorf("discovering authorization server %s: %w", issuer, err)
	}
	if meta == nil {
		base := strings.TrimSuffix(issuer, "/")
		meta = &oauthex.AuthServerMeta{Issuer: issuer, AuthorizationEndpoint: base + "/authorize",
			TokenEndpoint: base + "/token", RegistrationEndpoint: base + "/register"}
	}
	found.meta = meta
	switch {
	case scope != "":
		found.scopes = strings.Fields(scope)
	case prm != nil && len(prm.ScopesSupported) > 0:
		found.scopes = slices.Clone(prm.ScopesSupported)
	}
	a.opts.Logger.Debug("discovered the backend's authorization server", "backend", a.opts.Backend,
		"issuer", meta.Issuer, "resource", found.resource, "scopes", strings.Join(found.scopes, " "))
	return &found, nil
}

// probe sends the backend an initialize without a token and returns the
// challenges of its answer (none when it does not answer 401).
func (a *Authorizer) probe(ctx context.Context) []oauthex.Challenge {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.opts.URL, bytes.NewReader([]byte(probeBody)))
	if err != nil {
		return nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := a.opts.HTTPClient.Do(req)
	if err != nil {
		a.opts.Logger.Debug("probing the backend for its challenge failed", "backend", a.opts.Backend, "error", err)
		return nil
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusUnauthorized {
		return nil
	}
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		a.opts.Logger.Debug("the backend's WWW-Authenticate does not parse", "backend", a.opts.Backend, "error", err)
		return nil
	}
	return cs
}

// resourceMetadata fetches the backend's protected-resource metadata from
// metadataURL (from its challenge) or the well-known URLs (RFC 9728 §3.1:
// at the backend's path, then at its root). Each must name the resource it
// was fetched for. It returns nil when there is none.
func (a *Authorizer) resourceMetadata(ctx context.Context, metadataURL string) (*oauthex.ProtectedResourceMetadata, error) {
	type candidate struct{ url, resource string }
	var candidates []candidate
	if metadataURL != "" {
		candidates = append(candidates, candidate{metadataURL, a.opts.URL})
	}
	u, err := url.Parse(a.opts.URL)
	if err != nil {
		return nil, fmt.Errorf("backend url: %w", err)
	}
	wk := *u
	wk.RawQuery, wk.Fragment, wk.RawPath = "", "", ""
	if p := strings.Trim(u.Path, "/"); p != "" {
		wk.Path = "/.well-known/oauth-protected-resource/" + p
		candidates = append(candidates, candidate{wk.String(), a.opts.URL})
	}
	wk.Path = "/.well-known/oauth-protected-resource"
	root := *u
	root.Path, root.RawPath, root.RawQuery, root.Fragment = "", "", "", ""
	candidates = append(candidates, candidate{wk.String(), root.String()})
	var errs []error
	for _, c := range candidates {
		prm, err := a.fetchResourceMetadata(ctx, c.url)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if prm == nil {
			continue
		}
		// RFC 9728 §3.3: metadata for another resource is not to be used;
		// nor is the backend, which might be impersonating that one.
		if prm.Resource != c.resource {
			return nil, fmt.Errorf("the protected-resource metadata at %s is for resource %q, not %q: refusing to authorize", c.url, prm.Resource, c.resource)
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, fmt.Errorf("the protected-resource metadata at %s names no authorization server", c.url)
		}
		for i, as := range prm.AuthorizationServers {
			if err := httpsOrLoopback(as); err != nil {
				return nil, fmt.Errorf("the protected-resource metadata at %s: authorization_servers[%d]: %w", c.url, i, err)
			}
		}
		return prm, nil
	}
	a.opts.Logger.Debug("the backend has no protected-resource metadata; it is taken for its own authorization server",
		"backend", a.opts.Backend, "errors", errors.Join(errs...))
	return nil, nil
}

// fetchResourceMetadata GETs protected-resource metadata from u: nil when
// the backend has none there (a 4xx).
func (a *Authorizer) fetchResourceMetadata(ctx context.Context, u string) (*oauthex.ProtectedResourceMetadata, error) {
	if err := httpsOrLoopback(u); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := a.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", u, resp.Status)
	}
	var prm oauthex.ProtectedResourceMetadata
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&prm); err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	return &prm, nil
}

// httpsOrLoopback accepts an https URL, or an http one on loopback.
func httpsOrLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	switch {
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http":
		host := u.Hostname()
		if host == "localhost" {
			return nil
		}
		if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
			return nil
		}
	}
	return fmt.Errorf("%q: want https (or http on loopback)", raw)
}
