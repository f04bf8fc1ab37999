package runcode

import (
	"context"
	"testing"

	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/state"
)

// TestStateSetUnserialisableInRunCode: in run_code too, state.set with a
// value JSON cannot carry (a BigInt, a cyclic value) is STATE_INVALID
// naming why, not a TypeError; nothing is written.
func TestStateSetUnserialisableInRunCode(t *testing.T) {
	r := withState(t, state.Options{})
	alice := authn.WithPrincipal(context.Background(), &authn.Principal{Name: "alice"})
	code := `const out = [];
const o = {}; o.self = o;
for (const f of [() => state.set("k", 1n), () => state.set("k", o), () => state.set("k", 1, {ttl: 2n}), () => state.get(3n)]) {
  try { await f(); out.push("ok"); } catch (e) { out.push([e.code, e.message]); }
}
out.push(await state.list());
return out;`
	out := r.Run(alice, Input{Code: code})
	if !out.OK {
		t.Fatalf("%+v", out.Error)
	}
	want := `[["STATE_INVALID","STATE_INVALID: state.set: the value cannot be stored as JSON: a BigInt"],` +
		`["STATE_INVALID","STATE_INVALID: state.set: the value cannot be stored as JSON: a cyclic structure"],` +
		`["STATE_INVALID","STATE_INVALID: state.set: the options cannot be stored as JSON: a BigInt"],` +
		`["STATE_INVALID","STATE_INVALID: state.get: the key cannot be stored as JSON: a BigInt"],[]]`
	if got := compact(t, string(out.Result)); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
