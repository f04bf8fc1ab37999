package v8sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

func TestTableDeclaresAndDispatches(t *testing.T) {
	tbl := new(Table)
	tbl.Sync("a", func(context.Context, json.RawMessage) (json.RawMessage, error) { return json.RawMessage(`1`), nil })
	tbl.Async("b", func(_ context.Context, args json.RawMessage) (json.RawMessage, error) { return args, nil })
	if got, want := tbl.Functions(), []Function{{Name: "a"}, {Name: "b", Async: true}}; !slices.Equal(got, want) {
		t.Fatalf("Functions() = %v, want %v", got, want)
	}
	if r := tbl.Call(context.Background(), HostCall{Name: "b", Args: json.RawMessage(`[2]`)}); string(r.Value) != `[2]` {
		t.Fatalf("b: %+v", r)
	}
	if r := tbl.Call(context.Background(), HostCall{Name: "c"}); r.Error == nil || r.Fatal != nil {
		t.Fatalf("an undeclared function: %+v", r)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a function declared twice did not panic")
		}
	}()
	tbl.Sync("a", nil)
}

func TestReplyAndDispatch(t *testing.T) {
	he := &HostError{Code: "X", Message: "m"}
	for _, c := range []struct {
		err           error
		thrown, fatal bool
		message       string
		code          Code
	}{
		{err: errors.New("plain"), thrown: true, message: "plain"},
		{err: he, thrown: true, message: "m", code: "X"},
		{err: errors.Join(errors.New("wrapped"), he), thrown: true, message: "m", code: "X"},
		{err: Errorf(CodeOutputLimit, "too much"), fatal: true},
	} {
		r := Reply(nil, c.err)
		if (r.Error != nil) != c.thrown || (r.Fatal != nil) != c.fatal {
			t.Errorf("%v: %+v", c.err, r)
			continue
		}
		if c.thrown && (r.Error.Message != c.message || r.Error.Code != c.code) {
			t.Errorf("%v: thrown %+v", c.err, r.Error)
		}
	}
	panics := HostFunc(func(context.Context, string, json.RawMessage) (json.RawMessage, error) { panic("boom") })
	if r := Dispatch(context.Background(), panics, HostCall{Name: "p"}); r.Fatal == nil || r.Fatal.Code != CodeInternal {
		t.Errorf("a panicking host: %+v", r)
	}
	invalid := HostFunc(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{`), nil
	})
	if r := Dispatch(context.Background(), invalid, HostCall{Name: "i"}); r.Fatal == nil || r.Fatal.Code != CodeInternal {
		t.Errorf("invalid JSON: %+v", r)
	}
	badData := HostFunc(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return nil, &HostError{Message: "m", Data: json.RawMessage(`{`)}
	})
	if r := Dispatch(context.Background(), badData, HostCall{Name: "d"}); r.Fatal == nil || r.Fatal.Code != CodeInternal {
		t.Errorf("an error whose data is not JSON: %+v", r)
	}
	if r := Dispatch(context.Background(), nil, HostCall{Name: "n"}); r.Error == nil {
		t.Errorf("no host: %+v", r)
	}
}

// Dispatch scans a value for validity unless its host vouched for it
// (AsyncChecked): a checked value is passed on as it is, V8 parses it next.
func TestDispatchSkipsTheScanOfCheckedValues(t *testing.T) {
	bad := func(context.Context, json.RawMessage) (json.RawMessage, error) { return json.RawMessage(`{"a":`), nil }
	tbl := new(Table).Async("plain", bad).AsyncChecked("checked", bad)
	if r := Dispatch(context.Background(), tbl, HostCall{Name: "plain"}); r.Fatal == nil {
		t.Fatalf("an unchecked invalid value passed: %+v", r)
	}
	r := Dispatch(context.Background(), tbl, HostCall{Name: "checked"})
	if r.Fatal != nil || !r.Checked || string(r.Value) != `{"a":` {
		t.Fatalf("a checked value was scanned or changed: %+v", r)
	}
	if got := tbl.Functions(); !slices.Equal(got, []Function{{Name: "plain", Async: true}, {Name: "checked", Async: true}}) {
		t.Fatalf("Functions() = %v", got)
	}
}

// TestAsyncRepliesSettledUnderTheIsolateLock: a reply brought back by a
// goroutine (the host is no Starter: one call alone, then calls in flight
// together) is settled once the run holds its isolate's lock again, never
// by v8go calls that each take the Locker on whichever thread the run woke
// on (settle refuses to run without it: the run would fail INTERNAL).
func TestAsyncRepliesSettledUnderTheIsolateLock(t *testing.T) {
	pool := NewPool(Options{Workers: 1})
	defer pool.Close()
	host := new(Table).Async("f", func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
		return args, nil
	})
	job := Job{Source: `(async () => {
  const one = await f(1);
  const both = await Promise.all([f(2), f(3)]);
  return [one, both];
})()`, Functions: host.Functions(), AwaitResult: true}
	res, err := pool.Run(context.Background(), job, host)
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Value) != `[[1],[[2],[3]]]` {
		t.Fatalf("value %s", res.Value)
	}
}
