package fastpath

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzClassify checks that Classify never panics and that every plan it
// returns is well formed:
//   - Direct and SimpleCall plans carry a valid JSON object in Arguments,
//     a non-empty Backend and Tool and Name == Backend+"."+Tool;
//   - Arguments are canonical: feeding them back as a call's literal or as
//     direct JSON reproduces them byte for byte;
//   - other kinds carry no call fields;
//   - Classify is deterministic.
func FuzzClassify(f *testing.F) {
	for _, p := range positives {
		f.Add(p.code)
	}
	for _, n := range negatives {
		f.Add(n)
	}
	for _, s := range []string{
		`b.t({a: 1e21, b: .5e-7, c: 0b1, d: 0o7, e: 0xAbC})`,
		`b.t({"\u{10FFFF}": '\x00', 9: [], 8: {}, z: -0})`,
		`{"tool":"a.b","arguments":{"x":[{"y":"\u00e9"}]}}`,
		"const r = await b.t({})\u2028return r",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		p := Classify(code)
		if q := Classify(code); !plansEqual(p, q) {
			t.Fatalf("Classify(%q) not deterministic: %s vs %s", code, fmtPlan(p), fmtPlan(q))
		}
		switch p.Kind {
		case KindDirect, KindSimpleCall:
			checkArguments(t, code, p)
		case KindNone:
			if !plansEqual(p, Plan{}) {
				t.Fatalf("Classify(%q): None plan has fields set: %s", code, fmtPlan(p))
			}
		case KindInterfaces:
			if !plansEqual(p, Plan{Kind: KindInterfaces}) {
				t.Fatalf("Classify(%q): Interfaces plan has fields set: %s", code, fmtPlan(p))
			}
		case KindToolInterface:
			if p.InterfaceName == "" || !utf8.ValidString(p.InterfaceName) ||
				!plansEqual(p, Plan{Kind: KindToolInterface, InterfaceName: p.InterfaceName}) {
				t.Fatalf("Classify(%q): bad ToolInterface plan %s", code, fmtPlan(p))
			}
		default:
			t.Fatalf("Classify(%q): unknown kind %d", code, p.Kind)
		}
	})
}

func checkArguments(t *testing.T, code string, p Plan) {
	t.Helper()
	if !json.Valid(p.Arguments) {
		t.Fatalf("Classify(%q): invalid JSON arguments %q", code, p.Arguments)
	}
	var obj map[string]any
	if err := json.Unmarshal(p.Arguments, &obj); err != nil || obj == nil {
		t.Fatalf("Classify(%q): arguments %q are not a JSON object: %v", code, p.Arguments, err)
	}
	if p.Backend == "" || p.Tool == "" || p.Name != p.Backend+"."+p.Tool || p.InterfaceName != "" {
		t.Fatalf("Classify(%q): bad names in %s", code, fmtPlan(p))
	}
	if p.Kind == KindDirect && p.Bracket {
		t.Fatalf("Classify(%q): direct plan with Bracket", code)
	}
	// Canonical form is a fixed point, both as a JS literal and as JSON.
	// (Canonical JSON can be longer than its source, e.g. 1e20 or "\x01".)
	if len(p.Arguments)+64 > MaxCodeSize {
		return
	}
	again := Classify("x.y(" + string(p.Arguments) + ")")
	if again.Kind != KindSimpleCall || !bytes.Equal(again.Arguments, p.Arguments) {
		// A "__proto__" key is legal in JSON but not in a JS literal.
		if _, proto := obj["__proto__"]; !(p.Kind == KindDirect && again.Kind == KindNone && proto) {
			t.Fatalf("Classify(%q): arguments %s not canonical as a literal: %s", code, p.Arguments, fmtPlan(again))
		}
	}
	d := Classify(`{"tool":"x.y","arguments":` + string(p.Arguments) + `}`)
	if d.Kind != KindDirect || !bytes.Equal(d.Arguments, p.Arguments) {
		t.Fatalf("Classify(%q): arguments %s not canonical as JSON: %s", code, p.Arguments, fmtPlan(d))
	}
}

func plansEqual(a, b Plan) bool {
	return a.Kind == b.Kind && a.Backend == b.Backend && a.Tool == b.Tool && a.Name == b.Name &&
		a.InterfaceName == b.InterfaceName && a.Bracket == b.Bracket && bytes.Equal(a.Arguments, b.Arguments) &&
		(a.Arguments == nil) == (b.Arguments == nil)
}
