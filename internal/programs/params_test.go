package programs

import (
	"encoding/json"
	"testing"

	"github.com/isogate/isogate/v8sandbox"
)

// TestParametersRefuseUnknownType: a JSON Schema whose "type" names no
// JSON type was saved (jsonschema's Resolve lets it through) and every
// direct call of the program was then refused, INVALID_ARGUMENTS "want
// \"nonsense\"" (tryout). It is refused at save now, wherever it is
// nested; a "type" inside data (const, enum, default, examples) or a
// property named type are not schema types. Red without unknownType.
func TestParametersRefuseUnknownType(t *testing.T) {
	for schema, ok := range map[string]bool{
		`{"type":"object","properties":{"a":{"type":"nonsense"}}}`:                                               false,
		`{"type":"object","properties":{"a":{"type":"array","items":{"anyOf":[{"type":"strnig"}]}}}}`:            false,
		`{"type":"object","properties":{"a":{"type":["string","nul"]}}}`:                                         false,
		`{"type":"object","properties":{"a":{"type":["string","null"]},"b":{"type":"integer"}}}`:                 true,
		`{"type":"object","properties":{"type":{"type":"string","default":{"type":"x"},"enum":[{"type":"y"}]}}}`: true,
		`{"type":"object","properties":{"a":{"const":{"type":"z"}}},"required":["type"]}`:                        true,
	} {
		_, _, err := Parameters(json.RawMessage(schema), "return args")
		if ok != (err == nil) || !ok && v8sandbox.CodeOf(err) != CodeInvalid {
			t.Errorf("%s: %v (want accepted %v)", schema, err, ok)
		}
	}
}
