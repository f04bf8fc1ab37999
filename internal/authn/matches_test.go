package authn

import "testing"

// TestMatchesNamesGroupsAndScopes: server.auth.admins and
// server.console.admins name principals, "group:<g>" members and
// "scope:<s>" holders; a scope is not a name nor a group.
func TestMatchesNamesGroupsAndScopes(t *testing.T) {
	p := &Principal{Name: "alice", Groups: []string{"ops"}, Scopes: []string{"isogate.admin"}}
	for _, tt := range []struct {
		names []string
		want  bool
	}{
		{[]string{"alice"}, true},
		{[]string{"group:ops"}, true},
		{[]string{"scope:isogate.admin"}, true},
		{[]string{"scope:ops"}, false},
		{[]string{"group:isogate.admin"}, false},
		{[]string{"isogate.admin"}, false},
		{[]string{"bob", "scope:other"}, false},
	} {
		if got := p.Matches(tt.names); got != tt.want {
			t.Errorf("Matches(%q) = %v, want %v", tt.names, got, tt.want)
		}
	}
	if (*Principal)(nil).Matches([]string{"scope:isogate.admin"}) {
		t.Error("a nil principal matched")
	}
}
