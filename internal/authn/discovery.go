package authn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// maxMetadataBytes bounds an issuer's metadata document.
const maxMetadataBytes = 1 << 20

// issuerMetadata is what a resource server needs of its issuer's metadata
// (RFC 8414, OpenID Connect Discovery 1.0): where its signing keys and its
// introspection endpoint are. Fields that matter only to clients
// (code_challenge_methods_supported, grant types, the authorization
// endpoint) are not read, let alone required: PKCE is the client's
// concern, and issuers such as Microsoft Entra ID do not announce it.
type issuerMetadata struct {
	Issuer                string `json:"issuer"`
	JWKSURI               string `json:"jwks_uri"`
	IntrospectionEndpoint string `json:"introspection_endpoint"`
}

// metadataURLs are where the metadata of issuer may be, in the order the
// MCP authorization spec gives: RFC 8414's well-known URL (path-inserted
// when the issuer has a path), then OpenID Connect Discovery's
// (path-inserted, then path-appended as OpenID defines it).
func metadataURLs(issuer string) ([]string, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("issuer %q is not an absolute http(s) URL", issuer)
	}
	at := func(path string) string {
		v := *u
		v.Path, v.RawPath, v.RawQuery, v.Fragment = path, "", "", ""
		return v.String()
	}
	path := strings.Trim(u.Path, "/")
	if path == "" {
		return []string{at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")}, nil
	}
	return []string{
		at("/.well-known/oauth-authorization-server/" + path),
		at("/.well-known/openid-configuration/" + path),
		at("/" + path + "/.well-known/openid-configuration"),
	}, nil
}

// discoverIssuer reads the metadata of issuer from the first well-known
// URL that has it. The document's issuer must equal issuer exactly
// (RFC 8414 §3.3, OpenID Connect Discovery §4.3) and its endpoints must be
// absolute http(s) URLs; a document without jwks_uri is refused unless
// introspection (needIntrospection) can stand in.
func discoverIssuer(ctx context.Context, client *http.Client, issuer string, needIntrospection bool) (*issuerMetadata, error) {
	urls, err := metadataURLs(issuer)
	if err != nil {
		return nil, err
	}
	var failures []error
	for _, u := range urls {
		meta, found, err := fetchMetadata(ctx, client, u)
		if err != nil {
			failures = append(failures, err)
			continue
		}
		if !found {
			continue
		}
		if meta.Issuer != issuer {
			return nil, fmt.Errorf("the metadata at %s names issuer %q, not %q", u, meta.Issuer, issuer)
		}
		for _, e := range []struct{ name, v string }{{"jwks_uri", meta.JWKSURI}, {"introspection_endpoint", meta.IntrospectionEndpoint}} {
			if e.v == "" {
				continue
			}
			if p, err := url.Parse(e.v); err != nil || p.Host == "" || (p.Scheme != "https" && p.Scheme != "http") {
				return nil, fmt.Errorf("the metadata at %s has an invalid %s %q", u, e.name, e.v)
			}
		}
		if meta.JWKSURI == "" && !(needIntrospection && meta.IntrospectionEndpoint != "") {
			return nil, fmt.Errorf("the metadata at %s has no jwks_uri", u)
		}
		return meta, nil
	}
	if len(failures) > 0 {
		return nil, errors.Join(failures...)
	}
	return nil, fmt.Errorf("no OpenID or OAuth metadata found at %s", strings.Join(urls, ", "))
}

// fetchMetadata GETs one metadata URL: found is false when the server has
// no document there (a 4xx answer), err is set when it could not say.
func fetchMetadata(ctx context.Context, client *http.Client, u string) (meta *issuerMetadata, found bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, false, fmt.Errorf("metadata request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, false, fmt.Errorf("fetching %s: %w", u, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		return nil, false, nil
	case resp.StatusCode != http.StatusOK:
		return nil, false, fmt.Errorf("fetching %s: status %s", u, resp.Status)
	}
	meta = &issuerMetadata{}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxMetadataBytes)).Decode(meta); err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", u, err)
	}
	return meta, true, nil
}
