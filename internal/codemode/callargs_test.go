package codemode

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestCallArgumentsMatchesDecoding: the hand split of a bridge call's
// frame gives what encoding/json gives, for the usual frame and for every
// other shape (which it leaves to encoding/json), including names with
// escapes, arguments holding brackets and quotes in strings, durable
// clocks and malformed frames.
func TestCallArgumentsMatchesDecoding(t *testing.T) {
	frames := []string{
		`["big","small",{},1,null]`,
		`["big","small",{"a":[1,{"b":"}]"}],"c":"\"{"},"d":"\\"},12,null]`,
		`["b-1","tool.x",{"nested":{"deep":[[[]]]}},123456789,null]`,
		`["big","small",{},1234567890,null]`,         // ten digits: decoded
		`["big","small",{},01,null]`,                 // not JSON
		`["big","small",{},-1,null]`,                 // decoded (a negative seq)
		`["big","small",{},1.5,null]`,                // not an int
		`["big","small",{},1,[1700000000000,1.5]]`,   // a durable clock
		`["b\u0069g","small",{},1,null]`,             // an escape in a name
		`["big","sm\"all",{},1,null]`,                // a quote in a name
		`["big","small",[],1,null]`,                  // arguments not an object
		`["big","small","x",1,null]`,                 // a string argument
		`["big","small",null,1,null]`,                // null arguments
		`["big","small",{}]`,                         // three items
		`["big","small",{},1]`,                       // four items
		`["big","small",{},1,null,2]`,                // six items
		`["big","small",{"a":1},1,null] `,            // trailing space
		`["big","small",{"a":"unterminated},1,null]`, // no end
		`["big","small",{"a":1},1,nul]`,
		`["big",2,{},1,null]`,
		`{"backend":"big"}`,
		`[`, ``, `[]`, `null`,
	}
	for _, f := range frames {
		b1, t1, a1, s1, c1, e1 := callArguments(json.RawMessage(f))
		b2, t2, a2, s2, c2, e2 := decodeCallArguments(json.RawMessage(f))
		if b1 != b2 || t1 != t2 || string(a1) != string(a2) || s1 != s2 || !reflect.DeepEqual(c1, c2) || (e1 == nil) != (e2 == nil) {
			t.Errorf("%s:\n split  %q %q %s %d %v %v\n decode %q %q %s %d %v %v", f, b1, t1, a1, s1, c1, e1, b2, t2, a2, s2, c2, e2)
		}
	}
}

// TestCallArgumentsUsualFrameAllocations: the usual frame costs the two
// names and nothing else (encoding/json took about twenty allocations).
func TestCallArgumentsUsualFrameAllocations(t *testing.T) {
	raw := json.RawMessage(`["big","small",{"query":"x","limit":[1,2]},7,null]`)
	allocs := testing.AllocsPerRun(100, func() {
		if b, tool, _, seq, _, err := callArguments(raw); err != nil || b != "big" || tool != "small" || seq != 7 {
			t.Fatalf("%q %q %d %v", b, tool, seq, err)
		}
	})
	if allocs > 2 {
		t.Errorf("callArguments made %v allocations for the usual frame; want at most 2 (the names)", allocs)
	}
}
