package resultstore

import (
	"errors"
	"strings"
	"testing"
)

const pathDoc = `{
  "results": {"items": [{"id": 1, "name": "one"}, {"id": 2, "name": "two", "tags": ["x", "y"]}], "total": 2},
  "a/b": {"c": true},
  "7": "seven",
  "note": "<b>&amp;</b>"
}`

func TestLookup(t *testing.T) {
	cases := []struct{ path, want string }{
		{"results/items/1/name", `"two"`},
		{"/results/items/1/tags/", "[\n  \"x\",\n  \"y\"\n]"},
		{"results/items/0", "{\n  \"id\": 1,\n  \"name\": \"one\"\n}"},
		{"results/total", "2"},
		{"a%2Fb/c", "true"},
		{"7", `"seven"`},
		{"note", `"<b>&amp;</b>"`},
	}
	for _, c := range cases {
		got, err := Lookup([]byte(pathDoc), c.path)
		if err != nil || string(got) != c.want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", c.path, got, err, c.want)
		}
	}
	whole, err := Lookup([]byte(pathDoc), "")
	if err != nil || !strings.HasPrefix(string(whole), "{\n  \"results\": {\n    \"items\": [") {
		t.Errorf("Lookup(\"\") = %q, %v; want the whole document pretty-printed in key order", whole, err)
	}
}

func TestLookupErrors(t *testing.T) {
	cases := []struct {
		doc, path string
		is        error
		msg       string
	}{
		{pathDoc, "results/items/5", ErrBadPath, `at "results/items": index 5 out of range (array has 2 items)`},
		{pathDoc, "results/items/first", ErrBadPath, `"first" is not an array index (array has 2 items)`},
		{pathDoc, "results/items/-1", ErrBadPath, "is not an array index"},
		{pathDoc, "results/nope", ErrBadPath, `at "results": no key "nope" (keys: items, total)`},
		{pathDoc, "results/total/x", ErrBadPath, `value is a number, cannot look up "x"`},
		{pathDoc, "note/x", ErrBadPath, `at "note": value is a string`},
		{pathDoc, "missing", ErrBadPath, "at the top level"},
		{"plain text, not JSON", "a", ErrNotJSON, ""},
	}
	for _, c := range cases {
		_, err := Lookup([]byte(c.doc), c.path)
		if !errors.Is(err, c.is) {
			t.Errorf("Lookup(%q): err %v, want %v", c.path, err, c.is)
			continue
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("Lookup(%q): error %q does not mention %q", c.path, err, c.msg)
		}
	}
}

func TestURI(t *testing.T) {
	if got := URI("abc", ""); got != "isogate://result/abc" {
		t.Errorf("URI = %q", got)
	}
	if got := URI("abc", "/results/items/3"); got != "isogate://result/abc/results/items/3" {
		t.Errorf("URI with path = %q", got)
	}
	id, path, err := ParseURI("isogate://result/abc/results/items/3")
	if err != nil || id != "abc" || path != "results/items/3" {
		t.Errorf("ParseURI = %q, %q, %v", id, path, err)
	}
	id, path, err = ParseURI("isogate://result/abc")
	if err != nil || id != "abc" || path != "" {
		t.Errorf("ParseURI without path = %q, %q, %v", id, path, err)
	}
	for _, bad := range []string{"isogate://other/abc", "isogate://result/", "isogate://result//x"} {
		if _, _, err := ParseURI(bad); !errors.Is(err, ErrBadPath) {
			t.Errorf("ParseURI(%q): err %v, want ErrBadPath", bad, err)
		}
	}
}
