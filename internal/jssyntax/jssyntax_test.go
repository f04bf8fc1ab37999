package jssyntax

import (
	"encoding/json"
	"testing"
)

func TestAppendStringMatchesJSONStringify(t *testing.T) {
	for s, want := range map[string]string{
		"plain":      `"plain"`,
		"q\"b\\":     `"q\"b\\"`,
		"\b\f\n\r\t": `"\b\f\n\r\t"`,
		"\x00\x1f":   `"\u0000\u001f"`,
		"<&>\u2028é": "\"<&>\u2028é\"",
		"":           `""`,
	} {
		got := string(AppendString(nil, s))
		if got != want {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
		if StringLen(s) != len(got) {
			t.Errorf("%q: StringLen %d, len %d", s, StringLen(s), len(got))
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil || back != s {
			t.Errorf("%q does not round-trip: %v", s, err)
		}
	}
}

func TestIsReserved(t *testing.T) {
	for _, n := range []string{"delete", "await", "eval", "let"} {
		if !IsReserved(n) {
			t.Errorf("%s not reserved", n)
		}
	}
	for _, n := range []string{"everything", "get_sum", "undefined"} {
		if IsReserved(n) {
			t.Errorf("%s reserved", n)
		}
	}
}
