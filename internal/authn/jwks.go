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
// refresh, at most one per minGap (so a flood of made-up kids costs one
// fetch per minGap, not one per request); the set is also refreshed once
// maxAge has passed.
type keySet struct {
	url    string
	client *http.Client
	minGap time.Duration
	maxAge time.Duration
	now    func() time.Time

	mu      sync.Mutex
	keys    map[string]jose.JSONWebKey
	fetched time.Time // last fetch attempt
	fetches int       // fetches made, for tests
}

// key returns the key of kid, refreshing the set when kid is unknown (and
// the last fetch is older than minGap) or the set is older than maxAge.
func (ks *keySet) key(ctx context.Context, kid string) (jose.JSONWebKey, error) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	k, ok := ks.lookup(kid)
	stale := ks.now().Sub(ks.fetched) >= ks.maxAge
	if ok && !stale {
		return k, nil
	}
	if ks.keys != nil && !stale && ks.now().Sub(ks.fetched) < ks.minGap {
		return jose.JSONWebKey{}, reject(ReasonUnknownKid, "kid %q is not in the issuer's key set (refreshed less than %v ago)", kid, ks.minGap)
	}
	if err := ks.refresh(ctx); err != nil {
		if ok {
			return k, nil // keep using a known key while the issuer is unreachable
		}
		return jose.JSONWebKey{}, &Rejection{Reason: ReasonUnavailable, Detail: err.Error()}
	}
	if k, ok = ks.lookup(kid); !ok {
		return jose.JSONWebKey{}, reject(ReasonUnknownKid, "kid %q is not in the issuer's key set, even after a refresh", kid)
	}
	return k, nil
}

// lookup finds kid among the signing keys (any one when kid is empty and
// the set has exactly one).
func (ks *keySet) lookup(kid string) (jose.JSONWebKey, bool) {
	if kid == "" && len(ks.keys) == 1 {
		for _, k := range ks.keys {
			return k, true
		}
	}
	k, ok := ks.keys[kid]
	return k, ok
}

func (ks *keySet) refresh(ctx context.Context) error {
	ks.fetched = ks.now()
	ks.fetches++
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
	ks.keys = keys
	return nil
}
