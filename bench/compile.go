package bench

import (
	"fmt"
	"strings"
	"sync"

	"github.com/evanw/esbuild/pkg/api"
)

// V8Target is the esbuild target for V8 10.9: isogate's code mode uses
// ES2022, so syntax newer than that is lowered.
const V8Target = api.ES2022

// GojaTarget is the esbuild target for goja. goja parses ES2022 syntax
// (class fields, private members, static blocks, `?.`, `??`, BigInt…)
// except async generators and for-await. ES2017 is the highest target at
// which esbuild lowers those, so plain async generators run on goja;
// everything else goja runs natively. ES2016 would also rewrite async
// functions into generators (slower, same checks pass) and ES2015 lowers
// `**`, which breaks BigInt exponentiation. TestGojaTarget re-measures the
// choice: every target from ES2018 up passes one conformance check fewer.
const GojaTarget = api.ES2017

// mainName is the global the wrapped program is assigned to.
const mainName = "__bench_main"

// Compile wraps body in an async function assigned to a global, strips
// its TypeScript with esbuild for target, and returns a script whose
// completion value is the function's promise. Results are cached.
func Compile(body string, target api.Target) (string, error) {
	key := compileKey{body, target}
	if v, ok := compileCache.Load(key); ok {
		return v.(string), nil
	}
	js, err := compile(body, target)
	if err != nil {
		return "", err
	}
	compileCache.Store(key, js)
	return js, nil
}

type compileKey struct {
	body   string
	target api.Target
}

var compileCache sync.Map

func compile(body string, target api.Target) (string, error) {
	// Wrap first, then transform: esbuild rejects a top-level return.
	input := "globalThis." + mainName + " = async function main() {\n" + body + "\n};"
	res := api.Transform(input, api.TransformOptions{
		Loader:     api.LoaderTS,
		Target:     target,
		Sourcefile: "program.ts",
		Charset:    api.CharsetUTF8,
	})
	if len(res.Errors) > 0 {
		m := res.Errors[0]
		if m.Location != nil {
			return "", fmt.Errorf("esbuild: %s (line %d)", m.Text, m.Location.Line-1)
		}
		return "", fmt.Errorf("esbuild: %s", m.Text)
	}
	return string(res.Code) + "\n;globalThis." + mainName + "();", nil
}

// wrapRaw wraps body without transforming it, so the engine parses the
// exact syntax.
func wrapRaw(body string) string {
	var b strings.Builder
	b.WriteString("globalThis." + mainName + " = async function main() {\n")
	b.WriteString(body)
	b.WriteString("\n};\nglobalThis." + mainName + "();")
	return b.String()
}

// script returns the script a variant runs for w.
func script(w *Workload, target api.Target) (string, error) {
	if w.script != "" {
		return w.script, nil
	}
	if w.Raw {
		return wrapRaw(w.Source), nil
	}
	return Compile(w.Source, target)
}
