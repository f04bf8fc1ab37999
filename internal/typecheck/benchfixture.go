package typecheck

import (
	"fmt"
	"strings"
)

// BenchDeclarations are the declarations of issue 36's speed goal: 10
// backends of 10 tools each, as the catalogue declares them. The checker's
// benchmarks (here, in procpool and in the bench module) all check
// [BenchProgram] against them.
func BenchDeclarations() Declarations {
	var b strings.Builder
	for i := range 10 {
		fmt.Fprintf(&b, "interface IsogateBackend_%d {\n", i)
		for j := range 10 {
			fmt.Fprintf(&b, "  tool%d(args: { id: string; limit?: number; tags?: string[] }): Promise<{ items: { id: string; n: number }[] }>;\n", j)
		}
		fmt.Fprintf(&b, "}\ndeclare var b%d: IsogateBackend_%d;\n", i, i)
	}
	return Declarations{ID: "bench-100", Text: b.String()}
}

// BenchProgram is a 40-line program calling 13 of [BenchDeclarations]'
// tools.
func BenchProgram() string {
	var b strings.Builder
	b.WriteString("const out: Record<string, number> = {};\n")
	for i := range 13 {
		fmt.Fprintf(&b, "const r%d = await b%d.tool%d({ id: 'x%d', limit: %d });\n", i, i%10, i%10, i, i)
		fmt.Fprintf(&b, "for (const it of r%d.items) out[it.id] = (out[it.id] ?? 0) + it.n;\n", i)
		fmt.Fprintf(&b, "console.log('step %d', Object.keys(out).length);\n", i)
	}
	b.WriteString("return out;\n")
	return b.String()
}

// BenchWarmUpProgram is the i-th of the programs the benchmarks warm a
// checker up with before they measure it: like [BenchProgram] (40 lines,
// 13 calls of [BenchDeclarations]' tools, loops, object literals) but
// calling other tools with other names and values, so that the measured
// program is not the one the checker was warmed up on. V8 optimizes the
// compiler's hot functions only after a few hundred checks: a new
// checker's first hundred checks of BenchProgram took two to five times as
// long as its checks after three hundred.
func BenchWarmUpProgram(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "const acc%d: Record<string, number> = {};\n", i)
	for k := range 13 {
		fmt.Fprintf(&b, "const v%d = await b%d.tool%d({ id: 'w%d-%d', tags: ['t%d'] });\n", k, (i+3*k)%10, (7*i+k)%10, i, k, k)
		if k%2 == 0 {
			fmt.Fprintf(&b, "for (const x of v%d.items) acc%d[x.id] = (acc%d[x.id] ?? 0) + x.n * %d;\n", k, i, i, k+1)
		} else {
			fmt.Fprintf(&b, "v%d.items.forEach((x) => { acc%d[x.id] = (acc%d[x.id] ?? 0) - x.n; });\n", k, i, i)
		}
		fmt.Fprintf(&b, "console.log(`step %d`, Object.keys(acc%d).length);\n", k, i)
	}
	fmt.Fprintf(&b, "return acc%d;\n", i)
	return b.String()
}
