package surface

import (
	"context"
	"time"

	"github.com/isogate/isogate/internal/programs"
)

// programsReadiness is what /readyz says of saved programs: how many are
// saved and which versions are stale (a backend's tools changed under
// them). A stale program does not make the gateway unready: it is its
// owner's to fix, every other program and tool is served, and the mark is
// in the store every replica shares (unready, every replica would leave
// the load balancer at once).
type programsReadiness struct {
	Saved int `json:"saved"`
	// StaleCount counts the stale versions; Stale names them (for
	// server.auth.admins once admins are named, with metrics_auth).
	StaleCount int          `json:"stale_count"`
	Stale      []staleEntry `json:"stale,omitempty"`
	// Error is why the store of saved programs could not be read.
	Error string `json:"error,omitempty"`
}

type staleEntry struct {
	Program string `json:"program"` // owner/name@version
	Code    string `json:"code"`
	At      string `json:"at"`
}

// maxStaleListed bounds the stale versions /readyz names.
const maxStaleListed = 50

// programsReadiness reads the saved programs' counts and stale versions;
// nil when saved programs are off.
func (sf *Surface) programsReadiness(ctx context.Context) *programsReadiness {
	p := sf.programs.programs
	if p == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	out := &programsReadiness{Stale: []staleEntry{}}
	saved, _, err := p.Counts(ctx)
	var stale []programs.StaleVersion
	if err == nil {
		stale, err = p.Stale(ctx)
	}
	if err != nil {
		out.Error = err.Error()
		return out
	}
	out.Saved, out.StaleCount = saved, len(stale)
	for _, s := range stale[:min(len(stale), maxStaleListed)] {
		out.Stale = append(out.Stale, staleEntry{Program: s.Ref(), Code: string(s.Code), At: s.At.Format(time.RFC3339)})
	}
	return out
}

// brief is r without the names of stale programs.
func (r *programsReadiness) brief() *programsReadiness {
	if r == nil {
		return nil
	}
	b := *r
	b.Stale = nil
	return &b
}
