// Package jsvalue holds the one conversion of JavaScript values into plain
// JSON data used for every result isogate returns: call_tool_chain
// (registered as the sandbox's serializer by [Install]) and run_code
// (inside its envelope, through [Factory]). Map, Set, BigInt, Date, cycles,
// functions, undefined, throwing getters and Proxies all render without
// loss of the rest of the value and without throwing.
package jsvalue

import _ "embed"

// Factory is a JavaScript expression that evaluates to
// makeSanitizer(options) → sanitize(value): see sanitize.js for the rules
// and options. Evaluate it before user code runs: it captures the
// intrinsics it uses.
//
//go:embed sanitize.js
var Factory string

// DefaultMaxDepth is the nesting depth below which values are rendered in
// full; deeper objects become "[MaxDepth]".
const DefaultMaxDepth = 64

// Install is a trusted prelude script that registers the sanitizer (with
// default options) as the sandbox's result serializer, through the one-shot
// hook __isogate_set_serializer that the sandbox's bootstrap offers, and
// removes the hook.
var Install = "(function () {\n\"use strict\";\nconst make = " + Factory + ";\n" +
	"const set = globalThis.__isogate_set_serializer;\n" +
	"delete globalThis.__isogate_set_serializer;\n" +
	"if (typeof set === \"function\") set(make({}));\n})();\n"
