package codemode

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/codemode/output"
)

// TestStateSetUnserialisable: state.set with a value JSON cannot carry (a
// BigInt, a cyclic object, a BigInt deep inside) or a key that is not a
// string is refused with STATE_INVALID naming why, not an EVAL_ERROR
// TypeError; nothing is written and the program goes on.
func TestStateSetUnserialisable(t *testing.T) {
	t.Run("durable", func(t *testing.T) { e, _ := durableEngine(t); testStateSetUnserialisable(t, e) })
	t.Run("plain", func(t *testing.T) {
		cat := catalog.New()
		e, err := New(Options{Runner: sharedPool(), Catalog: FromCatalog(cat), Caller: &countingCaller{},
			Output: output.DefaultOptions(), Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		testStateSetUnserialisable(t, e)
	})
}

func testStateSetUnserialisable(t *testing.T, e *Engine) {
	st := newCountingState(t)
	e.opts.State = st
	alice := authn.WithPrincipal(context.Background(), &authn.Principal{Name: "alice"})
	for code, want := range map[string]string{
		`try { await state.set("k", 1n); } catch (e) { return [e.code, e.message]; }`:                                                                 `["STATE_INVALID","STATE_INVALID: state.set: the value cannot be stored as JSON: a BigInt"]`,
		`const o = {}; o.self = o; try { await state.set("k", o); } catch (e) { return [e.code, e.message]; }`:                                        `["STATE_INVALID","STATE_INVALID: state.set: the value cannot be stored as JSON: a cyclic structure"]`,
		`try { await state.set("k", {a: [1, {b: 2n}]}); } catch (e) { return [e.code, e.message]; }`:                                                  `["STATE_INVALID","STATE_INVALID: state.set: the value cannot be stored as JSON: a BigInt"]`,
		`try { await state.set("k", 1, {ttl: 5n}); } catch (e) { return [e.code, e.message]; }`:                                                       `["STATE_INVALID","STATE_INVALID: state.set: the options cannot be stored as JSON: a BigInt"]`,
		`try { await state.get(1n); } catch (e) { return [e.code, e.message]; }`:                                                                      `["STATE_INVALID","STATE_INVALID: state.get: the key cannot be stored as JSON: a BigInt"]`,
		`await state.set("u", {unserialisable: "x"}); return await state.get("u")`:                                                                    `{"unserialisable":"x"}`,
		`try { await state.set("k", 1n); } catch (e) { } return [await state.get("k") === undefined, await state.set("j", 2), await state.get("j")];`: `[true,null,2]`,
	} {
		resp := e.Execute(alice, Request{Code: code})
		if resp.IsError {
			t.Errorf("%s: %s", code, resp.Text)
			continue
		}
		var v any
		_ = json.Unmarshal(resp.Value, &v)
		b, _ := json.Marshal(v)
		if string(b) != want {
			t.Errorf("%s:\n got %s\nwant %s", code, b, want)
		}
	}
	// Not caught, the refusal ends the run with its code.
	resp := e.Execute(alice, Request{Code: `const o = [1]; o.push(o); await state.set("k", o); return 1`})
	if !resp.IsError || resp.Code != "STATE_INVALID" || !strings.Contains(resp.Text, "the value cannot be stored as JSON: a cyclic structure") {
		t.Errorf("uncaught: %v %s %q", resp.IsError, resp.Code, resp.Text)
	}
	if n := st.count("set"); n != 2 {
		t.Errorf("%d writes reached the store, want 2 (the two valid ones)", n)
	}
}
