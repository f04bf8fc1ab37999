package resultstore

import (
	"context"
	"errors"
	"time"
)

// Journals keeps the journals of durable code-mode runs (sandbox.durable):
// one entry per run, replaced as the run goes, so that a paused run can be
// resumed by replay on any replica sharing the store. An entry has a
// holder (the replica's run that may write it: writes of anyone else are
// fenced off) and, while the run is paused, a single-use pause token that
// a resume must present to claim it. Its data is sealed with store.hmac_key
// like results ([Seal]): a changed or planted journal is refused.
// Implementations are safe for concurrent use.
type Journals interface {
	// SaveJournal writes the journal of run id for owner, replacing the
	// previous one, when holder holds it (the first write makes holder its
	// holder); pause, when not "", is the token a resume must present
	// (ClaimJournal). It fails with ErrFenced when another holder claimed
	// the run, and with ErrTooLarge past the store's journal bound.
	SaveJournal(ctx context.Context, owner, id, holder, pause string, data []byte, ttl time.Duration) error
	// ClaimJournal makes holder the holder of run id's journal, when it is
	// owner's and paused under pause, clears the pause (the token is single
	// use) and returns the journal. It fails with ErrNotFound otherwise
	// (never stored, expired, claimed already, another owner's), and with
	// ErrTampered when the journal fails its integrity check.
	ClaimJournal(ctx context.Context, owner, id, pause, holder string) ([]byte, error)
	// DeleteJournal forgets run id's journal if holder holds it (the run
	// ended).
	DeleteJournal(ctx context.Context, id, holder string) error
}

// ErrFenced means a journal was claimed by another replica's resume: the
// run that wrote it no longer owns it and must not write it again.
var ErrFenced = errors.New("durable run taken over by another resume")

// journalSealName is what a journal's MAC covers besides its data.
func journalSealName(owner, id string) string { return "journal\x00" + id + "\x00" + owner }
