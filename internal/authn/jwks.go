package authn

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// maxJWKSBytes bounds a JWKS document.
const maxJWKSBytes = 1 << 20

// keySet caches an issuer's signing keys by kid. An unknown kid triggers a
// fetch of the set, and so does a set older than maxAge; either way at
// most one fetch starts per minGap (server.auth.jwks_min_refresh), even
// while the JWKS endpoint fails, and concurrent checks share the fetch
// under way. So a flood of made-up kids costs one fetch per minGap, and
// a token whose kid is known never waits for a fetch.
type keySet struct {
	url     string
	client  *http.Client
	minGap  time.Duration
	maxAge  time.Duration
	now     func() time.Time
	refresh *refresher

	mu      sync.Mutex
	keys    map[string]jose.JSONWebKey
	fetched time.Time // last successful fetch
}

// newKeySet returns the key set at url; nothing is fetched yet.
func newKeySet(url string, client *http.Client, minGap, maxAge time.Duration, now func() time.Time) *keySet {
	ks := &keySet{url: url, client: client, minGap: minGap, maxAge: maxAge, now: now}
	ks.refresh = &refresher{gap: minGap, now: now, fetch: ks.download}
	return ks
}

// key returns the key of kid. A known key is returned at once (a set
// older than maxAge is refreshed in the background meanwhile); an unknown
// kid waits for a fetch, the one under way or a new one if none started
// in the last minGap, and is refused otherwise.
func (ks *keySet) key(ctx context.Context, kid string) (jose.JSONWebKey, error) {
	k, ok, fresh := ks.cached(kid)
	if ok && fresh {
		return k, nil
	}
	a := ks.refresh.begin()
	if ok {
		return k, nil // keep using a known key while the set is refreshed, or the issuer is unreachable
	}
	if a == nil {
		if err := ks.refresh.lastError(); err != nil {
			return jose.JSONWebKey{}, &Rejection{Reason: ReasonUnavailable,
				Detail: fmt.Sprintf("%v (tried again at most once per %v)", err, ks.minGap)}
		}
		return jose.JSONWebKey{}, reject(ReasonUnknownKid, "kid %q is not in the issuer's key set (refreshed less than %v ago)", kid, ks.minGap)
	}
	if err := a.wait(ctx); err != nil {
		return jose.JSONWebKey{}, &Rejection{Reason: ReasonUnavailable, Detail: err.Error()}
	}
	if k, ok, _ = ks.cached(kid); !ok {
		return jose.JSONWebKey{}, reject(ReasonUnknownKid, "kid %q is not in the issuer's key set, even after a refresh", kid)
	}
	return k, nil
}

// cached looks kid up among the keys fetched (any one when kid is empty
// and the set has exactly one); fresh is whether the set is younger than
// maxAge.
func (ks *keySet) cached(kid string) (k jose.JSONWebKey, ok, fresh bool) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	fresh = ks.keys != nil && ks.now().Sub(ks.fetched) < ks.maxAge
	if kid == "" && len(ks.keys) == 1 {
		for _, k := range ks.keys {
			return k, true, fresh
		}
	}
	k, ok = ks.keys[kid]
	return k, ok, fresh
}

// download fetches the set and replaces the cached keys with its public
// signing keys.
func (ks *keySet) download(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ks.url, nil)
	if err != nil {
		return fmt.Errorf("JWKS request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := ks.client.Do(req)
	if err != nil {
		return fmt.Errorf("fetching the JWKS: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetching the JWKS: status %s", resp.Status)
	}
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxJWKSBytes)).Decode(&set); err != nil {
		return fmt.Errorf("reading the JWKS: %w", err)
	}
	keys := map[string]jose.JSONWebKey{}
	for _, k := range set.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		if !k.IsPublic() {
			continue // a private or symmetric key has no place in a JWKS
		}
		keys[k.KeyID] = k
	}
	ks.mu.Lock()
	ks.keys, ks.fetched = keys, ks.now()
	ks.mu.Unlock()
	return nil
}
