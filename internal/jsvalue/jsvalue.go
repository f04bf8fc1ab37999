// Package jsvalue holds the kit every trusted prelude of isogate is built
// on, run_code's (internal/runcode) and call_tool_chain's
// (internal/codemode): the built-ins captured before user code can replace
// them, the helpers built on them, and the one conversion of JavaScript
// values into plain JSON data used for every result isogate returns. Map,
// Set, BigInt, Date, cycles, functions, undefined, throwing getters and
// Proxies all render without loss of the rest of the value and without
// throwing.
package jsvalue

import _ "embed"

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
func Scope(body string) string {
	return "(function () {\n\"use strict\";\n" + Kit + "\n" + body + "\n})();\n"
}

// DefaultMaxDepth is the nesting depth below which values are rendered in
// full; deeper objects become "[MaxDepth]".
const DefaultMaxDepth = 64
