package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/programs"
)

// driftCatalogue is the catalogue saved programs are checked against
// again when a backend's tools change (programs.Drift).
type driftCatalogue struct {
	a *App

	mu      sync.Mutex
	version uint64 // the catalogue version fp is of
	fp      string
}

var _ programs.Catalogue = (*driftCatalogue)(nil)

// Fingerprint implements programs.Catalogue: a digest of every catalogued
// tool's name and schemas, and of the tools policy denies (with the rule),
// computed once per catalogue version.
func (c *driftCatalogue) Fingerprint() string {
	entries, version := c.a.Catalog.View()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fp != "" && c.version == version {
		return c.fp
	}
	h := sha256.New()
	for _, e := range entries {
		h.Write([]byte(e.Name + "\x00"))
		if e.Def != nil {
			in, _ := json.Marshal(e.Def.InputSchema)
			out, _ := json.Marshal(e.Def.OutputSchema)
			h.Write(in)
			h.Write([]byte{0})
			h.Write(out)
			h.Write([]byte{0})
		}
	}
	for _, d := range c.a.Catalog.Denied() {
		h.Write([]byte("denied\x00" + d.Backend + "\x00" + d.Tool + "\x00" + d.Rule + "\x00"))
	}
	c.version, c.fp = version, hex.EncodeToString(h.Sum(nil))
	return c.fp
}

// Settled implements programs.Catalogue: a backend is settled when it is
// healthy or its tools are cached (as /readyz counts it ready), or when it
// is not configured (its tools are gone for good).
func (c *driftCatalogue) Settled(name string) bool {
	for _, st := range c.a.Backends.Status() {
		if name != "" && st.Name != name {
			continue
		}
		if st.State != backend.StateHealthy && (!st.ToolsCached || st.ToolCount == 0) {
			return false
		}
	}
	return true
}

// programCounts is what the metrics report of saved programs: how many
// are saved, how many versions are stale; ok false when their store does
// not answer (the scrape then reports neither).
func (a *App) programCounts() (saved, stale int, ok bool) {
	ctx, cancel := context.WithTimeout(context.Background(), programCountsWait)
	defer cancel()
	saved, stale, err := a.Programs.Counts(ctx)
	if err != nil {
		a.logger.Debug("saved programs are not counted", "err", err)
		return 0, 0, false
	}
	return saved, stale, true
}

// programCountsWait bounds a scrape's wait for the store of saved programs.
const programCountsWait = 2 * time.Second

// StopDrift stops checking saved programs in the background: a one-shot
// command (isogate check, types, …) leaves the marks in the store to the
// gateways that serve.
func (a *App) StopDrift() { _ = a.drift.Close() }

// CheckSaved checks every saved version against the catalogue now, without
// marking anything in the store (isogate check --saved).
func (a *App) CheckSaved(ctx context.Context) (*programs.CheckReport, error) {
	return a.Programs.Check(ctx, programs.CheckOptions{Catalogue: &driftCatalogue{a: a}})
}
