package jsonscan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// seeds covers every branch of the grammar, valid and not.
var seeds = []string{
	``, ` `, `null`, `true`, `false`, `nul`, `truex`, `0`, `-0`, `01`, `-`, `1.`, `1.5`, `1e5`, `1E+5`, `1e-`, `-12.5e-3`,
	`""`, `"a\"b"`, `"\u00e9\uD83D"`, `"\u12G4"`, `"\x"`, "\"tab\there\"", `"unterminated`, "\"\xff\xfe\"",
	`[]`, `{}`, `[ ]`, `{ }`, `[1,2]`, `[1,]`, `[,1]`, `{"a":1}`, `{"a":}`, `{"a" 1}`, `{a:1}`, `{"a":1,}`,
	" \n{\"a\" : [1, {\"b\": null}, \"x\"] ,\"c\":{}}\t\n ", `[[[]]]`, `[1 2]`, `{"a":1}}`, `[1]x`, "[\"a\"]\r\n",
	`{"items":[{"id":1,"name":"item 1","price":1.5,"tags":["a","b"],"ok":true}]}`,
}

// check compares Valid and AppendIndent with encoding/json on b.
func check(t *testing.T, b []byte) { checkIndent(t, b, "  ") }

// checkIndent is check with the given indent.
func checkIndent(t *testing.T, b []byte, indent string) {
	t.Helper()
	if got, want := Valid(b), json.Valid(b); got != want {
		t.Fatalf("Valid(%q) = %v, encoding/json says %v", b, got, want)
	}
	var want bytes.Buffer
	wantErr := json.Indent(&want, b, "", indent)
	got, err := AppendIndent([]byte("prefix:"), b, indent)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("AppendIndent(%q): error %v, encoding/json's %v", b, err, wantErr)
	}
	if err != nil {
		if string(got) != "prefix:" {
			t.Fatalf("AppendIndent(%q) failed but changed dst: %q", b, got)
		}
		return
	}
	if string(got) != "prefix:"+want.String() {
		t.Fatalf("AppendIndent(%q) =\n%s\nencoding/json:\n%s", b, got[len("prefix:"):], want.Bytes())
	}
}

func TestAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range seeds {
		check(t, []byte(s))
	}
}

// TestNestingLimit: 10 000 levels are valid, 10 001 are not, as for
// encoding/json.
func TestNestingLimit(t *testing.T) {
	for _, n := range []int{maxDepth, maxDepth + 1} {
		for _, pair := range []string{"[]", `{"a":}`} {
			open, close := pair[:len(pair)-1], pair[len(pair)-1:]
			inner := "1"
			if open == "[" {
				inner = ""
			}
			b := []byte(strings.Repeat(open, n) + inner + strings.Repeat(close, n))
			checkIndent(t, b, "") // indented, the output would grow with the square of n
			if Valid(b) != (n <= maxDepth) {
				t.Fatalf("%d levels of %s: Valid = %v", n, pair, Valid(b))
			}
		}
	}
}

func FuzzAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { check(t, b) })
}

// megabyte is about 1 MB of records like a tool result's.
func megabyte() []byte {
	var b strings.Builder
	b.WriteString(`{"items":[`)
	for i := 0; b.Len() < 1<<20; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"item %d","price":%d.5,"tags":["a","b"],"ok":true}`, i, i, i)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// BenchmarkValid and BenchmarkIndent compare with encoding/json on 1 MB:
//
//	go test -bench . ./internal/jsonscan
func BenchmarkValid(b *testing.B) {
	doc := megabyte()
	b.Run("jsonscan", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			Valid(doc)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			json.Valid(doc)
		}
	})
}

func BenchmarkIndent(b *testing.B) {
	doc := megabyte()
	b.Run("jsonscan", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			AppendIndent(nil, doc, "  ")
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			var out bytes.Buffer
			json.Indent(&out, doc, "", "  ")
		}
	})
}
