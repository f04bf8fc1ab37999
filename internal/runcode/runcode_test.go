package runcode

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/v8sandbox"
)

// testPool is shared by the tests of this package; runs are independent.
var testPool = sync.OnceValue(func() *v8sandbox.Pool {
	return v8sandbox.NewPool(v8sandbox.Options{Workers: 4})
})

func newRunner(t *testing.T, cfg config.RunCodeConfig) *Service {
	t.Helper()
	r, err := New(Options{Runner: testPool(), Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// run runs code with default options on a runner without APIs.
func run(t *testing.T, code string) Output {
	t.Helper()
	return newRunner(t, config.RunCodeConfig{}).Run(context.Background(), Input{Code: code})
}

// mustOK runs code and returns its result as compact JSON.
func mustOK(t *testing.T, r *Service, in Input) string {
	t.Helper()
	out := r.Run(context.Background(), in)
	if !out.OK {
		t.Fatalf("code %q failed: %+v (stdout %q, stderr %q)", in.Code, out.Error, out.Stdout, out.Stderr)
	}
	return string(out.Result)
}

// wantError checks the error type of out and that its message contains want.
func wantError(t *testing.T, out Output, typ, want string) *ErrorInfo {
	t.Helper()
	if out.OK || out.Error == nil {
		t.Fatalf("ok = %v, error = %v, want %s (result %s)", out.OK, out.Error, typ, out.Result)
	}
	if out.Error.Type != typ {
		t.Fatalf("error type = %s (%s), want %s", out.Error.Type, out.Error.Message, typ)
	}
	if !strings.Contains(out.Error.Message, want) {
		t.Fatalf("error message = %q, want it to contain %q", out.Error.Message, want)
	}
	if string(out.Result) != "null" {
		t.Fatalf("result = %s on error, want null", out.Result)
	}
	return out.Error
}

func intp(n int) *int { return &n }

func compact(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad JSON %q: %v", s, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestRun_Basics(t *testing.T) {
	r := newRunner(t, config.RunCodeConfig{})
	cases := []struct{ code, want string }{
		{`return 1 + 1`, `2`},
		{`const xs = [3, 1, 2]; return xs.sort()`, `[1,2,3]`},
		{`return {a: "x", b: [true, null]}`, `{"a":"x","b":[true,null]}`},
		{`1 + 1`, `null`}, // no return: undefined
		{`const v = await Promise.resolve(21); return v * 2`, `42`},
		{`const f = async (x) => x + 1; return await f(await f(1))`, `3`},
		{`return typeof require + typeof process + typeof setTimeout + typeof fetch`, `"undefinedundefinedundefinedundefined"`},
		{`return typeof api`, `"undefined"`},
		{`return typeof __runcode + typeof __isogate_run`, `"undefinedfunction"`},
		{`// a comment at the end`, `null`},
	}
	for _, c := range cases {
		if got := mustOK(t, r, Input{Code: c.code}); got != c.want {
			t.Errorf("%s = %s, want %s", c.code, got, c.want)
		}
	}
}

func TestRun_Environment(t *testing.T) {
	out := run(t, `return 1`)
	env := out.Environment
	if env.Engine != "v8" || !strings.HasPrefix(env.V8Version, "10.") || env.TimeoutMS != DefaultTimeoutMS ||
		env.HeapMB != HeapMB || env.APIs == nil || len(env.APIs) != 0 {
		t.Fatalf("environment = %+v", env)
	}
	if out.Stdout == nil || out.Stderr == nil || out.Warnings == nil {
		t.Fatalf("nil slices in %+v: they must marshal as []", out)
	}
	b, _ := json.Marshal(out)
	for _, want := range []string{`"stdout":[]`, `"stderr":[]`, `"warnings":[]`, `"apis":[]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("output JSON %s lacks %s", b, want)
		}
	}
	if strings.Contains(string(b), `"error"`) {
		t.Errorf("output JSON %s has an error field", b)
	}
}

func TestNew_RequiresRunner(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Fatal("New without a Runner succeeded")
	}
}
