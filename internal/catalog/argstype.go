package catalog

import "encoding/json"

// ArgsType renders the TypeScript type of an argument object from its JSON
// Schema, inline, as a tool's signature shows it (a saved program's
// parameters, typed for the checker as programs.<name>(args)), and
// reports whether the whole argument may be omitted (no property is
// required).
func ArgsType(inputSchema json.RawMessage) (t string, optional bool) {
	return argsType(parseSchema(inputSchema))
}
