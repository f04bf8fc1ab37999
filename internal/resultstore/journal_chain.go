package resultstore

import (
	"bytes"
	"crypto/hmac"
	"fmt"
	"strconv"
)

// The integrity of an append-only journal (store.hmac_key). Entry i is
// sealed ([Seal]) under a name that holds the journal's id and owner, its
// position i and the MAC of entry i-1: a chain. Beside the entries the
// store keeps a tail seal, rewritten by every append, over the number of
// entries, the last one's MAC and the pause token the append set (a MAC
// of its own name: never equal to an entry's). Reading a journal checks
// the chain and the tail:
//   - an entry changed, or planted: its MAC fails;
//   - entries swapped, moved, or one removed from the middle: the
//     positions and previous MACs in the names no longer match;
//   - entries cut off the end: the tail names more entries, or another
//     last MAC, than the journal holds. A cut journal with a tail that
//     fits it needs the tail seal written when the journal was that long:
//     it was overwritten since, so only someone who read the store at
//     that moment has it;
//   - a journal put back as it was at an earlier pause (its entries and
//     tail seal of then, both genuine) under the current pause's token:
//     the tail names the earlier token, and a claim presents the current
//     one (ClaimJournal refuses it).
// Rolling a journal back to a state it had, with that state's own pause
// token, is the one change a MAC cannot see; docs/security.md says what
// that allows.
// Without a key nothing is sealed and nothing is checked.

// JournalCursor is where the writer of a journal appends next: the number
// of entries and the MAC (hex) of the last one ("" without a key).
type JournalCursor struct {
	N    int
	Last string
}

// journalEntryName is the seal name of the entry appended at at.
func journalEntryName(owner, id string, at JournalCursor) string {
	return journalSealName(owner, id) + "\x00" + strconv.Itoa(at.N) + "\x00" + at.Last
}

// journalTailName is the seal name of the tail of a journal at at, last
// appended to under pause token pause.
func journalTailName(owner, id string, at JournalCursor, pause string) string {
	return journalSealName(owner, id) + "\x00tail\x00" + strconv.Itoa(at.N) + "\x00" + at.Last + "\x00" + pause
}

// sealMAC is the MAC (hex) of a value [Seal] wrote, "" for none.
func sealMAC(sealed []byte) string {
	rest, ok := bytes.CutPrefix(sealed, []byte(sealPrefix))
	if !ok {
		return ""
	}
	sum, _, _ := bytes.Cut(rest, []byte("\n"))
	return string(sum)
}

// sealEntries seals entries appended at at under pause token pause and
// returns them, the cursor after them and the journal's new tail seal.
func sealEntries(key []byte, owner, id, pause string, at JournalCursor, entries [][]byte) (sealed [][]byte, next JournalCursor, tail []byte) {
	sealed = make([][]byte, len(entries))
	for i, e := range entries {
		sealed[i] = Seal(key, journalEntryName(owner, id, at), e)
		at = JournalCursor{N: at.N + 1, Last: sealMAC(sealed[i])}
	}
	return sealed, at, Seal(key, journalTailName(owner, id, at, pause), nil)
}

// openEntries checks a journal's chain of sealed entries against its tail,
// last appended to under pause token pause, and returns the entries and
// the cursor to append at.
func openEntries(key []byte, owner, id, pause string, sealed [][]byte, tail []byte) ([][]byte, JournalCursor, error) {
	var at JournalCursor
	entries := make([][]byte, len(sealed))
	for i, s := range sealed {
		e, err := Unseal(key, journalEntryName(owner, id, at), s)
		if err != nil {
			return nil, JournalCursor{}, fmt.Errorf("journal %s, entry %d: %w", id, i, err)
		}
		entries[i] = e
		at = JournalCursor{N: at.N + 1, Last: sealMAC(s)}
	}
	if len(key) > 0 && !hmac.Equal(tail, Seal(key, journalTailName(owner, id, at, pause), nil)) {
		return nil, JournalCursor{}, fmt.Errorf("journal %s: its tail does not match its %d entries (cut short?): %w", id, len(sealed), ErrTampered)
	}
	return entries, at, nil
}

// sealedSize is the bytes entries take in the store.
func sealedSize(entries [][]byte) int {
	n := 0
	for _, e := range entries {
		n += len(e)
	}
	return n
}
