package runcode

import (
	"context"
	"strings"
	"testing"

	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/kv"
	"github.com/isogate/isogate/internal/state"
)

// TestStateInRunCode (run_code.state): state.* keeps values between runs
// of one principal, apart from another's; its failures carry their code;
// the tool is then neither read-only nor idempotent, and says so. Without
// it there is no state global.
func TestStateInRunCode(t *testing.T) {
	r := withState(t, state.Options{MaxKeys: 2})
	alice := authn.WithPrincipal(context.Background(), &authn.Principal{Name: "alice"})
	bob := authn.WithPrincipal(context.Background(), &authn.Principal{Name: "bob"})
	result := func(ctx context.Context, code string) string {
		t.Helper()
		out := r.Run(ctx, Input{Code: code})
		if !out.OK {
			t.Fatalf("%s: %+v", code, out.Error)
		}
		return compact(t, string(out.Result))
	}
	if got := result(alice, `await state.set("a", {x: 1}, {ttl: 60}); return [await state.get("zz"), await state.list()]`); got != `[null,["a"]]` {
		t.Fatalf("first run: %s", got)
	}
	if got := result(alice, `return [await state.get("a"), await state.delete("a"), await state.delete("a")]`); got != `[{"x":1},true,false]` {
		t.Fatalf("second run: %s", got)
	}
	if got := result(bob, `await state.set("b", 1); return await state.list({prefix: ""})`); got != `["b"]` {
		t.Fatalf("bob: %s", got)
	}
	codes := `const codes = [];
for (const f of [() => state.set("k"), () => state.set("k", 1, 5), () => state.get("a", "b"), () => state.set("", 1)]) {
  try { await f(); codes.push("ok"); } catch (e) { codes.push(e.code); }
}
await state.set("c", 1);
try { await state.set("e", 1); } catch (e) { codes.push(e.code); }
return codes;`
	if got := result(bob, codes); got != `["STATE_INVALID","STATE_INVALID","STATE_INVALID","STATE_INVALID","STATE_QUOTA_EXCEEDED"]` {
		t.Fatalf("failures: %s", got)
	}
	if a := r.Tool().Annotations; a.ReadOnlyHint || a.IdempotentHint || !strings.Contains(r.Description(), "state.set(key, value") {
		t.Fatalf("with state: read-only %v, idempotent %v, description:\n%s", a.ReadOnlyHint, a.IdempotentHint, r.Description())
	}
	if got := compact(t, string(run(t, `return typeof state`).Result)); got != `"undefined"` {
		t.Fatalf("without run_code.state: typeof state is %s", got)
	}
}

// withState is run_code on the test pool with programs' state kept in
// memory under opts (its Store set here).
func withState(t *testing.T, opts state.Options) *Service {
	t.Helper()
	opts.Store = kv.NewMemory()
	st, err := state.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Options{Runner: testPool(), State: st})
	if err != nil {
		t.Fatal(err)
	}
	return r
}
