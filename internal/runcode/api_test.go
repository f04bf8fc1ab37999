package runcode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/isogate/isogate/config"
)

// addAPI is a test API: api.add(a, b) → a + b.
func addAPI() API {
	return API{
		Name:        "add",
		Signature:   "api.add(a, b)",
		Description: "Adds two numbers.",
		ReturnType:  "number",
		ReadOnly:    true,
		Params: &jsonschema.Schema{
			Type:        "array",
			PrefixItems: []*jsonschema.Schema{{Type: "number"}, {Type: "number"}},
			MinItems:    jsonschema.Ptr(2),
			MaxItems:    jsonschema.Ptr(2),
		},
		Handler: func(_ context.Context, c Call) (any, error) {
			var a, b float64
			c.Arg(0, &a)
			c.Arg(1, &b)
			return a + b, nil
		},
	}
}

func TestAPI_CallAndMetadata(t *testing.T) {
	r := newRunner(t, config.RunCodeConfig{})
	if err := r.Register(addAPI()); err != nil {
		t.Fatal(err)
	}
	out := r.Run(context.Background(), Input{Code: `
		const one = await api.add(1, 2);
		const many = await Promise.all([api.add(1, 1), api.add(2, 2), api.add(3, 3)]);
		return {one, many}`})
	if !out.OK || compact(t, string(out.Result)) != `{"many":[2,4,6],"one":3}` {
		t.Fatalf("out = %+v, result %s", out.Error, out.Result)
	}
	want := APIInfo{Name: "api.add", Signature: "api.add(a, b)", Description: "Adds two numbers.", Returns: "number"}
	if len(out.Environment.APIs) != 1 || out.Environment.APIs[0] != want {
		t.Fatalf("environment.apis = %+v", out.Environment.APIs)
	}
	if d := r.Description(); !strings.Contains(d, "- api.add(a, b) -> number: Adds two numbers.") {
		t.Fatalf("description lacks the API:\n%s", d)
	}
	if !r.Tool().Annotations.ReadOnlyHint {
		t.Fatal("tool with only read-only APIs is not read-only")
	}
}

func TestAPI_Validation(t *testing.T) {
	r := newRunner(t, config.RunCodeConfig{})
	api := addAPI()
	api.Validate = func(args []json.RawMessage) error {
		if string(args[0]) == "13" {
			return errors.New("13 is unlucky")
		}
		return nil
	}
	if err := r.Register(api); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ code, want string }{
		{`return await api.add("1", 2)`, `api.add: invalid arguments: argument 1: type: 1 has type "string", want "number"`},
		{`return await api.add(1)`, `invalid arguments: got 1 arguments, need at least 2`},
		{`return await api.add(13, 1)`, `api.add: invalid arguments: 13 is unlucky; expected api.add(a, b)`},
	}
	for _, c := range cases {
		out := r.Run(context.Background(), Input{Code: c.code})
		e := wantError(t, out, VMError, c.want)
		if e.Name != "Error" {
			t.Errorf("%s: name %q", c.code, e.Name)
		}
	}
	// The error is an ordinary, catchable Error.
	got := mustOK(t, r, Input{Code: `try { await api.add("x", 1) } catch (e) { return e instanceof Error && e.message.startsWith("api.add:") }`})
	if got != "true" {
		t.Fatalf("caught = %s", got)
	}
}

func TestAPI_HandlerErrorAndHints(t *testing.T) {
	r := newRunner(t, config.RunCodeConfig{})
	var seen atomic.Value
	r.Register(API{
		Name:  "whoami",
		Hints: []string{"user"},
		Handler: func(_ context.Context, c Call) (any, error) {
			seen.Store(c.Hints)
			var user string
			if ok, err := c.Hint("user", &user); err != nil || !ok {
				return nil, errors.New("no user hint")
			}
			return user, nil
		},
	})
	r.Register(API{
		Name:    "noHints",
		Handler: func(_ context.Context, c Call) (any, error) { return len(c.Hints), nil },
	})
	out := r.Run(context.Background(), Input{
		Code:  `return [await api.whoami(), await api.noHints()]`,
		Hints: map[string]any{"user": "ada", "secret": "not for whoami"},
	})
	if !out.OK || string(out.Result) != `["ada",0]` {
		t.Fatalf("out = %+v %s", out.Error, out.Result)
	}
	if hints := seen.Load().(map[string]json.RawMessage); len(hints) != 1 {
		t.Fatalf("whoami saw hints %v, want only user", hints)
	}
	wantError(t, r.Run(context.Background(), Input{Code: `return await api.whoami()`}), VMError, "api.whoami: no user hint")
	if d := r.Description(); !strings.Contains(d, "- api.whoami(...)") {
		t.Fatalf("description:\n%s", d)
	}
}

func TestAPI_DeadlineEndsHandler(t *testing.T) {
	r := newRunner(t, config.RunCodeConfig{})
	ended := make(chan error, 1)
	r.Register(API{
		Name: "hang",
		Handler: func(ctx context.Context, _ Call) (any, error) {
			<-ctx.Done()
			ended <- ctx.Err()
			return nil, ctx.Err()
		},
	})
	out := r.Run(context.Background(), Input{Code: `console.log("calling"); return await api.hang()`, TimeoutMS: intp(250)})
	wantError(t, out, TimeoutError, "250 ms")
	if err := <-ended; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("handler ctx ended with %v", err)
	}
	if len(out.Stdout) != 1 {
		t.Fatalf("stdout = %q", out.Stdout)
	}
}

func TestAPI_CallLimit(t *testing.T) {
	r := newRunner(t, config.RunCodeConfig{})
	r.Register(addAPI())
	out := r.Run(context.Background(), Input{Code: `
		const results = await Promise.allSettled(Array.from({length: 150}, () => api.add(1, 1)));
		return results.filter((r) => r.status === "fulfilled").length`})
	if !out.OK || string(out.Result) != "100" {
		t.Fatalf("out = %+v %s", out.Error, out.Result)
	}
	out = r.Run(context.Background(), Input{Code: `for (let i = 0; i < 101; i++) await api.add(1, 1)`})
	wantError(t, out, VMError, "too many API calls (the limit is 100 per run)")
}

func TestAPI_Register(t *testing.T) {
	r := newRunner(t, config.RunCodeConfig{})
	noop := func(context.Context, Call) (any, error) { return nil, nil }
	for _, api := range []API{
		{Name: "", Handler: noop},
		{Name: "a.b", Handler: noop},
		{Name: "1x", Handler: noop},
		{Name: "ok"},
		{Name: "bad", Handler: noop, Params: &jsonschema.Schema{Ref: "#/nowhere"}},
	} {
		if err := r.Register(api); err == nil {
			t.Errorf("Register(%q) succeeded", api.Name)
		}
	}
	if err := r.Register(API{Name: "once", Handler: noop}); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(API{Name: "once", Handler: noop}); err == nil || !strings.Contains(err.Error(), "already registered") {
		t.Fatalf("duplicate: %v", err)
	}
	// A handler returning nothing resolves to undefined (null in the result).
	if got := mustOK(t, r, Input{Code: `return [await api.once()]`}); got != `[null]` {
		t.Fatalf("result = %s", got)
	}
}

func TestRun_Concurrent(t *testing.T) {
	r := newRunner(t, config.RunCodeConfig{})
	r.Register(addAPI())
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for i := range 16 {
		wg.Go(func() {
			out := r.Run(context.Background(), Input{Code: fmt.Sprintf(
				`console.log("run", %d); return await api.add(%d, 1)`, i, i)})
			if !out.OK || string(out.Result) != fmt.Sprint(i+1) || len(out.Stdout) != 1 || out.Stdout[0] != fmt.Sprintf("run %d", i) {
				errs <- fmt.Sprintf("run %d: %+v %s %q", i, out.Error, out.Result, out.Stdout)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
