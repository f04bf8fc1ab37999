package jsvalue

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/isogate/isogate/v8sandbox"
)

// Every top-level declaration of the kit is one of the forms declaredNames
// reads, so a prelude that takes the kit from the startup snapshot sees
// every name the inline kit would declare.
func TestKitNamesCoverEveryDeclaration(t *testing.T) {
	names := declaredNames(Kit)
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			t.Errorf("%s declared twice", n)
		}
		seen[n] = true
	}
	decl := regexp.MustCompile(`^(?:const|let|var|function|class|async)\b`)
	for _, line := range strings.Split(Kit, "\n") {
		if !decl.MatchString(line) {
			continue
		}
		if strings.HasPrefix(line, "const {") {
			continue // destructuring, read by destructuredNames
		}
		m := declaredNames(line)
		if len(m) != 1 || !seen[m[0]] {
			t.Errorf("top-level declaration not read: %q", line)
		}
	}
	for _, want := range []string{"objectKeys", "getOwnPropertyDescriptor", "objectCreate", "hasOwn", "apply", "stringify", "uncurry", "makeSanitizer", "isPlainData", "installSerializer"} {
		if !seen[want] {
			t.Errorf("%s missing from %v", want, names)
		}
	}
}

// A prelude built by Scope finds every kit name, whether the context starts
// with the kit (the startup snapshot) or evaluates it itself.
func TestScopeWithAndWithoutTheSnapshotKit(t *testing.T) {
	pool := v8sandbox.NewPool(v8sandbox.Options{Workers: 1})
	defer pool.Close()
	check := "globalThis.__names = [" + kitNames + "].every((v) => v !== undefined);" +
		"globalThis.__fromSnapshot = typeof __isogate_kit === 'function';" +
		"installSerializer(makeSanitizer({}));"
	for _, c := range []struct {
		name, prelude, want string
	}{
		{"snapshot", Scope(check), `[true,true,"undefined",{"m":"[WeakMap]"}]`},
		{"inline", "delete globalThis.__isogate_kit;\n" + Scope(check), `[true,false,"undefined",{"m":"[WeakMap]"}]`},
	} {
		res, err := pool.Run(context.Background(), v8sandbox.Job{Prelude: c.prelude, AwaitResult: true,
			Source: `[__names, __fromSnapshot, typeof __isogate_kit, {m: new WeakMap()}]`}, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if string(res.Value) != c.want {
			t.Errorf("%s: %s, want %s", c.name, res.Value, c.want)
		}
	}
}

// declaredNames reads by hand what these regular expressions read (it
// replaced them to spare each sandbox worker ~1.2 ms of CPU at start).
func TestDeclaredNamesAsTheExpressions(t *testing.T) {
	var (
		topLevelDecl = regexp.MustCompile(`(?m)^(?:const|let|function)\s+([A-Za-z_$][\w$]*)`)
		topLevelObj  = regexp.MustCompile(`(?ms)^const\s*\{([^}]*)\}\s*=`)
		objEntry     = regexp.MustCompile(`(?:^|:)\s*([A-Za-z_$][\w$]*)\s*$`)
	)
	byExpressions := func(source string) []string {
		var names []string
		for _, m := range topLevelDecl.FindAllStringSubmatch(source, -1) {
			names = append(names, m[1])
		}
		for _, m := range topLevelObj.FindAllStringSubmatch(source, -1) {
			for _, entry := range strings.Split(m[1], ",") {
				if e := objEntry.FindStringSubmatch(strings.TrimSpace(entry)); e != nil {
					names = append(names, e[1])
				}
			}
		}
		return names
	}
	for _, source := range []string{Kit, startupKit, kitWarmup,
		"const a = 1;\nlet $b2 = 2\nfunction c_(x) {}\n  const indented = 3;\nconstant = 4\nconst\td = 5",
		"const { e, f: g, h:i, ...rest, j = 1, } = o;\nconst{k}=p\nconst { l } ;\nconst { m }\n= q\nfunction* gen() {}\nlet 9x = 1\n",
		"", "const", "const {", "let x"} {
		got, want := declaredNames(source), byExpressions(source)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("declaredNames(%.60q) = %q, the expressions read %q", source, got, want)
		}
	}
}
