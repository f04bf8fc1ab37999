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
