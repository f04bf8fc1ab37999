package resultstore

import (
	"context"
	"errors"
	"time"
)

// Journals keeps the journals of durable code-mode runs (sandbox.durable),
// so that a paused run can be resumed by replay on any replica sharing the
// store. A journal is append-only: a run appends its entries (what it
// observed) as it goes, so a run of n calls writes O(n) bytes. A journal
// has a holder (the replica's run that may append to it: writes of anyone
// else are fenced off) and, while the run is paused, a single-use pause
// token that a resume must present to claim it. With store.hmac_key its
// entries are sealed in a chain (journal_chain.go): an entry changed,
// planted, moved, removed, or the journal cut short, is refused.
// Implementations are safe for concurrent use.
type Journals interface {
	// AppendJournal appends entries to the journal of run id for owner
	// when holder holds it (the first append makes holder its holder), at
	// at (what the holder appended so far: a zero cursor for a new
	// journal), and returns the cursor to append at next. The journal's
	// pause token becomes pause ("": none; a resume must present it, see
	// ClaimJournal). It fails with ErrFenced when another holder claimed
	// the run, ErrNotFound when the journal is not at at any more (it
	// expired or was dropped), and ErrTooLarge past the store's journal
	// bound.
	AppendJournal(ctx context.Context, owner, id, holder, pause string, at JournalCursor, entries [][]byte, ttl time.Duration) (JournalCursor, error)
	// ClaimJournal makes holder the holder of run id's journal, when it is
	// owner's and paused under pause, clears the pause (the token is single
	// use) and returns its entries and the cursor to append at. It fails
	// with ErrNotFound otherwise (never stored, expired, claimed already,
	// another owner's), and with ErrTampered when the journal fails its
	// integrity check.
	ClaimJournal(ctx context.Context, owner, id, pause, holder string) ([][]byte, JournalCursor, error)
	// DeleteJournal forgets run id's journal if holder holds it (the run
	// ended).
	DeleteJournal(ctx context.Context, id, holder string) error
	// HoldsJournal reports whether holder still holds run id's journal:
	// false once another holder claimed it, or when it is gone (expired,
	// dropped, never stored). It changes nothing.
	HoldsJournal(ctx context.Context, id, holder string) (bool, error)
}

// ErrFenced means a journal was claimed by another replica's resume: the
// run that wrote it no longer owns it and must not write it again.
var ErrFenced = errors.New("durable run taken over by another resume")

// journalSealName is what a journal's MACs cover besides its entries.
func journalSealName(owner, id string) string { return "journal\x00" + id + "\x00" + owner }
