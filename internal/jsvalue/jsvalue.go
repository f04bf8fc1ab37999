// Package jsvalue holds the kit every trusted prelude of isogate is built
// on, run_code's (internal/runcode) and call_tool_chain's
// (internal/codemode): the built-ins captured before user code can replace
// them, the helpers built on them, and the one conversion of JavaScript
// values into plain JSON data used for every result isogate returns. Map,
// Set, BigInt, Date, cycles, functions, undefined, throwing getters and
// Proxies all render without loss of the rest of the value and without
// throwing.
package jsvalue

import (
	_ "embed"
	"strings"

	"github.com/isogate/isogate/v8sandbox"
)

var (
	//go:embed kit.js
	kitJS string
	//go:embed sanitize.js
	sanitizeJS string
)

// Kit is the JavaScript every trusted prelude starts with (kit.js, then
// sanitize.js): declarations of the built-ins captured before user code
// can replace them (objectKeys, stringify, uncurried methods such as
// mapForEach(map, fn), and uncurry itself for a prelude's own), of the
// helpers built on them (brand, newArray, push, setKey, isError,
// safeString, errorHead, functionLabel, installSerializer) and of
// makeSanitizer(options) → sanitize(value), the result conversion whose
// rules and options sanitize.js documents, and isPlainData(value,
// maxDepth), which tells the values the conversion would leave as they
// are (installSerializer skips the copy for them). It only declares: [Scope] runs
// it in a strict function scope ahead of a prelude's own statements.
var Kit = kitJS + "\n" + sanitizeJS

// Scope returns a trusted prelude script that runs body in one strict
// function scope after [Kit]: body uses the kit's names, and neither they
// nor body's own declarations are reachable from user code. Run it before
// user code: the kit captures the built-ins when it runs. A prelude that
// wants results sanitized by the sandbox itself starts body with
// installSerializer(makeSanitizer({})).
//
// The kit itself is in v8sandbox's startup snapshot (see init): the
// prelude takes the kit's names from __isogate_kit, which every context
// starts with, and evaluates the kit only where the snapshot lacks it (a
// worker binary that does not link this package).
func Scope(body string) string {
	return "(function (kit) {\n\"use strict\";\nconst {" + kitNames + "} = kit;\n" + body +
		"\n})(typeof __isogate_kit === \"function\" ? __isogate_kit() : (function () {\n\"use strict\";\n" +
		Kit + "\nreturn {" + kitNames + "};\n})());\n"
}

// kitNames lists every name Kit declares at its top level, comma-separated.
var kitNames = strings.Join(declaredNames(Kit), ", ")

// startupKit runs Kit once, in the startup snapshot, and leaves a global
// __isogate_kit() returning its names; the sandbox removes the global after
// the prelude (__isogate_trust).
var startupKit = "(function () {\n\"use strict\";\n" + Kit + "\nconst kit = {" + kitNames +
	"};\nObject.defineProperty(globalThis, \"__isogate_kit\", { value: () => kit, configurable: true });\n})();\n" +
	"__isogate_trust(\"__isogate_kit\");\n"

// kitWarmup runs in the throwaway context where the snapshot's code is
// compiled: a prelude installing the sanitizer, then the conversion of a
// value with most of the shapes it renders.
var kitWarmup = Scope(`installSerializer(makeSanitizer({}));
const sanitize = makeSanitizer({});
const v = { a: [1, "x", null, { b: true }], m: new Map([["k", 1], [2, 3]]), s: new Set([1]),
	d: new Date(0), r: /x/g, e: new Error("x"), f() {}, u: undefined, n: NaN, big: 1n, t: new Uint8Array(2) };
v.self = v;
stringify(sanitize(v));
isPlainData({ a: [1, { b: "c" }] }, 64);`)

func init() { v8sandbox.AddStartupScript(startupKit, kitWarmup) }

// declaredNames returns the names declared at column 0 of source: const,
// let and function declarations, and const object destructurings
// ({ a, b: c } declares a and c), the declarations first. TestKitNamesCoverEveryDeclaration keeps
// Kit to these forms. It reads the text by hand: every sandbox worker
// process runs it at start (startupKit), where the regular expressions it
// replaced cost ~1.2 ms of CPU (issue 44); TestDeclaredNamesAsTheExpressions
// holds it to them.
func declaredNames(source string) []string {
	var names, destructured []string
	for rest := source; ; {
		for _, kw := range [...]string{"const", "let", "function"} {
			after, ok := strings.CutPrefix(rest, kw)
			if !ok {
				continue
			}
			body := strings.TrimLeft(after, reSpace)
			if id := identPrefix(body); id != "" && len(body) < len(after) {
				names = append(names, id)
			}
			if kw == "const" && strings.HasPrefix(body, "{") {
				destructured = append(destructured, destructuredNames(body[1:])...)
			}
		}
		nl := strings.IndexByte(rest, '\n')
		if nl < 0 {
			break
		}
		rest = rest[nl+1:]
	}
	return append(names, destructured...)
}

// reSpace is what \s matches in Go's regular expressions.
const reSpace = "\t\n\f\r "

// destructuredNames reads "a, b: c } =" (the text after const's brace)
// and returns the names it declares (a, c); none unless "}" and "=" follow.
func destructuredNames(text string) []string {
	inner, after, ok := strings.Cut(text, "}")
	if !ok || !strings.HasPrefix(strings.TrimLeft(after, reSpace), "=") {
		return nil
	}
	var names []string
	for _, entry := range strings.Split(inner, ",") {
		entry = strings.TrimSpace(entry)
		if i := strings.LastIndexByte(entry, ':'); i >= 0 {
			entry = entry[i+1:]
		}
		entry = strings.Trim(entry, reSpace)
		if id := identPrefix(entry); id != "" && id == entry {
			names = append(names, id)
		}
	}
	return names
}

// identPrefix returns the identifier ([A-Za-z_$][\w$]*) s starts with.
func identPrefix(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c == '_' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9' {
			i++
			continue
		}
		break
	}
	return s[:i]
}

// DefaultMaxDepth is the nesting depth below which values are rendered in
// full; deeper objects become "[MaxDepth]".
const DefaultMaxDepth = 64
