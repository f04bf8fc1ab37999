package resultstore

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// principalSessions attacks a store as one principal with four sessions:
// each session stores nearly a whole share. The sessions share their
// principal's budget, so another principal's result is still stored and
// stays readable; every session reads only its own results.
func principalSessions(t *testing.T, s Store) {
	t.Helper()
	var bob []string
	var ids []string
	for _, session := range []string{"s1", "s2", "s3", "s4"} {
		owner := OwnerKey("principal:bob", session)
		bob = append(bob, owner)
		ids = append(ids, put(t, s, owner, strings.Repeat("b", 90)))
	}
	alice := OwnerKey("principal:alice", "s5")
	id, err := s.Put(ctx, alice, []byte(strings.Repeat("a", 90)))
	if err != nil {
		t.Fatalf("alice's result refused after bob's four sessions stored theirs: %v", err)
	}
	if !readable(s, alice, id) {
		t.Fatal("alice cannot read her result")
	}
	// bob's newest result is kept (his older ones made room in his share).
	if !readable(s, bob[3], ids[3]) {
		t.Fatal("bob's newest result is gone")
	}
	for i, owner := range bob {
		if readable(s, owner, id) {
			t.Fatalf("bob's session %d read alice's result", i)
		}
		if i != 3 && readable(s, owner, ids[3]) {
			t.Fatalf("bob's session %d read his session 4's result", i)
		}
	}
	if readable(s, "principal:bob", ids[3]) {
		t.Fatal("bob's account key read a session's result")
	}
}

func TestMemoryShareIsPerPrincipal(t *testing.T) {
	principalSessions(t, NewMemory(Limits{TTL: time.Minute, MaxBytes: 300, OwnerBytes: 100}, CountDataOnly()))
}

// OwnerKey names its account unambiguously: a principal whose name holds
// "/" is not charged to another's account.
func TestOwnerKeyAccounts(t *testing.T) {
	for _, tt := range []struct{ account, scope, key, charged string }{
		{"principal:alice", "sess", "principal:alice/sess", "principal:alice"},
		{"principal:alice", "", "principal:alice", "principal:alice"},
		{"principal:alice/x", "", "principal:alice%2Fx", "principal:alice%2Fx"},
		{"principal:a%2Fb", "s", "principal:a%252Fb/s", "principal:a%252Fb"},
		{"local-0123", "", "local-0123", "local-0123"},
	} {
		key := OwnerKey(tt.account, tt.scope)
		if key != tt.key || AccountOf(key) != tt.charged {
			t.Errorf("OwnerKey(%q, %q) = %q charged to %q, want %q charged to %q",
				tt.account, tt.scope, key, AccountOf(key), tt.key, tt.charged)
		}
	}
	s := NewMemory(Limits{TTL: time.Minute, MaxBytes: 300, OwnerBytes: 100}, CountDataOnly())
	victim := put(t, s, OwnerKey("principal:alice", "s"), strings.Repeat("v", 90))
	put(t, s, OwnerKey("principal:alice/x", ""), strings.Repeat("h", 90))
	if !readable(s, OwnerKey("principal:alice", "s"), victim) {
		t.Fatal("principal alice/x evicted alice's result")
	}
	if _, err := s.Put(ctx, OwnerKey("principal:carol", ""), make([]byte, 101)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over a share: %v", err)
	}
}
