package codemode

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	v8 "rogchap.com/v8go"

	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/codemode/output"
)

// BenchmarkTrivialRunByCatalogueSize measures a tier-3 `return 1` on the
// warm in-process pool with 10, 100, 1 000 and 5 000 tools in the
// catalogue (spread over 10 backends): the lazy bridge keeps the cost of a
// run independent of the catalogue's size.
func BenchmarkTrivialRunByCatalogueSize(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 5000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			cat := catalog.New()
			perBackend := max(n/10, 1)
			for be := 0; be*perBackend < n; be++ {
				var tools []*mcp.Tool
				for i := 0; i < perBackend && be*perBackend+i < n; i++ {
					tools = append(tools, &mcp.Tool{Name: fmt.Sprintf("tool-%d", i), Description: "A tool.",
						InputSchema: map[string]any{"type": "object"}})
				}
				cat.SetBackend(fmt.Sprintf("backend-%d", be), nil, tools)
			}
			e, err := New(Options{Runner: sharedPool(), Catalog: FromCatalog(cat), Caller: sessionCaller{},
				Output: output.DefaultOptions(), Logger: discardLogger()})
			if err != nil {
				b.Fatal(err)
			}
			req := Request{Code: "const x = 1;\nreturn x"} // not a fast-path form: always tier 3
			if r := e.Execute(context.Background(), req); r.IsError || r.Tier != TierV8 || r.Text != "1" {
				b.Fatalf("%s %s", r.Tier, r.Text)
			}
			b.ResetTimer()
			for b.Loop() {
				e.Execute(context.Background(), req)
			}
		})
	}
}

// BenchmarkPrelude measures code mode's trusted prelude (the result
// serializer and the bridge for 10 backends) on one warm isolate, without
// the sandbox around it, in a fresh context with stand-ins for the host
// functions: "prelude" times running the prelude alone; "run" times a
// program that logs and serializes a value with Map, Set, Date and BigInt
// in it. Making and closing the context is not timed.
func BenchmarkPrelude(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	iso := v8.NewIsolate()
	defer iso.Dispose()
	var backends []*backendView
	for i := range 10 {
		backends = append(backends, &backendView{Name: fmt.Sprintf("backend-%d", i), Ident: fmt.Sprintf("backend_%d", i)})
	}
	src := prelude(backends, false)
	const stubs = `(() => { let ser = null; const f = () => undefined;
Object.assign(globalThis, {__isogate_call: f, __isogate_lookup: f, __isogate_keys: () => [], __isogate_console: f,
  __isogate_interfaces: f, __isogate_interface: f, __isogate_set_serializer: (fn) => { ser = fn },
  __bench_serialize: (v) => JSON.stringify(ser(v))}) })()`
	const program = `console.log("n", 3, {a: [1, 2]});
__bench_serialize({a: [1, 2, {b: "x"}], d: new Date(0), m: new Map([["k", 1]]), s: new Set([1]), n: 10n})`
	for _, step := range []string{"prelude", "run"} {
		b.Run(step, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				ctx := v8.NewContext(iso)
				benchScript(b, ctx, stubs, "stubs.js")
				if step == "prelude" {
					b.StartTimer()
				}
				benchScript(b, ctx, src, "isogate:prelude.js")
				if step == "run" {
					b.StartTimer()
					if out := benchScript(b, ctx, program, "code.js"); !strings.HasPrefix(out, `{"a":[1,2,{"b":"x"}]`) {
						b.Fatalf("serialized %s", out)
					}
				}
				b.StopTimer()
				ctx.Close()
				b.StartTimer()
			}
		})
	}
}

func benchScript(b *testing.B, ctx *v8.Context, src, origin string) string {
	v, err := ctx.RunScript(src, origin)
	if err != nil {
		b.Fatalf("%s: %v", origin, err)
	}
	return v.String()
}
